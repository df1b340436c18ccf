#!/usr/bin/env bash
# A node daemon killed between the fork of a batch script and the record of that run
# (issue 1): the restarted daemon does not know the run, the controller requeues the job
# (LaunchLost), so the first start must never have reached the script. The test hook
# DUCTILE_TEST_DIE_BEFORE_RECORD makes the daemon die there, once the script has exec'd
# or after a second in which it did not.
. "$(dirname "$0")/lib.sh"
up 1
cd "$T"
runs=$(runs_script runs.sh 1 1)
dead() { ! alive "$1"; }
old=$(cat "$T/c/noded-n1.pid")
kill -9 "$old"
wait_for 10 dead "$old" || fail "noded n1 survived kill -9"
DUCTILE_TEST_DIE_BEFORE_RECORD=1 restart_noded n1
hooked=$(cat "$T/c/noded-n1.pid")
node_idle() { d nodes | grep -Eq '^n1 +idle'; }
wait_for 20 node_idle || fail "n1 not back: $(d nodes)"
j=$(submit "$runs")
wait_for 20 dead "$hooked" || fail "the hooked daemon did not die at the start of job $j"
grep -q "test: dying before the record" "$T/c/log/noded-n1.log" ||
  fail "the daemon died elsewhere: $(tail -5 "$T/c/log/noded-n1.log")"
restart_noded n1
expect_state "$j" CD 40
[ "$(grep -c '^start' "$T/runs.$j")" -eq 1 ] ||
  fail "job $j's script ran $(grep -c '^start' "$T/runs.$j") times: $(cat "$T/runs.$j")"
d show "$j" | grep -q LaunchLost || fail "the requeue is not named: $(d show "$j")"
echo "ok"
