#!/usr/bin/env bash
# A cut of the control connections (issue 35: "a reset of the control connections" ended
# every step and mpirun job): every TCP connection to the controller's port is reset
# (ss -K), twice, while a job runs a `ductile run` step and a --requeue job runs. The
# node daemons reconnect and register again, the step's client (in hosts mode its
# connection is cut too) takes the step up again, the tasks run on, every line of
# their output arrives once, in order, and neither job is restarted or ended.
. "$(dirname "$0")/lib.sh"
command -v ss > /dev/null || { echo "SKIP: no ss"; exit 77; }
up 3
cd "$T"
export PATH="$BINDIR:$PATH"
port=$(ctl_port)
ticks() { grep -c "tick" "$1" 2> /dev/null || echo 0; }
s=$(script stream.sh '#DUCTILE --nodes=2
ductile run --label sh -c '"'$ticker'"' > '"$T"'/in.out 2> '"$T"'/in.err
echo "run=$?" > '"$T"'/in.rc')
j=$(submit "$s")
r=$(submit --requeue -J waiter --wrap "while [ ! -e '$T/end' ]; do sleep 0.1; done")
wait_for 20 sh -c "[ \$(grep -c tick '$T/in.out' 2>/dev/null || echo 0) -gt 10 ]" || fail "no output streamed"
expect_state "$r" R 20
log="$T/c/log/ductiled.log"
cuts() { grep -c "node n1: its daemon disconnected" "$log" || true; }
up_again() { [ "$(d cluster status --json | python3 -c 'import json, sys; print(json.load(sys.stdin)["nodes_up"])')" = 3 ]; }
for round in 1 2; do
  before=$(cuts)
  n=$(ticks in.out)
  on ctl ss -K "( sport = :$port or dport = :$port )" > /dev/null 2>&1 || fail "ss -K failed"
  wait_for 10 sh -c "[ \$(grep -c 'node n1: its daemon disconnected' '$log') -gt $before ]" ||
    fail "round $round: the cut was not seen: $(tail -3 "$log")"
  wait_for 20 up_again || fail "round $round: the nodes did not come back: $(d nodes)"
  wait_for 20 sh -c "[ \$(grep -c tick '$T/in.out') -gt $((n + 20)) ]" ||
    fail "round $round: the output did not flow again: $(cat in.err)"
  for f in task.1.0 task.1.1; do
    alive "$(cat "$T/$f")" || fail "round $round: $f died with the connection"
  done
done
touch "$T/stop.1"
wait_for 20 test -s in.rc || fail "the step did not end: $(cat in.err)"
grep -qx "run=0" in.rc || fail "the step: $(cat in.rc) $(cat in.err)"
check_ticks in.out 2 || fail "the step's output"
! grep -v -e ': lost the connection to the controller (.*): reconnecting$' -e ': reconnected$' in.err ||
  fail "stderr: $(cat in.err)"
expect_state "$j" CD 30
[ "$(state "$r")" = R ] || fail "the --requeue job: $(d show "$r")"
[ "$(d show "$r" | grep -c '^  [0-9:]*  start ')" = 1 ] || fail "the --requeue job was restarted: $(d show "$r")"
touch "$T/end"
expect_state "$r" CD 30
echo ok
