#!/usr/bin/env bash
# A node fails while its malleable job is being offered a resize its application has
# not answered (issue 12): the offer is withdrawn and the job, whose application asked
# to survive a node's loss, runs on without the node instead of ending NODE_FAIL.
. "$(dirname "$0")/lib.sh"
up 3 --node-timeout 3 --policy fcfs --resize-timeout 120
cd "$T"
app="$BINDIR/tests/resize_app"
[ -x "$app" ] || fail "resize_app not built"
s=$(script silent.sh "#DUCTILE --nodes=3 --malleable --min-nodes=1 --max-nodes=3
$app silent $T/stop")
j=$(submit "$s")
expect_state "$j" R
wait_for 20 grep -q "attached (silent)" "ductile-$j.out" || fail "no attach: $(cat "ductile-$j.out")"
# the operator's shrink to 2 is offered and never answered (the command waits for it)
timeout 60 "$BIN" resize "$j" -N 2 > "$T/resize.out" 2>&1 &
rpid=$!
wait_for 20 grep -q "offer .* shrink 3 -> 2" "ductile-$j.out" ||
  fail "no offer: $(cat "ductile-$j.out"; d show "$j")"
is_state "$j" RS || fail "job $j is not resizing: $(d show "$j")"
old=$(cat "$T/c/noded-n2.pid")
kill -9 "$old"
wait_for 10 sh -c "! kill -0 $old 2> /dev/null" || fail "noded n2 survived kill -9"
wait_for 30 sh -c "\"$BIN\" show $j | grep -Eq '^NodeList +n\[1,3\]'" ||
  fail "job $j did not run on without n2: $(d show "$j")"
is_state "$j" R || fail "job $j: $(d show "$j")"
d show "$j" | grep -Eq "resize_withdrawn .*node n2 failed" || fail "offer not withdrawn: $(d show "$j")"
wait "$rpid" || true
touch "$T/stop"
expect_state "$j" CD 30
echo ok
