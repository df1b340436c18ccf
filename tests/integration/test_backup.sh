#!/usr/bin/env bash
# Online backup and restore (issue 35): `ductile cluster backup FILE` copies the
# controller's database while it runs (root and Operators only, a new file, mode 0600);
# restored in place of the database (the high-water mark kept), the controller refuses
# to start and names the jobs acknowledged after the copy; with --recover it starts
# from the copy, says what it lacks, and never gives a job id a second time.
. "$(dirname "$0")/lib.sh"
up 2
cd "$T"
quick=$(script quick.sh 'true')
sleeper=$(script sleeper.sh 'sleep 300')
j1=$(submit "$sleeper")
j2=$(submit "$quick")
expect_state "$j1" R
expect_state "$j2" CD
# users may not; nor may anyone overwrite a file or write a relative path's elsewhere
as_nobody "$BIN" cluster backup "$T/pub.db" > nb.out 2>&1 && fail "nobody made a backup: $(cat nb.out)"
grep -q "permission denied: only root and Operators" nb.out || fail "refusal: $(cat nb.out)"
[ ! -e "$T/pub.db" ] || fail "the refused backup left a file"
d cluster backup copy.db > b.out || fail "backup: $(cat b.out)"
grep -q "^backed up to $T/copy.db: commit [0-9]*, job ids up to $j2 " b.out || fail "backup said: $(cat b.out)"
[ "$(stat -c %a copy.db)" = 600 ] || fail "the copy's mode: $(stat -c %a copy.db)"
refused "exists" d cluster backup copy.db
# jobs acknowledged after the copy
j3=$(submit "$quick")
j4=$(submit "$quick")
expect_state "$j4" CD
# restore: the copy in place of the database, the mark left as it is
pid=$(cat "$T/c/ctld.pid")
kill "$pid"
wait_for 15 sh -c "! kill -0 $pid 2> /dev/null" || fail "the controller did not stop"
state=$(awk '$1 == "StateDir" {print $3}' "$DUCTILE_CONF")
[ -n "$state" ] || state="$T/c/state"
# (on the controller's host: its state directory is its own)
on ctl rm -f "$state/ductile.db-wal" "$state/ductile.db-shm"
on ctl cp "$T/copy.db" "$state/ductile.db"
! on ctl "$BINDIR/ductiled" --conf "$DUCTILE_CONF" > start.out 2>&1 || fail "started on the copy without --recover"
grep -q "is a copy made by ductile cluster backup" start.out || fail "not told it is a copy: $(cat start.out)"
grep -q "it lacks jobs $j3 to $j4" start.out || fail "the lacking jobs not named: $(cat start.out)"
restart_ctld_recover() {
  if [ "$HOSTS" = 1 ]; then
    spawn_on ctl "$T/c/log/ductiled.log" "$T/c/ctld.pid" "$BINDIR/ductiled" --conf "$DUCTILE_CONF" --recover
    return
  fi
  setsid "$BINDIR/ductiled" --conf "$DUCTILE_CONF" --recover >> "$T/c/log/ductiled.log" 2>&1 < /dev/null &
  echo $! > "$T/c/ctld.pid"
}
restart_ctld_recover
wait_for 20 d queue > /dev/null || fail "the controller did not start with --recover"
grep -q "it lacks jobs $j3 to $j4: going on without them; new jobs are numbered from $((j4 + 1))" "$T/c/log/ductiled.log" ||
  fail "recover's log: $(tail -5 "$T/c/log/ductiled.log")"
is_state "$j1" R || fail "job $j1 from the copy: $(state "$j1")"
j5=$(submit "$quick")
[ "$j5" = $((j4 + 1)) ] || fail "a job id given again: $j5 (ids up to $j4 were acknowledged)"
expect_state "$j5" CD
d cancel "$j1" > /dev/null
echo ok
