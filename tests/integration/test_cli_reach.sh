#!/usr/bin/env bash
# What a newcomer setting up a multi-host cluster is told when a command cannot reach
# the controller (docs/user-guide.md, "Multi-host deployment"): the message names the
# setting to look at. And `ductile --conf FILE COMMAND`, as docs/user-guide.md writes it,
# works (it was "unknown command '--conf'").
. "$(dirname "$0")/lib.sh"
up 1
cd "$T"
# --- --conf before the command: the configuration named there, not $DUCTILE_CONF
conf=$DUCTILE_CONF
unset DUCTILE_CONF
"$REAL_BIN" --conf "$conf" queue > q.txt 2> e.txt || fail "ductile --conf FILE queue: $(cat e.txt)"
grep -q '^JOBID' q.txt || fail "ductile --conf FILE queue printed: $(cat q.txt)"
"$REAL_BIN" --conf 2> e.txt && fail "ductile --conf without a file succeeded"
grep -q -- '--conf needs a file' e.txt || fail "ductile --conf alone said: $(cat e.txt)"
# --- AuthType = key on a host without the controller's socket (a login host): the
# message says that key authentication works on the controller host and in jobs only
grep -v -i -E '^(ControlSocket|AuthType|MungeSocket) ' "$conf" > key.conf
echo "ControlSocket = $T/nowhere/ctld.sock" >> key.conf
echo "AuthType = key" >> key.conf
"$REAL_BIN" --conf key.conf queue 2> e.txt && fail "queue without the controller's socket succeeded"
grep -q "cannot reach the controller at $T/nowhere/ctld.sock" e.txt || fail "key: $(cat e.txt)"
grep -q 'AuthType = munge' e.txt || fail "key auth off the controller host does not point to MUNGE: $(cat e.txt)"
# --- AuthType = munge with no munged at MungeSocket (the controller is reachable over
# TCP, its own key authentication does not matter: the credential is asked for first)
grep -v -i -E '^(ControlSocket|AuthType|MungeSocket) ' "$conf" > munge.conf
echo "ControlSocket = $T/nowhere/ctld.sock" >> munge.conf
echo "AuthType = munge" >> munge.conf
echo "MungeSocket = $T/nowhere/munge.sock" >> munge.conf
"$REAL_BIN" --conf munge.conf queue 2> e.txt && fail "queue without munged succeeded"
grep -q "MUNGE" e.txt || fail "munge: $(cat e.txt)"
grep -q "$T/nowhere/munge.sock" e.txt || fail "the munge error does not name the socket: $(cat e.txt)"
grep -q "MungeSocket" e.txt || fail "the munge error does not name MungeSocket: $(cat e.txt)"
echo PASS
