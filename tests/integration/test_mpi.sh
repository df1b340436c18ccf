#!/usr/bin/env bash
# Malleable MPI for real: jacobi2d under `ductile mpirun` (Open MPI, one group of
# processes per node) is expanded from 2 to 6 nodes and shrunk to 3 by an operator's
# `ductile resize`, and computes the same plate as a fixed-size run; a job cancelled in
# the middle of an expansion leaves no process and no node behind.
. "$(dirname "$0")/lib.sh"
mpi_setup
up 8 --resize-timeout 60
cd "$T"
export PATH="$BINDIR:$PATH"
jac="$BINDIR/jacobi2d"
[ -x "$jac" ] || fail "jacobi2d not built"
args="--n 96 --iters 300"

# the reference: a plain MPI run on a fixed number of processes
ref=$(jacobi_ref $args)

# Every group's mpirun gets an Open MPI job family of its own (src/cmd/cmd_mpirun.c,
# exec_unique): two with one family hung the next accept (1 expansion in 8 on emulated
# hosts). With all families but 1 in 256 already claimed by other groups, an mpirun
# started as a group's is still given a free one, and Open MPI's own family for it
# (the jobid's upper half) is the one claimed for it.
mkdir fam
(cd fam && seq 0 65535 | awk '$1 % 256 != 7 {print "jobfam." $1}' | xargs touch)
on n1 env "$mpi_env" "$BINDIR/ductile" mpirun --exec-in "$T/fam" -- mpirun -np 1 \
  sh -c 'echo $((OMPI_MCA_ess_base_jobid >> 16)) $DT_MPI_JOBFAM' > fam.out 2>&1 ||
  fail "a group's mpirun: $(cat fam.out)"
read -r ompi_fam claimed < fam.out || true
[ -n "$claimed" ] && [ "$ompi_fam" = "$claimed" ] ||
  fail "Open MPI's job family $ompi_fam is not the claimed $claimed: $(cat fam.out)"
[ $((claimed % 256)) -eq 7 ] || fail "family $claimed was another group's already"
[ "$(ls fam | wc -l)" -eq 65281 ] || fail "not one new claim: $(ls fam | wc -l) files"
rm -rf fam

no_leftovers() { # PATTERN: no live process whose command line matches
  local p
  for p in $(pgrep -f "$1"); do alive "$p" && return 1; done
  return 0
}
all_idle() { [ "$(d nodes | awk '$2 == "idle"' | wc -l)" -eq 8 ]; }

s=$(script jac.sh "#DUCTILE --nodes=2 --malleable --min-nodes=1 --max-nodes=8
env $mpi_env ductile mpirun --ppn 2 $jac $args --delay-us 2000 --wait-for $T/go")
j=$(submit "$s")
expect_state "$j" R
# resized once the application runs (before, the controller would resize the bare job)
wait_for 60 grep -q "started on 4 processes" "ductile-$j.out" || fail "no start: $(cat "ductile-$j.out")"
d resize "$j" --nodes 6
wait_for 60 sh -c "\"$BIN\" show $j | grep -Eq 'expand +2 -> 6'" || fail "expand: $(d show "$j"; cat "ductile-$j.out")"
[ "$(field "$j" NodeList)" = "n[1-6]" ] || fail "nodes after expand: $(field "$j" NodeList)"
d resize "$j" --nodes 3
wait_for 60 sh -c "\"$BIN\" show $j | grep -Eq 'shrink +6 -> 3'" || fail "shrink: $(d show "$j"; cat "ductile-$j.out")"
touch "$T/go"
expect_state "$j" CD 60
grep -q "4 -> 12 processes" "ductile-$j.out" || fail "no expand in the app: $(cat "ductile-$j.out")"
grep -q "12 -> 6 processes" "ductile-$j.out" || fail "no shrink in the app: $(cat "ductile-$j.out")"
got=$(grep -o 'checksum=.*' "ductile-$j.out")
[ "$got" = "$ref" ] || fail "result $got differs from the fixed-size $ref"
wait_for 20 all_idle || fail "nodes not released: $(d nodes)"
wait_for 20 no_leftovers "$T/go" || fail "processes left: $(pgrep -fa "$T/go")"
[ -z "$(ls -A "$T" | grep '^\.ductile-mpi')" ] || fail "the launcher's directory was left behind"

# pi on 3 nodes: the groups join at start, the value is right
s=$(script pi.sh "#DUCTILE --nodes=3
env $mpi_env ductile mpirun --ppn 2 $BINDIR/pi --intervals 3000000 --chunks 30")
jp=$(submit "$s")
expect_state "$jp" CD 60
grep -Eq "^pi: 3\.1415926535[0-9]+ \(error [0-9.]+e-1[2-9]\) on 6 processes" "ductile-$jp.out" ||
  fail "pi: $(cat "ductile-$jp.out")"

# cancelled while its new groups start: nothing survives
s=$(script jac2.sh "#DUCTILE --nodes=2 --malleable --min-nodes=1 --max-nodes=8
env $mpi_env ductile mpirun $jac $args --wait-for $T/never")
j2=$(submit "$s")
expect_state "$j2" R
wait_for 60 grep -q "started on 2 processes" "ductile-$j2.out" || fail "no start: $(cat "ductile-$j2.out")"
d resize "$j2" --nodes 5 --no-wait
wait_for 30 is_state "$j2" RS || fail "not resizing: $(d show "$j2")"
d cancel "$j2"
expect_state "$j2" CA 30
wait_for 30 all_idle || fail "nodes not released after cancel: $(d nodes)"
wait_for 30 no_leftovers "$T/never" || fail "processes left after cancel: $(pgrep -fa "$T/never")"
wait_for 30 no_leftovers "ompi-server.*$T" || fail "ompi-server left: $(pgrep -fa ompi-server)"
echo ok
