#!/usr/bin/env bash
# Checkpoints at the file level (issue 11; docs/checkpointing.md): a round trip, restarts
# on other process counts (block and block-cyclic data, 4 -> 6, 1 -> 16, 16 -> 8), a
# commit interrupted by a kill leaves the version before it whole, and the mistakes a
# user makes get a message in their words. Plain mpirun on this host: no cluster.
. "$(dirname "$0")/lib.sh"
mpi_app dt_ckpt_app
D="$T/ckpt"

# round trip, then the same files on other process counts
mpi_run 4 "$D" write 3 > /dev/null 2> "$T/err" || fail "write on 4: $(cat "$T/err")"
[ "$(cat "$D/app/latest")" = 3 ] || fail "latest: $(cat "$D/app/latest")"
for np in 4 6 1; do
  out=$(mpi_run "$np" "$D" check 2> "$T/err") || fail "check on $np: $(cat "$T/err")"
  [ "$out" = "restored version 3 on $np processes" ] || fail "check on $np: $out"
done
# two complete versions are kept, the older go
[ -d "$D/app/v2" ] && [ ! -d "$D/app/v1" ] || fail "versions kept: $(ls "$D/app")"

# 1 -> 16 and 16 -> 8
mpi_run 1 "$D" write 1 > /dev/null 2> "$T/err" || fail "write on 1: $(cat "$T/err")"
out=$(mpi_run 16 "$D" check 2> "$T/err") || fail "check on 16: $(cat "$T/err")"
[ "$out" = "restored version 4 on 16 processes" ] || fail "1 -> 16: $out"
mpi_run 16 "$D" write 1 > /dev/null 2> "$T/err" || fail "write on 16: $(cat "$T/err")"
out=$(mpi_run 8 "$D" check 2> "$T/err") || fail "check on 8: $(cat "$T/err")"
[ "$out" = "restored version 5 on 8 processes" ] || fail "16 -> 8: $out"

# asynchronous commits: the data changes as soon as each returns, what is saved does not
mpi_run 4 "$D" write-async 1 > /dev/null 2> "$T/err" || fail "async: $(cat "$T/err")"
out=$(mpi_run 5 "$D" check 2> "$T/err") || fail "check after async: $(cat "$T/err")"
[ "$out" = "restored version 6 on 5 processes" ] || fail "async: $out"

# a commit killed after its files were written and before it was published
! DUCTILE_TEST_CKPT_CRASH=7 mpi_run 2 "$D" write 1 > /dev/null 2>&1 || fail "the crash hook did not fire"
[ -d "$D/app/v7.part" ] || fail "no interrupted version: $(ls "$D/app")"
out=$(mpi_run 3 "$D" check 2> "$T/err") || fail "check after the crash: $(cat "$T/err")"
[ "$out" = "restored version 6 on 3 processes" ] || fail "after the crash: $out"
[ ! -e "$D/app/v7.part" ] || fail "the interrupted version was left: $(ls "$D/app")"
# a damaged file is noticed by the check (the app's check compares every element)
printf 'garbage!' | dd of="$D/app/v6/node0.dat" bs=1 seek=64 conv=notrunc 2> /dev/null
! mpi_run 2 "$D" check > /dev/null 2> "$T/err" || fail "a damaged checkpoint passed the check"
grep -q "elements differ" "$T/err" || fail "damage: $(cat "$T/err")"

# mistakes: a directory that cannot be made, a share that is not the distribution's
touch "$T/file"
! mpi_run 2 "$T/file" write 1 > /dev/null 2> "$T/err" || fail "a file as the directory"
grep -q "cannot create the checkpoint directory $T/file/app: Not a directory" "$T/err" ||
  fail "bad directory message: $(cat "$T/err")"
out=$(mpi_run 2 "$D" bad 2> "$T/err") || fail "bad: $(cat "$T/err")"
[ "$out" = "commit: -22" ] || fail "a wrong share committed: $out"
grep -q "dt_ckpt_commit 'block': rank 1 has 500 elements, its share of 1003 is 501" "$T/err" ||
  fail "wrong share message: $(cat "$T/err")"
[ "$(cat "$D/app/latest")" = 6 ] || fail "the refused commit moved latest: $(cat "$D/app/latest")"
# what `ductile checkpoints` says of them
"$BIN" checkpoints --dir "$D" > "$T/list" || fail "checkpoints: $(cat "$T/list")"
grep -Eq '^app +6 +4 +1 +[0-9.]+ KiB +[0-9T:-]+ +v5,v6 +$' "$T/list" || fail "list: $(cat "$T/list")"
"$BIN" checkpoints --dir "$D" app > "$T/show"
grep -q "^Version      6, saved .* by 4 processes on 1 node, " "$T/show" || fail "show: $(cat "$T/show")"
grep -Eq '^  cyc +997 elements of 4 bytes, block-cyclic 3$' "$T/show" || fail "show: $(cat "$T/show")"
! "$BIN" checkpoints --dir "$D" nosuch 2> "$T/err" || fail "an unknown application listed"
grep -qx "ductile: checkpoints: no checkpoints of 'nosuch' in $D" "$T/err" || fail "$(cat "$T/err")"
echo ok
