#!/usr/bin/env bash
# On emulated hosts only (issue 35): cut off, or the controller?
# 1. The controller's host loses its network (its cable pulled) for 3 x NodeTimeout while
#    every node runs a job, one with --requeue and one without. Until this test every
#    node was called down, the job without --requeue ended NODE_FAIL and the other was
#    ended and run again from the start. Now the controller suspects its own network
#    (more than half its nodes silent at once) and the node daemons, whose peers do not
#    hear it either, let their jobs go on: no job is ended, requeued or run twice.
# 2. One node cut off from the controller only (routes blackholed both ways; its peers
#    still reach it and each other): its peers hear the controller, so it ends its
#    --requeue job, which runs again on another node, never two copies at once.
# 3. The controller cut off again, and an operator on its host says a node failed
#    (`ductile drain NODE --down`): the node is called down and its job ends NODE_FAIL
#    at once; back on the network, the node ends the job's run it still had.
export DUCTILE_TEST_HOSTS=1
. "$(dirname "$0")/lib.sh"
up 3 --node-timeout 3 --kill-wait 2
cd "$T"
# each node daemon knows the 2 others as the peers it asks (told within a second)
wait_for 10 peers_known 2 || fail "the node daemons were not told their peers: $(d nodes --json)"
runs=$(runs_script runs.sh 40 15)
jr=$(submit -N 1 --requeue "$runs")
jn=$(submit -N 1 "$runs")
expect_state "$jr" R
expect_state "$jn" R
for j in $jr $jn; do wait_for 10 test -s "$T/runs.$j" || fail "job $j did not start"; done
nr=$(field "$jr" NodeList)
nn=$(field "$jn" NodeList)

# 1. the controller's host cut off for 3 x NodeTimeout
host_link ctl down
said_cut() { grep -q "the controller is the one cut off" "$T/c/log/noded-$1.log"; }
for h in $nr $nn; do
  wait_for 15 said_cut "$h" || fail "node $h did not judge the controller cut off: $(tail -5 "$T/c/log/noded-$h.log")"
done
# the controller's own host still reaches it: `cluster status` says what it suspects
ctl_d() { on ctl "$REAL_BIN" "$@"; }
ctl_suspects() { ctl_d cluster status | grep -q 'suspects its own network'; }
wait_for 10 ctl_suspects || fail "cluster status does not say the controller suspects itself: $(ctl_d cluster status 2>&1)"
sleep 5 # the cut lasts 3 x NodeTimeout in all (the fault's length, not a wait for a state)
grep -q "suspects its own network" "$T/c/log/ductiled.log" ||
  fail "the controller did not suspect itself: $(tail -5 "$T/c/log/ductiled.log")"
host_link ctl up
all_up() { "$BIN" cluster status 2> /dev/null | grep -q '3 of 3 nodes up' && ! "$BIN" cluster status | grep -q 'suspects'; }
wait_for 30 all_up || fail "nodes not back after the cut: $("$BIN" cluster status 2>&1; d nodes 2>&1)"
for j in $jr $jn; do
  is_state "$j" R || fail "job $j not running after the controller's cut: $(d show "$j")"
  [ "$(grep -c '^start' "$T/runs.$j")" -eq 1 ] || fail "job $j ran again: $(cat "$T/runs.$j")"
  ! d show "$j" | grep -Eq '^ +[0-9:]+ +requeue' || fail "job $j requeued: $(d show "$j")"
done
grep -q "not responding" "$T/c/log/ductiled.log" && fail "a node was called down: $(grep 'is down' "$T/c/log/ductiled.log")"
expect_state "$jn" CD 60
expect_state "$jr" CD 60
for j in $jr $jn; do
  [ "$(grep -c '^start' "$T/runs.$j")" -eq 1 ] || fail "job $j runs: $(cat "$T/runs.$j")"
done
echo "controller cut off: both jobs went on and completed once"

# 2. one node cut off from the controller only
j=$(submit -N 1 --requeue "$runs")
expect_state "$j" R
wait_for 10 test -s "$T/runs.$j" || fail "job $j did not start"
n=$(field "$j" NodeList)
first=$(awk '/^start/ {print $2; exit}' "$T/runs.$j")
on ctl ip route add blackhole "$(host_ip "$n")/32"
on "$n" ip route add blackhole "$(host_ip ctl)/32"
said_me() { grep -q "this node is the one cut off" "$T/c/log/noded-$n.log"; }
wait_for 20 said_me || fail "node $n did not find itself cut off: $(tail -5 "$T/c/log/noded-$n.log")"
node_down() { d nodes | grep -Eq "^$1 +down"; }
wait_for 20 node_down "$n" || fail "node $n not down: $(d nodes)"
elsewhere() { [ "$(field "$j" NodeList)" != "$n" ] && is_state "$j" R; }
wait_for 40 elsewhere || fail "job $j not requeued onto another node: $(d show "$j")"
wait_for 20 sh -c "[ \$(grep -c '^start' '$T/runs.$j') -ge 2 ]" || fail "no second run: $(cat "$T/runs.$j")"
on ctl ip route del blackhole "$(host_ip "$n")/32"
on "$n" ip route del blackhole "$(host_ip ctl)/32"
expect_state "$j" CD 60
! grep -q "^end $first " "$T/runs.$j" || fail "the first run ended on its own: $(cat "$T/runs.$j")"
! grep -q OVERLAP "$T/runs.$j" || fail "job $j ran twice at once: $(cat "$T/runs.$j")"
echo "one node cut off: its job ran again elsewhere, once at a time"

# 3. an operator's word while the controller suspects itself
wait_for 30 sh -c "\"$BIN\" nodes | grep -Eq '^$n +idle'" || fail "node $n not back: $(d nodes)"
j=$(submit -N 1 "$runs")
expect_state "$j" R
wait_for 10 test -s "$T/runs.$j" || fail "job $j did not start"
n=$(field "$j" NodeList)
first=$(awk '/^start/ {print $2; exit}' "$T/runs.$j")
host_link ctl down
wait_for 15 ctl_suspects || fail "the controller does not suspect itself: $(ctl_d cluster status 2>&1)"
ctl_d drain "$n" --down --reason "rack power lost" || fail "drain --down refused"
nf() { ctl_d show "$j" | grep -q 'NODE_FAIL'; }
wait_for 5 nf || fail "job $j not ended by the operator's word: $(ctl_d show "$j")"
ctl_d nodes | grep -Eq "^$n +down" || fail "node $n not down: $(ctl_d nodes)"
host_link ctl up
gone() { ! alive "$first"; }
wait_for 30 gone || fail "the run of job $j ($first) left on $n after it came back"
back_drained() { d nodes | grep -Eq "^$n +drained"; }
wait_for 30 back_drained || fail "node $n not back drained: $(d nodes)"
echo ok
