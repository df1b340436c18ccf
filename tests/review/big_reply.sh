#!/usr/bin/env bash
# Review: a careless user runs `ductile queue --json` inside a job on a cluster with a
# long queue. The controller's reply, wrapped for the relay, is larger than the node
# daemon takes from the controller (MaxScriptSize + 1 MiB): the node daemon drops its
# controller connection, and every relayed client on the node with it.
# Usage: DUCTILE_BIN=build/ductile bash tests/review/big_reply.sh [NJOBS]
. "$(dirname "$0")/../integration/lib.sh"
N=${1:-6000}
up 1
cd "$T"
export PATH="$BINDIR:$PATH"
name=$(printf 'n%.0s' $(seq 1 128))
s=$(script q.sh '#DUCTILE --nodes=1
ductile run sh -c "while :; do echo tick; sleep 0.1; done" > '"$T"'/stream.out 2> '"$T"'/stream.err &
while [ ! -e '"$T"'/go ]; do sleep 0.2; done
ductile queue --json > '"$T"'/q.out 2> '"$T"'/q.err; echo "queue=$?" > '"$T"'/q.rc
wait
echo "run=$?" > '"$T"'/stream.rc
sleep 300')
j=$(submit "$s")
expect_state "$j" R
p=$(script p.sh 'true')
for i in $(seq 1 "$N"); do d submit -J "$name" "$p"; done > /dev/null
echo "queue through the controller socket: $(d queue --json | wc -c) bytes"
touch "$T/go"
wait_for 60 test -s "$T/q.rc" || fail "queue from the job hung"
echo "queue from the job: $(cat "$T/q.rc") $(wc -c < "$T/q.out") bytes; $(head -c 300 "$T/q.err")"
sleep 1
grep -E "dropping|disconnected" "$T/c/log/noded-n1.log" "$T/c/log/ductiled.log" || true
echo "step: $(cat "$T/stream.rc" 2>/dev/null) $(cat "$T/stream.err")"
grep -qx "queue=0" "$T/q.rc" || fail "queue --json from a job failed"
[ -s "$T/stream.rc" ] && fail "queue --json from a job ended a step on the same node"
echo ok
