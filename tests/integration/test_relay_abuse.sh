#!/usr/bin/env bash
# The node daemon's local socket is open to every user of the node, and everything it
# relays travels on the node's one connection to the controller: what one user sends
# there must never cost the node that connection (and every other user's relayed
# `ductile run` on it).
. "$(dirname "$0")/lib.sh"
GARBAGE=${GARBAGE:-$BINDIR/tests/garbage} # ctest sets it for some tests; built beside ductile
up 2
cd "$T"
export PATH="$BINDIR:$PATH"
sock="$T/c/state/spool/n1/noded.sock"
# root's relayed step on n1, streaming until cancelled
s=$(script stream.sh '#DUCTILE --nodes=1
ductile run sh -c "while :; do echo tick; sleep 0.1; done" > '"$T"'/stream.out 2> '"$T"'/stream.err
echo "run=$?" > '"$T"'/stream.rc
sleep 300')
j=$(submit "$s")
wait_for 20 sh -c "[ \$(grep -c tick '$T/stream.out' 2>/dev/null || echo 0) -gt 3 ]" ||
  fail "no output: $(cat "$T/stream.err" "$T"/ductile-*.out)"
as_nobody() { setpriv --reuid=nobody --regid=nogroup --clear-groups -- "$@"; }

# A request as large as the node daemon takes (MaxScriptSize + 1 MiB) is larger than
# that once wrapped for the relay: it is refused with a reason, not relayed.
limit=$((1048576 + 1048576))
{ printf '{"type":"queue","pad":"'; head -c $((limit - 25)) /dev/zero | tr '\0' x; printf '"}'; } > big.json
[ "$(wc -c < big.json)" -eq "$limit" ] || fail "test payload of $(wc -c < big.json) bytes"
r=$(as_nobody "$GARBAGE" unix "$sock" request big.json)
case "$r" in *"too large"*) ;; *) fail "a request at the limit: ${r:0:200}" ;; esac
if grep -E "dropping connection|n1: its daemon disconnected" "$T/c/log/ductiled.log"; then
  fail "one user's large request cost n1 its connection to the controller"
fi
[ -s "$T/stream.rc" ] && fail "a user's large request ended root's step: $(cat "$T/stream.err")"
# the relay still works for that user
printf '{"type":"status"}' > small.json
r=$(as_nobody "$GARBAGE" unix "$sock" request small.json)
case "$r" in *'"ok":true'*) ;; *) fail "a small request after it: $r" ;; esac

# A careless user's request with a large answer (cancel of 100000 job ids, one result
# each: 3.5 MB) is answered through the relay like any other; its size is not the
# node daemon's reason to drop the controller.
{ printf '{"type":"cancel","jobs":['; seq -s, 1000000 1099999 | tr -d '\n'; printf ']}'; } > many.json
r=$(as_nobody "$GARBAGE" unix "$sock" request many.json)
case "$r" in *'"results":[{'*) ;; *) fail "cancel of 100000 ids through the relay: ${r:0:200}" ;; esac
if grep -E "dropping connection" "$T/c/log/noded-n1.log"; then
  fail "a large answer to one user cost n1 its connection to the controller"
fi
[ -s "$T/stream.rc" ] && fail "a user's large answer ended root's step: $(cat "$T/stream.err")"
d cancel "$j"

# Every user of the node may connect to its daemon's socket, each at most
# MaxConnectionsPerUser (64) times at once, as on the controller's socket: one user
# holding all it can leaves the daemon its descriptors, and root its requests.
pid=$(cat "$T/c/noded-n1.pid")
setpriv --reuid=nobody --regid=nogroup --clear-groups -- "$GARBAGE" unix "$sock" hold 1000 > lhold.out 2>&1 &
lhold=$!
extra_cleanup() { kill "$lhold" 2>/dev/null || true; }
wait_for 60 grep -q '^held' lhold.out || fail "the local flood did not finish: $(cat lhold.out)"
n=$(ls "/proc/$pid/fd" | wc -l)
echo "local socket: n1 holds $n descriptors while nobody holds $(cat lhold.out)"
[ "$n" -lt 200 ] || fail "n1 holds $n descriptors for one local user's connections"
r=$(as_nobody "$GARBAGE" unix "$sock" request small.json)
case "$r" in *"too many connections from uid"*) ;; *) fail "nobody's 1001st connection: $r" ;; esac
r=$("$GARBAGE" unix "$sock" request small.json)
case "$r" in *'"ok":true'*) ;; *) fail "root's request while nobody floods: $r" ;; esac
kill "$lhold"

# The step port (NodePort) is open to the network, like the controller's, and guarded
# like it: a peer that does not prove the key is closed after AuthTimeout, and one host
# holds at most MaxConnectionsPerHost unauthenticated connections, so that a flood
# without the key cannot take the descriptors a node daemon needs for its jobs.
pid=$(cat "$T/c/noded-n1.pid")
port=$(ss -Htlnp | awk -v p="pid=$pid," '$0 ~ p {n = split($4, a, ":"); print a[n]}')
[ -n "$port" ] || fail "no step port for n1: $(ss -Htlnp)"
"$GARBAGE" tcp 127.0.0.1 "$port" silent 20 > silent.out || fail "an unauthenticated peer of the step port: $(cat silent.out)"
"$GARBAGE" tcp 127.0.0.1 "$port" hold 1000 > hold.out 2>&1 &
hold=$!
extra_cleanup() { kill "$hold" 2>/dev/null || true; }  # lhold ended above
wait_for 60 grep -q '^held' hold.out || fail "the flood did not finish: $(cat hold.out)"
n=$(ls "/proc/$pid/fd" | wc -l)
echo "step port: $(cat silent.out); n1 holds $n descriptors while one host holds $(cat hold.out)"
[ "$n" -lt 400 ] || fail "n1 holds $n descriptors for an unauthenticated flood of its step port"
# once the flood is over, a step's output comes through (here every node is 127.0.0.1,
# the flood's host: during it, n2 may be refused too)
kill "$hold"
wait_for 30 sh -c "[ \$(ls /proc/$pid/fd | wc -l) -lt 60 ]" ||
  fail "n1 still holds $(ls "/proc/$pid/fd" | wc -l) descriptors after the flood"
s=$(script direct.sh '#DUCTILE --nodes=2
ductile run sh -c "seq 1 1000" | wc -l > '"$T"'/direct.lines')
j=$(submit "$s")
expect_state "$j" CD 30
[ "$(cat "$T/direct.lines")" -eq 2000 ] || fail "a direct step after the flood: $(cat "$T/direct.lines") lines"
echo ok
