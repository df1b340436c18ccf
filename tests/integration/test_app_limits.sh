#!/usr/bin/env bash
# What the application accepts reaches the scheduler (issue 9). A job allowed 4 nodes
# whose application takes 1 to 2 (dt_set_size_limits), under fpsma-pwma with 3 idle
# nodes: one offer, 1 -> 2, committed (the controller offered 1 -> 4 over and over,
# 502 times in 20 s, each declined, and the job never grew). An application that
# declines everything is offered the same change again only after a back-off that
# doubles (ResizeBackoff): a few offers, not one per scheduling pass.
. "$(dirname "$0")/lib.sh"
up 4 --policy fpsma-pwma --set ResizeBackoff=4 # (the back-off: 10 s by default)
cd "$T"
app="$BINDIR/offer_app"
[ -x "$app" ] || fail "offer_app not built"
s=$(script lim.sh "#DUCTILE --nodes=1 --malleable --min-nodes=1 --max-nodes=4
$app $T/lim.log --limits 1 2 0 --until $T/stop1")
j=$(submit "$s")
expect_state "$j" R
wait_for 20 sh -c "\"$BIN\" show $j | grep -q '^NodeList *n\[1-2\]'" || fail "not grown to 2: $(d show "$j"; cat lim.log)"
# a few scheduling passes later (SchedulerTick 1): still one offer, still 2 nodes
# absence of a second offer can only be seen over time: 5 passes (SchedulerTick 1)
wait_for 5 false || true
[ "$(grep -c . lim.log)" = 1 ] || fail "offers: $(cat lim.log)"
grep -qx "offer 1 expand 1 2 committed" lim.log || fail "offer: $(cat lim.log)"
[ "$(field "$j" NodeList)" = "n[1-2]" ] || fail "size: $(d show "$j")"
d show "$j" | grep -qx "AppLimits *1-2 nodes, preferred 1 (set by the application)" || fail "show: $(d show "$j")"
[ "$(d show "$j" --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["app_limits"]["max"])')" = 2 ] || fail "show --json"
touch stop1
expect_state "$j" CD 20

# declines everything: 1 -> 4 at 0 s, again at 4 s (ResizeBackoff), not before
s=$(script dec.sh "#DUCTILE --nodes=1 --malleable --min-nodes=1 --max-nodes=4
$app $T/dec.log --decline --until $T/stop2")
j=$(submit "$s")
expect_state "$j" R
wait_for 20 test -s dec.log || fail "no offer: $(d show "$j")"
t0=$(date +%s.%N)
wait_for 20 sh -c "[ \$(grep -c declined $T/dec.log) -ge 2 ]" || fail "no second offer: $(cat dec.log)"
t1=$(date +%s.%N)
awk -v a="$t0" -v b="$t1" 'BEGIN {exit !(b - a >= 3.5)}' || fail "second offer after $(awk -v a="$t0" -v b="$t1" 'BEGIN {print b - a}') s: $(cat dec.log)"
[ "$(grep -c declined dec.log)" = 2 ] || fail "offers: $(cat dec.log)"
touch stop2
expect_state "$j" CD 20
echo ok
