#!/usr/bin/env bash
# Issue 34: node liveness does not hang on the controller's responsiveness. The
# controller stopped (SIGSTOP: as a turn of many seconds, or its host frozen) for more
# than NodeTimeout while a --requeue job runs. Before: the node daemons, hearing nothing,
# ended their requeueable jobs as if cut off, and the controller, back, called every
# node down at its first look (the heartbeats of that time still unread in its sockets)
# and requeued the job. Now the node daemons see that the controller's host still
# acknowledges what they send (slow, not cut off), and the controller does not count
# its own absence against the nodes: the job runs on, once.
. "$(dirname "$0")/lib.sh"
up 2 --node-timeout 3 --kill-wait 2
cd "$T"
runs=$(runs_script runs.sh 60 3)
j=$(submit -N 1 --requeue "$runs")
expect_state "$j" R
wait_for 10 test -s "$T/runs.$j" || fail "job $j did not start"
first=$(awk '/^start/ {print $2; exit}' "$T/runs.$j")
pid=$(cat "$T/c/ctld.pid")
extra_cleanup() { kill -CONT "$pid" 2> /dev/null; }
kill -STOP "$pid"
t0=$SECONDS
slow_said() { grep -q "it is slow, not cut off" "$T"/c/log/noded-*.log; }
wait_for 20 slow_said || fail "the node daemons did not say the controller is slow: $(cat "$T"/c/log/noded-*.log)"
# stopped for twice NodeTimeout in all
stopped_long() { [ $((SECONDS - t0)) -ge 6 ]; }
wait_for 20 stopped_long
kill -CONT "$pid"
# the controller's watchdog has looked at the nodes since it came back
stalled() { d cluster status --json | python3 -c "import json, sys
sys.exit(not json.load(sys.stdin)['stalled_s'] >= 3)"; }
wait_for 20 stalled || fail "the controller did not see its own absence: $(d cluster status --json)"
wait_for 10 sh -c "grep -q 'the controller answers again' '$T'/c/log/noded-*.log" ||
  fail "the node daemons: $(cat "$T"/c/log/noded-*.log)"
! grep -q "not responding" "$T/c/log/ductiled.log" || fail "a node was called down: $(d nodes)"
! grep -q "ending them" "$T"/c/log/noded-*.log ||
  fail "a node daemon ended its jobs: $(cat "$T"/c/log/noded-*.log)"
is_state "$j" R || fail "job $j: $(d show "$j")"
alive "$first" || fail "the job's first run was ended: $(cat "$T/runs.$j")"
[ "$(grep -c '^start' "$T/runs.$j")" -eq 1 ] || fail "job $j ran again: $(cat "$T/runs.$j")"
! d show "$j" | grep -q requeue || fail "job $j was requeued: $(d show "$j")"
d cancel "$j" > /dev/null
echo ok
