#!/usr/bin/env bash
# The elastic policy on the cluster (docs/policies.md, "elastic"): a malleable task
# farm starts at its requested size (2 nodes), is lent the idle nodes (4), gives them
# back for a 2-node job, and is never shrunk below what it asked for: a 3-node job,
# which only one of the farm's own nodes would let start, waits for it to end. The
# result is the fixed-size run's.
. "$(dirname "$0")/lib.sh"
up 4 --policy elastic --resize-timeout 5
cd "$T"
export PATH="$BINDIR:$PATH"
farm="$BINDIR/taskfarm"
[ -x "$farm" ] || fail "taskfarm not built"
s=$(script fixed.sh "#DUCTILE --nodes=2
$farm --items 400 --ms 40")
jf=$(submit "$s")
expect_state "$jf" CD 60
ref=$(awk '/^checksum/ {print $2}' "ductile-$jf.out")
[ -n "$ref" ] || fail "no reference checksum: $(cat "ductile-$jf.out")"
wait_for 20 sh -c "\"$BIN\" nodes | grep -q '4 idle'" || fail "nodes not free: $(d nodes)"

s=$(script farm.sh "#DUCTILE --nodes=2 --malleable --min-nodes=1 --max-nodes=4
$farm --items 400 --ms 40")
j=$(submit "$s")
expect_state "$j" R
d show "$j" | grep -Eq 'start +0 -> 2 +Order' || fail "not started at its size: $(d show "$j")"
wait_for 30 grep -q "resize expand to 4" "ductile-$j.out" ||
  fail "no expand: $(cat "ductile-$j.out"; d show "$j")"
r=$(script rigid.sh '#DUCTILE --nodes=2
sleep 0.5')
jr=$(submit "$r")
expect_state "$jr" CD 30
grep -q "resize shrink to 2" "ductile-$j.out" || fail "no shrink: $(cat "ductile-$j.out")"
field "$j" Reason | grep -Eq '^(MakeRoom|IdleNodes)$' ||
  fail "a resized job's reason: $(d show "$j")" # why it last changed, not Order
r3=$(script rigid3.sh '#DUCTILE --nodes=3
sleep 0.5')
j3=$(submit "$r3")
expect_state "$j" CD 60
grep -q "resize shrink to 1" "ductile-$j.out" && fail "shrunk below its request: $(cat "ductile-$j.out")"
expect_state "$j3" CD 30
[ "$(awk '/^checksum/ {print $2}' "ductile-$j.out")" = "$ref" ] ||
  fail "checksum differs from the fixed-size run: $(cat "ductile-$j.out")"
echo ok
