#!/usr/bin/env bash
# Issue 7, defect 4: the controller never starts on a database that lost acknowledged
# jobs without saying so. A damaged page, a deleted WAL, a missing or empty database
# stop the start with a clear error; --recover starts anyway, says what is lost, and
# never gives a job id twice.
. "$(dirname "$0")/lib.sh"
up 2
cd "$T"
db="$T/c/state/ductile.db"
long=$(script long.sh 'exec sleep 300')
# a batch of acknowledged jobs with fat scripts (so the job table spans many pages),
# pending behind a job that holds the whole cluster
hold=$(submit -N 2 "$long")
expect_state "$hold" R
pad=$(head -c 3000 /dev/zero | tr '\0' x)
for i in $(seq 60); do printf '#!/bin/sh\n# %s\ntrue\n' "$pad" > "job$i.sh"; done
ids=""
for i in $(seq 60); do ids="$ids $(submit "$T/job$i.sh")"; done
last=${ids##* }
[ "$last" -gt 60 ] || fail "ids: $ids"

ctld() { "$BINDIR/ductiled" --conf "$DUCTILE_CONF" "$@"; }
# start_ctld [OPTIONS]: in the background, until it answers
start_ctld() {
  setsid "$BINDIR/ductiled" --conf "$DUCTILE_CONF" "$@" >> "$T/ctld2.log" 2>&1 < /dev/null &
  echo $! > "$T/ctld2.pid"
  wait_for 10 d nodes || fail "the controller did not start: $(tail "$T/ctld2.log")"
}
stop_ctld() {
  kill "$(cat "$T/ctld2.pid")"
  wait_for 10 sh -c "! kill -0 $(cat "$T/ctld2.pid")" || fail "the controller did not stop"
  rm -f "$T/ctld2.pid"
}
# refused PATTERN: a start must fail at once, saying PATTERN
refused() {
  if timeout 10 "$BINDIR/ductiled" --conf "$DUCTILE_CONF" > out.txt 2>&1; then
    fail "the controller started (expected: $1): $(cat out.txt)"
  fi
  grep -q "$1" out.txt || fail "expected '$1': $(cat out.txt)"
}

# --- a controller killed with commits in its WAL, the WAL deleted ---
d cluster down --keep-jobs --dir "$T/c" >/dev/null 2>&1 || true # a clean stop checkpoints
pkill -9 -f "$T/long.sh" 2>/dev/null || true
[ ! -e "$db-wal" ] || [ ! -s "$db-wal" ] || fail "a clean stop left a WAL"
start_ctld
more=""
for i in 1 2 3 4 5; do more="$more $(submit "$T/job$i.sh")"; done
lastmore=${more##* }
[ "$lastmore" -gt "$last" ] || fail "ids went backwards: $last then $more"
kill -9 "$(cat "$T/ctld2.pid")"
rm -f "$T/ctld2.pid"
[ -s "$db-wal" ] || fail "no WAL after kill -9"
cp "$db" db.before-wal-loss
rm -f "$db-wal" "$db-shm"
refused "behind what was acknowledged"
# recover: starts, says so, and the next id is past every acknowledged one
start_ctld --recover
grep -q 'are missing from' "$T/ctld2.log" || fail "recover: $(cat "$T/ctld2.log")"
new=$(submit "$T/job1.sh")
[ "$new" -gt "$lastmore" ] || fail "job id $new reused (acknowledged up to $lastmore)"
stop_ctld
# and after recovery the database starts normally
start_ctld
stop_ctld

# --- a damaged data page of the job table ---
# (a backup of the database and of its high-water mark: the run on the damaged copy
# commits, at least the fair-share usage of the job it still has running at its stop)
cp "$db" db.good
cp "$db.hwm" db.hwm.good
[ ! -s "$db-wal" ] || fail "WAL left after a clean stop"
size=$(stat -c %s "$db")
[ "$size" -gt $((20 * 4096)) ] || fail "database too small to damage: $size"
# the middle of the file: job rows (fat scripts)
printf 'garbage garbage garbage garbage %.0s' $(seq 128) |
  dd of="$db" bs=4096 seek=$((size / 4096 / 2)) conv=notrunc status=none
refused "is damaged"
start_ctld --recover
grep -q -- '--recover: the database .* is damaged' "$T/ctld2.log" || fail "recover log: $(cat "$T/ctld2.log")"
stop_ctld
cp db.good "$db"
cp db.hwm.good "$db.hwm"
rm -f "$db-wal" "$db-shm"

# --- a missing or empty database where one existed ---
mv "$db" db.moved
refused "is missing or empty, but"
: > "$db"
refused "is missing or empty, but"
rm -f "$db"
# restored, it starts with every job
mv db.moved "$db"
start_ctld
for id in $ids; do is_state "$id" PD || fail "job $id: $(d show "$id" 2>&1)"; done
stop_ctld

# --- a damaged high-water mark ---
cp "$db.hwm" hwm.good
printf 'xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx' | dd of="$db.hwm" bs=1 seek=8 conv=notrunc status=none
printf 'xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx' | dd of="$db.hwm" bs=1 seek=520 conv=notrunc status=none
refused "is damaged (no valid record)"
cp hwm.good "$db.hwm"

# --- a new cluster: a new database, said in the log ---
rm -rf "$T/c/state"
start_ctld
grep -q 'creating a new database' "$T/ctld2.log" || fail "fresh: $(cat "$T/ctld2.log")"
stop_ctld
echo ok
