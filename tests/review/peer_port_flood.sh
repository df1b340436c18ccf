#!/usr/bin/env bash
# Review: the node daemons' step port (NodePort, 0.0.0.0, any free port by default) takes
# TCP connections from anyone on the network and keeps those that never authenticate:
# no AuthTimeout, no per-host limit, no MaxConnections as on the controller's port. An
# attacker without the key holds the daemon's descriptors until it can open no FIFO for
# a task and accept no client on its local socket.
# Usage: DUCTILE_BIN=build/ductile bash tests/review/peer_port_flood.sh [N]
. "$(dirname "$0")/../integration/lib.sh"
GARBAGE=${GARBAGE:-$BINDIR/tests/garbage}
N=${1:-25000}
up 1
cd "$T"
export PATH="$BINDIR:$PATH"
pid=$(cat "$T/c/noded-n1.pid")
port=$(ss -Htlnp | awk -v p="pid=$pid," '$0 ~ p {n = split($4, a, ":"); print a[n]}')
[ -n "$port" ] || fail "no step port for n1"
echo "n1's step port: $port; its descriptor limit: $(awk '/open files/ {print $4}' /proc/$pid/limits)"
"$GARBAGE" tcp 127.0.0.1 "$port" silent 10 > silent.out || true
echo "a silent unauthenticated peer: $(cat silent.out)"
"$GARBAGE" tcp 127.0.0.1 "$port" hold "$N" > hold.out 2>&1 &
wait_for 120 grep -q '^held' hold.out || fail "the flood did not finish"
sleep 1
echo "flood: $(cat hold.out); n1 holds $(ls /proc/$pid/fd | wc -l) descriptors"
s=$(script j.sh 'echo job ran')
j=$(submit "$s")
sleep 5
echo "job $j: $(state "$j"); $(cat ductile-$j.out 2>/dev/null)"
tail -n 5 "$T/c/log/noded-n1.log"
is_state "$j" CD || fail "a job could not run on n1 while an unauthenticated peer floods its step port"
echo ok
