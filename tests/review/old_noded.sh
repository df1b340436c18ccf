#!/usr/bin/env bash
# Rolling upgrade: a node daemon built before runs (OLD_NODED, no "run" in its
# messages) under the new controller. A 3 s job on it must complete.
. "$(dirname "$0")/rlib.sh"
OLD=${OLD_NODED:?path of a ductile-noded built from 155790f^}
up 1 --node-timeout 10
p=$(cat "$T/c/noded-n1.pid"); kill "$p"; wait_for 5 sh -c "! kill -0 $p 2>/dev/null"
setsid "$OLD" --conf "$DUCTILE_CONF" --node n1 >> "$T/c/log/noded-n1.log" 2>&1 < /dev/null &
echo $! > "$T/c/noded-n1.pid"
wait_for 10 sh -c "\"$BIN\" nodes | grep -Eq '^n1 +idle'" || fail "old n1 not up"
s=$(script short.sh 'echo started >> '"$T"'/marks; sleep 3; echo done >> '"$T"'/marks')
j=$(submit -N 1 "$s")
wait_for 20 sh -c "is() { :; }; \"$BIN\" show $j | grep -q COMPLETED" || true
echo "after 20 s: job $j $(state "$j"); marks: $(tr '\n' ' ' < "$T/marks" 2>/dev/null); nodes: $(d nodes | grep n1)"
grep -E "still has run|refused" "$T/c/log/ductiled.log" | head -5 || true
is_state "$j" CD || fail "job $j on a pre-run node daemon is $(state "$j"), not CD"
echo ok
