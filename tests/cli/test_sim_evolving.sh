#!/usr/bin/env bash
# 'ductile sim' with evolving jobs' requests (tests/data/evolving.json, the run
# docs/experiments.md shows): the request rows and JSON, and the mistakes a user makes.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
wl="$src/tests/data/evolving.json"

"$bin" sim --workload "$wl" --policy easy,conservative > "$tmp/out.txt"
grep -Eq '^requests made +26 +26 ' "$tmp/out.txt" || fail "requests made: $(cat "$tmp/out.txt")"
grep -Eq '^requests granted at once +15 +15 ' "$tmp/out.txt" || fail "at once"
grep -Eq '^requests granted later +4 +4 ' "$tmp/out.txt" || fail "later"
grep -Eq '^request wait mean \[s\] +195.4 +309.5 ' "$tmp/out.txt" || fail "wait"
"$bin" sim --workload "$wl" --policy easy --json > "$tmp/out.json"
grep -q '"never_granted": 7' "$tmp/out.json" || fail "JSON: $(cat "$tmp/out.json")"
# a workload without requests has no such rows
"$bin" sim --workload "$src/tests/data/small.json" --policy easy > "$tmp/off.txt"
! grep -q '^requests' "$tmp/off.txt" || fail "request rows without requests"

printf '{"nodes": 4, "jobs": [{"runtime": 10, "nodes": 1, "requests": [{"at": 0.5, "nodes": 2}]}]}' > "$tmp/rigid.json"
printf '{"nodes": 4, "jobs": [{"runtime": 10, "nodes": 1, "type": "evolving", "requests": [{"at": 1.5, "nodes": 2}]}]}' > "$tmp/at.json"
printf '{"nodes": 4, "jobs": [{"runtime": 10, "nodes": 1, "type": "evolving", "requests": [{"at": 0.5, "nodes": 2}, {"at": 0.4, "nodes": 1}]}]}' > "$tmp/order.json"
expect_err "add \"type\": \"evolving\"" sim --workload "$tmp/rigid.json"
printf '{"nodes": 4, "jobs": [{"runtime": 10, "nodes": 1, "type": "evolving", "max": 4, "requests": [{"at": 0.5, "node": 2}]}]}' > "$tmp/key.json"
printf '{"nodes": 4, "jobs": [{"runtime": 10, "nodes": 2, "type": "evolving", "max": 4, "constraint": "even", "requests": [{"at": 0.5, "nodes": 3}]}]}' > "$tmp/cons.json"
printf '{"nodes": 4, "jobs": [{"runtime": 10, "nodes": 1, "type": "evolving", "max": 8, "requests": [{"at": 0.5, "nodes": 6}]}]}' > "$tmp/big.json"
expect_err "request 1 needs 'at', the share of the job's work done, between 0 and 1" sim --workload "$tmp/at.json"
expect_err "request 2 comes at 0.4, not after the request before it (0.5)" sim --workload "$tmp/order.json"
expect_err "request 1 has an unknown key 'node' (expected at, nodes)" sim --workload "$tmp/key.json"
# requests the engine could never grant: refused before the run, not counted as refused
expect_err "job 1: request 1 asks for 3 nodes, against the job's constraint" sim --workload "$tmp/cons.json"
expect_err "job 1: request 1 asks for 6 nodes, more than the cluster has" sim --workload "$tmp/big.json"
echo ok
