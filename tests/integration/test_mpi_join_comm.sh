#!/usr/bin/env bash
# Issue 9, defect 2: a joining process that used dt_comm() right after dt_init_adapt
# got MPI_COMM_NULL (MPI_ERR_COMM), and the leader then waited for ever in
# MPI_Comm_accept (the job stayed RS). Now a joining process has its communicator,
# rank and size when dt_init_adapt returns, and the expansion completes with the data
# intact.
. "$(dirname "$0")/lib.sh"
mpi_setup
up 2 --resize-timeout 30
cd "$T"
dt_faults_app

s=$(script join.sh "#DUCTILE --nodes=1 --malleable --min-nodes=1 --max-nodes=2
env $mpi_env ductile mpirun --ppn 2 $app --ms 50 --until $T/go --joiner-uses-comm")
j=$(submit "$s")
expect_state "$j" R
wait_for 60 grep -q "started on 2 processes" "ductile-$j.out" || fail "no start: $(cat "ductile-$j.out")"
d resize "$j" --nodes 2 > /dev/null
wait_for 40 grep -q "resized 2 -> 4 processes" "ductile-$j.out" ||
  fail "no expansion: $(cat "ductile-$j.out"; d show "$j")"
grep -q "joined as rank 2 of 4" "ductile-$j.out" || fail "joiner rank 2: $(cat "ductile-$j.out")"
grep -q "joined as rank 3 of 4" "ductile-$j.out" || fail "joiner rank 3: $(cat "ductile-$j.out")"
touch "$T/go"
expect_state "$j" CD 60
grep -q "done on 4 processes .*: 1000 elements, sum 499500" "ductile-$j.out" ||
  fail "result: $(cat "ductile-$j.out")"
echo ok
