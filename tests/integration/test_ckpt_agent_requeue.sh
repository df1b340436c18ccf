#!/usr/bin/env bash
# The end-to-end case of issue 11 through the checkpoint service: a rigid 2-node MPI job
# submitted with --checkpoint-agents gets agents on the cluster's checkpoint node (n5, a
# host of its own on the emulated hosts), started there by its node daemon as the job's
# user with a key made for the job; the job checkpoints every step into their memory
# over libfabric, loses a node, is requeued, and its second run restores from the same
# agents. The final data is what an uninterrupted run computes, the agents flushed it
# to the files, and they are stopped when the job ends, their key gone.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/ckpt_requeue.sh"
ckpt_requeue_setup 5 --set CheckpointNodes=n5
d nodes | grep -Eq "^n5 +checkpoint " || fail "n5 is not a checkpoint node: $(d nodes)"
# a checkpoint node runs no job: five nodes are four for jobs
! d submit -N 5 "$(script five.sh true)" 2> "$T/e" || fail "a 5-node job accepted"
grep -q "needs at least 5 nodes but the cluster has 4 for jobs (and 1 checkpoint node)" "$T/e" ||
  fail "size message: $(cat "$T/e")"
ckpt_requeue_run "#DUCTILE --checkpoint-agents"
# two agents (Algorithm 5: a 2-node job), both on n5, named in the job's environment
ag=$(d show "$j" | awk '$1 == "CkptAgents" {print $2, $4}')
case "$ag" in *,*" n5,n5;") ;; *) fail "the job's agents: $(d show "$j")" ;; esac
# every commit went to the agents: the library never used the files by itself, and the
# second run read the agents' memory (the files were still being flushed, or equal)
! grep -q "using the checkpoint files" "$err" || fail "the job fell back to files: $(cat "$err")"
# the agents flushed version 40 and were stopped once the job ended, with their key
# (60 s: an agent flushes what it holds first; under the sanitizers, beside other tests,
# that took over 20 s once)
agents_end n5 "$j" 60
[ "$(cat "$T/ckpt/app/latest")" = 40 ] || fail "version 40 not flushed: $(ls "$T/ckpt/app")"
# both held the job's checkpoints in memory until they were stopped (their last words,
# kept in n5's log)
held() {
  [ "$(grep -Ec "checkpoint agent of job $j: ductile-agent: stopped \([1-9][0-9]* bytes" \
    "$T/c/log/noded-n5.log")" = 2 ]
}
wait_for 10 held || fail "n5's agents held nothing: $(cat "$T/c/log/noded-n5.log")"
ckpt_requeue_check
echo "restarted at step $start; agents $ag; ok"
