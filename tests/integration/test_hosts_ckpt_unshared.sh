#!/usr/bin/env bash
# On emulated hosts only: an application that checkpoints to a directory that is not the
# same on every node (each host's own /tmp) is told so in its words, and no version is
# published that could not be read back (issue 11, docs/checkpointing.md).
export DUCTILE_TEST_HOSTS=1
. "$(dirname "$0")/lib.sh"
mpi_setup
export ASAN_OPTIONS="${ASAN_OPTIONS:-}:detect_leaks=0" # Open MPI's (see test_mpi.sh)
up 2
cd "$T"
export PATH="$BINDIR:$PATH"
cp "$BINDIR/dt_ckpt_app" "$T/app"
s=$(script unshared.sh '#DUCTILE --nodes=2
mpirun ./app /tmp/ck-unshared write 1
echo "status=$?"')
j=$(submit "$s")
ended() { case "$(state "$1")" in CD | F | CA | TO | NF) return 0 ;; esac; return 1; }
wait_for 60 ended "$j" || fail "job $j still $(state "$j")"
out="ductile-$j.out"
grep -q "the checkpoint directory /tmp/ck-unshared/app is not the same on every node (it is not on this one): use one that every node sees" "$out" ||
  fail "no message about the directory: $(cat "$out")"
grep -qx "status=0" "$out" && fail "the commit succeeded: $(cat "$out")"
# nothing published on the first node's own /tmp
on n1 test ! -e /tmp/ck-unshared/app/latest || fail "a version was published"
echo ok
