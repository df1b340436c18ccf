#!/usr/bin/env bash
# Steps through a full state directory (issue 35): each failed commit rolls the batch
# back and reloads the controller's state; the node daemons report what they hold again
# on the connections they have (until b51f072 every reload disconnected them, and they
# connected and registered again each time); a `ductile run` inside a job (relayed by
# its node daemon) and one from the controller's host go on through it, and every line
# of their output arrives once, in order.
. "$(dirname "$0")/lib.sh"
[ "$HOSTS" = 1 ] && { echo "SKIP: the state directory is mounted from the test's host"; exit 77; }
state_on_small_tmpfs
up 2
cd "$T"
export PATH="$BINDIR:$PATH"
s=$(script stream.sh '#DUCTILE --nodes=2
ductile run --label sh -c '"'$ticker'"' > '"$T"'/in.out 2> '"$T"'/in.err
echo "run=$?" > '"$T"'/in.rc
while [ ! -e '"$T"'/end ]; do sleep 0.1; done')
j=$(submit "$s")
wait_for 20 sh -c "[ \$(grep -c tick '$T/in.out' 2>/dev/null || echo 0) -gt 10 ]" || fail "no output streamed"
"$BIN" run --job "$j" -N 1 --label sh -c "$ticker" > out.out 2> out.err &
outside=$!
wait_for 20 sh -c "[ \$(grep -c tick '$T/out.out' 2>/dev/null || echo 0) -gt 10 ]" || fail "no output from the outside step"
pid=$(cat "$T/c/ctld.pid")
dd if=/dev/zero of="$state/filler" bs=64k status=none 2>/dev/null || true
# writes fail for a while: each failed batch reloads the controller
quick=$(script quick.sh 'true')
for i in 1 2 3 4 5; do
  ! d submit "$quick" > /dev/null 2>&1 || fail "submitted on a full disk"
  n_in=$(grep -c tick in.out) n_out=$(grep -c tick out.out)
  wait_for 20 sh -c "[ \$(grep -c tick '$T/in.out') -gt $((n_in + 5)) ] && [ \$(grep -c tick '$T/out.out') -gt $((n_out + 5)) ]" ||
    fail "output stopped on a full disk (round $i): $(cat in.err out.err)"
done
grep -q "reloaded" "$T/c/log/ductiled.log" || fail "no reload happened (test assumption): $(tail "$T/c/log/ductiled.log")"
! grep -q "its daemon disconnected" "$T/c/log/ductiled.log" ||
  fail "a reload disconnected node daemons: $(grep -c 'its daemon disconnected' "$T/c/log/ductiled.log") times"
for n in n1 n2; do
  [ "$(grep -c 'registered with the controller' "$T/c/log/noded-$n.log")" -eq 1 ] ||
    fail "node $n connected again: $(grep -c 'registered with the controller' "$T/c/log/noded-$n.log") registrations"
done
alive "$pid" || fail "the controller died"
rm -f "$state/filler"
submits() { d submit "$quick" > /dev/null 2>&1; }
wait_for 20 submits || fail "writes did not resume"
touch "$T/stop.1" "$T/stop.2" # (the two steps of the job)
wait_for 30 test -s in.rc || fail "the step in the job did not end: $(cat in.err)"
grep -qx "run=0" in.rc || fail "the step in the job: $(cat in.rc) $(cat in.err)"
wait "$outside" || fail "the step from outside: exit $? $(cat out.err)"
check_ticks in.out 2 || fail "the step in the job's output"
check_ticks out.out 1 || fail "the outside step's output"
touch "$T/end"
expect_state "$j" CD 30
echo ok
