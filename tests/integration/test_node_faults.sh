#!/usr/bin/env bash
# Node faults run nothing twice (issue 7, defects 1, 2, 10): a node that stops answering
# and comes back, a node daemon killed -9 and restarted, a controller down while a job
# reaches its time limit.
. "$(dirname "$0")/lib.sh"
# KillWait 2: the requeued job runs again NodeTimeout + KillWait + 1 s after the failure
up 2 --node-timeout 3 --resize-timeout 30 --kill-wait 2
cd "$T"
runs=$(runs_script runs.sh 30 2)
# start_one: a one-node job of $runs; sets j (its id), n (its node), p (its script's pid)
start_one() {
  j=$(submit -N 1 "$runs")
  expect_state "$j" R
  wait_for 10 test -s "$T/runs.$j" || fail "job $j did not start"
  n=$(field "$j" NodeList)
  p=$(awk '/^start/ {print $2; exit}' "$T/runs.$j")
}
dead() { ! alive "$1"; }

# 1. The batch node's daemon stops answering (SIGSTOP) past NodeTimeout: the requeued job
# must not run beside its first copy, and the first copy's end must not end the new run.
j=$(submit -N 2 --requeue "$runs")
expect_state "$j" R
wait_for 10 test -s "$T/runs.$j" || fail "job $j did not start"
n1=$(field "$j" NodeList | sed 's/n\[\([0-9]*\).*/n\1/')
first=$(awk '/^start/ {print $2; exit}' "$T/runs.$j")
kill -STOP "$(cat "$T/c/noded-$n1.pid")"
wait_for 20 sh -c "\"$BIN\" nodes | grep -Eq '^$n1 +down'" || { kill -CONT "$(cat "$T/c/noded-$n1.pid")"; fail "node $n1 not down: $(d nodes)"; }
kill -CONT "$(cat "$T/c/noded-$n1.pid")"
expect_state "$j" CD 60
! grep -q OVERLAP "$T/runs.$j" || fail "job $j ran twice at once: $(cat "$T/runs.$j")"
[ "$(grep -c '^start' "$T/runs.$j")" -eq 2 ] || fail "job $j runs: $(cat "$T/runs.$j")"
! alive "$first" || fail "the first run of job $j ($first) still runs"
[ "$(field "$j" ExitCode)" = "0" ] || fail "job $j exit: $(field "$j" ExitCode)"

# 2a. A node daemon killed -9 and restarted finds its job and the controller adopts it:
# the job goes on, cancel reaches it, and the node takes no other work meanwhile.
start_one
kill_restart_noded "$n"
node_alloc() { d nodes | grep -Eq "^$1 +alloc"; }
wait_for 10 node_alloc "$n" || fail "node $n not back: $(d nodes)"
is_state "$j" R || fail "adopted job $j is $(state "$j"): $(d show "$j")"
alive "$p" || fail "job $j's process died with its daemon"
j2=$(submit -N 2 "$runs")
! wait_for 2 is_state "$j2" R || fail "job $j2 started on $n beside the adopted job $j"
d cancel "$j"
expect_state "$j" CA
wait_for 15 sh -c "! kill -0 $p 2>/dev/null" || fail "cancel did not reach adopted job $j ($p)"
expect_state "$j2" R 20
d cancel "$j2"
expect_state "$j2" CA

# 2c. An adopted job that ends on its own is recorded as it ended (its shepherd wrote
# the status down for the daemon that was not there): exit 0, then exit 3.
for code in 0 3; do
  s=$(script "ends$code.sh" "touch $T/ends$code.started; sleep 3; exit $code")
  j=$(submit -N 1 "$s")
  expect_state "$j" R
  wait_for 10 test -e "$T/ends$code.started" || fail "job $j did not start"
  n=$(field "$j" NodeList)
  kill_restart_noded "$n"
  if [ "$code" = 0 ]; then expect_state "$j" CD 20; else expect_state "$j" F 20; fi
  [ "$(field "$j" ExitCode)" = "$code" ] || fail "adopted job $j exit: $(field "$j" ExitCode)"
done

# 2b. A job cancelled while its node daemon is dead (and the controller saw its
# connection close): it stays CG until the daemon is back and has ended it, and the node
# takes no new work meanwhile; the leftover is killed when the daemon comes back.
start_one
kill -9 "$(cat "$T/c/noded-$n.pid")"
wait_for 10 grep -q "node $n: its daemon disconnected" "$T/c/log/ductiled.log" ||
  fail "the controller did not see $n's daemon go"
d cancel "$j" > /dev/null
is_state "$j" CG || fail "job $j is $(state "$j") while its node daemon is gone"
alive "$p" || fail "job $j ended with its daemon (test assumption)"
jw=$(submit -N 2 "$(script wide2.sh 'true')")
! wait_for 2 is_state "$jw" R || fail "job $jw started on $n, whose daemon is gone"
restart_noded "$n"
wait_for 15 sh -c "! kill -0 $p 2>/dev/null" || fail "leftover of cancelled job $j ($p) still runs"
expect_state "$j" CA 20
expect_state "$jw" CD 20

# 10. A walltime reached on the node while the controller is down: accounting takes the
# node's end time, not the time the controller heard of it.
s=$(script sleeper.sh 'sleep 300')
j=$(submit -t 2s "$s")
expect_state "$j" R
kill -9 "$(cat "$T/c/ctld.pid")"
sleep 6 # the controller stays down past the job's end (a fault, not a synchronisation)
restart_ctld
expect_state "$j" TO 30
el=$(d show "$j" --json 2>/dev/null | sed -n 's/.*"elapsed": *\([0-9.]*\).*/\1/p')
[ -n "$el" ] || el=$(field "$j" Elapsed)
awk -v e="$el" 'BEGIN { exit !(e + 0 < 4.5) }' || fail "job $j elapsed $el s, ran about 2 s"

# 7. A node daemon that comes back during a shrink reports the job: the controller
# matches it against the job's nodes without reading past them (ASan build).
farm="$BINDIR/taskfarm"
export PATH="$BINDIR:$PATH"
s=$(script deaf.sh "#DUCTILE --nodes=2 --malleable --min-nodes=1 --max-nodes=2
$farm --items 100000 --ms 50 --ignore-offers")
j=$(submit "$s")
expect_state "$j" R
# the application is attached once its workers run (it attaches first)
wait_for 20 some_here "^$farm --ms 50 --worker" || fail "task farm did not start: $(d show "$j")"
d resize "$j" --nodes 1 --no-wait > /dev/null || fail "no resize of $j"
expect_state "$j" RS
n=n2 # the job runs on n[1-2]: n2 leaves
kill_restart_noded "$n"
wait_for 10 sh -c "\"$BIN\" nodes | grep -Eq '^$n +(alloc|idle)'" || fail "node $n not back: $(d nodes)"
kill -0 "$(cat "$T/c/ctld.pid")" || fail "the controller died when $n came back during a shrink"
d cancel "$j"
expect_state "$j" CA 20

# A start that takes longer than NodeTimeout between fork and exec (as on a hung
# network filesystem; DUCTILE_TEST_EXEC_DELAY_MS makes it so) does not stop the node
# daemon's loop: the node stays up and the job runs once it has started.
DUCTILE_TEST_EXEC_DELAY_MS=6000 kill_restart_noded n2
node_idle() { d nodes | grep -Eq "^$1 +idle"; }
wait_for 10 node_idle n2 || fail "n2 not back: $(d nodes)"
d drain n1 > /dev/null
s=$(script hello.sh 'echo hello')
j=$(submit -N 1 "$s")
expect_state "$j" R
d resume n1 > /dev/null
[ "$(field "$j" NodeList)" = n2 ] || fail "job $j not on n2: $(d show "$j")"
node_down() { d nodes | grep -Eq "^$1 +down"; }
! wait_for 5 node_down n2 || fail "n2 went down while a start waited: $(d nodes)"
expect_state "$j" CD 20
kill_restart_noded n2 # without the delay, for what follows

# 13. The node daemons' cgroups go with them (`cluster down` is the local emulation's).
[ "$HOSTS" = 1 ] && { echo ok; exit 0; }
cg=$(sed -n "s/.*jobs' cgroups under \(.*\)$/\1/p" "$T/c/log/noded-n1.log" | tail -1)
[ -n "$cg" ] || echo "no cgroup here: not checked"
d cluster down --dir "$T/c" > /dev/null
if [ -n "$cg" ]; then
  wait_for 10 sh -c "! test -d '$cg'" || fail "cgroup $cg left after cluster down: $(ls -R "$cg" | head)"
  ! test -d "$(dirname "$cg")" || fail "cluster cgroup $(dirname "$cg") left: $(ls "$(dirname "$cg")")"
fi
echo ok
