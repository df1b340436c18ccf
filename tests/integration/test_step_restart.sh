#!/usr/bin/env bash
# Steps survive the controller (issue 35): a `ductile run` inside a job and one from the
# controller's host go on through a kill -9 and a SIGTERM of the controller and its
# restart; the client reconnects and takes its step up again, the tasks run on, and
# every line of their output arrives once, in order, per task. A client that does not
# come back within StepReattachTime has its step ended.
. "$(dirname "$0")/lib.sh"
up 3
cd "$T"
export PATH="$BINDIR:$PATH"
printf 'StepReattachTime = 8\n' >> "$DUCTILE_CONF"
ticks() { grep -c "tick" "$1" 2> /dev/null || echo 0; }

s=$(script stream.sh '#DUCTILE --nodes=2
ductile run --label sh -c '"'$ticker'"' > '"$T"'/in.out 2> '"$T"'/in.err
echo "run=$?" > '"$T"'/in.rc
while [ ! -e '"$T"'/end ]; do sleep 0.1; done')
j=$(submit "$s")
wait_for 20 sh -c "[ \$(grep -c tick '$T/in.out' 2>/dev/null || echo 0) -gt 10 ]" || fail "no output streamed"
# and a step of the same job from the controller's host
d run --job "$j" -N 1 --label sh -c "$ticker" > out.out 2> out.err &
outside=$!
wait_for 20 sh -c "[ \$(grep -c tick '$T/out.out' 2>/dev/null || echo 0) -gt 10 ]" || fail "no output from the outside step"

round=0
for how in KILL TERM; do
  round=$((round + 1))
  pid=$(cat "$T/c/ctld.pid")
  kill -"$how" "$pid"
  wait_for 15 sh -c "! kill -0 $pid 2> /dev/null" || fail "the controller did not stop ($how)"
  wait_for 10 sh -c "[ \$(grep -c 'lost the connection to the controller' '$T/in.err') -ge $round ]" ||
    fail "the client did not notice ($how): $(cat in.err)"
  for f in task.1.0 task.1.1 task.2.0; do
    alive "$(cat "$T/$f")" || fail "$f died with the controller ($how)"
  done
  n_in=$(ticks in.out) n_out=$(ticks out.out)
  restart_ctld
  wait_for 30 sh -c "[ \$(grep -c reconnected '$T/in.err') -ge $round ] && [ \$(grep -c reconnected '$T/out.err') -ge $round ]" ||
    fail "the clients did not re-attach ($how): $(cat in.err out.err)"
  wait_for 20 sh -c "[ \$(grep -c tick '$T/in.out') -gt $((n_in + 20)) ] && [ \$(grep -c tick '$T/out.out') -gt $((n_out + 20)) ]" ||
    fail "output did not flow again after the restart ($how)"
done
touch "$T/stop.1" "$T/stop.2"
wait_for 20 test -s in.rc || fail "the step in the job did not end: $(cat in.err)"
wait "$outside" || fail "the step from outside: exit $? $(cat out.err)"
# (history shows steps 1, 2... as sacct does, JOB.0, JOB.1...)
check_two_steps "$j"
# the next step is numbered after them
hist() { d history "$j" --running --steps --parsable --noheader --format JobID,State,ExitCode; }
d run --job "$j" true || fail "a step after the restarts"
hist | grep -qx "$j.2|COMPLETED|0:0|" || fail "the next step: $(hist)"

# A client that does not come back: its step ends StepReattachTime (8 s) after the
# controller's return.
"$BIN" run --job "$j" -N 1 sh -c "$ticker" > /dev/null 2>&1 & # (the command's pid)
gone=$!
wait_for 20 test -s "$T/task.4.0" || fail "step 4 did not start"
p=$(cat "$T/task.4.0")
pid=$(cat "$T/c/ctld.pid")
kill -9 "$pid"
wait_for 15 sh -c "! kill -0 $pid 2> /dev/null" || fail "the controller did not die"
kill -9 "$gone"
restart_ctld
wait_for 20 d queue > /dev/null || fail "the controller did not come back"
alive "$p" || fail "step 4's task ended before StepReattachTime"
wait_for 30 sh -c "! kill -0 $p 2> /dev/null" || fail "step 4's task outlived StepReattachTime"
grep -q "step 4 of job $j: its client did not come back within StepReattachTime" "$T/c/log/ductiled.log" ||
  fail "the log does not say why step 4 ended"
step4_ended() { hist | grep -q "^$j.3|CANCELLED|0:9|"; } # (its task killed)
wait_for 10 step4_ended || fail "step 4 in history: $(hist)"
touch "$T/end"
expect_state "$j" CD 30

# A step with a task on a node the job gave up (a shrink) before the restart: the client
# re-attaches and the step ends as it would have (the node kept nothing of the ended
# task; its end of output was waited for, StepOutputWait, and the step said 255).
s=$(script shrinking.sh '#DUCTILE --nodes=2 --malleable --min-nodes=1 --max-nodes=2
ductile run --label sh -c '"'[ \$DUCTILE_PROCID = 1 ] && exit 0; $ticker'"' > '"$T"'/sh.out 2> '"$T"'/sh.err
echo "run=$?" > '"$T"'/sh.rc')
rm -f "$T/stop.1"
js=$(submit "$s")
expect_state "$js" R
wait_for 20 sh -c "[ \$(grep -c tick '$T/sh.out' 2>/dev/null || echo 0) -gt 10 ]" || fail "no output from the shrinking job's step"
d resize "$js" --nodes 1 > /dev/null
shrunk() { [ "$(field "$js" NodeList)" = n1 ]; }
wait_for 30 shrunk || fail "job $js did not shrink: $(d show "$js")"
pid=$(cat "$T/c/ctld.pid")
kill -9 "$pid"
wait_for 15 sh -c "! kill -0 $pid 2> /dev/null" || fail "the controller did not die"
restart_ctld
wait_for 30 grep -q reconnected "$T/sh.err" || fail "no re-attach: $(cat "$T/sh.err")"
touch "$T/stop.1" # (the step's id in that job)
expect_state "$js" CD 30
grep -qx "run=0" "$T/sh.rc" || fail "the step after a shrink and a restart: $(cat "$T/sh.rc" "$T/sh.err")"
check_ticks sh.out 1 || fail "the shrinking job's step output"
echo ok
