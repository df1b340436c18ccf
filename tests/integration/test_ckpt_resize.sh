#!/usr/bin/env bash
# A malleable MPI job's resize through the checkpoint service (issue 11; seed 002's
# iCheck as the data redistribution service): a job submitted with --checkpoint-agents
# and --malleable checkpoints every step into its agent's memory; when an operator
# expands it from 1 to 3 nodes and shrinks it to 2, its data (block, block-cyclic and
# replicated) moves with dt_ckpt_redistribute: the processes before the resize commit it
# through the agent, those after restore their new shares from there, and every element
# is checked on the new processes (dt_ckpt_app resize). The library never falls back to
# the files.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/ckpt_requeue.sh"
ckpt_requeue_setup 5 --set CheckpointNodes=n5 --resize-timeout 60
s=$(script resize.sh "#DUCTILE --nodes=1 --malleable --min-nodes=1 --max-nodes=4
#DUCTILE --checkpoint-agents
ductile mpirun --ppn 2 ./app $T/ckpt resize 80 0.2")
j=$(submit "$s")
out="ductile-$j.out"
err="$out" # the job's standard error goes with its output
wait_for 60 grep -q "^started on 2 processes" "$out" || fail "no start: $(cat "$out" "$err" 2> /dev/null)"
[ -n "$(agent_pids n5 "$j")" ] || fail "job $j has no agent on n5: $(d show "$j")"
d resize "$j" --nodes 3
wait_for 90 grep -q "^resized 2 -> 6 processes through the checkpoint path: version [0-9]* checked" "$out" ||
  fail "expand: $(d show "$j"; cat "$out" "$err")"
d resize "$j" --nodes 2
wait_for 90 grep -q "^resized 6 -> 4 processes through the checkpoint path: version [0-9]* checked" "$out" ||
  fail "shrink: $(d show "$j"; cat "$out" "$err")"
hurry # the resizes are done: the remaining steps without waiting
expect_state "$j" CD 120
grep -qx "done at version 80 on 4 processes" "$out" || fail "job $j did not finish: $(cat "$out" "$err")"
! grep -Eq "using the checkpoint files|checkpoints go to the files" "$err" || fail "the job fell back to files: $(cat "$err")"
grep "^resized" "$out"
echo ok
