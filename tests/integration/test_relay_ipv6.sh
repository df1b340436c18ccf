#!/usr/bin/env bash
# A cluster whose ControlAddr is an IPv6 address: a step's home is the address the
# controller sees the client's node daemon come from, an IPv6 one, and the tasks' node
# daemons must reach the step port there (it listened on IPv4 only: every task's
# output was lost).
. "$(dirname "$0")/lib.sh"
command -v python3 > /dev/null &&
  python3 -c 'import socket; socket.socket(socket.AF_INET6).bind(("::1", 0))' 2>/dev/null ||
  { echo "SKIP: no IPv6 loopback"; exit 77; }
up 2
cd "$T"
export PATH="$BINDIR:$PATH"
d cluster down --dir "$T/c" --wait 5 > /dev/null
sed -i 's/^ControlAddr.*/ControlAddr = ::1/' "$DUCTILE_CONF"
restart_ctld
wait_for 10 d cluster status || fail "controller on ::1: $(cat "$T/c/log/ductiled.log")"
restart_noded n1
restart_noded n2
wait_for 20 sh -c "'$BIN' cluster status | grep -q '2 of 2 nodes up'" || fail "nodes: $(d cluster status)"
s=$(script v6.sh '#DUCTILE --nodes=2
ductile run --label sh -c "echo on \$DUCTILE_NODENAME" > '"$T"'/v6.out 2> '"$T"'/v6.err
echo "run=$?" >> '"$T"'/v6.out')
j=$(submit "$s")
expect_state "$j" CD 30
grep -qx "0: on n1" v6.out && grep -qx "1: on n2" v6.out && grep -qx "run=0" v6.out ||
  fail "a direct step on an IPv6 cluster: $(cat v6.out v6.err)"
echo ok
