#!/usr/bin/env bash
# A malleable MPI job through a full state directory (issue 35): jacobi2d under `ductile
# mpirun` (its groups' daemons started with `ductile rsh`, steps relayed by the node
# daemons) runs on while the controller's disk is full for 20 s (each failed commit
# reloads the controller's state; the node daemons report again on their connections),
# is expanded once there is space again, and computes the same plate as a fixed-size
# run. Plain mode only: the state directory is a tmpfs mounted from the test's host.
. "$(dirname "$0")/lib.sh"
[ "$HOSTS" = 1 ] && { echo "SKIP: the state directory is mounted from the test's host"; exit 77; }
mpi_setup
state_on_small_tmpfs 16m
up 4 --resize-timeout 60
cd "$T"
jacobi_started
log="$T/c/log/ductiled.log"
dd if=/dev/zero of="$state/filler" bs=64k status=none 2>/dev/null || true
quick=$(script quick.sh 'true')
# the disk stays full for 20 s; writes are refused, the job runs on
for i in 1 2 3 4; do
  ! d submit "$quick" > /dev/null 2>&1 || fail "submitted on a full disk"
  ! d resize "$j" --nodes 4 > resize.out 2>&1 || fail "resized on a full disk: $(cat resize.out)"
  grep -q "cannot save\|could not save" resize.out || fail "resize on a full disk: $(cat resize.out)"
  is_state "$j" R || fail "job $j on a full disk: $(state "$j") $(cat "$out")"
  sleep 5 # (the fault's length, not a wait for an event)
done
grep -q "reloaded" "$log" || fail "no reload happened (test assumption): $(tail "$log")"
rm -f "$state/filler"
submits() { d submit "$quick" > /dev/null 2>&1; }
wait_for 20 submits || fail "writes did not resume"
is_state "$j" R || fail "job $j after the full disk: $(state "$j") $(cat "$out")"
resized() { d resize "$j" --nodes 4 > resize.out 2>&1; }
wait_for 30 resized || fail "resize after the full disk: $(cat resize.out)"
wait_for 60 sh -c "\"$BIN\" show $j | grep -Eq 'expand +2 -> 4'" || fail "expand: $(d show "$j"; cat "$out")"
jacobi_finished
echo ok
