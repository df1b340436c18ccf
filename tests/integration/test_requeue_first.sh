#!/usr/bin/env bash
# A --requeue job that lost a node restarts first of all (seed 003's BASELINE: the
# failed job goes back with the highest priority), not as a backfill behind the jobs
# that were waiting: its restart's start reason is Order, also when the controller
# restarted while it waited (its class was lost then, and it restarted as a backfill
# behind the job ahead of it). test_node_stealing.sh has sfsj, which also stops a
# smaller job for it.
. "$(dirname "$0")/lib.sh"
# KillWait 2: the requeued job runs again NodeTimeout + KillWait + 1 s after the failure
up 2 --node-timeout 3 --policy easy --kill-wait 2
cd "$T"
long=$(script long.sh "sleep 300")
c=$(submit -N 1 -t 10 "$long")
expect_state "$c" R
b=$(submit -N 2 "$long")                     # waits for c: reserved at its end
wait_for 10 sh -c "\"$BIN\" show $b | grep -Eq '^Reason +(Resources|Reserved)'" ||
  fail "job $b does not wait for nodes: $(d show "$b")"
a=$(submit -N 1 -t 1 --requeue "$long")      # ends before c: backfilled
expect_state "$a" R
d show "$a" | grep -Eq 'start +0 -> 1 +Backfill' || fail "job $a not backfilled: $(d show "$a")"
n=$(field "$a" NodeList)
old=$(cat "$T/c/noded-$n.pid")
kill -9 "$old"
wait_for 10 sh -c "! kill -0 $old 2> /dev/null" || fail "noded $n survived kill -9"
wait_for 20 sh -c "\"$BIN\" show $a | grep -q '^ *[0-9:]* *requeue'" ||
  fail "job $a not requeued: $(d show "$a")"
# the controller restarts while the job waits for its node
pid=$(cat "$T/c/ctld.pid")
kill -9 "$pid"
wait_for 10 sh -c "! kill -0 $pid 2> /dev/null" || fail "the controller did not die"
restart_ctld
wait_for 20 d queue > /dev/null || fail "the controller did not come back"
# c's node back first, so that b can run again (else b waits NodesUnavailable and a is
# first in line anyway)
cn=$(field "$c" NodeList)
wait_for 20 sh -c "\"$BIN\" nodes | grep -Eq '^$cn +alloc '" || fail "node $cn: $(d nodes)"
restart_noded "$n"
wait_for 30 sh -c "[ \$(\"$BIN\" show $a | grep -Ec 'start +0 -> 1') -ge 2 ]" ||
  fail "job $a did not start again: $(d show "$a")"
d show "$a" | grep -E 'start +0 -> 1' | tail -1 | grep -q 'Order' ||
  fail "job $a restarted as a backfill, not first: $(d show "$a")"
[ "$(field "$b" State)" = "PENDING (PD)" ] || fail "job $b: $(d show "$b")"
d cancel "$a" "$b" "$c" > /dev/null

echo ok
