#!/usr/bin/env bash
# Algorithm 8's HIGH request served by a shrink (seed 002's Algorithms 8 and 10, with
# CheckpointLending = shrink): the checkpoint node n4 may use 60 MiB, its single agent
# comes to hold about 18 MiB of a rigid job's checkpoints (30 %, above the 25 % set
# here) and no node is idle, so the running malleable job gives up one node (its
# application moves its data and goes on), and that node is lent to the checkpoint
# service before any job's agents lacked room.
. "$(dirname "$0")/lib.sh"
mpi_setup
export ASAN_OPTIONS="${ASAN_OPTIONS:-}:detect_leaks=0" # Open MPI's (see test_mpi.sh)
up 4 --set CheckpointNodes=n4 --set CheckpointNodeMemory=60 --set CheckpointAgentMemory=20 \
  --set CheckpointLending=shrink --set CheckpointScalerLower=20 --set CheckpointScalerUpper=25 \
  --set HeartbeatInterval=1 --resize-timeout 60
cd "$T"
ckpt_app_setup
log="$T/c/log/ductiled.log"
node_state() { d nodes "$1" | awk -v n="$1" '$1 == n {print $2}'; }

m=$(submit "$(script m.sh "#DUCTILE --nodes=2 --malleable --min-nodes=1 --max-nodes=2
DT_CKPT_APP_HURRY= ductile mpirun --ppn 1 ./app $T/ckm resize 1000 0.2")") # (never hurried)
wait_for 60 grep -q "^started on 2 processes" "ductile-$m.out" || fail "job $m did not start: $(cat "ductile-$m.out")"
a=$(submit "$(script big.sh "#DUCTILE --nodes=1
#DUCTILE --checkpoint-agents
DT_CKPT_APP_PAD_KIB=6144 mpirun ./app $T/ckpt run 80 0.5")")
expect_state "$a" R 30
asked() { grep -q "job $m asked to give up 1 node for the checkpoint service (Algorithm 8: n4's agents hold [3-4][0-9]% of its 60 MiB, above 25%, .*: HIGH priority)" "$log"; }
wait_for 60 asked || fail "controller's log: $(grep -E "Algorithm|asked|lent" "$log")"
wait_for 90 grep -q "^resized 2 -> 1 processes" "ductile-$m.out" || fail "job $m did not shrink: $(cat "ductile-$m.out")"
# the node it gave up: its list is one node once the controller committed the shrink
one_node() { [ "$(field "$m" Nodes | cut -d' ' -f1)" = 1 ]; }
wait_for 30 one_node || fail "job $m: $(d show "$m")"
case "$(field "$m" NodeList)" in n1) given=n2 ;; n2) given=n1 ;; *) fail "job $m: $(d show "$m")" ;; esac
lent() { [ "$(node_state "$given")" = lent ]; }
wait_for 30 lent || fail "$given is $(node_state "$given"): $(d nodes; grep -E "lent|asked" "$log")"
grep -q "node $given lent to the checkpoint service (Algorithm 8: the node a job gave up for it)" "$log" ||
  fail "controller's log: $(grep lent "$log")"
! grep -q "the checkpoint nodes are full" "$log" || fail "lent for a job: $(grep lent "$log")"
hurry # job a ran long enough: its remaining steps without waiting
expect_state "$a" CD 120
grep -qx "done at step 80" "ductile-$a.out" || fail "job $a: $(cat "ductile-$a.out")"
# once that job's agent has stopped, n4 holds nothing: the empty node goes back
back() { [ "$(node_state "$given")" != lent ]; }
wait_for 30 back || fail "$given still lent: $(d nodes)"
d cancel "$m" > /dev/null
expect_state "$m" CA
grep -E "asked to give up|lent to|given back" "$log"
echo ok
