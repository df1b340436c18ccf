#!/usr/bin/env bash
# A running job's checkpoint agent count follows its commits' times (issue 11; seed 002's
# Algorithm 5 while the application runs, CheckpointAgentScaling = on): the library tells
# the controller, at each probe, how long its last blocking commit took to reach the
# agents; a slower one reverses the last change (the first change is an increase), and a
# rigid job whose change made things worse has it undone and keeps that count. The
# machine is stood for by DUCTILE_TEST_TSYNC so that the decisions do not depend on its
# speed: with 2 agents the commits take 1, 1, then 2 s; with 1 agent 3 s. So the 2-node
# job starts with 2 agents (one a node, the most), goes to 1 when its commits get slower,
# back to 2 when they get slower still, and stays there. Its data is whole at the end.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/ckpt_requeue.sh"
ckpt_requeue_setup 5 --set CheckpointNodes=n5 --set CheckpointAgentScaling=on
s=$(script count.sh "#DUCTILE --nodes=2
#DUCTILE --checkpoint-agents
export DUCTILE_TEST_TSYNC='2=1,1,2;1=3'
mpirun ./app $T/ckpt run 40 0.25")
j=$(submit "$s")
out="ductile-$j.out"
log="$T/c/log/ductiled.log"
n_agents() { field "$j" CkptAgents | cut -d' ' -f1 | tr ',' '\n' | grep -c ':' || true; }
down_seen() { grep -q "job $j: its commits took 2.000 s (slower than before): 1 checkpoint agent instead of 2 (Algorithm 5)" "$log"; }
up_seen() { grep -q "job $j: its commits took 3.000 s (slower than before): 2 checkpoint agents instead of 1 (Algorithm 5)" "$log"; }
wait_for 60 down_seen || fail "no decrease: $(grep "job $j" "$log"; cat "$out")"
wait_for 60 up_seen || fail "no increase back: $(grep "job $j" "$log"; cat "$out")"
# the application took each list (the one agent, then the two)
took() { grep -c "checkpoint agents are now" "$out" || true; }
two_lists() { [ "$(took)" -ge 2 ]; }
wait_for 60 two_lists || fail "the application did not take the new lists: $(cat "$out")"
grep "checkpoint agents are now" "$out" | head -1 | grep -q "now [^,]*$" ||
  fail "the first new list is not one agent: $(grep "agents are now" "$out")"
expect_state "$j" CD 120
grep -qx "done at step 40" "$out" || fail "job $j did not finish: $(cat "$out")"
[ "$(n_agents)" = 2 ] || fail "job $j ends with $(field "$j" CkptAgents)"
# settled: no third change
[ "$(grep -c "job $j: its commits took" "$log")" = 2 ] || fail "more changes: $(grep "job $j: its commits" "$log")"
! grep -Eq "using the checkpoint files|checkpoints go to the files" "$out" || fail "the job fell back to files: $(cat "$out")"
agents_end n5 "$j" 20
[ "$(cat "$T/ckpt/app/latest")" = 40 ] || fail "version 40 not flushed: $(ls "$T/ckpt/app")"
ckpt_requeue_check
echo ok
