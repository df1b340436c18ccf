#!/usr/bin/env bash
# Review: a client acknowledges output it never read (step_ack with a huge offset): the
# controller passes the credit on unchecked, its tasks send as fast as they can, and
# nothing but the per-connection 64 MiB output limits bounds what the daemons buffer.
# Does it hurt another step that shares the node-to-node connection (n2 -> n1)?
# Usage: DUCTILE_BIN=build/ductile bash tests/review/forged_credit.sh
. "$(dirname "$0")/../integration/lib.sh"
HERE=$(cd "$(dirname "$0")" && pwd)
up 2
cd "$T"
export PATH="$BINDIR:$PATH"
cp "$HERE/../tools/dproto.py" "$T/"
cat > "$T/greedy.py" <<'PY'
import sys, os, time, json; sys.path.insert(0, sys.argv[1])
from dproto import Conn
c = Conn.unix(os.environ["DUCTILE_NODED_SOCKET"])
c.send({"type": "run", "job": int(os.environ["DUCTILE_JOB_ID"]), "nodes": 2, "cwd": "/",
        "argv": ["/bin/sh", "-c", "cat /dev/zero"], "env": []})
r = c.recv(10)
print("greedy:", r, flush=True)
for rank in range(r["tasks"]):
    c.send({"type": "step_ack", "job": r["job"], "step": r["step"], "rank": rank, "offset": 1 << 60})
t0 = time.time()
while time.time() - t0 < 30:
    time.sleep(1)   # read nothing
print("greedy: done", flush=True)
PY
s=$(script both.sh '#DUCTILE --nodes=2
(ductile run sh -c "i=0; while [ \$i -lt 200 ]; do echo line \$i; i=\$((i+1)); sleep 0.1; done" > '"$T"'/victim.out 2> '"$T"'/victim.err
 echo "run=$?" > '"$T"'/victim.rc) &
while ! grep -q "line 3" '"$T"'/victim.out 2>/dev/null; do sleep 0.1; done
/usr/bin/python3 '"$T"'/greedy.py '"$T"' > '"$T"'/greedy.out 2>&1
wait')
j=$(submit "$s")
wait_for 60 grep -q "greedy: done" greedy.out || fail "greedy: $(cat greedy.out)"
for p in $(cat "$T"/c/noded-*.pid); do echo "noded $p: $(awk '/VmRSS|VmHWM/' /proc/$p/status | tr '\n' ' ')"; done
echo "controller: $(awk '/VmRSS|VmHWM/' /proc/$(cat "$T/c/ctld.pid")/status | tr '\n' ' ')"
cat greedy.out
wait_for 60 test -s victim.rc || fail "victim did not end"
echo "victim: $(cat victim.rc) $(wc -l < victim.out) lines; $(cat victim.err)"
[ "$(wc -l < victim.out)" -eq 400 ] || fail "another step lost output"
echo ok
