#!/usr/bin/env bash
# Issue 9, defect 5 (the library's half): an application's dt_set_limits reaches the
# scheduler. Under fpsma-pwma, a job submitted with --max-nodes=4 whose application
# takes at most 2 nodes (dt_set_limits(1, 2, 0)) was offered 1 -> 4 about 25 times a
# second, declined each time, and never got the 2 nodes it would take. Now the leader
# sends the limits (dt_set_size_limits) and the job is grown to 2 nodes with at most a
# few offers; the same with dt_set_limits called before dt_init_adapt.
. "$(dirname "$0")/lib.sh"
mpi_setup
up 4 --policy fpsma-pwma --resize-timeout 10
cd "$T"
dt_faults_app
offers() { d show "$1" | grep -Ec "^ +[0-9:]+ +(expand|shrink|resize_withdrawn) "; }

for early in "" --early-limits; do
  s=$(script "lim$early.sh" "#DUCTILE --nodes=1 --malleable --min-nodes=1 --max-nodes=4
env $mpi_env ductile mpirun $app --ms 50 --iters 80 --limits 1 2 0 $early")
  j=$(submit "$s")
  expect_state "$j" CD 60
  out=$(cat "ductile-$j.out")
  grep -q "resized 1 -> 2 processes" <<< "$out" || fail "not grown to 2 nodes ($early): $out $(d show "$j")"
  ! grep -q "resized 2 -> [^2]" <<< "$out" || fail "resized beyond the limits ($early): $out"
  n=$(offers "$j")
  echo "offers to job $j ($early): $n"
  [ "$n" -le 3 ] || fail "$n offers ($early): $(d show "$j")"
done
echo ok
