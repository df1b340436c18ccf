#!/usr/bin/env bash
# Issue 7, defect 3: an operator removes nodes from Nodes. The stored state names its
# nodes, so `history` and `show` of any user keep working and show the removed nodes
# by name, with a note; a job that was running on a removed node ends NODE_FAIL (it
# cannot be restored there) instead of pointing past the node table.
. "$(dirname "$0")/lib.sh"
up 4
cd "$T"
quick=$(script quick.sh 'true')
long=$(script long.sh 'exec sleep 300')
done4=$(submit -N 4 "$quick")
expect_state "$done4" CD
run4=$(submit -N 4 "$long")
expect_state "$run4" R
pend=$(submit -N 1 "$quick") # pending behind run4 (the cluster is full)
# the controller stops (kill -9: the running job stays recorded as running), then
# every node daemon
kill -9 "$(cat "$T/c/ctld.pid")"
rm -f "$T/c/ctld.pid"
d cluster down --dir "$T/c" >/dev/null 2>&1 || true
pkill -9 -f "$T/long.sh" 2>/dev/null || true
# the operator removes n3 and n4
sed -i 's/^Nodes = .*/Nodes = n[1-2]/' "$DUCTILE_CONF"
setsid "$BINDIR/ductiled" --conf "$DUCTILE_CONF" >> "$T/ctld2.log" 2>&1 < /dev/null &
echo $! > "$T/ctld2.pid"
wait_for 10 d nodes || fail "the controller did not come back: $(cat "$T/ctld2.log")"
d history > h.txt || fail "history failed: $(cat "$T/ctld2.log")"
alive "$(cat "$T/ctld2.pid")" || fail "the controller died on history: $(tail "$T/ctld2.log")"
grep -qE "^$done4 " h.txt || fail "history: $(cat h.txt)"
d history --json > hj.txt || fail "history --json failed"
grep -q '"nodelist": "n\[1-4\] (n\[3-4\] not in the configuration)"' hj.txt ||
  fail "history --json: $(cat hj.txt)"
d show "$done4" > s.txt || fail "show failed"
grep -E '^NodeList +n\[1-4\] \(n\[3-4\] not in the configuration\)' s.txt ||
  fail "show: $(cat s.txt)"
# another user asks too
if id nobody >/dev/null 2>&1; then
  su -s /bin/sh nobody -c "DUCTILE_CONF=$DUCTILE_CONF $BIN history" > h2.txt ||
    fail "history as nobody: $(cat h2.txt)"
  grep -qE "^$done4 " h2.txt || fail "history as nobody: $(cat h2.txt)"
fi
# the job that was running on the removed nodes ended, named by its nodes
expect_state "$run4" NF 10
d show "$run4" > r.txt
grep -E '^NodeList +n\[1-4\]' r.txt || fail "run4: $(cat r.txt)"
grep -E '^Reason +NodeRemoved:n\[3-4\]' r.txt || fail "run4 reason: $(cat r.txt)"
grep -q 'nodes n\[3-4\] are no longer configured' "$T/ctld2.log" || fail "log: $(cat "$T/ctld2.log")"
# the pending job is still there
is_state "$pend" PD || fail "pending job: $(d show "$pend")"
alive "$(cat "$T/ctld2.pid")" || fail "the controller died"
echo ok
