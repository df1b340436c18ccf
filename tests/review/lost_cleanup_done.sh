#!/usr/bin/env bash
# A stale run being ended on n1 (n1 came back after NodeTimeout; its job had ended
# NODE_FAIL); the script ignores SIGTERM, so the kill takes KillWait (10 s). The daemon's
# connection drops (ss -K) just before the SIGKILL: the clean-up ends while it is
# disconnected, its cleanup_done is dropped (noded_send: not connected) and the job
# forgotten; it reconnects within 1 s (before NodeTimeout) and reports nothing of the
# run. The controller's stale entry is never cleared: n1 must still take new work.
. "$(dirname "$0")/rlib.sh"
up 1 --node-timeout 4
port=$(sed -n 's/.*listening on .* and 127.0.0.1:\([0-9]*\).*/\1/p' "$T/c/log/ductiled.log" | head -1)
[ -n "$port" ] || fail "no port"
s=$(script stubborn.sh 'trap "" TERM; while :; do sleep 1; done')
j=$(submit -N 1 "$s")
expect_state "$j" R
kill -STOP "$(cat "$T/c/noded-n1.pid")"
wait_for 20 sh -c "\"$BIN\" nodes | grep -Eq '^n1 +down'" || fail "n1 not down"
kill -CONT "$(cat "$T/c/noded-n1.pid")"
wait_for 10 grep -q "still has run 1 of job $j" "$T/c/log/ductiled.log" || fail "no stale end"
sleep 9.3 # KillWait is 10 s: drop the connection just before the SIGKILL
ss -K dst 127.0.0.1 dport = :"$port" > /dev/null 2>&1 || true
sleep 4
grep -E "registered|connection" "$T/c/log/noded-n1.log" | tail -3 || true
echo "n1: $(d nodes | awk '$1=="n1" {print $2}')"
s2=$(script hello.sh 'echo hi')
j2=$(submit -N 1 "$s2")
wait_for 45 is_state "$j2" CD || fail "job $j2 is $(state "$j2") ($(field "$j2" Reason)): n1 $(d nodes | awk '$1=="n1" {print $2}') keeps a stale entry for a run it no longer has"
echo ok
