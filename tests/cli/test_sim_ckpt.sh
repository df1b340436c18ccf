#!/usr/bin/env bash
# 'ductile sim --ckpt-nodes': the checkpoint service's CSV, rows, JSON and errors on
# tests/data/ckpt.json (the run docs/simulator.md shows).
set -euo pipefail
. "$(dirname "$0")/lib.sh"
wl="$src/tests/data/ckpt.json"

"$bin" sim --workload "$wl" --policy easy --ckpt-nodes 2 --ckpt-node-mem 16384 \
  --ckpt-csv "$tmp/ck.csv" > "$tmp/out.txt"
head -1 "$tmp/ck.csv" | grep -qx 't,nodes,used_mb' || fail "ckpt CSV header"
# job 3's data raises a HIGH at t=300; job 2's shrink (0.84 s) hands its node over
grep -qx '300.84,3,28000' "$tmp/ck.csv" || fail "node lent at 300.84: $(cat "$tmp/ck.csv")"
grep -Eq '^ckpt HIGH served +1$' "$tmp/out.txt" || fail "HIGH served: $(cat "$tmp/out.txt")"
grep -Eq '^ckpt jobs shrunk +1$' "$tmp/out.txt" || fail "jobs shrunk"
grep -Eq '^ckpt \[node-s\] +21299.2$' "$tmp/out.txt" || fail "node-seconds"

"$bin" sim --workload "$wl" --policy easy --ckpt-nodes 2 --ckpt-node-mem 16384 \
  --ckpt-favor app --json > "$tmp/app.json"
grep -q '"high_refused": 2' "$tmp/app.json" || fail "favour-app refusals: $(cat "$tmp/app.json")"
grep -q '"nodes_peak": 2' "$tmp/app.json" || fail "favour-app peak"

# Without the option the report has no checkpoint rows nor key.
"$bin" sim --workload "$wl" --policy easy > "$tmp/off.txt"
"$bin" sim --workload "$wl" --policy easy --json > "$tmp/off.json"
! grep -q '^ckpt ' "$tmp/off.txt" || fail "checkpoint rows without --ckpt-nodes"
! grep -q '"ckpt":' "$tmp/off.json" || fail "checkpoint key without --ckpt-nodes"

expect_err "it needs 1 to 15 nodes" sim --workload "$wl" --ckpt-nodes 16
expect_err "neither icheck nor app" sim --workload "$wl" --ckpt-nodes 1 --ckpt-favor x
expect_err "add --ckpt-nodes" sim --workload "$wl" --ckpt-csv "$tmp/x.csv"
echo ok
