#!/usr/bin/env bash
# A --requeue job is run again after a node failure at most MaxRequeue times: a job
# that keeps losing its node (or takes nodes down) ends NODE_FAIL with the reason
# instead of going round for ever. `ductile show` counts its restarts.
. "$(dirname "$0")/lib.sh"
up 2 --node-timeout 3 --policy easy --kill-wait 1 --set MaxRequeue=1
cd "$T"
long=$(script long.sh "sleep 300")
a=$(submit -N 1 --requeue "$long")
expect_state "$a" R
# fail_node_of JOB: kill the daemon of the node the job runs on; prints the node
fail_node_of() {
  local n old
  n=$(field "$1" NodeList)
  old=$(cat "$T/c/noded-$n.pid")
  kill -9 "$old"
  wait_for 10 sh -c "! kill -0 $old 2> /dev/null" || fail "noded $n survived kill -9"
  echo "$n"
}
n1=$(fail_node_of "$a")
wait_for 30 sh -c "\"$BIN\" show $a | grep -Eq '^Restarts +1'" || fail "job $a not requeued: $(d show "$a")"
expect_state "$a" R 30
[ "$(field "$a" NodeList)" != "$n1" ] || fail "job $a runs on its failed node: $(d show "$a")"
fail_node_of "$a" > /dev/null
expect_state "$a" NF 30
field "$a" Reason | grep -q "(run 2 times, MaxRequeue=1)" || fail "reason: $(d show "$a")"
d show "$a" | grep -Eq '^Restarts +1' || fail "restarts: $(d show "$a")"
d history | grep -E "^ *$a " | grep -Eq ' 1,1 *$' || fail "history sizes of two runs: $(d history)"
echo ok
