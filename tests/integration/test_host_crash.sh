#!/usr/bin/env bash
# A host whose processes all die at once (a crash, a power cycle: the node daemon, the
# job's shepherd and its script) and whose node daemon is back within NodeTimeout
# (issue 35): the daemon cannot know how the job ended. A --requeue job runs again (as
# after a node failure), once, never beside its first run; a job without --requeue
# ends FAILED with the reason EndedWhileNodeDaemonDown.
. "$(dirname "$0")/lib.sh"
up 2 --kill-wait 2
cd "$T"
cgroup_of() { sed -n "s/.*jobs' cgroups under \(.*\)$/\1/p" "$T/c/log/noded-$1.log" | tail -1; }
cg1=$(cgroup_of n1)
if [ -z "$cg1" ] || [ ! -e "$cg1/cgroup.kill" ]; then
  echo "SKIP: no cgroup v2 with cgroup.kill here: a host's crash cannot be emulated"
  exit 77
fi
runs=$(runs_script runs.sh 300 1)
jr=$(submit -N 1 -w n1 --requeue "$runs")
jp=$(submit -N 1 -w n2 "$runs")
for j in "$jr" "$jp"; do
  expect_state "$j" R
  wait_for 10 test -s "$T/runs.$j" || fail "job $j did not start"
done
pr=$(awk '/^start/ {print $2; exit}' "$T/runs.$jr")
pp=$(awk '/^start/ {print $2; exit}' "$T/runs.$jp")
dead() { ! alive "$1"; }
# crash NODE: every process of the host dies at once: its daemon, then all of its jobs
crash() {
  local pid cg
  pid=$(cat "$T/c/noded-$1.pid")
  cg=$(cgroup_of "$1")
  kill -9 "$pid"
  echo 1 > "$cg/cgroup.kill"
  wait_for 10 dead "$pid" || fail "noded $1 survived"
}
crash n1
crash n2
wait_for 10 dead "$pr" && wait_for 10 dead "$pp" || fail "the jobs' scripts survived the crash"
restart_noded n1
restart_noded n2
# the requeued job runs again and completes: two starts, one end, never two at once
wait_for 60 sh -c "[ \$(grep -c '^end' '$T/runs.$jr' 2>/dev/null) -ge 1 ]" ||
  fail "job $jr did not run again: $(cat "$T/runs.$jr") ($(state "$jr"), $(field "$jr" Reason))"
expect_state "$jr" CD 20
[ "$(grep -c '^start' "$T/runs.$jr")" = 2 ] || fail "job $jr's runs: $(cat "$T/runs.$jr")"
! grep -q OVERLAP "$T/runs.$jr" || fail "job $jr ran twice at once: $(cat "$T/runs.$jr")"
[ "$(field "$jr" Restarts)" = 1 ] || fail "job $jr restarts: $(field "$jr" Restarts)"
# the other one ends FAILED, saying why, with no exit code to give
expect_state "$jp" F 30
[ "$(field "$jp" Reason)" = EndedWhileNodeDaemonDown ] || fail "job $jp's reason: $(field "$jp" Reason)"
[ "$(grep -c '^start' "$T/runs.$jp")" = 1 ] || fail "job $jp ran again: $(cat "$T/runs.$jp")"
echo ok
