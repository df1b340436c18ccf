#!/usr/bin/env bash
# A node daemon without a usable cgroup2 hierarchy (tracking by session, the documented
# fallback) killed -9 and restarted while its job runs: the run record holds
# "cgroup": null, which recover_one cannot unpack ("s?s" refuses null): the record is
# deleted as unreadable, the job is not adopted. Expected: adopted (R, then cancel ends it).
. "$(dirname "$0")/rlib.sh"
up 1 --node-timeout 10
start_noded() {
  setsid unshare -m --propagation private sh -c \
    "umount /sys/fs/cgroup/unified 2>/dev/null; exec '$BINDIR/ductile-noded' --conf '$DUCTILE_CONF' --node $1" \
    >> "$T/c/log/noded-$1.log" 2>&1 < /dev/null &
  echo $! > "$T/c/noded-$1.pid"
}
kill_wait() { local p; p=$(cat "$T/c/noded-$1.pid"); kill -9 "$p"; wait_for 5 sh -c "! kill -0 $p 2>/dev/null"; }
kill_wait n1; start_noded n1
wait_for 10 sh -c "\"$BIN\" nodes | grep -Eq '^n1 +idle'" || fail "n1 not up"
s=$(script long.sh 'sleep 300 & echo $! >> '"$T"'/pids; wait')
j=$(submit -N 1 "$s")
expect_state "$j" R
wait_for 10 sh -c "[ \$(wc -l < $T/pids) -ge 2 ]" || fail "no start"
p=$(head -1 "$T/pids")
kill_wait n1; start_noded n1
sleep 3
grep -E "run record|found run" "$T/c/log/noded-n1.log" || true
echo "job $j: $(state "$j") $(field "$j" Reason); script $p alive: $(alive "$p" && echo yes || echo no); n1: $(d nodes | awk '$1=="n1" {print $2}')"
is_state "$j" R || fail "job $j not adopted by the restarted (cgroup-less) daemon while its script $p runs"
echo ok
