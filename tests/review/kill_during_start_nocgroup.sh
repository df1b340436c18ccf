#!/usr/bin/env bash
# A node daemon without a usable cgroup hierarchy (tracking by session) killed -9 while a
# job's script is between fork and exec (a slow start: DUCTILE_TEST_EXEC_DELAY_MS): no run
# record names the child, the controller requeues the job (LaunchLost) and the orphan
# then execs: the job must not run twice.
. "$(dirname "$0")/rlib.sh"
up 2 --node-timeout 10
nocg_noded() { # NODE [env...]: a daemon in a mount namespace without cgroup2
  local n=$1; shift
  env "$@" setsid unshare -m --propagation private sh -c \
    "umount /sys/fs/cgroup/unified 2>/dev/null; exec '$BINDIR/ductile-noded' --conf '$DUCTILE_CONF' --node $n" \
    >> "$T/c/log/noded-$n.log" 2>&1 < /dev/null &
  echo $! > "$T/c/noded-$n.pid"
}
kill -9 "$(cat "$T/c/noded-n1.pid")"
nocg_noded n1 DUCTILE_TEST_EXEC_DELAY_MS=4000
wait_for 10 sh -c "\"$BIN\" nodes | grep -Eq '^n1 +idle'" || fail "n1 not up"
[ "$(grep -c "cgroups under" "$T/c/log/noded-n1.log")" -eq 1 ] || fail "cgroups still visible"
d drain n2 > /dev/null
s=$(script once.sh 'echo "start $$ $(date +%s.%N) $DUCTILE_NODENAME" >> '"$T"'/runs; sleep 20; echo "end $$" >> '"$T"'/runs')
j=$(submit -N 1 --requeue "$s")
expect_state "$j" R
sleep 1 # the start is under way on n1 (4 s between fork and exec): the fault
kill -9 "$(cat "$T/c/noded-n1.pid")"
d resume n2 > /dev/null
nocg_noded n1
wait_for 30 sh -c "[ \$(grep -c '^start' $T/runs 2>/dev/null || echo 0) -ge 2 ]" && {
  cat "$T/runs"; d show "$j" | grep -E 'State|Reason|NodeList|Restarts'
  fail "job $j ran twice at once"; }
cat "$T/runs" 2>/dev/null || true; d show "$j" | grep -E 'State|Reason'
echo ok
