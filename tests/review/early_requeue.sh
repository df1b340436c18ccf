#!/usr/bin/env bash
# A --requeue job on n1 (batch) and n2; n2 stops answering past NodeTimeout (the job's
# clean-up begins: only n1 is asked, cleanup_left = 1) and comes back while n1 still
# ends the job's script (it ignores SIGTERM: KillWait 10 s). n2 reports the run, is
# asked to clean up and confirms: that confirmation must not count for n1's.
# DRAIN=1 drains n1 so the requeued run goes to n2 and n3.
. "$(dirname "$0")/rlib.sh"
up 3 --node-timeout 4
s=$(script stubborn.sh 'f='"$T"'/runs
for p in $(awk "/^start/ {print \$2}" "$f" 2>/dev/null); do
  kill -0 "$p" 2>/dev/null && ! grep -q "^State:.*Z" /proc/$p/status && echo "OVERLAP $p" >> "$f"
done
echo "start $$ $(date +%s.%N) $DUCTILE_NODENAME" >> "$f"
trap "" TERM
n=$(grep -c "^start" "$f"); [ "$n" -gt 1 ] && { sleep 3; exit 0; }
while :; do sleep 1; done')
j=$(submit -N 2 --requeue "$s")
expect_state "$j" R
wait_for 10 test -s "$T/runs" || fail "no start"
nl=$(field "$j" NodeList); echo "job $j on $nl"
[ "$nl" = "n[1-2]" ] || fail "expected n[1-2]"
[ -n "${DRAIN:-}" ] && d drain n1 > /dev/null
kill -STOP "$(cat "$T/c/noded-n2.pid")"
wait_for 20 sh -c "\"$BIN\" nodes | grep -Eq '^n2 +down'" || fail "n2 not down"
kill -CONT "$(cat "$T/c/noded-n2.pid")"
wait_for 15 sh -c "! is_state $j CG" 2>/dev/null || true
for i in $(seq 40); do
  printf '%s %s | ' "$(state "$j")" "$(d nodes | awk 'NR>1 {printf "%s:%s ", $1, $2}')"
  sleep 0.5
done; echo
cat "$T/runs"; d show "$j" | grep -E 'State|Reason|Restarts|ExitCode'
grep -q OVERLAP "$T/runs" && fail "job $j ran twice at once"
[ "$(state "$j")" = CD ] || fail "requeued job $j ended $(state "$j"), not CD"
echo ok
