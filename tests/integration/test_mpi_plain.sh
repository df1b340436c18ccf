#!/usr/bin/env bash
# Plain MPI inside a job: a rigid 3-node job whose script says only `mpirun ./app` runs
# one rank on each of its 3 nodes (the job's environment points Open MPI at `ductile
# rsh` and at a host file); $DUCTILE_HOSTFILE lists the job's nodes, lives on the
# node's own disk (its daemon's spool, not the shared submission directory) and goes
# with the job; what the user exported wins; a job submitted from inside another gets
# its own files; the host file follows a malleable job's resize; a user's job too.
. "$(dirname "$0")/lib.sh"
command -v mpirun > /dev/null || { echo "SKIP: no mpirun"; exit 77; }
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_btl_tcp_if_include="$(mpi_if)" OMPI_MCA_oob_tcp_if_include="$(mpi_if)"
# Open MPI's memory at exit is not LeakSanitizer's business (see test_mpi.sh)
export ASAN_OPTIONS="${ASAN_OPTIONS:-}:detect_leaks=0"
up 4 --policy fpsma-pwma --resize-timeout 10
cd "$T"
# The emulated nodes share one /tmp, where real ones have their own: each Open MPI
# daemon clears its job family's session directory there as it starts, under the feet
# of the others starting on the "other nodes" (mkdir ... File exists, about 1 job in
# 20). A session directory per node, named by the remote shell (`ductile rsh` runs the
# daemon's command line with sh -c, as ssh does); per user, as Open MPI makes them 0700.
mkdir -m 1777 "$T/otmp"
export OMPI_MCA_orte_tmpdir_base="$T/otmp/$(id -un).\$DUCTILE_NODENAME"
export PATH="$BINDIR:$PATH"
[ -x "$BINDIR/mpi_hello" ] || fail "mpi_hello not built"
cp "$BINDIR/mpi_hello" "$T/app"

# check_ranks OUT N: "rank R of N on NODE" once for each R in 0..N-1, on N distinct
# nodes of the job, and the ranks talked to each other (their sum)
check_ranks() {
  local out=$1 n=$2
  [ "$(grep -c "^rank [0-9]* of $n on " "$out")" -eq "$n" ] || fail "ranks: $(cat "$out")"
  [ "$(awk '/^rank / {print $2}' "$out" | sort -n | tr '\n' ' ')" = "$(seq -s ' ' 0 $((n - 1))) " ] ||
    fail "rank numbers: $(cat "$out")"
  [ "$(awk '/^rank / {print $6}' "$out" | sort -u | wc -l)" -eq "$n" ] ||
    fail "not one rank per node: $(cat "$out")"
  grep -qx "sum of ranks $((n * (n - 1) / 2))" "$out" || fail "no reduction: $(cat "$out")"
}

s=$(script plain.sh '#DUCTILE --nodes=3
echo "$DUCTILE_HOSTFILE" > hostfile.path
cp "$DUCTILE_HOSTFILE" hostfile.copy
mpirun ./app')
j=$(submit "$s")
ended() { case "$(state "$1")" in CD | F | CA | TO | NF) return 0 ;; esac; return 1; }
wait_for 60 ended "$j" || fail "job $j still $(state "$j")"
out="ductile-$j.out"
is_state "$j" CD || fail "job $j is $(state "$j"): $(cat "$out")"
check_ranks "$out" 3
[ "$(field "$j" NodeList)" = "n[1-3]" ] || fail "job on $(field "$j" NodeList)"
[ "$(awk '/^rank / {print $6}' "$out" | sort | tr '\n' ' ')" = "n1 n2 n3 " ] ||
  fail "ranks not on the job's nodes: $(cat "$out")"
# the host file: one line per node of the job, in its order, on the first node's disk
[ "$(tr '\n' ' ' < hostfile.copy)" = "n1 n2 n3 " ] || fail "host file: $(cat hostfile.copy)"
hf=$(cat hostfile.path)
case "$hf" in
  "$(spool_of n1)"/*) ;;
  *) fail "host file $hf is not in the first node's spool" ;;
esac
wait_for 20 on n1 test ! -e "$hf" || fail "host file $hf left after the job"

# `ductile rsh` takes what an rsh or ssh caller passes: Open MPI with plm_rsh_args
# (options, then the node, then the daemon's command line), and rsh's usual forms
s=$(script args.sh '#DUCTILE --nodes=3
mpirun ./app')
j=$(OMPI_MCA_plm_rsh_args="-x -o BatchMode=yes -p 22 -l $(id -un)" submit "$s")
wait_for 60 ended "$j" || fail "job $j still $(state "$j")"
is_state "$j" CD || fail "with plm_rsh_args: $(cat "ductile-$j.out")"
check_ranks "ductile-$j.out" 3
s=$(script rsh.sh '#DUCTILE --nodes=2
ductile rsh -n -x -oBatchMode=yes -p 22 -l someone someone@n2 echo on \$DUCTILE_NODENAME
ductile rsh -- n2 "echo dashdash; exit 3"; echo "rc=$?"
ductile rsh -Z n2 true; echo "rc=$?"
ductile rsh n2 echo -p
ductile rsh -p; echo "rc=$?"
ductile rsh n2; echo "rc=$?"')
j=$(submit "$s")
expect_state "$j" CD
o="ductile-$j.out"
[ "$(sed -n 1p "$o")" = "on n2" ] || fail "rsh with options: $(cat "$o")"
[ "$(sed -n 2,3p "$o" | tr '\n' ' ')" = "dashdash rc=3 " ] || fail "rsh --: $(cat "$o")"
grep -q "^ductile: rsh: bad option '-Z'" "$o" || fail "unknown option: $(cat "$o")"
grep -q "^ductile: rsh: option -p needs a value" "$o" || fail "missing value: $(cat "$o")"
grep -q "^ductile: rsh: no command given for n2" "$o" || fail "no command: $(cat "$o")"
[ "$(grep -c '^rc=1$' "$o")" -eq 3 ] || fail "exit statuses: $(cat "$o")"
grep -qx -- "-p" "$o" || fail "an option after the node is the command's: $(cat "$o")"

# what the user exported at submission wins; a job submitted from inside another job
# gets its own host file, not the outer job's
s=$(script show.sh '#DUCTILE --nodes=2
echo "agent=$OMPI_MCA_plm_rsh_agent"
echo "hosts=$OMPI_MCA_orte_default_hostfile"
echo "file=$DUCTILE_HOSTFILE"')
j=$(OMPI_MCA_plm_rsh_agent=ssh OMPI_MCA_orte_default_hostfile="$T/mine" submit "$s")
expect_state "$j" CD
grep -qx "agent=ssh" "ductile-$j.out" || fail "user's agent overridden: $(cat "ductile-$j.out")"
grep -qx "hosts=$T/mine" "ductile-$j.out" || fail "user's host file overridden: $(cat "ductile-$j.out")"
s2=$(script outer.sh '#DUCTILE --nodes=1
echo "outer=$OMPI_MCA_orte_default_hostfile"
ductile submit '"$s"' | awk "{print \$3}" > inner.id')
j=$(submit "$s2")
expect_state "$j" CD
wait_for 10 test -s inner.id || fail "no inner job: $(cat "ductile-$j.out")"
ji=$(cat inner.id)
expect_state "$ji" CD
outer=$(sed -n 's/^outer=//p' "ductile-$j.out")
inner=$(sed -n 's/^hosts=//p' "ductile-$ji.out")
[ -n "$outer" ] && [ -n "$inner" ] && [ "$outer" != "$inner" ] ||
  fail "inner job's host file '$inner', outer's '$outer'"
grep -q "^agent=.*ductile rsh$" "ductile-$ji.out" || fail "inner agent: $(cat "ductile-$ji.out")"

# a malleable job grown from 1 to 4 nodes: its host file says 4 afterwards
farm="$BINDIR/taskfarm"
s=$(script farm.sh "#DUCTILE --nodes=1 --malleable --min-nodes=1 --max-nodes=4
cp \"\$DUCTILE_HOSTFILE\" farm.before
$farm --items 200 --ms 10
cp \"\$DUCTILE_HOSTFILE\" farm.after")
j=$(submit "$s")
expect_state "$j" CD 60
grep -q "resize expand to 4" "ductile-$j.out" || fail "no expand: $(cat "ductile-$j.out")"
[ "$(cat farm.before)" = n1 ] || fail "host file before the resize: $(cat farm.before)"
[ "$(sort farm.after | tr '\n' ' ')" = "n1 n2 n3 n4 " ] || fail "host file after the resize: $(cat farm.after)"

# an operator's resize of a job with no application attached (committed at once, no
# offer goes to the node): the host file follows too
s=$(script bare.sh '#DUCTILE --nodes=1 --malleable --min-nodes=1 --max-nodes=4
while [ ! -e go ]; do sleep 0.05; done
cp "$DUCTILE_HOSTFILE" bare.after')
j=$(submit "$s")
expect_state "$j" R
d resize "$j" --nodes 3
wait_for 20 sh -c "\"$BIN\" show $j | grep -q '^NodeList *n\[1-3\]'" || fail "expand: $(d show "$j")"
bf="$(dirname "$hf")/job$j.hosts"
lines() { [ "$(on n1 cat "$bf" | wc -l)" -eq "$1" ]; }
wait_for 20 lines 3 || fail "host file after an operator's expand: $(on n1 cat "$bf")"
# a shrink while the first node's daemon is away: it learns the nodes when it is back
kill -9 "$(cat "$T/c/noded-n1.pid")"
wait_for 20 sh -c "! kill -0 $(cat "$T/c/noded-n1.pid") 2>/dev/null" || fail "noded n1 still there"
d resize "$j" --nodes 2
wait_for 20 sh -c "\"$BIN\" show $j | grep -q '^NodeList *n\[1-2\]'" || fail "shrink: $(d show "$j")"
lines 3 || fail "host file changed with no daemon: $(on n1 cat "$bf")"
restart_noded n1
wait_for 20 lines 2 || fail "host file after an operator's shrink: $(on n1 cat "$bf")"
touch go
expect_state "$j" CD
[ "$(tr '\n' ' ' < bare.after)" = "n1 n2 " ] || fail "host file after an operator's shrink: $(cat bare.after)"

# a user's job: the ranks run as that user, on 3 nodes
if [ "$(id -u)" -eq 0 ] && command -v setpriv > /dev/null; then
  mkdir -m 777 "$T/pub"
  cp app "$T/pub/app"
  printf '#!/bin/sh\n#DUCTILE --nodes=3\nid -un\nmpirun ./app\n' > "$T/pub/u.sh"
  chmod 755 "$T/pub/u.sh"
  ju=$(cd "$T/pub" && as_nobody \
    env -u OMPI_ALLOW_RUN_AS_ROOT -u OMPI_ALLOW_RUN_AS_ROOT_CONFIRM HOME="$T/pub" \
    OMPI_MCA_orte_tmpdir_base="$T/otmp/nobody.\$DUCTILE_NODENAME" \
    "$REAL_BIN" submit u.sh | awk '{print $3}')
  wait_for 60 ended "$ju" || fail "user's job still $(state "$ju")"
  is_state "$ju" CD || fail "user's job $(state "$ju"): $(cat "$T/pub/ductile-$ju.out")"
  head -n 1 "$T/pub/ductile-$ju.out" | grep -qx nobody || fail "ran as $(head -n 1 "$T/pub/ductile-$ju.out")"
  check_ranks "$T/pub/ductile-$ju.out" 3
else
  echo "not root: the user's job is not tried"
fi
echo ok
