#!/usr/bin/env bash
# The perf policy on real MPI jobs: two malleable `synthetic` jobs report their MTCT
# ratio through libductile's profiling wrappers; the one that hardly communicates is
# grown into idle nodes, the one that mostly communicates is not, and when a rigid
# job waits it is the communicating one that is shrunk to make room. At the end every
# node is released and the history shows each resize.
. "$(dirname "$0")/lib.sh"
command -v mpirun > /dev/null || { echo "SKIP: no mpirun"; exit 77; }
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
# the emulated nodes share loopback; other tests add and remove interfaces meanwhile
export OMPI_MCA_btl_tcp_if_include=lo OMPI_MCA_oob_tcp_if_include=lo
# Under AddressSanitizer, Open MPI's memory at exit sits in components it has already
# unloaded, which LeakSanitizer can neither attribute nor suppress: no leak check for
# the MPI processes (everything else keeps it).
mpi_env="ASAN_OPTIONS=${ASAN_OPTIONS:-}:detect_leaks=0"
up 8 --policy perf:lower=0.5:upper=0.7 --resize-timeout 60
cd "$T"
export PATH="$BINDIR:$PATH"
syn="$BINDIR/synthetic"
[ -x "$syn" ] || fail "synthetic not built"

mtct() { d show "$1" | awk '$1 == "MTCT" {print $2}'; }
has_mtct() { [ -n "$(mtct "$1")" ]; }
above() { awk -v x="$1" -v y="$2" 'BEGIN {exit !(x > y)}'; }

# B first, so that it has its ratio before A can be grown (A would otherwise take it all)
s=$(script b.sh "#DUCTILE --nodes=2 --malleable --min-nodes=1 --max-nodes=4
env $mpi_env ductile mpirun $syn --compute-ms 2 --comm-ms 30 --until $T/stop")
jb=$(submit "$s")
wait_for 60 has_mtct "$jb" || fail "no MTCT from B: $(d show "$jb"; cat "ductile-$jb.out")"
above "$(mtct "$jb")" 0.7 || fail "B's MTCT $(mtct "$jb") should be above 0.7"
s=$(script a.sh "#DUCTILE --nodes=2 --malleable --min-nodes=1 --max-nodes=4
env $mpi_env ductile mpirun $syn --compute-ms 40 --comm-ms 0 --until $T/stop")
ja=$(submit "$s")
wait_for 60 sh -c "\"$BIN\" show $ja | grep -Eq 'expand +2 -> 4'" || fail "A not grown: $(d show "$ja"; cat "ductile-$ja.out")"
above 0.5 "$(mtct "$ja")" || fail "A's MTCT $(mtct "$ja") should be below 0.5"
grep -q "2 -> 4 processes" "ductile-$ja.out" || fail "A's processes: $(cat "ductile-$ja.out")"
[ "$(field "$jb" Nodes | awk '{print $1}')" = 2 ] || fail "B changed size: $(d show "$jb")"

# a rigid job that needs 3 nodes: 2 are idle, B gives one back (not A)
s=$(script r.sh '#DUCTILE --nodes=3
ductile run true')
jr=$(submit "$s")
expect_state "$jr" CD 60
d show "$jb" | grep -Eq 'shrink +2 -> 1' || fail "B not shrunk: $(d show "$jb")"
! d show "$ja" | grep -Eq 'shrink' || fail "A was shrunk: $(d show "$ja")"
grep -q "2 -> 1 processes" "ductile-$jb.out" || fail "B's processes: $(cat "ductile-$jb.out")"

touch "$T/stop"
expect_state "$ja" CD 60
expect_state "$jb" CD 60
for j in "$ja" "$jb"; do
  grep -q "data in place" "ductile-$j.out" || fail "job $j misplaced data: $(cat "ductile-$j.out")"
done
wait_for 20 sh -c "[ \$(\"$BIN\" nodes | awk '\$2 == \"idle\"' | wc -l) -eq 8 ]" || fail "nodes not released: $(d nodes)"
# (B, alone on one process, no longer communicates: perf may grow it once r.sh is done)
d history | grep -E "^ *$ja .* 2>4 *$" > /dev/null || fail "A's sizes in history: $(d history)"
d history | grep -E "^ *$jb .* 2>1(>[0-9]+)* *$" > /dev/null || fail "B's sizes in history: $(d history)"
echo ok
