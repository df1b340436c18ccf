#!/usr/bin/env bash
# An end the controller could not save, then could not hear again (issue 35; the fault
# harness's round 64): a job's script ends with exit 0 while the state directory is
# full, so its end is not saved, and its node's daemon stops (SIGSTOP) before it can say
# it again. The controller calls the node down after NodeTimeout and records the job
# NODE_FAIL. When the daemon wakes, it reports the end, which came before the node was
# called down: the record is set right (COMPLETED, reason EndReportedLate, an
# end_corrected event), instead of the report being ignored for a job already final.
. "$(dirname "$0")/lib.sh"
[ "$HOSTS" = 1 ] && { echo "SKIP: the state directory is mounted from the test's host"; exit 77; }
state_on_small_tmpfs
up 2 --node-timeout 4
cd "$T"
log="$T/c/log/ductiled.log"
s=$(script w.sh '#DUCTILE --nodes=1
while [ ! -e '"$T"'/stop ]; do sleep 0.1; done
echo done')
j=$(submit "$s")
expect_state "$j" R
n=$(field "$j" NodeList)
dd if=/dev/zero of="$state/filler" bs=64k status=none 2> /dev/null || true
r0=$(grep -c "reloaded" "$log" || true)
touch "$T/stop"
end_not_saved() { [ "$(grep -c "reloaded" "$log")" -gt "$r0" ]; }
wait_for 20 end_not_saved || fail "the end was saved on a full disk (test assumption): $(tail -3 "$log")"
npid=$(cat "$T/c/noded-$n.pid")
kill -STOP "$npid"
rm -f "$state/filler"
expect_state "$j" NF 30
kill -CONT "$npid"
expect_state "$j" CD 30
d show "$j" | grep -q "EndReportedLate" || fail "no reason: $(d show "$j")"
grep -q "job $j: node $n reports its end (exit 0) from before it was called down: COMPLETED, not NODE_FAIL" "$log" ||
  fail "the log does not say it: $(tail -5 "$log")"
d history "$j" --parsable --noheader --format JobID,State,ExitCode | grep -qx "$j|COMPLETED|0:0|" ||
  fail "history: $(d history "$j" --parsable --noheader --format JobID,State,ExitCode)"
echo ok
