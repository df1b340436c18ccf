#!/usr/bin/env bash
# A malleable MPI job (jacobi2d under `ductile mpirun`) that loses a node which is not
# its first does not hang (issue 12): MPI cannot run on without a rank, so it does not
# ask to survive the loss, and the job ends NODE_FAIL with the node named, at
# NodeTimeout; when the node's daemon is back, what ran there is killed and the nodes
# are free again.
. "$(dirname "$0")/lib.sh"
command -v mpirun > /dev/null || { echo "SKIP: no mpirun"; exit 77; }
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_btl_tcp_if_include="$(mpi_if)" OMPI_MCA_oob_tcp_if_include="$(mpi_if)"
mpi_env="ASAN_OPTIONS=${ASAN_OPTIONS:-}:detect_leaks=0" # as in test_mpi.sh
up 2 --node-timeout 3
cd "$T"
export PATH="$BINDIR:$PATH"
jac="$BINDIR/jacobi2d"
[ -x "$jac" ] || fail "jacobi2d not built"
s=$(script jac.sh "#DUCTILE --nodes=2 --malleable --min-nodes=1 --max-nodes=2
env $mpi_env ductile mpirun $jac --n 64 --iters 100 --wait-for $T/never")
j=$(submit "$s")
expect_state "$j" R
wait_for 60 grep -q "started on" "ductile-$j.out" || fail "no start: $(cat "ductile-$j.out")"
old=$(cat "$T/c/noded-n2.pid")
kill -9 "$old"
wait_for 10 sh -c "! kill -0 $old 2> /dev/null" || fail "noded n2 survived kill -9"
expect_state "$j" NF 40
d show "$j" | grep -Eq '^Reason +NodeFail:n2' || fail "reason: $(d show "$j")"
d show "$j" | grep -q '^NodeFailure' && fail "an MPI job asked to survive a node's loss"
restart_noded n2
wait_for 30 sh -c "[ \$(\"$BIN\" nodes | awk '\$2 == \"idle\"' | wc -l) -eq 2 ]" ||
  fail "nodes not free again: $(d nodes)"
no_leftovers() { local p; for p in $(pgrep -f "$T/never"); do alive "$p" && return 1; done; return 0; }
wait_for 30 no_leftovers || fail "MPI processes left: $(pgrep -fa "$T/never")"
echo ok
