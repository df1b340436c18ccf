#!/usr/bin/env bash
# 'ductile sim' with a power corridor (docs/power.md): the 20-job replay of seed 002
# §9.2.4 (bench/experiments/power20.json) under backfilling and the power-aware policy:
# the power policy spends less time outside the corridor; the power CSV follows the
# corridor's changes; bad corridors are refused in the user's words. Then the power
# chart (--power-svg) of a small workload whose draw is known by hand.
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

# --power-svg: the draw over time against the corridor.
# A small workload whose draw is known by hand (4 nodes, idle 50 W; job 1: 2 nodes at
# 200 W from 0 to 100 s; job 2: 2 nodes at 100 W from 50 to 150 s; corridor 300-500 W,
# then 600-700 W from 120 s):
#   0-50 s 500 W (inside), 50-100 s 600 W (above), 100-150 s 300 W (inside until the
#   corridor rises at 120 s, then below), 200 W at the end.
# The SVG must parse as XML, draw the draw with exactly those 3 steps, both bounds with
# one change each, and the two periods outside; mistakes are refused in the user's words.
cat > "$tmp/small.json" <<'EOF'
{"nodes": 4,
 "jobs": [
  {"id": 1, "submit": 0, "runtime": 100, "nodes": 2, "type": "rigid", "power": [200, 200]},
  {"id": 2, "submit": 50, "runtime": 100, "nodes": 2, "type": "rigid", "power": [100, 100]}
 ]}
EOF
sim() { "$bin" sim --no-progress --workload "$tmp/small.json" --idle-power 50 "$@"; }

sim --policy easy --corridor 300-500,600-700@120 --power-svg "$tmp/p.svg" > "$tmp/out.txt" ||
  fail "sim --power-svg failed"
grep -Eq '^corridor violations +2$' "$tmp/out.txt" ||
  fail "expected 2 violations: $(cat "$tmp/out.txt")"
# outside: 50-100 s 100 W above, 120-150 s 300 W below; 100-120 s is judged against the
# corridor then in force (inside), and the idle cluster after the last job (a tick at
# 154 s) is not outside
for pol in easy easy:tick=7; do
  sim --policy "$pol" --corridor 300-500,600-700@120 > "$tmp/o.txt"
  grep -Eq '^outside corridor \[s\] +80\.0$' "$tmp/o.txt" &&
    grep -Eq '^outside corridor \[W s\] +14000$' "$tmp/o.txt" ||
    fail "$pol: outside the corridor: $(grep outside "$tmp/o.txt")"
done

# the drawing's elements, by class (an ElementTree parse: well-formed XML)
python3 - "$tmp/p.svg" > "$tmp/paths.txt" <<'EOF' || fail "the SVG is not well-formed XML"
import sys, xml.etree.ElementTree as ET
root = ET.parse(sys.argv[1]).getroot()
ns = '{http://www.w3.org/2000/svg}'
assert root.tag == ns + 'svg', root.tag
for e in root.iter():
    c = e.get('class')
    if c in ('draw', 'lower', 'upper', 'corridor', 'drawout'):
        print(c, e.get('d'))
    if c == 'out':
        print('out', e.get('x'), e.get('width'), e.find(ns + 'title').text)
texts = ' | '.join(t.text or '' for t in root.iter(ns + 'text'))
print('texts', texts)
EOF
# path d of the element with class $1, and its step count (the V commands)
d() { sed -n "s/^$1 //p" "$tmp/paths.txt"; }
steps() { d "$1" | tr -cd 'V' | wc -c; }
[ "$(d draw | wc -l)" = 1 ] || fail "no single draw path: $(cat "$tmp/paths.txt")"
[ "$(steps draw)" = 3 ] || fail "the draw has $(steps draw) steps, not 3: $(d draw)"
# plot 70..1170 px for 0..150 s; 0..800 W over 620..50 px (0.7125 px per W)
[ "$(d draw)" = "M70 263.75H436.67V192.5H803.33V406.25H1170V477.5H1170" ] ||
  fail "draw path: $(d draw)"
[ "$(steps lower)" = 1 ] && [ "$(steps upper)" = 1 ] || fail "bounds: $(d lower) / $(d upper)"
[ "$(d lower)" = "M70 406.25H950V192.5H1170" ] || fail "lower bound: $(d lower)"
[ "$(d upper)" = "M70 263.75H950V121.25H1170" ] || fail "upper bound: $(d upper)"
d corridor | grep -q 'Z$' || fail "no corridor band"
grep -c '^out ' "$tmp/paths.txt" | grep -qx 2 ||
  fail "expected 2 periods outside: $(cat "$tmp/paths.txt")"
grep -q '^out 436.67 366.66 outside the corridor: 50-100 s$' "$tmp/paths.txt" ||
  fail "the first period outside: $(grep '^out' "$tmp/paths.txt")"
grep -q '^out 950 220 outside the corridor: 120-150 s$' "$tmp/paths.txt" ||
  fail "the second period outside: $(grep '^out' "$tmp/paths.txt")"
[ "$(d drawout)" = "M436.67 192.5H803.33M950 406.25H1170" ] || fail "red draw: $(d drawout)"
grep -q 'time (s)' "$tmp/paths.txt" || fail "no time axis label"
grep -q 'cluster power draw (W)' "$tmp/paths.txt" || fail "no watts axis label"
grep -q '3 changes of the draw, 2 periods outside the corridor' "$tmp/paths.txt" ||
  fail "legend: $(grep texts "$tmp/paths.txt")"

# byte-identical on a second run; one file per policy with several
sim --policy easy --corridor 300-500,600-700@120 --power-svg "$tmp/q.svg" > /dev/null
cmp -s "$tmp/p.svg" "$tmp/q.svg" || fail "two runs wrote different SVGs"
sim --policy easy,fcfs --corridor 300-500,600-700@120 --power-svg "$tmp/m.svg" > /dev/null
[ -s "$tmp/m.easy.svg" ] && [ -s "$tmp/m.fcfs.svg" ] || fail "no per-policy SVGs: $(ls "$tmp")"

# mistakes: no corridor, a file that cannot be created (refused before the run)
if sim --policy easy --power-svg "$tmp/n.svg" > "$tmp/o.txt" 2> "$tmp/e.txt"; then
  fail "--power-svg without --corridor was accepted"
fi
grep -q -- "--power-svg" "$tmp/e.txt" && grep -q -- "--corridor" "$tmp/e.txt" ||
  fail "--power-svg without a corridor: $(cat "$tmp/e.txt")"
[ ! -e "$tmp/n.svg" ] && [ ! -s "$tmp/o.txt" ] || fail "a chart or a report without a corridor"
if sim --policy easy --corridor 300-500 --power-svg "$tmp/no/such/dir/p.svg" > "$tmp/o.txt" \
  2> "$tmp/e.txt"; then
  fail "an unwritable --power-svg was accepted"
fi
grep -q "cannot create power chart $tmp/no/such/dir/p.svg: No such file or directory" \
  "$tmp/e.txt" || fail "unwritable path: $(cat "$tmp/e.txt")"
[ ! -s "$tmp/o.txt" ] || fail "a report although the chart could not be written"
echo ok
