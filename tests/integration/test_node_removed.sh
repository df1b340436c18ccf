#!/usr/bin/env bash
# A node taken out of Nodes whose daemon still runs (issue 35): the restarted controller
# refuses it and says so in its log, once, and the node daemon says why, once, not at
# every attempt; put back, the node registers again.
. "$(dirname "$0")/lib.sh"
up 2
cd "$T"
cp "$DUCTILE_CONF" full.conf
sed -i 's/^Nodes *= *.*/Nodes = n1/' "$DUCTILE_CONF"
stop_ctld() {
  local pid; pid=$(cat "$T/c/ctld.pid")
  kill "$pid"
  wait_for 15 sh -c "! kill -0 $pid 2> /dev/null" || fail "the controller did not stop"
}
stop_ctld
c0=$(grep -c "registered with the controller" "$T/c/log/noded-n2.log")
restart_ctld
wait_for 20 grep -q "refusing the node daemon of n2 (.*): n2 is not in Nodes" "$T/c/log/ductiled.log" ||
  fail "the controller's log says nothing of n2: $(tail -3 "$T/c/log/ductiled.log")"
wait_for 20 grep -q "controller: node n2 is not in this cluster's Nodes" "$T/c/log/noded-n2.log" ||
  fail "n2's daemon says nothing: $(tail -3 "$T/c/log/noded-n2.log")"
# a few more attempts (one a second): each log said it once
sleep 3 # the refused node retries meanwhile (how long the fault lasts, not a synchronisation)
[ "$(grep -c "refusing the node daemon of n2" "$T/c/log/ductiled.log")" = 1 ] ||
  fail "the controller's log repeats itself: $(grep -c "refusing the node daemon of n2" "$T/c/log/ductiled.log")"
[ "$(grep -c "is not in this cluster's Nodes" "$T/c/log/noded-n2.log")" = 1 ] ||
  fail "n2's log repeats itself: $(grep -c "is not in this cluster's Nodes" "$T/c/log/noded-n2.log")"
# put back: it registers again
cp full.conf "$DUCTILE_CONF"
stop_ctld
restart_ctld
wait_for 20 sh -c "[ \$(grep -c 'registered with the controller' '$T/c/log/noded-n2.log') -gt $c0 ]" ||
  fail "n2 did not register again: $(tail -3 "$T/c/log/noded-n2.log")"
echo ok
