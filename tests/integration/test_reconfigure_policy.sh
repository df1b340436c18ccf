#!/usr/bin/env bash
# Policy changes at run time (issue 35): `ductile reconfigure` with a new Policy rebuilds
# the engine from the database once everything is saved, as a restart would, without
# one: running jobs and their steps go on (every output line once), and what waits is
# scheduled by the new policy. Here easy backfills a short job past a blocked wide one;
# after the switch to fcfs the same kind of job waits its turn; back to easy, it starts.
. "$(dirname "$0")/lib.sh"
up 3
cd "$T"
export PATH="$BINDIR:$PATH"
conf=$DUCTILE_CONF
setconf() {
  if grep -q "^$1 " "$conf"; then sed -i "s|^$1 .*|$1 = $2|" "$conf"; else echo "$1 = $2" >> "$conf"; fi
}
policy() { d cluster status | sed -n 's/.*, policy \(.*\)$/\1/p'; }
[ "$(policy)" = easy ] || fail "policy at start: $(d cluster status)"

# a 2-node job with a step that prints, a 3-node job blocked behind it, a short 1-node
# job that easy starts on the free node (it ends before the 2-node job's limit)
s=$(script two.sh '#DUCTILE --nodes=2 --time=30:00
ductile run --label sh -c '"'$ticker'"' > '"$T"'/in.out 2> '"$T"'/in.err
echo "run=$?" > '"$T"'/in.rc
while [ ! -e '"$T"'/end ]; do sleep 0.1; done')
a=$(submit "$s")
expect_state "$a" R
wait_for 20 sh -c "[ \$(grep -c tick '$T/in.out' 2>/dev/null || echo 0) -gt 10 ]" || fail "no output streamed"
w=$(script wide.sh '#DUCTILE --nodes=3 --time=10:00
true')
b=$(submit "$w")
short=$(script short.sh '#DUCTILE --nodes=1 --time=1:00
while [ ! -e '"$T"'/end ]; do sleep 0.1; done')
c1=$(submit "$short")
expect_state "$c1" R # backfilled
d cancel "$c1"
expect_state "$c1" CA

# n1's daemon (it holds the 2-node job) answers late: the engine, rebuilt, counts n1
# unavailable until it has reported again, and a pass meanwhile would take the 3-node
# job for one that cannot run now and start the next on n3 (seen in CI): passes wait
n1pid=$(cat "$T/c/noded-n1.pid")
kill -STOP "$n1pid"
setconf Policy fcfs
d reconfigure > rc.out 2>&1 || { kill -CONT "$n1pid"; fail "reconfigure: $(cat rc.out)"; }
grep -qx "now in effect: Policy" rc.out || fail "reconfigure said: $(cat rc.out)"
in_effect() { grep -q "ductiled: Policy fcfs in effect: the engine rebuilt" "$T/c/log/ductiled.log"; }
wait_for 10 in_effect || fail "the log does not say the new policy is in effect: $(tail -3 "$T/c/log/ductiled.log")"
[ "$(policy)" = fcfs ] || fail "policy after the switch: $(d cluster status)"
c2=$(submit "$short")
# fcfs starts nothing ahead of the 3-node job: the short one waits, while n1 has not
# reported again and after
until_t=$(($(date +%s) + 3))
while [ "$(date +%s)" -lt "$until_t" ]; do
  is_state "$c2" PD || { kill -CONT "$n1pid"; fail "job $c2 under fcfs, n1 not reported yet: $(state "$c2")"; }
  d queue > /dev/null
done
kill -CONT "$n1pid"
is_state "$a" R || fail "job $a after the switch: $(state "$a")"
n=$(grep -c tick in.out)
wait_for 20 sh -c "[ \$(grep -c tick '$T/in.out') -gt $((n + 20)) ]" || fail "the step's output stopped"
until_t=$(($(date +%s) + 2))
while [ "$(date +%s)" -lt "$until_t" ]; do
  is_state "$c2" PD || fail "job $c2 under fcfs: $(state "$c2") (backfilled?)"
  d queue > /dev/null
done

# back to easy: it starts on the free node
setconf Policy easy
d reconfigure > rc.out 2>&1 || fail "reconfigure: $(cat rc.out)"
grep -qx "now in effect: Policy" rc.out || fail "reconfigure said: $(cat rc.out)"
expect_state "$c2" R
[ "$(policy)" = easy ] || fail "policy back: $(d cluster status)"

# the step and the jobs went through both switches
touch "$T/stop.1" "$T/end"
wait_for 20 test -s in.rc || fail "the step did not end: $(cat in.err)"
grep -qx "run=0" in.rc || fail "the step: $(cat in.rc in.err)"
check_ticks in.out 2 || fail "the step's output"
[ ! -s in.err ] || fail "the step's stderr: $(cat in.err)"
expect_state "$a" CD 30
expect_state "$b" CD 30
expect_state "$c2" CD 30
echo ok
