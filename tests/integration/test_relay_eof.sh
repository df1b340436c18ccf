#!/usr/bin/env bash
# A direct step whose task's end of output never reaches the client's node (its node
# could not get it there: a network between the nodes that drops it): the client's
# node hands the step's end over after StepOutputWait (10 s by default, 2 here), saying
# the output may be incomplete, and
# `ductile run` must not then exit 0 as if all were well. Node n2 here is a stand-in
# speaking the protocol with the cluster key: it reports its task ended, and never
# sends the task's step_eof to the step's home.
. "$(dirname "$0")/lib.sh"
command -v python3 > /dev/null || { echo "SKIP: no python3"; exit 77; }
# n1 looks for overdue step ends at each heartbeat (NodeTimeout / 3 by default: 10 s)
up 2 --set HeartbeatInterval=1 --set StepOutputWait=2
cd "$T"
export PATH="$BINDIR:$PATH"
cp "$(dirname "$0")/../tools/dproto.py" "$T/"
kill -9 "$(cat "$T/c/noded-n2.pid")"
wait_for 10 grep -q "n2: its daemon disconnected" "$T/c/log/ductiled.log" || fail "n2 did not leave"
port=$(awk '/^ControlPort/ {print $3}' "$DUCTILE_CONF")
cat > "$T/fake_n2.py" <<'PY'
import sys, time; sys.path.insert(0, sys.argv[1])
from dproto import Conn
c = Conn.tcp("127.0.0.1", int(sys.argv[2]), sys.argv[1] + "/c/cluster.key")
c.send({"type": "register", "node": "n2", "cpus": 1, "memory_mb": 1024, "jobs": [],
        "steps": [], "first": True, "runs": True, "step_port": 0})
last = 0
while True:
    m = c.recv(0.5)
    if time.time() - last > 1:
        c.send({"type": "ping"}); last = time.time()
    if m is None:
        continue
    if m.get("type") == "registered":
        print("registered", flush=True)
    if m.get("type") == "step_start":
        print("step_start home=%s" % m.get("home"), flush=True)
        c.send({"type": "step_exit", "job": m["job"], "step": m["step"], "rank": m["rank"],
                "kind": 0, "code": 0})
PY
python3 "$T/fake_n2.py" "$T" "$port" > fake.out 2>&1 &
wait_for 10 grep -q registered fake.out || fail "the stand-in n2 did not register: $(cat fake.out)"
s=$(script eof.sh '#DUCTILE --nodes=2
ductile run sh -c "echo on \$DUCTILE_NODENAME" > '"$T"'/eof.out 2> '"$T"'/eof.err
echo "run=$?" > '"$T"'/eof.rc')
j=$(submit "$s")
wait_for 40 test -s eof.rc || fail "the step did not end: $(cat fake.out eof.err)"
grep -q "home=" fake.out || fail "n2 got no step_start: $(cat fake.out)"
grep -qx "on n1" eof.out || fail "rank 0's output: $(cat eof.out eof.err)"
grep -q "never arrived" eof.err || fail "no word of the missing output: $(cat eof.err)"
grep -qx "run=0" eof.rc && fail "ductile run exited 0 with output missing: $(cat eof.err)"
echo "$(cat eof.rc): $(cat eof.err)"
echo ok
