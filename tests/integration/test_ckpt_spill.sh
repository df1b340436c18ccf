#!/usr/bin/env bash
# An agent short of memory spills (seed 002 §4.5, the agent's side, step 4): with
# CheckpointAgentMemory = 4 MiB, a job's node file of 6 MiB does not fit in its agent's
# memory; instead of refusing the commit (which the library would then write to the
# files itself), the agent takes it into the node file on the file level, mapped, and
# its flush publishes the version. Every commit goes through the agent, and the last
# version is whole and restorable from the files on another host.
. "$(dirname "$0")/lib.sh"
mpi_setup
export ASAN_OPTIONS="${ASAN_OPTIONS:-}:detect_leaks=0" # Open MPI's (see test_mpi.sh)
up 3 --set CheckpointNodes=n3 --set CheckpointAgentMemory=4
cd "$T"
ckpt_app_setup
s=$(script spill.sh "#DUCTILE --checkpoint-agents
DT_CKPT_APP_PAD_KIB=6144 mpirun ./app $T/ck run 5 0.2")
j=$(submit "$s")
expect_state "$j" CD 120
out="ductile-$j.out"
grep -qx "done at step 5" "$out" || fail "job $j: $(cat "$out")"
! grep -q "using the checkpoint files" "$out" || fail "job $j used its files: $(cat "$out")"
log="$T/c/log/noded-n3.log"
said() { grep -q "ductile-agent: stopped" "$log"; }
wait_for 60 said || fail "n3's agent did not stop: $(cat "$log")"
grep -q "checkpoint agent of job $j: ductile-agent: version 5 of $T/ck/app: node file 0 (61[0-9][0-9] KiB) goes to the files as it comes" "$log" ||
  fail "n3's log: $(cat "$log")"
[ "$(cat "$T/ck/app/latest")" = 5 ] || fail "version 5 not in the files: $(ls -R "$T/ck/app")"
! ls "$T/ck/app/v5" | grep -q spill || fail "v5: $(ls "$T/ck/app/v5")"
chk=$(on login env $mpi_env mpirun --oversubscribe -np 2 "$T/app" "$T/ck" check 2> "$T/err") ||
  fail "check: $(cat "$T/err")"
[ "$chk" = "restored version 5 on 2 processes" ] || fail "check: $chk"
echo ok
