#!/usr/bin/env bash
# A malleable MPI job that checkpoints (dt_ckpt_app, 2 nodes, minimum 1) loses its
# second node on a 2-node cluster (issue 12): MPI cannot run on without a rank, so the
# job is requeued, and as the one node that survives cannot hold its two, it restarts
# there alone, from its last complete checkpoint written by two nodes (the data
# redistributed at the restore), and finishes with the data an uninterrupted run
# computes.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/ckpt_requeue.sh"
ckpt_requeue_setup 2
extra_cleanup() { kill -CONT "${pid:-0}" 2> /dev/null || true; }
s=$(script ckpt.sh "#DUCTILE --nodes=2 --malleable --min-nodes=1 --max-nodes=2
#DUCTILE --requeue
mpirun ./app $T/ckpt run 40 0.25")
j=$(submit "$s")
out="ductile-$j.out"
steps() { grep -c '^step ' "$out" 2> /dev/null || true; }
some_steps() { [ "$(steps)" -ge 4 ]; }
wait_for 60 some_steps || fail "job $j made no progress: $(cat "$out" 2> /dev/null)"
# n2 stops answering, and stays away until the job has started again
pid=$(cat "$T/c/noded-n2.pid")
kill -STOP "$pid"
runs() { d show "$j" | grep -Ec '^ +[0-9:]+ +start '; }
restarted() { [ "$(runs)" -ge 2 ]; }
wait_for 60 restarted || fail "job $j did not start again: $(d show "$j"; d nodes)"
d show "$j" | grep -E '^ +[0-9:]+ +start ' | tail -1 | grep -Eq 'start +0 -> 1 ' ||
  fail "the second run did not start on the surviving node alone: $(d show "$j")"
[ "$(field "$j" NodeList)" = n1 ] || fail "second run's nodes: $(d show "$j")"
kill -CONT "$pid"
second() { grep -q '^starting at step [1-9]' "$out" 2> /dev/null; }
if wait_for 60 second; then hurry; fi # (ckpt_requeue_run)
expect_state "$j" CD 120
start=$(awk '/^starting at step/ {print $4}' "$out")
[ -n "$start" ] && [ "$start" -ge 3 ] ||
  fail "the second run did not restart from a checkpoint: $(cat "$out")"
grep -qx "done at step 40" "$out" || fail "job $j did not finish: $(cat "$out")"
chk=$(on login env $mpi_env mpirun --oversubscribe -np 3 "$T/app" "$T/ckpt" check 2> "$T/err") ||
  fail "check: $(cat "$T/err")"
[ "$chk" = "restored version 40 on 3 processes" ] || fail "final check: $chk"
echo "restarted at step $start on one node; ok"
