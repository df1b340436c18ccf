#!/usr/bin/env bash
# A node daemon killed -9 while a job's script is between fork and exec (a slow start:
# DUCTILE_TEST_EXEC_DELAY_MS=4000), restarted as init would (retried every 0.5 s until
# it runs). NOCG=1: the daemon has no cgroup2 hierarchy (tracking by session).
# Checks: the job never runs twice at once; says how long the restart was refused.
. "$(dirname "$0")/rlib.sh"
up 2 --node-timeout "${NODE_TIMEOUT:-10}"
start_noded() { # NODE [env...]
  local n=$1; shift
  local pre=""
  [ -n "${NOCG:-}" ] && pre="umount /sys/fs/cgroup/unified 2>/dev/null;"
  env "$@" setsid unshare -m --propagation private sh -c \
    "$pre exec '$BINDIR/ductile-noded' --conf '$DUCTILE_CONF' --node $n" \
    >> "$T/c/log/noded-$n.log" 2>&1 < /dev/null &
  echo $! > "$T/c/noded-$n.pid"
}
kill_wait() { local p; p=$(cat "$T/c/noded-$1.pid"); kill -9 "$p"; wait_for 5 sh -c "! kill -0 $p 2>/dev/null"; }
kill_wait n1
start_noded n1 DUCTILE_TEST_EXEC_DELAY_MS=4000
wait_for 10 sh -c "\"$BIN\" nodes | grep -Eq '^n1 +idle'" || fail "n1 not up"
d drain n2 > /dev/null
s=$(script once.sh 'echo "start $$ $(date +%s.%N) $DUCTILE_NODENAME" >> '"$T"'/runs; sleep 20; echo "end $$" >> '"$T"'/runs')
j=$(submit -N 1 --requeue "$s")
expect_state "$j" R
sleep 1 # the start is under way on n1 (4 s between fork and exec): the fault
r0=$(grep -c 'registered with' "$T/c/log/noded-n1.log")
kill_wait n1
t0=$SECONDS
d resume n2 > /dev/null
refused=0
until [ "$(grep -c 'registered with' "$T/c/log/noded-n1.log")" -gt "$r0" ]; do
  start_noded n1
  sleep 0.5
  if ! kill -0 "$(cat "$T/c/noded-n1.pid")" 2>/dev/null; then refused=$((refused + 1)); fi
  [ $((SECONDS - t0)) -lt 30 ] || fail "n1's daemon could not be restarted in 30 s"
done
echo "n1's daemon restart refused $refused times ($(grep -c 'another ductile-noded' "$T/c/log/noded-n1.log") 'another ductile-noded runs' lines) for $((SECONDS - t0)) s"
sleep 8
cat "$T/runs" 2>/dev/null || true; d show "$j" | grep -E 'State|Reason|NodeList'
[ "$(grep -c '^start' "$T/runs")" -lt 2 ] || {
  first=$(awk '/^start/ {print $2; exit}' "$T/runs")
  alive "$first" && fail "job $j ran twice at once (first run $first still alive)"
  echo "two runs, not at once"; }
echo ok
