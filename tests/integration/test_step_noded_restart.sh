#!/usr/bin/env bash
# Steps survive a restart of a node daemon (issue 35): the daemon of a node that holds one
# of a step's tasks, and the daemon of the node where `ductile run` itself runs (which
# relays its connection), are killed -9 (and stopped with SIGTERM) and started again while
# the step runs: the tasks run on, the new daemon takes them up (their output waited in
# their pipes, what was read and not yet written out is in the node's spool), the client
# re-attaches, and every line arrives once, in order, per task. A task that ends while its
# node has no daemon is reported with its status and its last lines when one is back.
. "$(dirname "$0")/lib.sh"
up 3
cd "$T"
export PATH="$BINDIR:$PATH"
ticks() { grep -c "tick" "$1" 2> /dev/null || echo 0; }
more_ticks() { [ "$(ticks "$1")" -gt "$2" ]; }

s=$(script stream.sh '#DUCTILE --nodes=2
ductile run --label sh -c '"'$ticker'"' > '"$T"'/in.out 2> '"$T"'/in.err
echo "run=$?" > '"$T"'/in.rc
while [ ! -e '"$T"'/end ]; do sleep 0.1; done')
j=$(submit "$s")
wait_for 20 more_ticks in.out 10 || fail "no output streamed"
[ "$(field "$j" NodeList)" = "n[1-2]" ] || fail "job $j runs on $(field "$j" NodeList), not n[1-2]"
# a step of the same job from the controller's host, its task on n1
d run --job "$j" -N 1 --label sh -c "$ticker" > out.out 2> out.err &
outside=$!
wait_for 20 more_ticks out.out 10 || fail "no output from the outside step"

# round NODE SIG: stop NODE's daemon with SIG, start a new one; the tasks live on and
# their output flows again
round() {
  local n=$1 sig=$2 a b f
  a=$(ticks in.out) b=$(ticks out.out)
  kill_restart_noded "$n" "$sig"
  for f in task.1.0 task.1.1 task.2.0; do
    alive "$(cat "$T/$f")" || fail "$f died with noded $n ($sig): $(cat in.err out.err)"
  done
  wait_for 30 sh -c "[ \$(grep -c tick in.out) -gt $((a + 40)) ] && [ \$(grep -c tick out.out) -gt $((b + 40)) ]" ||
    fail "output did not flow again after noded $n restarted ($sig): $(tail -3 in.out out.out in.err out.err)"
}
round n2 KILL # holds task 1 of the step inside the job
round n1 KILL # relays the step's client, holds task 0 and the outside step's task
grep -q reconnected in.err || fail "the client in the job did not re-attach: $(cat in.err)"
round n1 TERM
round n2 TERM
grep -q "took up task 1 of step 1 of job $j" "$T/c/log/noded-n2.log" ||
  fail "n2's log does not say it took the task up: $(grep -i step "$T/c/log/noded-n2.log")"

# The step ends while n2 has no daemon: its task's end and last lines wait for the next one.
pid=$(cat "$T/c/noded-n2.pid")
kill -9 "$pid"
wait_for 10 sh -c "! kill -0 $pid 2> /dev/null || grep -q '^State:.*Z' /proc/$pid/status" ||
  fail "noded n2 did not die"
touch "$T/stop.1" "$T/stop.2"
t1=$(cat "$T/task.1.1")
wait_for 20 sh -c "! kill -0 $t1 2> /dev/null" || fail "task 1 did not end while n2 had no daemon"
[ ! -s in.rc ] || fail "the step ended before n2 reported its task: $(cat in.rc in.err)"
restart_noded n2
wait_for 30 test -s in.rc || fail "the step did not end after n2 came back: $(cat in.err)"
wait "$outside" || fail "the outside step: exit $? $(cat out.err)"
check_two_steps "$j"
# the spool keeps nothing of the steps once they are over
spool_tasks() { local n; for n in n1 n2; do on "$n" ls "$(spool_of "$n")" | grep '^task\.' || true; done; }
no_spool_tasks() { [ -z "$(spool_tasks)" ]; }
wait_for 10 no_spool_tasks || fail "left in the spools: $(spool_tasks)"
# A step's standard input cannot be taken up: a restart of its task's node daemon ends
# the task and the step fails saying so (before 4f0c: cut short, and COMPLETED 0)
( for i in $(seq 1 100); do echo "in $i"; sleep 0.05; done ) |
  d run --job "$j" -N 1 sh -c 'echo $$ > '"$T"'/stdin.task; cat; echo cat-exit=$?' > si.out 2> si.err &
si=$!
wait_for 10 test -s "$T/stdin.task" || fail "the stdin step did not start"
wait_for 10 grep -q "^in 5$" si.out || fail "no input reached the task: $(cat si.out si.err)"
kill_restart_noded n1
rc=0; wait "$si" || rc=$?
[ "$rc" = 255 ] && grep -q "its standard input was cut when the node daemon restarted" si.err ||
  fail "a step whose input was cut: exit $rc, $(cat si.err)"
! grep -q "cat-exit=0" si.out || fail "the task saw a false end of its input: $(tail -2 si.out)"

# The connection from a task's node to the client's node breaks (reset): the output goes
# through the controller, all of it, and the step ends at once with 0 (before: the
# client's node waited StepOutputWait for an end that never came, and said 255)
touch "$T/end"
expect_state "$j" CD 30
rm -f "$T/stop.1"
s=$(script homecut.sh '#DUCTILE --nodes=2
ductile run --label sh -c '"'$ticker'"' > '"$T"'/hc.out 2> '"$T"'/hc.err
echo "run=$?" > '"$T"'/hc.rc')
j2=$(submit "$s")
wait_for 20 sh -c "[ \$(grep -c tick '$T/hc.out' 2>/dev/null || echo 0) -gt 20 ]" || fail "no output from the home-cut step"
b=$(d hostnames "$(field "$j2" NodeList)" | head -1) # its batch node: the client's
npid=$(cat "$T/c/noded-$b.pid")
for p in $(on "$b" ss -tlnpH | grep "pid=$npid," | awk '{print $4}' | sed 's/.*://' | sort -u); do
  on "$b" ss -K sport = ":$p" > /dev/null
done
n=$(grep -c tick hc.out)
wait_for 20 sh -c "[ \$(grep -c tick '$T/hc.out') -gt $((n + 20)) ]" || fail "output stopped after the cut: $(cat hc.err)"
touch "$T/stop.1" # (step 1 of that job)
wait_for 8 test -s hc.rc || fail "the step did not end soon after its tasks: $(cat hc.err)"
grep -qx "run=0" hc.rc || fail "the home-cut step: $(cat hc.rc hc.err)"
check_ticks hc.out 2 || fail "the home-cut step's output"
[ ! -s hc.err ] || fail "the home-cut step's stderr: $(cat hc.err)"

expect_state "$j2" CD 30
echo ok
