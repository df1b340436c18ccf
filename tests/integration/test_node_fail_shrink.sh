#!/usr/bin/env bash
# A malleable job loses a node that is not its first (issue 12, seed 003 §3.1.4's next
# step): its application asked to survive that (dt_set_survive_loss), so the job runs
# on without the node instead of ending NODE_FAIL; the task farm gives the lost node's
# item out again and its checksum equals a fixed run's. A job whose application did not
# ask, and a rigid job, still end NODE_FAIL.
. "$(dirname "$0")/lib.sh"
up 3 --node-timeout 3 --policy fcfs
cd "$T"
export PATH="$BINDIR:$PATH"
farm="$BINDIR/taskfarm"
[ -x "$farm" ] || fail "taskfarm not built"
s=$(script fixed.sh "#DUCTILE --nodes=3
$farm --items 900 --ms 5")
jf=$(submit "$s")
expect_state "$jf" CD 60
ref=$(awk '/^checksum/ {print $2}' "ductile-$jf.out")
[ -n "$ref" ] || fail "no reference checksum: $(cat "ductile-$jf.out")"
wait_for 20 sh -c "\"$BIN\" nodes | grep -q '3 idle'" || fail "nodes not free: $(d nodes)"

# kill_noded NODE: the node's daemon dies and stays dead; wait for the node to be down
kill_noded() {
  local old
  old=$(cat "$T/c/noded-$1.pid")
  kill -9 "$old"
  wait_for 10 sh -c "! kill -0 $old 2> /dev/null" || fail "noded $1 survived kill -9"
  wait_for 20 sh -c "\"$BIN\" nodes | grep -Eq '^$1 +down'" || fail "$1 not down: $(d nodes)"
}

# 1. The farm on n[1-3] loses n3: it runs on n[1-2], and the result is a fixed run's.
s=$(script farm.sh "#DUCTILE --nodes=3 --malleable --min-nodes=1 --max-nodes=3
$farm --items 900 --ms 40")
j=$(submit "$s")
expect_state "$j" R
three_workers() { [ "$(pids_here "^$farm --ms 40 --worker" | wc -l)" -ge 3 ]; }
wait_for 20 three_workers ||
  fail "three workers did not start: $(d show "$j")"
wait_for 20 sh -c "\"$BIN\" show $j | grep -q '^NodeFailure'" ||
  fail "the farm did not ask to survive a node's loss: $(d show "$j")"
kill_noded n3
wait_for 20 sh -c "\"$BIN\" show $j | grep -Eq '^NodeList +n\[1-2\]'" ||
  fail "job $j not on n[1-2]: $(d show "$j")"
field "$j" State | grep -q "(R)" || fail "job $j not running on: $(d show "$j")"
d show "$j" | grep -Eq 'shrink +3 -> 2 +NodeFail:n3' || fail "no failure shrink event: $(d show "$j")"
grep -q "node n3 failed; it runs on 2 nodes" "$T/c/log/ductiled.log" || fail "no log line"
expect_state "$j" CD 90
grep -q '^lost n3: running on 2 nodes (n\[1-2\])' "ductile-$j.out" ||
  fail "the farm was not told: $(cat "ductile-$j.out")"
[ "$(awk '/^checksum/ {print $2}' "ductile-$j.out")" = "$ref" ] ||
  fail "checksum after losing n3: $(cat "ductile-$j.out") (fixed: $ref)"
# the history keeps the size it ended with, the accounting the node-seconds of both
d history | grep -E "^ *$j " | grep -Eq ' 3>2 *$' || fail "history sizes: $(d history)"

# n3 back: the stale run is cleaned, the node is usable again
restart_noded n3
wait_for 30 sh -c "\"$BIN\" nodes | grep -q '3 idle'" || fail "n3 not idle again: $(d nodes)"
wait_for 20 none_here "^$farm --ms 40 --worker" || fail "a worker outlived its job"

# 2. A malleable job whose application never asked (a plain script): NODE_FAIL, as
# before.
runs=$(script sleeper.sh "#DUCTILE --nodes=3 --malleable --min-nodes=1 --max-nodes=3
sleep 120")
jm=$(submit "$runs")
expect_state "$jm" R
kill_noded n2
expect_state "$jm" NF 30
d show "$jm" | grep -Eq 'Reason +NodeFail:n2' || fail "reason: $(d show "$jm")"
echo ok
