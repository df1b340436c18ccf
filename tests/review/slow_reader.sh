#!/usr/bin/env bash
# Review: a direct step whose client never reads its output (its stdout is a pipe nobody
# drains) while 3 tasks print as fast as they can: what do the daemons hold?
# Usage: DUCTILE_BIN=build/ductile bash tests/review/slow_reader.sh
. "$(dirname "$0")/../integration/lib.sh"
up 3
cd "$T"
export PATH="$BINDIR:$PATH"
s=$(script slow.sh '#DUCTILE --nodes=3
ductile run sh -c "cat /dev/zero" | sleep 20
echo done > '"$T"'/slow.done')
j=$(submit "$s")
expect_state "$j" R
sleep 12
for n in n1 n2 n3; do echo "noded $n: $(awk '/VmRSS/ {print $2, $3}' /proc/$(cat "$T/c/noded-$n.pid")/status)"; done
echo "controller: $(awk '/VmRSS/ {print $2, $3}' /proc/$(cat "$T/c/ctld.pid")/status)"
wait_for 60 test -e slow.done || fail "the step did not end with its reader"
echo ok
