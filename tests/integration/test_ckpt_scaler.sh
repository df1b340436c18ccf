#!/usr/bin/env bash
# Algorithm 8 on the cluster (seed 002's proactive scaler; docs/checkpointing.md): the
# checkpoint node's manager measures what its agents hold, and the controller lends an
# idle node to the service once they hold more than CheckpointScalerUpper of the node's
# memory and still take more, before the node is full and before any job's agents lack
# room. Here n5 may use 60 MiB for checkpoints, an agent 20 (three fit), and a 2-node MPI
# job keeps about 18 MiB in each of its two agents (6 MiB of filler per process, the
# agents keeping two versions and a region for the next): 60 % of n5, above 50 %. An
# idle node (n3) is lent while n5 still has room for an agent, the next job's agent goes
# to it (the most free memory), and it is given back when that agent is gone.
. "$(dirname "$0")/lib.sh"
mpi_setup
export ASAN_OPTIONS="${ASAN_OPTIONS:-}:detect_leaks=0" # Open MPI's (see test_mpi.sh)
up 5 --set CheckpointNodes=n5 --set CheckpointNodeMemory=60 --set CheckpointAgentMemory=20 \
  --set CheckpointLending=idle --set CheckpointScalerLower=40 --set CheckpointScalerUpper=50 \
  --set HeartbeatInterval=1
cd "$T"
ckpt_app_setup
log="$T/c/log/ductiled.log"
node_state() { d nodes "$1" | awk -v n="$1" '$1 == n {print $2}'; }

s=$(script big.sh "#DUCTILE --nodes=2
#DUCTILE --checkpoint-agents
DT_CKPT_APP_PAD_KIB=6144 mpirun ./app $T/ckpt run 60 0.5")
a=$(submit "$s")
two_on_n5() { case "$(field "$a" CkptAgents)" in *"(on n5,n5)") return 0 ;; esac; return 1; }
wait_for 30 two_on_n5 || fail "job $a's agents: $(d show "$a")"
lent() { [ "$(node_state n3)" = lent ]; }
wait_for 60 lent || fail "no node lent: $(d nodes; grep -i "checkpoint\|lent" "$log")"
grep -q "node n3 lent to the checkpoint service (Algorithm 8: n5's agents hold [5-7][0-9]% of its 60 MiB, above 50%, [0-9.]* MiB/s more: HIGH priority)" "$log" ||
  fail "controller's log: $(grep "lent" "$log")"
# before n5 was full: it had room for a third agent, and no job's agents lacked room
! grep -q "the checkpoint nodes are full" "$log" || fail "lent for a job: $(grep lent "$log")"
is_state "$a" R || fail "job $a is $(state "$a") (too fast: make it run longer)"
# the next job's agent goes to the lent node, where memory is free
printf '%s\n' '#!/bin/sh' 'echo "agents=$DUCTILE_CKPT_AGENTS"' \
  'while [ ! -e "stop.$DUCTILE_JOB_ID" ]; do sleep 0.1; done' > wait.sh
chmod 755 wait.sh
b=$(submit --checkpoint-agents -N 1 wait.sh)
said() { grep -q "^agents=" "ductile-$b.out" 2> /dev/null; }
wait_for 30 said || fail "job $b did not start: $(d show "$b")"
case "$(field "$b" CkptAgents)" in *"(on n3)") ;; *) fail "job $b's agent: $(d show "$b"; d nodes)" ;; esac
hurry # job a ran long enough: its remaining steps without waiting
expect_state "$a" CD 120
grep -qx "done at step 60" "ductile-$a.out" || fail "job $a: $(cat "ductile-$a.out")"
! grep -q "using the checkpoint files" "ductile-$a.out" || fail "job $a used its files: $(cat "ductile-$a.out")"
touch "stop.$b"
expect_state "$b" CD
back() { [ "$(node_state n3)" = idle ]; }
wait_for 30 back || fail "n3 not given back: $(d nodes)"
grep "lent to the checkpoint service" "$log"
echo ok
