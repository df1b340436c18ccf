#!/usr/bin/env bash
# A malleable job's checkpoint agents grow and shrink with it (issue 11; seed 002's
# Algorithm 7, MA-MA): with CheckpointMalleableAgents = MA-MA, a job started on 1 node
# with 1 agent has 3 once an operator expands it to 3 nodes, and 2 once it is shrunk to
# 2. Its application takes each new list at its next commit (dt_ckpt_probe), its data
# moves through the agents at each resize (dt_ckpt_app resize checks every element),
# and the agent it left is stopped once the application has the new list. The library
# never falls back to the files.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/ckpt_requeue.sh"
ckpt_requeue_setup 5 --set CheckpointNodes=n5 --set CheckpointMalleableAgents=MA-MA \
  --resize-timeout 60
s=$(script resize.sh "#DUCTILE --nodes=1 --malleable --min-nodes=1 --max-nodes=4
#DUCTILE --checkpoint-agents
ductile mpirun --ppn 2 ./app $T/ckpt resize 150 0.2")
j=$(submit "$s")
out="ductile-$j.out"
err="$out" # the job's standard error goes with its output
n_agents() { field "$j" CkptAgents | tr ',' '\n' | grep -c ':' || true; }
n_pids() { agent_pids n5 "$j" | wc -l; }
has_agents() { [ "$(n_agents)" = "$1" ] && [ "$(n_pids)" = "$2" ]; }
# the agents the controller lists for the job are those the application took last
took() { [ "$(grep "checkpoint agents are now" "$err" | tail -1 | sed 's/.* now //')" = "$(field "$j" CkptAgents | cut -d' ' -f1)" ]; }
wait_for 60 grep -q "^started on 2 processes" "$out" || fail "no start: $(cat "$out" "$err" 2> /dev/null)"
wait_for 30 has_agents 1 1 || fail "job $j: $(n_agents) agents, $(n_pids) running, want 1: $(d show "$j")"
d resize "$j" --nodes 3
wait_for 90 grep -q "^resized 2 -> 6 processes through the checkpoint path: version [0-9]* checked" "$out" ||
  fail "expand: $(d show "$j"; cat "$out" "$err")"
wait_for 30 has_agents 3 3 || fail "after the expand: $(n_agents) agents, $(n_pids) running, want 3"
wait_for 30 took || fail "the application did not take the 3 agents: $(cat "$err")"
d resize "$j" --nodes 2
wait_for 90 grep -q "^resized 6 -> 4 processes through the checkpoint path: version [0-9]* checked" "$out" ||
  fail "shrink: $(d show "$j"; cat "$out" "$err")"
wait_for 30 took || fail "the application did not take the 2 agents: $(field "$j" CkptAgents) $(cat "$err")"
wait_for 30 has_agents 2 2 || fail "after the shrink: $(n_agents) agents, $(n_pids) running, want 2"
grep -q "job $j: 1 checkpoint agent it left stopped (its application has the new list)" \
  "$T/c/log/ductiled.log" || fail "no stop of the agent it left: $(grep "job $j" "$T/c/log/ductiled.log")"
expect_state "$j" CD 120
grep -qx "done at version 150 on 4 processes" "$out" || fail "job $j did not finish: $(cat "$out" "$err")"
! grep -Eq "using the checkpoint files|checkpoints go to the files" "$err" || fail "the job fell back to files: $(cat "$err")"
agents_end n5 "$j" 30
field "$j" CkptAgents | grep -q "; stopped at the job's end)\$" || fail "show after the end: $(field "$j" CkptAgents)"
grep "checkpoint agents are now" "$err"
echo ok
