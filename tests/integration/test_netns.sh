#!/usr/bin/env bash
# Beyond one host: node daemons in their own network namespaces, with their own
# addresses behind a bridge, reach the controller over the (authenticated) network.
# Reported as skipped where namespaces cannot be made (not root, no iproute2).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/hosts.sh" # the network part: a free subnet, a bridge of this run's own
hosts_check net
net_pick
ns_a="${NET_TAG}-a"; ns_b="${NET_TAG}-b"
ip netns add "$ns_a" 2> /dev/null || hosts_skip "cannot create network namespaces here"
extra_cleanup() {
  for p in "$T"/noded-*.pid; do [ -f "$p" ] && kill -9 "$(cat "$p")" 2> /dev/null; done
  # the jobs of a daemon killed outright live on in its namespace
  for ns in "$ns_a" "$ns_b"; do
    ip netns pids "$ns" 2> /dev/null | xargs -r kill -9 2> /dev/null
  done
  ip netns del "$ns_a" 2> /dev/null || true
  ip netns del "$ns_b" 2> /dev/null || true
  for l in ${NET_LINKS:-}; do ip link del "$l" 2> /dev/null || true; done
}
ip netns add "$ns_b" || fail "netns add"
net_bridge
ip addr add "$NET_PREFIX.1/24" dev "$NET_BR"
net_attach "$ns_a" 2
net_attach "$ns_b" 3

# The controller on the host, bound to the bridge address only.
mkdir -p "$T/c/log"
od -An -tx1 -N32 /dev/urandom | tr -d ' \n' > "$T/c/cluster.key"
echo >> "$T/c/cluster.key"
chmod 600 "$T/c/cluster.key"
port=$((20000 + $$ % 20000))
cat > "$DUCTILE_CONF" <<CONF
ClusterName = netns
ControlAddr = $NET_PREFIX.1
ControlPort = $port
ControlSocket = $T/c/ctld.sock
Nodes = na,nb
StateDir = $T/c/state
SchedulerTick = 1
NodeTimeout = 3
AuthKeyFile = $T/c/cluster.key
CONF
setsid "$BINDIR/ductiled" --conf "$DUCTILE_CONF" >> "$T/c/log/ductiled.log" 2>&1 < /dev/null &
echo $! > "$T/c/ctld.pid"
wait_for 10 test -S "$T/c/ctld.sock" || fail "controller did not start"
for n in a b; do
  ns="${NET_TAG}-$n"
  setsid ip netns exec "$ns" "$BINDIR/ductile-noded" --conf "$DUCTILE_CONF" --node "n$n" \
    >> "$T/c/log/noded-n$n.log" 2>&1 < /dev/null &
  echo $! > "$T/noded-n$n.pid"
done
wait_for 20 sh -c "\"$BIN\" cluster status | grep -q '2 of 2 nodes up'" || fail "nodes did not register: $(d nodes)"
d nodes --json > nodes.json
grep -q "\"addr\": \"$NET_PREFIX.2:" nodes.json || fail "node na not seen from its own address: $(cat nodes.json | tr -d "\n")"
grep -q "\"addr\": \"$NET_PREFIX.3:" nodes.json || fail "node nb not seen from its own address"

cd "$T"
export PATH="$BINDIR:$PATH"
s=$(script two.sh '#DUCTILE --nodes=2
ductile run sh -c "ip -4 -o addr show | grep -o \"'"$NET_PREFIX"'.[0-9]*\" | sort -u"')
j=$(submit "$s")
expect_state "$j" CD 30
grep -qx "$NET_PREFIX.2" "ductile-$j.out" || fail "no task in namespace a: $(cat "ductile-$j.out")"
grep -qx "$NET_PREFIX.3" "ductile-$j.out" || fail "no task in namespace b: $(cat "ductile-$j.out")"
# A node cut off from the network is declared down and its job ends NODE_FAIL.
s=$(script long.sh 'sleep 300')
j=$(submit -N 1 "$s")
expect_state "$j" R
node=$(field "$j" NodeList)
ip -n "${NET_TAG}-${node#n}" link set eth0 down
expect_state "$j" NF 20
d nodes | grep -E "^$node +down" > /dev/null || fail "node $node not down: $(d nodes)"
echo ok
