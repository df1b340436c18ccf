#!/usr/bin/env bash
# A malleable job gives up a node to the checkpoint service (issue 11; seed 002's
# Algorithm 10, a HIGH request favouring the service): with CheckpointLending = shrink,
# one agent fitting on the checkpoint node n5 and no idle node, a job with
# --checkpoint-agents that finds no room has the running malleable job shrunk by one
# node (its application moves its data and goes on); the node it gave up is lent to
# the service and the job's agent starts there; the job's application (a rigid MPI job
# that never attached) takes it at its next commit and commits there from then on; the
# node goes back to jobs once that agent has stopped.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/ckpt_requeue.sh"
mem=$(($(getconf _PHYS_PAGES) / 1024 * $(getconf PAGESIZE) / 1024))
budget=$((mem / 2 + 1)) # one agent per node
ckpt_requeue_setup 5 --set CheckpointNodes=n5 --set CheckpointAgentMemory=$budget \
  --set CheckpointLending=shrink --resize-timeout 60
log="$T/c/log/ductiled.log"
printf '%s\n' '#!/bin/sh' 'while [ ! -e "stop.$DUCTILE_JOB_ID" ]; do sleep 0.1; done' > wait.sh
chmod 755 wait.sh
sub() { d submit "$@" | awk '{print $3}'; }
node_state() { d nodes "$1" | awk -v n="$1" '$1 == n {print $2}'; }

ms=$(script m.sh "#DUCTILE --nodes=2 --malleable --min-nodes=1 --max-nodes=2
DT_CKPT_APP_HURRY= ductile mpirun --ppn 1 ./app $T/ckpt resize 1000 0.2") # (never hurried)
m=$(sub "$ms")
wait_for 60 grep -q "^started on 2 processes" "ductile-$m.out" || fail "job $m did not start: $(cat "ductile-$m.out")"
a=$(sub --checkpoint-agents -N 1 wait.sh)
on_n5() { field "$a" CkptAgents | grep -q "(on n5)"; }
wait_for 30 on_n5 || fail "job $a's agent: $(field "$a" CkptAgents)"
bs=$(script b.sh "#DUCTILE --nodes=1 --checkpoint-agents
mpirun ./app $T/ckptb run 150 0.1")
b=$(sub "$bs")
expect_state "$b" R 30
grep -q "job $b: job $m asked to give up 1 node for its checkpoint agents (the checkpoint nodes are full)" "$log" ||
  fail "controller's log: $(grep "job $b" "$log")"
wait_for 90 grep -q "^resized 2 -> 1 processes" "ductile-$m.out" || fail "job $m did not shrink: $(cat "ductile-$m.out")"
has_agent() { field "$b" CkptAgents | grep -Eq "^[0-9.]+:[0-9]+ \(on n[1-4]\)"; }
wait_for 30 has_agent || fail "job $b has no agent: $(field "$b" CkptAgents); $(cat "$log")"
lent=$(field "$b" CkptAgents | sed -n 's/.*(on \(n[0-9]\)).*/\1/p')
[ "$(node_state "$lent")" = lent ] || fail "$lent is $(node_state "$lent"): $(d nodes)"
[ -n "$(agent_pids "$lent" "$b")" ] || fail "no agent of job $b runs on $lent"
ag=$(field "$b" CkptAgents | cut -d' ' -f1)
took() { grep -q "checkpoint agents are now $ag\$" "ductile-$b.out"; }
wait_for 30 took || fail "job $b's application did not take $ag: $(cat "ductile-$b.out")"
hurry # job b's remaining steps without waiting
expect_state "$b" CD 120
grep -q "^done at step 150" "ductile-$b.out" || fail "job $b: $(cat "ductile-$b.out")"
! grep -q "using the checkpoint files" "ductile-$b.out" || fail "job $b fell back to files: $(cat "ductile-$b.out")"
# (the agent flushes behind the commits: the last one may still be on its way)
flushed() { [ "$(cat "$T/ckptb/app/latest" 2> /dev/null)" = 150 ]; }
wait_for 30 flushed || fail "version 150 not flushed by the agent: $(ls "$T/ckptb/app")"
given() { [ "$(node_state "$lent")" != lent ]; }
wait_for 30 given || fail "$lent is still lent: $(d nodes)"
grep -q "node $lent given back to jobs" "$log" || fail "controller's log: $(grep "$lent" "$log")"
touch "stop.$a"
d cancel "$m" > /dev/null
expect_state "$a" CD
expect_state "$m" CA
cat "$log" "ductile-$m.out" | grep -E "ductiled: (job|node)|resized|started on"
echo ok
