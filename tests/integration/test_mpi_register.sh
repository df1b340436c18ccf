#!/usr/bin/env bash
# Issue 9, defect 4: dt_register with a count that does not match the block
# distribution read past the buffer on a resize (the global vector grew by 10
# elements, no error). Now the registrations are checked on every rank before any
# data moves: the offer is declined, every rank's dt_reconfigure fails, and the
# message names the variable, the rank, the count and what was expected.
. "$(dirname "$0")/lib.sh"
mpi_setup
up 2 --resize-timeout 30
cd "$T"
dt_faults_app

# rank 1 of 2 registers 510 elements where the block distribution gives it 500
s=$(script bad.sh "#DUCTILE --nodes=1 --malleable --min-nodes=1 --max-nodes=2
env $mpi_env ductile mpirun --ppn 2 $app --ms 50 --until $T/never --bad-count 1")
j=$(submit "$s")
expect_state "$j" R
wait_for 60 grep -q "started on 2 processes" "ductile-$j.out" || fail "no start: $(cat "ductile-$j.out")"
d resize "$j" --nodes 2 --no-wait > /dev/null
wait_for 40 is_state "$j" F || fail "job $j is $(state "$j"): $(cat "ductile-$j.out")"
out=$(cat "ductile-$j.out"); echo "$out"
grep -q "libductile: dt_register: variable 1 (block) on rank 1: 510 elements registered, the block distribution of 1010 elements over 2 ranks gives it 505" <<< "$out" ||
  fail "no message naming the variable, rank and counts: $out"
grep -q "rank 0: dt_reconfigure failed" <<< "$out" && grep -q "rank 1: dt_reconfigure failed" <<< "$out" ||
  fail "not every rank got the error: $out"
! grep -q "resized" <<< "$out" || fail "data moved: $out"
d show "$j" | grep -q "declined by the application" || fail "offer not declined: $(d show "$j")"
[ "$(field "$j" NodeList)" = n1 ] || fail "allocation: $(d show "$j")"

# rank 1 of 2 registers one variable fewer: every rank's dt_reconfigure fails, the
# message names the counts (rank 1 went on into the window as if nothing were wrong,
# and the job died in an MPI_Bcast: it compared rank 0's count with its own only)
s=$(script fewer.sh "#DUCTILE --nodes=1 --malleable --min-nodes=1 --max-nodes=2
env $mpi_env ductile mpirun --ppn 2 $app --ms 50 --until $T/never --fewer-vars 1")
j=$(submit "$s")
expect_state "$j" R
wait_for 60 grep -q "started on 2 processes" "ductile-$j.out" || fail "no start: $(cat "ductile-$j.out")"
d resize "$j" --nodes 2 --no-wait > /dev/null
wait_for 40 is_state "$j" F || fail "job $j is $(state "$j"): $(cat "ductile-$j.out")"
out=$(cat "ductile-$j.out"); echo "$out"
grep -q "libductile: dt_register: rank 1 registered 1 variables, rank 0 2" <<< "$out" ||
  fail "no message naming the counts: $out"
grep -q "rank 0: dt_reconfigure failed" <<< "$out" && grep -q "rank 1: dt_reconfigure failed" <<< "$out" ||
  fail "not every rank got the error: $out"
! grep -q "resized" <<< "$out" || fail "data moved: $out"

# a registration that cannot be right is refused at once, with the reason
on login env "$mpi_env" mpirun --oversubscribe -np 1 "$app" --iters 2 --ms 1 --bad-register > plain.out 2>&1 ||
  fail "plain run: $(cat plain.out)"
grep -q "libductile: dt_register (variable 1): count must be >= 0, with data for it" plain.out &&
  grep -q "dt_register with count -1: -22" plain.out &&
  grep -q "done on 1 processes after 2 iterations: 1000 elements, sum 499500" plain.out ||
  fail "bad registration: $(cat plain.out)"
echo ok
