#!/usr/bin/env bash
# Commands refuse what they do not use, or take it as a filter (issue 7, defect 14);
# a cancel of many jobs is one request, applied at once, with a result per job (15).
. "$(dirname "$0")/lib.sh"
up 2
cd "$T"
printf '#!/bin/sh\ntrue\n' > plain.sh
j0=$(submit plain.sh)
j=$(submit plain.sh)
jn=$j
expect_state "$j0" CD
expect_state "$j" CD
# --- 14. commands refuse what they do not use
! d queue 31 2> e.txt || fail "queue 31 accepted"
grep -q "unexpected argument '31'" e.txt || fail "queue 31: $(cat e.txt)"
! d queue --limit 3 2> e.txt || fail "queue --limit accepted"
! d queue --reason x 2> e.txt || fail "queue --reason accepted"
! d show 1 --state R 2> e.txt || fail "show --state accepted"
! d nodes --limit 3 2> e.txt || fail "nodes --limit accepted"
! d nodes n1 n2 2> e.txt || fail "nodes n1 n2 accepted"
! d history --nodes 3 2> e.txt || fail "history --nodes accepted"
! d history --reason x 2> e.txt || fail "history --reason accepted"
! d drain n1 --state PD 2> e.txt || fail "drain --state accepted"
! d resize 1 --user root 2> e.txt || fail "resize --user accepted"
! d cancel --limit 3 1 2> e.txt || fail "cancel --limit accepted"
! d cancel 2> e.txt || fail "cancel without ids nor filters accepted"
! d cluster status extra 2> e.txt || fail "cluster status extra accepted"
! d cluster up --nodes 1 --dir "$T/c2" extra 2> e.txt || fail "cluster up ... extra accepted"
[ ! -e "$T/c2" ] || fail "cluster up ... extra started a cluster"
# a bad --set value is named as the user gave it, not by a line of the file it removed
! d cluster up --nodes 1 --dir "$T/c3" --set KillWait=5 --set CheckpointAgentMemory=lots 2> e.txt ||
  fail "cluster up --set CheckpointAgentMemory=lots accepted"
grep -q "^ductile: cluster up: --set CheckpointAgentMemory=lots: CheckpointAgentMemory: " e.txt &&
  ! grep -q "ductile.conf" e.txt || fail "cluster up --set message: $(cat e.txt)"
[ ! -e "$T/c3" ] || fail "a refused cluster up left $(ls -R "$T/c3")"
! d version extra 2> e.txt || fail "version extra accepted"
# ... or use them as filters
d nodes n1 > n.txt
[ "$(grep -c '^n[0-9]' n.txt)" = 1 ] && grep -q '^n1 ' n.txt || fail "nodes n1: $(cat n.txt)"
d nodes 'n[1-2]' > n.txt
[ "$(grep -c '^n[0-9]' n.txt)" = 2 ] || fail "nodes n[1-2]: $(cat n.txt)"
! d nodes n9 2> e.txt || fail "nodes n9 (unknown) accepted"
expect_state "$j" CD
d history "$j" --json > h.txt
[ "$(grep -c '"id":' h.txt)" = 1 ] && grep -q "\"id\": $j," h.txt || fail "history $j: $(cat h.txt)"
d history "$j" > h.txt
[ "$(grep -c '^[0-9]' h.txt)" = 1 ] || fail "history $j (table): $(cat h.txt)"

printf '#!/bin/sh\nsleep 60\n' > long.sh
r=$(submit -N 1 -t 10 -J running long.sh)
expect_state "$r" R
p1=$(submit -N 2 -J waiting long.sh)   # waits for both nodes
p2=$(submit -N 1 -J small long.sh)     # no limit: may not backfill before p1
p3=$(submit -N 1 -J small long.sh)
p4=$(submit -N 1 -J small long.sh)
expect_state "$p1" PD
d queue -j "$r,$p2" --json > q.txt
[ "$(grep -c '"id":' q.txt)" = 2 ] && grep -q "\"id\": $r," q.txt && grep -q "\"id\": $p2," q.txt ||
  fail "queue -j: $(cat q.txt)"
! d queue -j 1x 2> e.txt || fail "queue -j 1x accepted"
# cancel --state PD of a running job leaves it alone
d cancel --state PD "$r" > c.txt 2>&1 || fail "cancel --state PD: $(cat c.txt)"
is_state "$r" R || fail "cancel --state PD cancelled running job $r"
grep -q "$r" c.txt || fail "cancel does not say why $r was left: $(cat c.txt)"
# nobody may not cancel root's jobs with a filter, nor name another user
! setpriv --reuid=nobody --regid=nogroup --clear-groups -- "$BIN" cancel --user root 2> e.txt ||
  fail "nobody cancelled root's jobs"
grep -q "permission denied" e.txt || fail "cancel --user root by nobody: $(cat e.txt)"
setpriv --reuid=nobody --regid=nogroup --clear-groups -- "$BIN" cancel --name small > /dev/null 2>&1 || true
is_state "$p2" PD || fail "nobody's cancel --name small reached root's job"

# --- 15. a cancel of many jobs is one request: nothing starts in between
d cancel "$p1" "$p2" "$p3" "$p4" 99999 "$jn" > c.txt 2>&1 && fail "cancel with an unknown job returned 0"
for p in "$p1" "$p2" "$p3" "$p4"; do
  expect_state "$p" CA
  [ "$(field "$p" StartTime)" = - ] || fail "job $p started before it was cancelled"
  [ ! -e "ductile-$p.out" ] || fail "job $p created its output before it was cancelled"
done
grep -q "99999.*no such job" c.txt || fail "no per-job result for 99999: $(cat c.txt)"
grep -q "$jn.*already ended" c.txt || fail "no per-job result for $jn: $(cat c.txt)"
d cancel --json "$r" "$p1" > c.txt || true
grep -q "\"result\": \"cancelled\"" c.txt && grep -q "\"result\": \"already ended\"" c.txt ||
  fail "cancel --json: $(cat c.txt)"
expect_state "$r" CA
# a filter without ids: the caller's matching jobs
f1=$(submit -N 2 -J farm long.sh); f2=$(submit -N 2 -J farm long.sh); g=$(submit -N 2 -J other long.sh)
expect_state "$f1" R
d cancel --name farm --state PD > /dev/null || fail "cancel --name farm --state PD"
expect_state "$f2" CA
is_state "$f1" R || fail "cancel --name farm --state PD reached running job $f1"
d cancel --name farm > /dev/null || fail "cancel --name farm"
expect_state "$f1" CA
is_state "$g" R || is_state "$g" PD || fail "cancel --name farm reached job $g"
d cancel "$g"
# the controller's own timings (issue 13): every submission above led to a pass, and
# every pass and acknowledged change to a commit; the quantiles are ordered
d cluster status --json > s.json
python3 - s.json <<'PY' || fail "cluster status timings: $(cat s.json)"
import json, sys
s = json.load(open(sys.argv[1]))
for k in ("passes", "commits"):
    t = s[k]
    assert t["count"] >= 10 and t["kept"] == min(t["count"], 1024), (k, t)
    assert 0 < t["median_ms"] <= t["p99_ms"] <= t["max_ms"], (k, t)
    assert 0 < t["last_ms"] <= t["max_ms"], (k, t)
PY
d cluster status > s.txt
grep -q "^scheduling passes: [0-9]*, last [0-9.]* ms, median [0-9.]* ms, 99th percentile" s.txt &&
  grep -q "^commits: " s.txt || fail "cluster status: $(cat s.txt)"
[ -n "${SHOW_CLI_OUTPUT:-}" ] && cat c.txt q.txt n.txt h.txt >&2
echo "ok"
