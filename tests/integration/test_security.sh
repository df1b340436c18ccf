#!/usr/bin/env bash
# Who may do what, and hostile input on every socket.
. "$(dirname "$0")/lib.sh"
GARBAGE=${GARBAGE:?set by ctest}
up 2
cd "$T"
port=$(ctl_port)
addr=$(ctl_addr)
sock=$(ctl_sock)
# The daemons keep serving: a status within a few seconds (after "many", the slots the
# garbage held from the login host are free once the controller has seen each close,
# which under load is not at once: one attempt failed "did not greet" there)
up2() { d cluster status 2>&1 | grep -q '2 of 2 nodes up'; }
healthy() {
  wait_for 10 up2 || fail "controller unhealthy after $1: $(d cluster status 2>&1)"
}

# Garbage on the local socket (on the controller's host) and on the TCP port (from the
# login host, on emulated hosts): the daemons keep serving.
for m in random huge badmac json slow many; do
  on ctl "$GARBAGE" unix "$sock" "$m" || true
  healthy "unix/$m"
  on login "$GARBAGE" tcp "$addr" "$port" "$m" || true
  healthy "tcp/$m"
done
on login bash -c 'head -c 100000 /dev/urandom > "/dev/tcp/$0/$1"' "$addr" "$port" 2>/dev/null || true
healthy "tcp/urandom"
if [ "$HOSTS" = 1 ]; then
  # A node daemon whose MUNGE has another key (a host outside the cluster) cannot
  # register: a second munged on the login host, with a key of its own.
  head -c 1024 /dev/urandom > "$T/other.key"
  chmod 600 "$T/other.key"
  on login /usr/sbin/munged -f --key-file="$T/other.key" --socket=/run/munge/other.sock \
    --pid-file=/run/munge/other.pid --log-file=/run/munge/other.log \
    --seed-file=/run/munge/other.seed || fail "second munged"
  wait_for 10 on login test -S /run/munge/other.sock || fail "second munged socket"
  sed "s|^MungeSocket.*|MungeSocket = /run/munge/other.sock|" "$DUCTILE_CONF" > "$T/bad.conf"
else
  # A node daemon with the wrong cluster key cannot register (a state directory of its
  # own: n1's daemon holds the lock of the shared one, and this one would wait there).
  sed -e "s|^AuthKeyFile.*|AuthKeyFile = $T/other.key|" -e "s|^StateDir.*|StateDir = $T/bad|" \
    "$DUCTILE_CONF" > "$T/bad.conf"
  printf '%064d\n' 7 > "$T/other.key"
  chmod 600 "$T/other.key"
fi
on login timeout 3 "$BINDIR/ductile-noded" --conf "$T/bad.conf" --node n1 > "$T/bad.log" 2>&1 || true
cat "$T/bad.log"
grep -q started "$T/bad.log" || fail "the daemon with the wrong key did not start: $(cat "$T/bad.log")"
! grep -q registered "$T/bad.log" || fail "a daemon with the wrong key registered"
healthy "wrong key"
# A NUL inside a string (\u0000, valid JSON) gets an error reply naming the field, and
# the connection stays open for the next request (docs/protocol.md)
printf '{"type":"queue","user":"ro\\u0000ot"}' > "$T/nul.json"
printf '{"type":"status"}' > "$T/status.json"
on ctl "$GARBAGE" unix "$sock" request "$T/nul.json" "$T/status.json" > "$T/nul.out"
grep -q "^reply: .*field 'user' contains a NUL byte" "$T/nul.out" || fail "NUL: $(cat "$T/nul.out")"
[ "$(sed -n 2p "$T/nul.out" | grep -c '^reply: .*"ok": *true')" = 1 ] ||
  fail "the connection did not serve a request after the NUL: $(cat "$T/nul.out")"
# Bad requests on the local socket get an error and change nothing.
printf '#!/bin/sh\nsleep 300\n' > long.sh
j=$(submit long.sh)
expect_state "$j" R
! d resize "$j" --nodes 0 2> e.txt || fail "resize to 0 accepted"

if [ "$(id -u)" -ne 0 ] || ! command -v setpriv > /dev/null; then
  echo "not root: the per-user checks are skipped"
  exit 77
fi
# Only the owner or an operator may cancel or resize a job; only operators drain.
! as_nobody "$BIN" cancel "$j" 2> e.txt || fail "nobody cancelled root's job"
grep -q "permission denied" e.txt || fail "message: $(cat e.txt)"
expect_state "$j" R
! as_nobody "$BIN" resize "$j" --nodes 2 2> e.txt || fail "nobody resized root's job"
! as_nobody "$BIN" drain n1 2> e.txt || fail "nobody drained a node"
grep -q "only operators" e.txt || fail "drain message: $(cat e.txt)"
d cancel "$j"
if [ "$HOSTS" != 1 ]; then
  # `cluster up`'s logs name other users' paths and jobs, its state directory holds the
  # database: neither is the world's (the state directory stays passable, for the node
  # daemons' sockets in it)
  [ "$(stat -c %a "$T/c/log")" = 700 ] || fail "log directory $(stat -c %a "$T/c/log")"
  for f in "$T"/c/log/*.log; do
    [ "$(stat -c %a "$f")" = 600 ] || fail "$f is $(stat -c %a "$f")"
  done
  [ "$(stat -c %a "$T/c/state")" = 711 ] || fail "state directory $(stat -c %a "$T/c/state")"
  ! as_nobody cat "$T/c/log/ductiled.log" > /dev/null 2>&1 || fail "nobody read the controller's log"
  ! as_nobody ls "$T/c/state" > /dev/null 2>&1 || fail "nobody listed the state directory"
fi
# A job runs as the user who submitted it, never as root.
mkdir -m 777 "$T/pub"
printf '#!/bin/sh\nid -u\ntouch mine\n' > "$T/pub/who.sh"
chmod 755 "$T/pub/who.sh"
jn=$(cd "$T/pub" && as_nobody "$BIN" submit who.sh | awk '{print $3}')
expect_state "$jn" CD
[ "$(cat "$T/pub/ductile-$jn.out")" = "$(id -u nobody)" ] || fail "job ran as $(cat "$T/pub/ductile-$jn.out")"
[ "$(stat -c %U "$T/pub/mine")" = nobody ] || fail "file owned by $(stat -c %U "$T/pub/mine")"
# and the owner may cancel their own job
jn=$(cd "$T/pub" && printf '#!/bin/sh\nsleep 300\n' > s.sh && chmod 755 s.sh && as_nobody "$BIN" submit s.sh | awk '{print $3}')
expect_state "$jn" R
as_nobody "$BIN" cancel "$jn" || fail "owner could not cancel"
expect_state "$jn" CA
echo ok
