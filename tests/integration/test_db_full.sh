#!/usr/bin/env bash
# Issue 7, defect 5: a full disk under the controller's database. A batch that cannot
# be saved is rolled back and its requests answered "cannot save: no space left on
# device"; the controller stays up, reads keep working, nothing unsaved is claimed,
# and writes resume once there is space again.
. "$(dirname "$0")/lib.sh"
state_on_small_tmpfs
up 2
cd "$T"
quick=$(script quick.sh 'true')
ends=$(script ends.sh 'while [ ! -e "'"$T"'/go" ]; do sleep 0.1; done')
pid=$(cat "$T/c/ctld.pid")
j1=$(submit "$quick")
expect_state "$j1" CD
j2=$(submit "$ends")
expect_state "$j2" R
# fill the file system
dd if=/dev/zero of="$state/filler" bs=64k status=none 2>/dev/null || true
df -h "$state" | tail -1
# a submission cannot be saved: a clear error, no job
if d submit "$quick" > s.out 2>&1; then fail "submitted on a full disk: $(cat s.out)"; fi
grep -q 'cannot save: no space left on device' s.out || fail "error: $(cat s.out)"
alive "$pid" || fail "the controller died: $(tail "$T/c/log/ductiled.log")"
# reads keep working
d queue > q.txt || fail "queue on a full disk"
grep -qE "^$j2 .* R " q.txt || fail "queue: $(cat q.txt)"
[ "$(grep -c . q.txt)" -eq 2 ] || fail "the failed submission is in the queue: $(cat q.txt)"
is_state "$j1" CD || fail "show on a full disk"
d history > /dev/null || fail "history on a full disk"
# a cancel cannot be saved either: refused, the job runs on
if d cancel "$j2" > c.out 2>&1; then fail "cancelled on a full disk: $(cat c.out)"; fi
grep -q 'cannot save: no space left on device' c.out || fail "cancel error: $(cat c.out)"
# the job ends on its node while the disk is full: the end cannot be saved, so the
# controller does not claim it (the job stays R) until it can
log="$T/c/log/ductiled.log"
before=$(grep -c 'the batch was rolled back' "$log")
touch "$T/go"
# the node's report of the end arrives and its batch fails
wait_for 20 sh -c "[ \$(grep -c 'the batch was rolled back' '$log') -gt $before ]" ||
  fail "the end of job $j2 was never tried: $(tail "$log")"
is_state "$j2" R || fail "job $j2 is $(state "$j2") though its end could not be saved"
alive "$pid" || fail "the controller died: $(tail "$T/c/log/ductiled.log")"
grep -q 'the batch was rolled back' "$T/c/log/ductiled.log" || fail "log: $(tail "$T/c/log/ductiled.log")"
# space comes back: writes resume, the job's end is recorded
rm -f "$state/filler"
expect_state "$j2" CD 20
j3=$(submit "$quick")
[ -n "$j3" ] && [ "$j3" -gt "$j2" ] || fail "submission after space came back: '$j3'"
expect_state "$j3" CD
alive "$pid" || fail "the controller died"
# the database is sound: a restart loads it
d cluster down --dir "$T/c" >/dev/null
setsid "$BINDIR/ductiled" --conf "$DUCTILE_CONF" >> "$T/ctld2.log" 2>&1 < /dev/null &
echo $! > "$T/ctld2.pid"
wait_for 10 d nodes || fail "restart after the full disk: $(cat "$T/ctld2.log")"
is_state "$j3" CD || fail "job $j3 after restart"
kill "$(cat "$T/ctld2.pid")"
echo ok
