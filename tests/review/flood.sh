#!/usr/bin/env bash
# Review: floods of a node daemon's listeners, before the guard (4be1f05 and the next
# commit): the daemon runs out of descriptors and a job cannot start on its node.
#   local  a non-root user holds connections to spool/noded.sock (mode 0666): no
#          MaxConnectionsPerUser there, unlike the controller's socket
#   peer   anyone on the network holds unauthenticated connections to the step port
#          (NodePort, 0.0.0.0): no AuthTimeout, MaxConnectionsPerHost, MaxConnections
# Usage: DUCTILE_BIN=build/ductile bash tests/review/flood.sh local|peer [N]
. "$(dirname "$0")/../integration/lib.sh"
GARBAGE=${GARBAGE:-$BINDIR/tests/garbage}
MODE=${1:?local or peer}
N=${2:-25000}
up 1
cd "$T"
export PATH="$BINDIR:$PATH"
pid=$(cat "$T/c/noded-n1.pid")
echo "n1's descriptor limit: $(awk '/open files/ {print $4}' /proc/$pid/limits)"
if [ "$MODE" = local ]; then
  setpriv --reuid=nobody --regid=nogroup --clear-groups -- \
    "$GARBAGE" unix "$T/c/state/spool/n1/noded.sock" hold "$N" > hold.out 2>&1 &
else
  port=$(ss -Htlnp | awk -v p="pid=$pid," '$0 ~ p {n = split($4, a, ":"); print a[n]}')
  "$GARBAGE" tcp 127.0.0.1 "$port" silent 20 > silent.out || true
  echo "step port $port: a silent unauthenticated peer: $(cat silent.out)"
  "$GARBAGE" tcp 127.0.0.1 "$port" hold "$N" > hold.out 2>&1 &
fi
hold=$!
extra_cleanup() { kill "$hold" 2>/dev/null || true; }
wait_for 300 grep -q '^held' hold.out || fail "the flood did not finish"
echo "flood: $(cat hold.out); n1 holds $(ls /proc/$pid/fd | wc -l) descriptors"
s=$(script j.sh 'echo job ran')
j=$(submit "$s")
wait_for 10 sh -c "d show $j | grep -Eq '^State +(CD|F)'" || true
echo "job $j: $(state "$j"); $(tail -n 1 "$T/c/log/noded-n1.log")"
is_state "$j" CD || fail "a job could not run on n1 during the $MODE flood"
echo ok
