#!/usr/bin/env bash
# 'ductile sim --priority' and '--per-user' end to end: settings, accounts, errors.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
trace="$src/tests/data/fairshare.swf"

# The settings, units converted, in the report's priority line.
"$bin" sim --no-progress --workload "$trace" --policy easy --per-user \
  --priority fairshare=1000,halflife=1d,calc=5m > "$tmp/on.txt"
grep -qx 'priority fairshare=1000,age=0,size=0,maxage=604800,halflife=86400,calc=300' \
  "$tmp/on.txt" || fail "priority line: $(grep priority "$tmp/on.txt")"
# One row per user (7), each in its group's account (group + 1): user 1 and 2 in 2.
rows=$(grep -cE '^ +[0-9]+ +[0-9]+ +[0-9]+ ' "$tmp/on.txt")
[ "$rows" -eq 7 ] || fail "7 user rows expected, got $rows: $(cat "$tmp/on.txt")"
grep -qE '^ +1 +2 +150 ' "$tmp/on.txt" || fail "user 1: account 2, 150 jobs"
grep -qE '^ +7 +4 +25 ' "$tmp/on.txt" || fail "user 7: account 4, 25 jobs"
# Without --priority: no priority line; the flooder's mean wait is lower than with it.
"$bin" sim --no-progress --workload "$trace" --policy easy --per-user > "$tmp/off.txt"
grep -q '^priority' "$tmp/off.txt" && fail "a priority line without --priority"
mean() { awk '$1 == 1 && $2 == 2 {print $4}' "$1"; }
awk -v a="$(mean "$tmp/off.txt")" -v b="$(mean "$tmp/on.txt")" 'BEGIN{exit !(b > a)}' \
  || fail "user 1 waits no longer with fair share: $(mean "$tmp/off.txt") -> $(mean "$tmp/on.txt")"
# JSON: the settings and a users array per run.
"$bin" sim --no-progress --workload "$trace" --policy fcfs --per-user --json \
  --priority fairshare=1000 > "$tmp/on.json"
python3 - "$tmp/on.json" <<'PY' || fail "JSON users"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["priority"].startswith("fairshare=1000,"), d["priority"]
u = d["runs"][0]["users"]
assert [x["user"] for x in u] == list(range(1, 8)), u
assert sum(x["jobs"] for x in u) == 300
PY

# JSON workloads take an account.
cat > "$tmp/w.json" <<'JSON'
{"nodes": 4, "jobs": [
  {"id": 1, "runtime": 100, "nodes": 4, "user": 1, "account": 1},
  {"id": 2, "runtime": 100, "nodes": 4, "user": 2, "account": 1},
  {"id": 3, "runtime": 100, "nodes": 4, "user": 3, "account": 2}]}
JSON
"$bin" sim --no-progress --workload "$tmp/w.json" --per-user --priority fairshare=1,calc=0 \
  > "$tmp/w.txt"
grep -qE '^ +3 +2 +1 +100\.0 ' "$tmp/w.txt" || fail "job 3 (account 2) before job 2: $(cat "$tmp/w.txt")"
sed 's/"account": 2/"account": -1/' "$tmp/w.json" > "$tmp/bad.json"
expect_err "'account' must be an integer >= 0" sim --no-progress --workload "$tmp/bad.json"

# Errors name the option and what it takes.
for bad in 'fairshare' 'weight=3' 'fairshare=-1' 'age=1e3' 'halflife=7x' 'calc=inf'; do
  expect_err "--priority: .*$bad" sim --workload "$trace" --priority "$bad"
done
echo ok
