#!/usr/bin/env bash
# A run record left in the spool whose pid/pgid now belong to an unrelated process (as
# after a reboot or a pid wrap; its cgroup is gone): the restarted node daemon must not
# adopt, and then kill, that process.
. "$(dirname "$0")/rlib.sh"
up 1 --node-timeout 10
setsid sleep 1000 < /dev/null > /dev/null 2>&1 &
innocent=$!
echo "$innocent" >> "$T/pids"
wait_for 5 sh -c "[ \"\$(awk '{print \$6}' /proc/$innocent/stat)\" = $innocent ]" || fail "setsid"
kill -9 "$(cat "$T/c/noded-n1.pid")"
spool=$(ls -d "$T"/c/state/spool/n1 2>/dev/null || find "$T/c" -type d -path '*spool/n1' | head -1)
printf '{"job":999,"run":1,"batch":true,"uid":0,"pid":%d,"pgid":%d,"deadline":0,"cgroup":"/sys/fs/cgroup/unified/ductile/gone-00000000/n1/job_999_batch"}' \
  "$innocent" "$innocent" > "$spool/run.999"
restart_noded n1
wait_for 10 sh -c "grep -q 'found run 1 of job 999' $T/c/log/noded-n1.log" || fail "record not read"
grep 'job 999' "$T/c/log/noded-n1.log" "$T/c/log/ductiled.log" || true
if wait_for 5 sh -c "! kill -0 $innocent 2>/dev/null"; then
  fail "the node daemon killed unrelated process $innocent (session leader, pid from a stale run record)"
fi
echo ok
