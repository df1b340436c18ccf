#!/usr/bin/env bash
# Drain and resume; a node daemon that dies: its job ends NODE_FAIL, or is requeued.
. "$(dirname "$0")/lib.sh"
# KillWait 2: the requeued job runs again NodeTimeout + KillWait + 1 s after the failure
up 4 --node-timeout 2 --kill-wait 2
cd "$T"
s=$(script long.sh 'echo $$ > "'"$T"'/pid.$DUCTILE_JOB_ID"; exec sleep 300')
quick=$(script quick.sh 'true')
d drain 'n[1-2]' --reason maintenance
d nodes | grep -E '^n1 +drained .*maintenance' || fail "drained: $(d nodes)"
j=$(submit -N 3 "$quick")
sleep 0.5
is_state "$j" PD || fail "3-node job ran on 2 usable nodes"
d queue | grep -E "^$j .*PD" >/dev/null || fail "queue"
d resume 'n[1-2]'
expect_state "$j" CD
# drain a busy node: the job goes on, the node is draining, then drained
j=$(submit -N 1 "$s")
expect_state "$j" R
node=$(field "$j" NodeList)
d drain "$node"
d nodes | grep -E "^$node +draining" || fail "draining: $(d nodes)"
d cancel "$j"
expect_state "$j" CA
wait_for 5 sh -c "\"$BIN\" nodes | grep -Eq '^$node +drained'" || fail "drained after the job"
d resume "$node"
# unknown nodes and bad lists are errors that change nothing
! d drain 'n[9]' 2> e.txt || fail "unknown node drained"
grep -q "unknown node 'n9'" e.txt || fail "message: $(cat e.txt)"

# node failure: kill -9 the daemon of a running job's node
j1=$(submit -N 1 "$s")
j2=$(submit -N 1 --requeue "$s")
expect_state "$j1" R
expect_state "$j2" R
n1=$(field "$j1" NodeList)
n2=$(field "$j2" NodeList)
kill -9 "$(cat "$T/c/noded-$n1.pid")"
expect_state "$j1" NF 20
d nodes | grep -E "^$n1 +down" || fail "node $n1 not down: $(d nodes)"
d show "$j1" | grep -q "NodeFail:$n1" || fail "reason"
kill -9 "$(cat "$T/c/noded-$n2.pid")"
# the requeued job runs again elsewhere
wait_for 20 sh -c "\"$BIN\" show $j2 | grep -q '^NodeList.*' && [ \"\$(\"$BIN\" show $j2 | awk '/^NodeList/{print \$2}')\" != $n2 ] && \"$BIN\" show $j2 | grep -q '^State .*RUNNING'" ||
  fail "job $j2 not requeued and restarted: $(d show "$j2")"
d show "$j2" | grep -q requeue || fail "requeue event"
# The dead daemons' nodes are this host: end what they left, as a reboot would.
for f in "$T"/pid.*; do kill -9 -- "-$(cat "$f")" 2>/dev/null || true; done
echo ok
