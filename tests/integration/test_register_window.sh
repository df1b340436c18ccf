#!/usr/bin/env bash
# A job that ends while its node daemon is registering (issue 1): the daemon's register
# message says what it held when it connected; an end after that and before the
# controller's answer must still reach the controller, or the job stays RUNNING for
# ever (seen in the fault harness under ASan: a full disk made the controller reload
# and every daemon register again).
. "$(dirname "$0")/lib.sh"
up 1 --node-timeout 20
cd "$T"
s=$(script wait.sh "touch '$T/started'; while [ ! -e '$T/stop' ]; do sleep 0.1; done")
j=$(submit "$s")
expect_state "$j" R
# R says the controller sent the start; the daemon runs it a turn of its loop later
# (jobs.c, queue_start): killed before that, it has nothing to adopt
wait_for 10 test -e "$T/started" || fail "job $j's script did not start"
dead() { ! alive "$1"; }
ctld=$(cat "$T/c/ctld.pid")
extra_cleanup() { kill -CONT "$ctld" 2>/dev/null || true; } # (lib.sh's cleanup)
old=$(cat "$T/c/noded-n1.pid")
kill -9 "$old"
wait_for 10 dead "$old" || fail "noded n1 survived kill -9"
# the controller frozen: the new daemon connects, says what it holds, hears nothing back
kill -STOP "$ctld"
restart_noded n1
wait_for 10 grep -q "found run .* of job $j .*still running" "$T/c/log/noded-n1.log" ||
  fail "the daemon did not adopt job $j: $(tail -3 "$T/c/log/noded-n1.log")"
touch "$T/stop"
ended_unheard() { grep -q "job $j ended; the controller hears of it once" "$T/c/log/noded-n1.log"; }
wait_for 10 ended_unheard || fail "job $j's end not seen: $(tail -3 "$T/c/log/noded-n1.log")"
kill -CONT "$ctld"
expect_state "$j" CD 20
echo "ok"
