#!/usr/bin/env bash
# Values a restart on another number of processes must rebuild, not copy (seed 002's
# SIZE, RANK, DEFAULT, DEFAULT..JOINING, VOLATILE with its function, and MANUAL data
# delivered whole to one process and spread by the application's function;
# docs/checkpointing.md). Saved on 4 processes, restored on 4, 6 and 2; then the
# mistakes. Plain mpirun on this host: no cluster.
. "$(dirname "$0")/lib.sh"
mpi_app dt_ckpt_values
D="$T/ckpt"

mpi_run 4 "$D" write > /dev/null 2> "$T/err" || fail "write on 4: $(cat "$T/err")"
for np in 4 6 2; do
  out=$(mpi_run "$np" "$D" check 4 2> "$T/err") || fail "check on $np: $out $(cat "$T/err")"
  [ "$out" = "values ok on $np processes" ] || fail "check on $np: $out"
done
# from 1 process to 3: every rank but 0 is new (the joining default), the manual whole
# is rank 0's part alone
mpi_run 1 "$D" write > /dev/null 2> "$T/err" || fail "write on 1: $(cat "$T/err")"
out=$(mpi_run 3 "$D" check 1 2> "$T/err") || fail "check on 3: $out $(cat "$T/err")"
[ "$out" = "values ok on 3 processes" ] || fail "1 -> 3: $out"

# what `ductile checkpoints` says of them
"$BIN" checkpoints --dir "$D" vals > "$T/show" || fail "show: $(cat "$T/show")"
grep -Eq '^  nprocs +1 elements of 4 bytes, the process count$' "$T/show" || fail "show: $(cat "$T/show")"
grep -Eq "^  mine +1 elements of 4 bytes, each process's own, a default for new ones$" "$T/show" ||
  fail "show: $(cat "$T/show")"
grep -Eq '^  items +1 elements of 8 bytes, manual \(whole to one process\)$' "$T/show" ||
  fail "show: $(cat "$T/show")"

# mistakes: a recalculated value restored without its function, a process count that is
# not an integer, joining values of different sizes
mistake() { # NP MODE OUTPUT MESSAGE: the app's answer and the message it printed
  out=$(mpi_run "$1" "$D" "$2" 2> "$T/err") || fail "$2: $(cat "$T/err")"
  [ "$out" = "$3" ] || fail "$2: $out"
  grep -qF "$4" "$T/err" || fail "$2 message: $(cat "$T/err")"
}
mistake 2 norecalc "restore len: -22" \
  "dt_ckpt_restore 'len': its value is recalculated: register it with dt_ckpt_add_value and its function before restoring it"
mistake 2 badsize "add: -22" \
  "dt_ckpt_add_value 'nprocs': a process count or rank is one integer (MPI_INT, MPI_LONG, ...)"
mistake 3 badjoin "commit: -22" "dt_ckpt_commit 'mine': rank 2 has 2 elements, its share of 1 is 1"
[ "$(cat "$D/vals/latest")" = 2 ] || fail "the refused commit moved latest: $(cat "$D/vals/latest")"
echo ok
