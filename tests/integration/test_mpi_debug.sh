#!/usr/bin/env bash
# Issue 9, defect 3: dt_reconfigure is collective; called by some ranks only, it
# blocked them until the walltime without a word. With DUCTILE_DEBUG=1, a rank that
# waits in it longer than DUCTILE_DEBUG_TIMEOUT seconds says which ranks have not
# reached it, and says it again while it waits.
. "$(dirname "$0")/lib.sh"
mpi_setup
up 2
cd "$T"
dt_faults_app
# 3 processes; rank 1 calls MPI_Barrier instead of dt_reconfigure at iteration 5
s=$(script skip.sh "#DUCTILE --nodes=1 --malleable --min-nodes=1 --max-nodes=2
env $mpi_env DUCTILE_DEBUG=1 DUCTILE_DEBUG_TIMEOUT=1 ductile mpirun --ppn 3 $app --ms 20 --iters 100000 --skip-rank 1 --skip-iter 5 --until $T/never")
j=$(submit "$s")
expect_state "$j" R
wait_for 60 grep -q "rank 1 skips dt_reconfigure at iteration 5" "ductile-$j.out" ||
  fail "no skip: $(cat "ductile-$j.out")"
reports() { [ "$(grep -c "$1" "ductile-$j.out")" -ge "$2" ]; }
msg="DUCTILE_DEBUG: rank [02] of 3 .* in dt_reconfigure .*not reached it: rank 1\b"
wait_for 20 reports "$msg" 4 || fail "no report naming rank 1: $(cat "ductile-$j.out")"
! grep "not reached it:.*rank [02]" "ductile-$j.out" || fail "a rank that is there was named"
d cancel "$j"
expect_state "$j" CA 20
wait_for 20 no_leftovers "$T/never" || fail "processes left: $(pgrep -fa "$T/never")"

# the same program without the mistake, in debug mode: no report, the right result
s=$(script fine.sh "#DUCTILE --nodes=1 --malleable --min-nodes=1 --max-nodes=2
env $mpi_env DUCTILE_DEBUG=1 DUCTILE_DEBUG_TIMEOUT=1 ductile mpirun --ppn 3 $app --ms 5 --iters 30")
j2=$(submit "$s")
expect_state "$j2" CD 60
grep -q "done on 3 processes after 30 iterations: 1000 elements, sum 499500" "ductile-$j2.out" ||
  fail "result: $(cat "ductile-$j2.out")"
! grep -q DUCTILE_DEBUG "ductile-$j2.out" || fail "a report without a mistake: $(cat "ductile-$j2.out")"
echo ok
