#!/usr/bin/env bash
# IdleTimeout spares a client waiting for a long reply (issue 7, defect 6). Not run by
# ctest (it takes about 2.5 minutes: IdleTimeout is at least 120 s):
#   DUCTILE_BIN=build/ductile GARBAGE=build/tests/garbage bash tests/integration/long_idle.sh
# `ductile run` of a task silent for 150 s must end normally (the client sends a keepalive
# every 60 s), while a silent raw connection is closed after IdleTimeout = 120 s.
. "$(dirname "$0")/lib.sh"
GARBAGE=${GARBAGE:?path of tests/garbage}
up 1
kill "$(cat "$T/c/ctld.pid")"
wait_for 20 sh -c "! kill -0 $(cat "$T/c/ctld.pid") 2>/dev/null" || fail "controller did not stop"
printf 'IdleTimeout = 120\n' >> "$DUCTILE_CONF"
setsid "$BINDIR/ductiled" --conf "$DUCTILE_CONF" >> "$T/c/log/ductiled.log" 2>&1 < /dev/null &
echo $! > "$T/c/ctld.pid"
wait_for 30 sh -c "'$BIN' cluster status | grep -q '1 of 1 nodes up'" || fail "controller did not come back"
cd "$T"
j=$(submit "$(script long.sh 'sleep 400')")
expect_state "$j" R
"$GARBAGE" unix "$T/c/ctld.sock" silent 200 > silent.out &
sp=$!
t0=$SECONDS
d run --job "$j" sleep 150 || fail "run of a silent task failed after $((SECONDS - t0)) s"
echo "run of a silent task: ok after $((SECONDS - t0)) s"
wait $sp || fail "silent connection: $(cat silent.out)"
echo "silent raw connection: $(cat silent.out)"
d cluster status | grep -q '1 of 1 nodes up' || fail "node lost"
d cancel "$j"
echo ok
