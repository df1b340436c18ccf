#!/usr/bin/env bash
# 'ductile sim' end to end: outputs, naming, determinism, errors.
set -euo pipefail
bin=${DUCTILE_BIN:?}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

cat > "$tmp/t.swf" <<'SWF'
; Version: 2.2
; MaxNodes: 8
; MaxProcs: 8

1 0 -1 100 4 -1 -1 4 120 -1 1 1 -1 -1 -1 -1 -1 -1
2 10 -1 50 -1 -1 -1 8 40 -1 1 2 -1 -1 -1 -1 -1 -1
3 20 -1 30 2 -1 -1 -1 -1 -1 1 1 -1 -1 -1 -1 -1 -1
4 20 -1 -1 2 -1 -1 2 10 -1 1 1 -1 -1 -1 -1 -1 -1
5 25 -1 10 16 -1 -1 16 10 -1 1 1 -1 -1 -1 -1 -1 -1
SWF

# Table, CSVs and SVG for two policies; names get the policy inserted.
"$bin" sim --workload "$tmp/t.swf" --policy fcfs,easy --jobs-csv "$tmp/jobs.csv" \
  --events-csv "$tmp/ev.csv" --gantt "$tmp/g.svg" > "$tmp/out1.txt"
for p in fcfs easy; do
  [ -s "$tmp/jobs.$p.csv" ] || fail "jobs.$p.csv missing"
  [ -s "$tmp/ev.$p.csv" ] || fail "ev.$p.csv missing"
  [ -s "$tmp/g.$p.svg" ] || fail "g.$p.svg missing"
done
head -1 "$tmp/jobs.fcfs.csv" | grep -qx 'id,submit,start,end,nodes,min,max,final_nodes,expansions,shrinks' \
  || fail "jobs CSV header"
head -1 "$tmp/ev.fcfs.csv" | grep -qx 'time,job,op,nodes_before,nodes_after,node_list' \
  || fail "events CSV header"
# Jobs 4 (runtime -1) and 5 (16 > 8 nodes) are skipped by the replay rules.
grep -q '2 skipped by replay rules' "$tmp/out1.txt" || fail "skipped count: $(cat "$tmp/out1.txt")"
[ "$(wc -l < "$tmp/jobs.fcfs.csv")" -eq 4 ] || fail "3 jobs expected in the jobs CSV"
# fcfs: job 2 (8 nodes) waits for job 1 (ends 100); job 3 waits behind it: 100+50=150
grep -qx '3,20,150,180,2,2,2,2,0,0' "$tmp/jobs.fcfs.csv" || fail "fcfs row of job 3: $(cat "$tmp/jobs.fcfs.csv")"
# easy: job 3 (2 nodes, 30 s estimate) backfills beside job 1 at 20
grep -qx '3,20,20,50,2,2,2,2,0,0' "$tmp/jobs.easy.csv" || fail "easy row of job 3"
grep -qx '20,3,start,0,2,4-5' "$tmp/ev.easy.csv" || fail "easy start event of job 3: $(cat "$tmp/ev.easy.csv")"
grep -q 'ratios to fcfs' "$tmp/out1.txt" || fail "ratio line"

# Byte-identical outputs on a second run.
"$bin" sim --workload "$tmp/t.swf" --policy fcfs,easy --jobs-csv "$tmp/jobs2.csv" \
  --events-csv "$tmp/ev2.csv" --gantt "$tmp/g2.svg" > "$tmp/out2.txt"
cmp -s "$tmp/out1.txt" "$tmp/out2.txt" || fail "table differs between runs"
for p in fcfs easy; do
  cmp -s "$tmp/jobs.$p.csv" "$tmp/jobs2.$p.csv" || fail "jobs CSV differs"
  cmp -s "$tmp/ev.$p.csv" "$tmp/ev2.$p.csv" || fail "events CSV differs"
  cmp -s "$tmp/g.$p.svg" "$tmp/g2.$p.svg" || fail "SVG differs"
done

# ESP: same seed, same output; another seed, another order.
"$bin" sim --workload esp --nodes 34 --malleable 0.5 --policy fpsma-pwma,perf --json > "$tmp/a.json"
"$bin" sim --workload esp --nodes 34 --malleable 0.5 --policy fpsma-pwma,perf --json > "$tmp/b.json"
"$bin" sim --workload esp --nodes 34 --malleable 0.5 --policy fpsma-pwma,perf --json --seed 2 > "$tmp/c.json"
cmp -s "$tmp/a.json" "$tmp/b.json" || fail "ESP JSON not deterministic"
cmp -s "$tmp/a.json" "$tmp/c.json" && fail "ESP JSON identical for different seeds"
grep -q '"jobs_completed": 230' "$tmp/a.json" || fail "230 ESP jobs expected"

# JSON workload with every field.
cat > "$tmp/w.json" <<'JSON'
{"nodes": 8, "jobs": [
 {"id": 7, "submit": 0, "runtime": 100, "nodes": 2, "type": "malleable", "min": 1, "max": 8,
  "constraint": "pof2", "speedup": "linear"},
 {"id": 8, "submit": 5, "runtime": 20, "nodes": 4}
]}
JSON
"$bin" sim --workload "$tmp/w.json" --policy fpsma-pwma --jobs-csv "$tmp/wj.csv" > /dev/null
grep -q '^7,0,0,' "$tmp/wj.csv" || fail "JSON job 7 row"

# Errors: one line, non-zero exit, nothing on stdout.
expect_err() { # pattern, args...
  local pat=$1; shift
  if "$bin" "$@" > "$tmp/o" 2> "$tmp/e"; then fail "expected failure: $*"; fi
  grep -q -- "$pat" "$tmp/e" || fail "message for '$*': $(cat "$tmp/e")"
  [ ! -s "$tmp/o" ] || fail "stdout not empty for '$*'"
}
expect_err "unknown policy 'nope'" sim --workload esp --policy nope
expect_err "policy elastic: below is given twice" sim --workload esp --policy elastic:below=1:below=0
expect_err "policy elastic: gaps=2 out of range" sim --workload esp --policy elastic:gaps=2
expect_err "cannot\|No such file" sim --workload "$tmp/missing.swf"
expect_err "--workload is required" sim
expect_err "not a share" sim --workload esp --malleable 2
printf '1 0 -1 100 4\n' > "$tmp/bad.swf"
expect_err "bad.swf:1" sim --workload "$tmp/bad.swf" --nodes 8
"$bin" sim --workload "$tmp/bad.swf" --nodes 8 --lenient > "$tmp/o" || fail "--lenient should accept"
grep -q '1 malformed lines skipped' "$tmp/o" || fail "malformed count"
expect_err "unknown command" nosuch
echo ok
