#!/usr/bin/env bash
# Review: malformed relay messages from a holder of the cluster key, to the controller
# and to a node daemon's step port; then is everyone still up and serving?
# Usage: DUCTILE_BIN=build/ductile bash tests/review/keyholder.sh
. "$(dirname "$0")/../integration/lib.sh"
HERE=$(cd "$(dirname "$0")" && pwd)
up 2
cd "$T"
export PATH="$BINDIR:$PATH"
cp "$HERE/../tools/dproto.py" "$T/"
port=$(awk '/^ControlPort/ {print $3}' "$DUCTILE_CONF")
pid=$(cat "$T/c/noded-n1.pid")
sport=$(ss -Htlnp | awk -v p="pid=$pid," '$0 ~ p {n = split($4, a, ":"); print a[n]}')
s=$(script stream.sh '#DUCTILE --nodes=2
ductile run sh -c "while :; do echo tick; sleep 0.1; done" > '"$T"'/stream.out 2> '"$T"'/stream.err
echo "run=$?" > '"$T"'/stream.rc')
j=$(submit "$s")
wait_for 20 sh -c "[ \$(grep -c tick '$T/stream.out' 2>/dev/null || echo 0) -gt 3 ]" || fail "no output"
/usr/bin/python3 - "$T" "$port" "$sport" <<'PY'
import sys, json; sys.path.insert(0, sys.argv[1])
from dproto import Conn
T, port, sport = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
key = T + "/c/cluster.key"
bad = [
    {"type": "relay"},
    {"type": "relay", "chan": "x", "msg": {"type": "status"}},
    {"type": "relay", "chan": 0, "msg": {"type": "status"}, "uid": 0, "gid": 0},
    {"type": "relay", "chan": -5, "msg": {"type": "status"}, "uid": 0, "gid": 0},
    {"type": "relay", "chan": 1 << 62, "msg": {"type": "status"}, "uid": 0, "gid": 0},
    {"type": "relay", "chan": 7, "msg": "status", "uid": 0, "gid": 0},
    {"type": "relay", "chan": 7, "msg": [1, 2], "uid": 0, "gid": 0},
    {"type": "relay", "chan": 7, "msg": None, "uid": 0, "gid": 0},
    {"type": "relay", "chan": 7, "msg": {}, "uid": 0, "gid": 0},
    {"type": "relay", "chan": 7, "msg": {"type": 5}},
    {"type": "relay", "chan": 8, "msg": {"type": "status"}},
    {"type": "relay", "chan": 8, "msg": {"type": "status"}, "uid": -1, "gid": 0},
    {"type": "relay", "chan": 8, "msg": {"type": "status"}, "uid": 4294967295, "gid": 0},
    {"type": "relay", "chan": 8, "msg": {"type": "status"}, "uid": 1.5, "gid": 0},
    {"type": "relay", "chan": 9, "uid": 0, "gid": 0,
     "msg": {"type": "relay", "chan": 10, "uid": 0, "gid": 0, "msg": {"type": "status"}}},
    {"type": "relay", "chan": 9, "msg": {"type": "register", "node": "n1"}},
    {"type": "relay", "chan": 9, "msg": {"type": "step_exit", "job": 1, "step": 1, "rank": 0}},
    {"type": "relay", "chan": 9, "msg": {"type": "relay_close", "chan": 1}},
    {"type": "relay_close"},
    {"type": "relay_close", "chan": 9},
    {"type": "relay_close", "chan": 9},
    {"type": "relay_close", "chan": 12345},
    {"type": "relay", "chan": 9, "msg": {"type": "status"}},
    {"type": "relay", "chan": 11, "uid": 0, "gid": 0, "msg": {"type": "run", "job": 1, "argv": ["/bin/true"], "cwd": "/", "env": []}},
    {"type": "relay_close", "chan": 11},
    {"type": "relay", "chan": 11, "msg": {"type": "step_ack", "job": 1, "step": 1, "rank": 0, "offset": 5}},
]
c = Conn.tcp("127.0.0.1", port, key)
for m in bad:
    c.send(m)
c.send({"type": "relay", "chan": 20, "uid": 0, "gid": 0, "msg": {"type": "status"}})
got = []
while True:
    r = c.recv(3)
    if r is None:
        break
    got.append(r)
print("controller answered %d frames; last: %s" % (len(got), json.dumps(got[-1])[:200] if got else None))
for m in got:
    if m.get("type") == "relay" and isinstance(m.get("msg"), dict) and "error" in m["msg"]:
        print("  chan %s: %s" % (m.get("chan"), m["msg"]["error"][:100]))
assert any(m.get("chan") == 20 and m.get("msg", {}).get("ok") for m in got), "no answer to chan 20"
# the step port: malformed step_output / step_eof from a key holder
p = Conn.tcp("127.0.0.1", sport, key)
for m in [{"type": "step_eof"}, {"type": "step_eof", "chan": 1}, {"type": "step_eof", "chan": 1, "rank": -1},
          {"type": "step_eof", "chan": 1, "rank": 1 << 40}, {"type": "step_output", "chan": 1},
          {"type": "step_output", "chan": 1 << 62, "data": "AAAA"},
          {"type": "step_eof", "chan": "1", "rank": 0}, {"type": "relay", "chan": 1, "msg": {}},
          {"type": 7}]:
    p.send(m)
print("step port: sent malformed frames; answer:", p.recv(2))
p = Conn.tcp("127.0.0.1", sport, key)
p.send({"notype": 1})
print("step port, no type:", p.recv(2))
# without the key: badmac and a wrong sequence number
q = Conn.tcp("127.0.0.1", sport, None, auth=False)
q.key = b"\0" * 32
try:
    q.send({"type": "step_output", "chan": 1, "data": "aGVsbG8K", "rank": 0, "offset": 0})
except OSError as e:
    print("step port without the key: send:", e)
print("step port without the key:", q.recv(3))
PY
sleep 1
pgrep -F "$T/c/ctld.pid" > /dev/null || fail "the controller died"
for n in n1 n2; do pgrep -F "$T/c/noded-$n.pid" > /dev/null || fail "noded $n died"; done
d cluster status || fail "controller not answering"
[ -s "$T/stream.rc" ] && fail "the step ended: $(cat "$T/stream.rc" "$T/stream.err")"
grep -c "hello" stream.out && fail "injected output reached the step"
tail -n 3 "$T/c/log/ductiled.log" "$T/c/log/noded-n1.log"
echo ok
