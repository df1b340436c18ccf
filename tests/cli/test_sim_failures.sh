#!/usr/bin/env bash
# 'ductile sim --failures/--mtbf': seed 003's toy example (Table 3.1) from the command
# line, the failure rows and events, drawn failures, and the mistakes a user makes.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
wl="$src/tests/data/toy-stealing.json"
tr="$src/tests/data/toy-stealing.failures"

"$bin" sim --workload "$wl" --policy conservative,sfsj --failures "$tr" \
  --events-csv "$tmp/ev.csv" --jobs-csv "$tmp/jobs.csv" > "$tmp/out.txt"
# flows 8/5/15/25/3 and 8/11/11/21/10: means 11.2 and 12.2, maxima 25 and 21
grep -Eq '^response mean \[s\] +11.2 +12.2 ' "$tmp/out.txt" || fail "mean flow: $(cat "$tmp/out.txt")"
grep -Eq '^response max \[s\] +25.0 +21.0 ' "$tmp/out.txt" || fail "max flow"
grep -Eq '^response node-weighted \[s\] +17.1 +14.7 ' "$tmp/out.txt" || fail "weighted flow"
grep -Eq '^jobs interrupted \(stealing\) +0 +1 ' "$tmp/out.txt" || fail "interrupts"
grep -Eq '^lost work \[node-s\] +6.0 +7.0 ' "$tmp/out.txt" || fail "lost work"
# the events: J3 fails, J2 is interrupted, J3 restarts at once on P2 and P4-P8
grep -qx '1,3,fail,6,0,' "$tmp/ev.sfsj.csv" || fail "fail event: $(cat "$tmp/ev.sfsj.csv")"
grep -qx '1,2,interrupt,1,0,' "$tmp/ev.sfsj.csv" || fail "interrupt event"
grep -qx '1,3,start,0,6,"1,3-7"' "$tmp/ev.sfsj.csv" || fail "restart on the stolen node"
grep -qx '5,3,start,0,6,"1,3-7"' "$tmp/ev.conservative.csv" || fail "baseline restart at 5"
# the jobs CSV shows a restarted job's last start
grep -qx '2,0,6,11,1,1,1,1,0,0' "$tmp/jobs.sfsj.csv" || fail "J2 row: $(cat "$tmp/jobs.sfsj.csv")"

"$bin" sim --workload "$wl" --policy sfsj --failures "$tr" --json > "$tmp/out.json"
grep -q '"interrupts": 1' "$tmp/out.json" || fail "JSON interrupts: $(cat "$tmp/out.json")"
grep -q '"restarts": 2' "$tmp/out.json" || fail "JSON restarts"

# Without failures the report has no failure rows nor key.
"$bin" sim --workload "$wl" --policy sfsj > "$tmp/off.txt"
! grep -q '^node failures' "$tmp/off.txt" || fail "failure rows without failures"

# Drawn failures: the same seed gives the same report; another seed another one.
"$bin" sim --workload esp --malleable 0.5 --policy conservative,sfsj --mtbf 100000 \
  --downtime 600 --seed 3 > "$tmp/d1.txt"
"$bin" sim --workload esp --malleable 0.5 --policy conservative,sfsj --mtbf 100000 \
  --downtime 600 --seed 3 > "$tmp/d2.txt"
cmp -s "$tmp/d1.txt" "$tmp/d2.txt" || fail "drawn failures differ between two runs"
grep -Eq '^node failures +[1-9]' "$tmp/d1.txt" || fail "no drawn failure: $(cat "$tmp/d1.txt")"

# Checkpoints: with one every 0.5 units of work, J3 keeps the 1 unit it did before the
# failure at 1 and restarts at 5 with 9 left: it ends at 14 instead of 15
"$bin" sim --workload "$wl" --policy conservative --failures "$tr" --checkpoint-every 0.5 \
  --jobs-csv "$tmp/ck.csv" > /dev/null
grep -qx '3,0,5,14,6,6,6,6,0,0' "$tmp/ck.csv" || fail "J3 from its checkpoint: $(cat "$tmp/ck.csv")"
# the same from the workload's own entry; a bad value names the key
sed 's/"nodes": 6, "runtime": 10}/"nodes": 6, "runtime": 10, "checkpoint_every": 0.5}/' "$wl" > "$tmp/own.json"
grep -q checkpoint_every "$tmp/own.json" || fail "sed did not add the key"
"$bin" sim --workload "$tmp/own.json" --policy conservative --failures "$tr" --jobs-csv "$tmp/own.csv" > /dev/null
grep -q '^3,0,5,14,' "$tmp/own.csv" || fail "J3 from its own checkpoint: $(cat "$tmp/own.csv")"
sed 's/"runtime": 8}/"runtime": 8, "checkpoint_cost": -1}/' "$wl" > "$tmp/bad.json"
expect_err "'checkpoint_cost' must be a number of seconds >= 0" sim --workload "$tmp/bad.json"
sed 's/"runtime": 8}/"runtime": 8, "checkpoint_cost": 2}/' "$wl" > "$tmp/costonly.json"
expect_err "'checkpoint_cost' needs 'checkpoint_every'" sim --workload "$tmp/costonly.json"
# failures so frequent that no job can finish: the run stops with the reason
printf '{"nodes": 7, "jobs": [{"runtime": 100, "nodes": 7}]}' > "$tmp/never.json"
expect_err "no job could finish: .* raise --mtbf or let the jobs checkpoint" sim --workload "$tmp/never.json" --mtbf 10 --downtime 5
expect_err "option '--mtbf' needs a value" sim --workload "$wl" --mtbf
expect_err "'0.0001' is not a time in seconds (>= 0.001)" sim --workload "$wl" --mtbf 100 --checkpoint-every 0.0001
expect_err "there are no failures" sim --workload "$wl" --checkpoint-every 10
expect_err "needs --checkpoint-every" sim --workload "$wl" --mtbf 100 --checkpoint-cost 1

printf '1 2 5\n0 1 5\n' > "$tmp/unordered"
printf '1 8 5\n' > "$tmp/outside"
printf '1 two 5\n' > "$tmp/garbled"
expect_err "unordered:2: failures must come in time order (0 after 1)" sim --workload "$wl" --failures "$tmp/unordered"
expect_err "node 8 is not in the cluster (nodes are 0 to 7)" sim --workload "$wl" --failures "$tmp/outside"
expect_err "garbled:1: expected TIME NODE DOWN_SECONDS" sim --workload "$wl" --failures "$tmp/garbled"
printf '1 1.5 3\n' > "$tmp/fraction"
expect_err "fraction:1: expected TIME NODE DOWN_SECONDS" sim --workload "$wl" --failures "$tmp/fraction"
expect_err "cannot read" sim --workload "$wl" --failures "$tmp/nosuch"
expect_err "'0' is not a time in seconds" sim --workload "$wl" --mtbf 0
expect_err "there is no --mtbf" sim --workload "$wl" --downtime 60
expect_err "no parameter 'victim'" sim --workload "$wl" --policy sfsj:victim=1
echo ok
