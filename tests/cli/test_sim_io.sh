#!/usr/bin/env bash
# 'ductile sim' with I/O phases and the shared file system (docs/simulator.md, "I/O and
# the file system"): the Fig. 4.6 example docs/policies.md shows, the I/O rows and JSON,
# the io-peaks workload, and the mistakes a user makes.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
wl="$src/tests/data/io-pairs.json"

"$bin" sim --workload "$wl" --pfs 1,1 --policy fcfs,io-aware > "$tmp/out.txt"
grep -Eq '^makespan \[s\] +15.0 +12.0 \(0.800\)' "$tmp/out.txt" || fail "makespan: $(cat "$tmp/out.txt")"
grep -Eq '^I/O phase mean \[s\] +5.00 +3.50 ' "$tmp/out.txt" || fail "I/O phase mean"
grep -Eq '^I/O intensity gap \|W-S\| +0.1800 +0.0000 ' "$tmp/out.txt" || fail "gap"
grep -q '^policy io-aware:alpha=0.5:wmean=1:fit=0:window=1000$' "$tmp/out.txt" || fail "canonical spec"
"$bin" sim --workload "$wl" --pfs 1,1 --policy io-aware --json > "$tmp/out.json"
grep -q '"phases": 4' "$tmp/out.json" || fail "JSON: $(cat "$tmp/out.json")"
grep -q '"intensity_gap": 0' "$tmp/out.json" || fail "JSON gap"
# without phases, no I/O rows
"$bin" sim --workload "$src/tests/data/small.json" --policy io-aware > "$tmp/off.txt"
! grep -q '^I/O' "$tmp/off.txt" || fail "I/O rows without phases"

# the generated workload: deterministic for a seed, different for another
"$bin" sim --workload io-peaks:200 --nodes 40 --policy io-aware --seed 3 > "$tmp/a.txt"
"$bin" sim --workload io-peaks:200 --nodes 40 --policy io-aware --seed 3 > "$tmp/b.txt"
"$bin" sim --workload io-peaks:200 --nodes 40 --policy io-aware --seed 4 > "$tmp/c.txt"
cmp -s "$tmp/a.txt" "$tmp/b.txt" || fail "io-peaks is not deterministic"
! cmp -s "$tmp/a.txt" "$tmp/c.txt" || fail "io-peaks ignores --seed"
grep -Eq '^jobs completed +200$' "$tmp/a.txt" || fail "io-peaks: $(cat "$tmp/a.txt")"

expect_err "--pfs: '12' is not LINK,TOTAL: two rates in GB/s (> 0)" sim --workload "$wl" --pfs 12
expect_err "--pfs: '1,0' is not LINK,TOTAL" sim --workload "$wl" --pfs 1,0
expect_err "io-peaks: its jobs ask for up to 20 nodes, and the cluster has 8" sim --workload io-peaks --nodes 8
expect_err "--workload io-peaks:N: 'x' is not a number of jobs" sim --workload io-peaks:x
printf '{"nodes": 4, "jobs": [{"runtime": 10, "nodes": 1, "iterations": 3}]}' > "$tmp/half.json"
printf '{"nodes": 4, "jobs": [{"runtime": 10, "nodes": 1, "io_intensity": 1.5}]}' > "$tmp/int.json"
expect_err "'iterations' and 'io_gb' go together" sim --workload "$tmp/half.json"
expect_err "'io_intensity' must be a number from 0 to 1" sim --workload "$tmp/int.json"
expect_err "has I/O phases: they cannot be simulated with a checkpoint service (--ckpt-nodes) yet" \
  sim --workload "$wl" --ckpt-nodes 1
"$bin" sim --workload "$wl" --mtbf 100000 --policy fcfs,io-aware > "$tmp/o" ||
  fail "I/O phases with node failures: $(cat "$tmp/o")"
grep -q '^node failures' "$tmp/o" || fail "no failures row: $(cat "$tmp/o")"
expect_err "policy io-aware: alpha=2 out of range" sim --workload "$wl" --policy io-aware:alpha=2
expect_err "policy io-aware: fit takes a whole number (0 or 1), not 0.5" sim --workload "$wl" --policy io-aware:fit=0.5
expect_err "policy io-aware: window takes a whole number, not 1.5" sim --workload "$wl" --policy io-aware:window=1.5
expect_err "policy io-aware does not admit jobs by power" sim --workload "$wl" --policy io-aware:power=1
printf '{"nodes": 4, "jobs": [{"runtime": 10, "nodes": 1, "iterations": 2, "io_gb": 0}]}' > "$tmp/zero.json"
expect_err "'io_gb' must be a number > 0" sim --workload "$tmp/zero.json"
# io-peaks says its malleable share
"$bin" sim --workload io-peaks:30 --nodes 20 > "$tmp/p.txt"
grep -q '^workload io-peaks:30: 30 jobs on 20 nodes, 20% made malleable' "$tmp/p.txt" || fail "header: $(head -1 "$tmp/p.txt")"
echo ok
