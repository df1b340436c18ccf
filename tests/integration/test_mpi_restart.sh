#!/usr/bin/env bash
# A malleable MPI job survives the controller (issue 35): jacobi2d under `ductile mpirun`
# (its groups' daemons started with `ductile rsh`, steps that re-attach) goes on through
# a kill -9 of the controller and its restart, is expanded by the new controller, goes on
# through a SIGTERM and restart, then through a kill -9 and restart of two node daemons,
# and computes the same plate as a fixed-size run.
. "$(dirname "$0")/lib.sh"
mpi_setup
up 4 --resize-timeout 60
cd "$T"
jacobi_started
stop_ctld() { # SIGNAL
  local pid; pid=$(cat "$T/c/ctld.pid")
  kill -"$1" "$pid"
  wait_for 15 sh -c "! kill -0 $pid 2> /dev/null" || fail "the controller did not stop ($1)"
}
stop_ctld KILL
restart_ctld
wait_for 20 d queue > /dev/null || fail "the controller did not come back"
is_state "$j" R || fail "job $j after the kill -9: $(state "$j") $(cat "$out")"
# the new controller resizes it: the application's groups start and join as before
d resize "$j" --nodes 4
wait_for 60 sh -c "\"$BIN\" show $j | grep -Eq 'expand +2 -> 4'" || fail "expand: $(d show "$j"; cat "$out")"
stop_ctld TERM
restart_ctld
wait_for 20 d queue > /dev/null || fail "the controller did not come back"
is_state "$j" R || fail "job $j after the SIGTERM: $(state "$j") $(cat "$out")"
# and through restarts of node daemons: one that holds a group's MPI daemon, and the
# batch node's, which holds one too and relays every `ductile rsh` client
for n in n3 n1; do
  kill_restart_noded "$n"
  is_state "$j" R || fail "job $j after noded $n restarted: $(state "$j") $(cat "$out")"
done
jacobi_finished
echo ok
