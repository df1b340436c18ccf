#!/usr/bin/env bash
# 'ductile sim' with a power corridor (docs/power.md): the 20-job replay of seed 002
# §9.2.4 (bench/experiments/power20.json) under backfilling and the power-aware policy:
# the power policy spends less time outside the corridor; the power CSV follows the
# corridor's changes; bad corridors are refused in the user's words.
set -euo pipefail
bin=${DUCTILE_BIN:?}
src=${DUCTILE_SOURCE_DIR:?}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
wl="$src/bench/experiments/power20.json"
corr=1700-2500,1000-1700@400,2500-3500@650

"$bin" sim --no-progress --workload "$wl" --policy easy,power --corridor "$corr" \
  --power-csv "$tmp/p.csv" --json > "$tmp/out.json" || fail "sim failed"
outside() { # POLICY: seconds outside the corridor
  python3 -c "import json,sys; r=[x for x in json.load(open('$tmp/out.json'))['runs'] if x['policy']=='$1'][0]; print(r['power']['outside_seconds'])"
}
e=$(outside easy) p=$(outside power)
python3 -c "import sys; sys.exit(0 if $p < 0.5 * $e else 1)" ||
  fail "power spent $p s outside the corridor, easy $e s"
# every job completed under both
grep -c '"jobs_completed": 20' "$tmp/out.json" | grep -qx 2 || fail "not every job completed"
# the CSV: a header, then the corridor as it changed
head -1 "$tmp/p.power.csv" | grep -qx 't,watts,lower,upper' || fail "power CSV header"
awk -F, 'NR>1 && $1>=400 && $1<650 && !($3==1000 && $4==1700) {bad=1} END{exit bad}' \
  "$tmp/p.power.csv" || fail "the corridor between 400 and 650 s is not 1000-1700"
# under the power policy, the draw is inside [2500, 3500] 60 s after the last change
# while jobs still run
awk -F, 'NR>1 && $1>=710 && $1<1100 && ($2<2500 || $2>3500) {bad=1} END{exit bad}' \
  "$tmp/p.power.csv" || fail "power: draw outside 2500-3500 W after 710 s"
# the table shows the power rows only with a power model
"$bin" sim --no-progress --workload "$wl" --policy easy > "$tmp/plain.txt"
! grep -q "corridor violations" "$tmp/plain.txt" || fail "power rows without a power model"
"$bin" sim --no-progress --workload "$wl" --policy easy --corridor 0-100000 | grep -q "corridor violations" ||
  fail "no power rows with --corridor"
# mistakes
for bad in 2500-1700 1700 1700-2500,1000-1700 1700-2500@10,1000-1700@5 x-y; do
  if "$bin" sim --no-progress --workload "$wl" --corridor "$bad" > /dev/null 2> "$tmp/e.txt"; then
    fail "--corridor $bad was accepted"
  fi
  grep -q -- "--corridor" "$tmp/e.txt" || fail "--corridor $bad: $(cat "$tmp/e.txt")"
done
"$bin" sim --no-progress --workload "$wl" --idle-power -5 > /dev/null 2> "$tmp/e.txt" &&
  fail "a negative idle power was accepted"
grep -q "idle-power" "$tmp/e.txt" || fail "--idle-power -5: $(cat "$tmp/e.txt")"
echo ok
