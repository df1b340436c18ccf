#!/usr/bin/env bash
# Node stealing on the cluster (sfsj, seed 003 §3.1.4): a --requeue job that lost a
# node restarts at once on nodes taken from a smaller running job, which is stopped and
# waits again ahead of the other waiting jobs. A job submitted without --requeue is
# never stopped for it (it must not run twice), even when the victim order would pick
# it first. The stopped job's nodes stay its own until every one is clean, and it runs
# again when a node comes back. A controller that restarts while it stops the victim
# keeps its nodes for the failed job: a short job that would fit in the failed job's
# free nodes does not take them meanwhile.
. "$(dirname "$0")/lib.sh"
# the fence after a failure is NodeTimeout + KillWait + 1
up 5 --node-timeout 3 --policy sfsj --kill-wait 4
cd "$T"
long=$(script long.sh "sleep 300")
a=$(submit -N 3 --requeue "$long")
expect_state "$a" R
v=$(submit -N 1 --requeue "$long")           # the victim
expect_state "$v" R
r=$(submit -N 1 "$long")                     # latest submitted, but may not run twice
expect_state "$r" R
w=$(submit -N 2 "$long")                     # waits: no node is free
wait_for 10 sh -c "\"$BIN\" show $w | grep -Eq '^Reason +(Resources|Reserved|Priority)'" ||
  fail "job $w does not wait: $(d show "$w")"
# nodes go lowest first: a on n[1-3], v on n4, r on n5
[ "$(field "$a" NodeList)" = "n[1-3]" ] && [ "$(field "$v" NodeList)" = n4 ] &&
  [ "$(field "$r" NodeList)" = n5 ] || fail "placement: $(d queue)"
n=n3 # a's last node fails (not its first, where its batch script runs)
old=$(cat "$T/c/noded-$n.pid")
kill -9 "$old"
wait_for 10 sh -c "! kill -0 $old 2> /dev/null" || fail "noded $n survived kill -9"
# after the fence (NodeTimeout + KillWait), a restarts on v's node
wait_for 60 sh -c "[ \$(\"$BIN\" show $a | grep -Ec 'start +0 -> 3') -ge 2 ]" ||
  fail "job $a did not restart: $(d show "$a"; d show "$v")"
d show "$a" | grep -E 'start +0 -> 3' | tail -1 | grep -q 'Order' ||
  fail "job $a did not restart first: $(d show "$a")"
d show "$v" | grep -Eq "interrupt +1 -> 0 +NodeStolen:job $a" ||
  fail "job $v was not stopped for $a: $(d show "$v")"
expect_state "$v" PD
[ "$(field "$v" StartTime)" = "-" ] && [ "$(field "$v" Elapsed)" = "0:00" ] ||
  fail "a waiting job shows its last run's times: $(d show "$v")"
d show "$a" | grep -Eq "node_fail +3 -> 0 +NodeFail:n3" || fail "no node_fail event: $(d show "$a")"
[ "$(field "$r" State)" = "RUNNING (R)" ] || fail "job $r (no --requeue) was stopped: $(d show "$r")"
[ "$(field "$r" NodeList)" = n5 ] || fail "job $r moved: $(d show "$r")"
[ "$(field "$a" NodeList)" = "n[1-2,4]" ] || fail "job $a is not on v's node: $(d show "$a")"
[ "$(d show "$v" | grep -c '^ *[0-9:]* *requeue')" = 1 ] || fail "job $v: $(d show "$v")"
# the failed node comes back: v, first of the waiting jobs, runs there (w needs 2)
restart_noded "$n"
expect_state "$v" R 30
[ "$(field "$w" State)" = "PENDING (PD)" ] || fail "job $w: $(d show "$w")"
d cancel "$a" "$v" "$r" "$w" > /dev/null
wait_for 30 sh -c "\"$BIN\" nodes | grep -q '5 idle'" || fail "nodes not free: $(d nodes)"

# 2. The same, with a victim that takes KillWait to stop (it ignores TERM), and the
# controller restarting meanwhile.
deaf=$(script deaf_to_term.sh "trap '' TERM; sleep 300")
a=$(submit -N 3 --requeue "$long")
expect_state "$a" R
v=$(submit -N 1 --requeue "$deaf")
expect_state "$v" R
r=$(submit -N 1 "$long")
expect_state "$r" R
old=$(cat "$T/c/noded-n3.pid")
kill -9 "$old"
wait_for 10 sh -c "! kill -0 $old 2> /dev/null" || fail "noded n3 survived kill -9"
expect_state "$v" CG 30
w=$(submit -N 2 -t 1 "$long")                # would fit in n[1-2] for a minute
pid=$(cat "$T/c/ctld.pid")
kill -9 "$pid"
wait_for 10 sh -c "! kill -0 $pid 2> /dev/null" || fail "the controller did not die"
restart_ctld
wait_for 20 d queue > /dev/null || fail "the controller did not come back"
wait_for 40 sh -c "[ \$(\"$BIN\" show $a | grep -Ec 'start +0 -> 3') -ge 2 ]" ||
  fail "job $a did not restart after the controller's restart: $(d show "$a"; d show "$w")"
[ "$(field "$a" NodeList)" = "n[1-2,4]" ] || fail "job $a is not on v's node: $(d show "$a")"
expect_state "$v" PD
[ "$(field "$w" State)" = "PENDING (PD)" ] || fail "job $w took the failed job's nodes: $(d show "$w")"
d cancel "$a" "$v" "$r" "$w" > /dev/null
echo ok
