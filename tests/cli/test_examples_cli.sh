#!/usr/bin/env bash
# The examples answer --help and refuse what they do not know, instead of starting
# (taskfarm --help hung: it waited for workers that nobody started; the MPI examples
# answered --help with MPI_Abort and exit 2). Outside a job they run on this host alone:
# the task farm with local workers (it gave up after 12 s: "ductile: run: no job"), the
# MPI ones as plain MPI programs.
set -euo pipefail
B=$(dirname "${DUCTILE_BIN:?set by ctest}")
T=$(mktemp -d "${TMPDIR:-/tmp}/ductile-ex-XXXXXX")
trap 'rm -rf "$T"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
# outside any job: nothing may reach a cluster
unset DUCTILE_JOB_ID DUCTILE_NODED_SOCKET DUCTILE_CONF DT_MPI_DIR DT_MPI_PPN

# expect_rc RC NAME ARGS...: runs the example, its output in $T/out and $T/err
expect_rc() {
  local want=$1 name=$2 rc=0; shift 2
  timeout 20 "$B/$name" "$@" > "$T/out" 2> "$T/err" || rc=$?
  [ $rc -eq "$want" ] ||
    fail "$name $*: exit $rc, not $want; out: $(cat "$T/out"); err: $(cat "$T/err")"
}

for ex in taskfarm jacobi2d pi synthetic mpi_hello; do
  expect_rc 0 "$ex" --help
  grep -q "^usage: $ex" "$T/out" || fail "$ex --help said: $(cat "$T/out" "$T/err")"
  [ "$(wc -l < "$T/out")" -ge 3 ] || fail "$ex --help: no description of the options: $(cat "$T/out")"
  [ ! -s "$T/err" ] || fail "$ex --help wrote to stderr: $(cat "$T/err")"
  expect_rc 0 "$ex" -h
  grep -q "^usage: $ex" "$T/out" || fail "$ex -h said: $(cat "$T/out" "$T/err")"
  expect_rc 2 "$ex" --bogus
  grep -q "^$ex: unknown option '--bogus'" "$T/err" || fail "$ex --bogus said: $(cat "$T/err")"
  grep -q "^usage: $ex" "$T/err" || fail "$ex --bogus: no usage: $(cat "$T/err")"
  grep -q "MPI_ABORT" "$T/err" && fail "$ex --bogus aborted MPI: $(cat "$T/err")"
  [ ! -s "$T/out" ] || fail "$ex --bogus wrote to stdout: $(cat "$T/out")"
done
# a value missing or not a number
for c in "taskfarm --items" "taskfarm --items ten" "taskfarm --ms -1" "taskfarm --workers 0" \
  "jacobi2d --n" "jacobi2d --iters 1x" "pi --intervals 0" "synthetic --iters x" \
  "synthetic --comm-ms -2"; do
  set -- $c
  expect_rc 2 "$@"
  grep -q "^$1: " "$T/err" || fail "$c said: $(cat "$T/err")"
  grep -q "MPI_ABORT" "$T/err" && fail "$c aborted MPI: $(cat "$T/err")"
done

# The task farm outside a job: local workers, no `ductile` needed (PATH without it),
# the same checksum with one worker and with three.
PATH=/usr/bin:/bin expect_rc 0 taskfarm --items 40 --ms 1
one=$(grep -o '^checksum [0-9a-f]* items 40' "$T/out") || fail "taskfarm alone: $(cat "$T/out" "$T/err")"
grep -q "not inside a Ductile job: running on this host" "$T/err" ||
  fail "taskfarm alone did not say where it runs: $(cat "$T/err")"
# more workers than items: the late ones must not keep the leader waiting (it hung on
# them, 2 runs in 10 under ASan with 40 items and 3 workers; always with these)
PATH=/usr/bin:/bin expect_rc 0 taskfarm --items 1 --ms 1 --workers 8
grep -q '^checksum [0-9a-f]* items 1 ' "$T/out" || fail "taskfarm, late workers: $(cat "$T/out" "$T/err")"
PATH=/usr/bin:/bin expect_rc 0 taskfarm --items 40 --ms 1 --workers 3
three=$(grep -o '^checksum [0-9a-f]* items 40' "$T/out") || fail "taskfarm --workers 3: $(cat "$T/out" "$T/err")"
[ "$one" = "$three" ] || fail "checksums differ: 1 worker '$one', 3 workers '$three'"

# The MPI examples outside `ductile mpirun`: plain MPI programs on one process
# (no leak check once MPI started: Open MPI's memory at exit sits in components it has
# unloaded, see test_mpi.sh; --help, bad options and the task farm above keep it)
export ASAN_OPTIONS="${ASAN_OPTIONS:-}:detect_leaks=0"
expect_rc 0 jacobi2d --n 32 --iters 10
grep -q "^jacobi2d: n=32 iters=10 processes=1 checksum=" "$T/out" || fail "jacobi2d alone: $(cat "$T/out")"
expect_rc 0 pi --intervals 100000 --chunks 10
grep -q "^pi: 3.14159" "$T/out" || fail "pi alone: $(cat "$T/out")"
expect_rc 0 synthetic --iters 3 --compute-ms 1
grep -q "data in place" "$T/out" || fail "synthetic alone: $(cat "$T/out")"
expect_rc 0 mpi_hello
grep -q "^sum of ranks 0" "$T/out" || fail "mpi_hello alone: $(cat "$T/out")"
echo ok
