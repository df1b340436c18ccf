#!/usr/bin/env bash
# Review: the life of a direct step (ductile run inside a job, its tasks on 3 nodes,
# their output sent to the client's node n1):
#   client   the client is killed mid-step: are the tasks ended?
#   home     n1's daemon (the client's) is killed and restarted mid-step
#   task     n3's daemon (a task's) is killed and restarted mid-step
#   order    20 steps of 3 tasks x 200,000 lines: is all output there before run exits?
# Usage: DUCTILE_BIN=build/ductile bash tests/review/lifecycle.sh client|home|task|order
. "$(dirname "$0")/../integration/lib.sh"
MODE=${1:?client, home, task or order}
up 3
cd "$T"
export PATH="$BINDIR:$PATH"
if [ "$MODE" = order ]; then
  s=$(script order.sh '#DUCTILE --nodes=3
for i in $(seq 1 20); do
  ductile run sh -c "seq 1 200000; echo END \$DUCTILE_PROCID" > '"$T"'/o.$i 2> '"$T"'/e.$i
  echo "$i rc=$?" >> '"$T"'/order.rc
done')
  j=$(submit "$s")
  expect_state "$j" CD 600
  bad=0
  for i in $(seq 1 20); do
    n=$(wc -l < "o.$i"); e=$(grep -c '^END' "o.$i" || true)
    if [ "$n" -ne 600003 ] || [ "$e" -ne 3 ]; then bad=$((bad + 1)); echo "step $i: $n lines, $e ENDs; $(cat "e.$i")"; fi
  done
  cat order.rc | tr '\n' ' '; echo
  [ $bad -eq 0 ] || fail "$bad of 20 steps lost output"
  grep -qv "rc=0" order.rc && fail "a step failed: $(cat order.rc)"
  echo ok; exit 0
fi
s=$(script life.sh '#DUCTILE --nodes=3
ductile run sh -c "echo \$\$ > '"$T"'/task.\$DUCTILE_PROCID; while :; do echo tick \$DUCTILE_PROCID; sleep 0.1; done" \
  > '"$T"'/life.out 2> '"$T"'/life.err &
c=$!
echo $c > '"$T"'/client.pid
wait $c
echo "run=$?" > '"$T"'/life.rc
sleep 300')
j=$(submit "$s")
wait_for 20 sh -c "[ -s task.0 ] && [ -s task.1 ] && [ -s task.2 ]" || fail "tasks did not start"
wait_for 20 sh -c "[ \$(grep -c 'tick 2' life.out) -gt 3 ]" || fail "no output from rank 2: $(cat life.err)"
p0=$(cat task.0); p1=$(cat task.1); p2=$(cat task.2)
tasks_gone() { ! kill -0 "$p0" 2>/dev/null && ! kill -0 "$p1" 2>/dev/null && ! kill -0 "$p2" 2>/dev/null; }
case "$MODE" in
client)
  kill -9 "$(cat client.pid)"
  wait_for 20 tasks_gone || fail "tasks outlived their killed client: $(ps -o pid,args -p "$p0,$p1,$p2")"
  echo "tasks ended after their client was killed" ;;
home)
  kill -9 "$(cat "$T/c/noded-n1.pid")"
  wait_for 10 test -s life.rc || fail "ductile run hung when its node daemon died"
  echo "client: $(cat life.rc) $(tail -c 300 life.err)"
  restart_noded n1
  wait_for 30 tasks_gone || fail "tasks outlived the client's node daemon restart: $(ps -o pid,args -p "$p0,$p1,$p2")"
  d run --job "$j" sh -c 'echo fresh $DUCTILE_PROCID' | sort > fresh.out
  [ "$(wc -l < fresh.out)" -eq 3 ] || fail "a step after the restart: $(cat fresh.out)"
  echo "tasks ended; a new step works" ;;
task)
  n_before=$(grep -c 'tick 0' life.out)
  kill -9 "$(cat "$T/c/noded-n3.pid")"
  sleep 1
  restart_noded n3
  wait_for 30 test -s life.rc || fail "ductile run did not end after a task's node restarted: $(tail -c 300 life.err)"
  echo "client: $(cat life.rc) $(tail -c 300 life.err)"
  wait_for 30 tasks_gone || fail "tasks outlived the step: $(ps -o pid,args -p "$p0,$p1,$p2")"
  echo "ticks of rank 0: $n_before before, $(grep -c 'tick 0' life.out) at the end" ;;
esac
echo ok
