#!/usr/bin/env bash
# Review: a local non-root user pipelines requests through its node daemon without
# reading the answers. All of them travel on the node's one connection to the
# controller; each end drops a connection whose unsent output passes 64 MiB.
#   answers   K cancel requests of 100000 ids each (700 KB in, 3.5 MB out): the
#             controller queues the answers on the node's connection
#   requests  K requests of 2 MB (queue with padding): the node daemon queues them
# Usage: DUCTILE_BIN=build/ductile bash tests/review/pipeline.sh answers|requests [K]
. "$(dirname "$0")/../integration/lib.sh"
HERE=$(cd "$(dirname "$0")" && pwd)
MODE=${1:?answers or requests}
K=${2:-40}
up 1
cd "$T"
export PATH="$BINDIR:$PATH"
cp "$HERE/../tools/dproto.py" "$T/"
s=$(script stream.sh '#DUCTILE --nodes=1
ductile run sh -c "while :; do echo tick; sleep 0.1; done" > '"$T"'/stream.out 2> '"$T"'/stream.err
echo "run=$?" > '"$T"'/stream.rc
sleep 300')
j=$(submit "$s")
wait_for 20 sh -c "[ \$(grep -c tick '$T/stream.out' 2>/dev/null || echo 0) -gt 3 ]" || fail "no output"
setpriv --reuid=nobody --regid=nogroup --clear-groups -- /usr/bin/python3 - "$T" "$MODE" "$K" <<'PY'
import sys, time; sys.path.insert(0, sys.argv[1])
from dproto import Conn
mode, k = sys.argv[2], int(sys.argv[3])
c = Conn.unix(sys.argv[1] + "/c/state/spool/n1/noded.sock")
if mode == "answers":
    body = ('{"type":"cancel","jobs":[' + ",".join(str(i) for i in range(1000000, 1100000)) + ']}').encode()
else:
    body = b'{"type":"queue","pad":"' + b"x" * (2 * 1048576 - 1000) + b'"}'
t = time.time()
try:
    for i in range(k):
        c.send_raw(body)
except OSError as e:
    print("send stopped:", e)
print("sent %d x %d bytes in %.1f s, reading nothing" % (k, len(body), time.time() - t))
time.sleep(20)
PY
grep -E "dropping|disconnected|closed" "$T/c/log/ductiled.log" "$T/c/log/noded-n1.log" || true
echo "root's step: $(cat "$T/stream.rc" 2>/dev/null) $(cat "$T/stream.err")"
[ -s "$T/stream.rc" ] && fail "one user's pipelined requests ended root's step on the same node"
echo ok
