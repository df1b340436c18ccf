# An emulated multi-host cluster for the integration tests (sourced by lib.sh when
# DUCTILE_TEST_HOSTS=1, and by test_netns.sh for its network).
#
# Every host (the controller host "ctl", the compute hosts n1..nN, the login host
# "login") is one long-lived process in its own network, mount and UTS namespaces, with
# its own hostname and private tmpfs on /tmp, /run, /var/spool (StateDir) and /dev/shm.
# The only directory the hosts share is the test's $T, which stands for the home file
# system (job scripts, their outputs, and the cluster's configuration file: the same on
# every host, as /etc/ductile/ductile.conf would be). Hosts reach each other only over a
# bridge, on a private 10.x.y.0/24 derived from this shell's PID; the root namespace has
# no address on it. Every host having its own ports, the daemons listen on fixed ones
# (ControlPort 6817, NodePort 6818), as on a real site. Users' commands run on the login host and reach the controller over
# TCP, authenticated by MUNGE (one munged per host, same key, socket in its /run).
#
#   net_pick               choose NET_TAG, NET_BR (bridge) and NET_PREFIX (10.x.y)
#   net_bridge             create the bridge
#   host_start NAME OCTET  a host NAME at $NET_PREFIX.OCTET on the bridge
#   on HOST CMD...         run CMD on HOST (its namespaces, the caller's cwd and env)
#   spawn_on HOST LOG PIDFILE CMD...   start a daemon on HOST (output appended to LOG)
#   host_link HOST up|down the host's cable at the switch (its veth on the bridge side)
#   host_pids HOST         the pids of every process on HOST
#   hosts_up N [options]   the whole cluster (see up in lib.sh)
#   hosts_cleanup          kill every process of every host, remove namespaces, links

hosts_skip() { echo "SKIP: $*"; exit 77; }

# Everything a multi-host test needs, or exit 77 with the reason.
hosts_check() {
  [ "$(id -u)" -eq 0 ] || hosts_skip "emulated hosts need root (network and mount namespaces)"
  local c
  for c in ip unshare nsenter mount hostname; do
    command -v "$c" > /dev/null || hosts_skip "emulated hosts need '$c' (iproute2, util-linux)"
  done
  [ "${1:-}" = net ] && return 0
  [ -x /usr/sbin/munged ] || hosts_skip "emulated hosts need munged (Debian package munge)"
}

# The emulation's own records: each host's pid, namespace and address, the ductile
# command of the login host. (In the home, so the hosts could read them; no daemon does.)
HOSTS_DIR="$T/.hosts"

# net_reap: what an earlier run that was killed outright (SIGKILL, a ctest timeout)
# could not remove: namespaces dt<PID>-*, links dt<PID>* and its clusters' cgroups
# ductile/h<PID>-* of a PID no longer alive.
net_reap() {
  local ns l pid
  for ns in $(ip netns list 2> /dev/null | awk '{print $1}' | grep -E '^dt[0-9]+-'); do
    pid=${ns#dt}; pid=${pid%%-*}
    kill -0 "$pid" 2> /dev/null && continue
    ip netns pids "$ns" 2> /dev/null | xargs -r kill -9 2> /dev/null
    ip netns del "$ns" 2> /dev/null || true
  done
  for l in $(ip -o link show 2> /dev/null | awk -F': ' '{print $2}' | sed 's/@.*//' | grep -E '^dt[0-9]+(br|v[0-9]+)$'); do
    pid=${l#dt}; pid=${pid%%[bv]*}
    kill -0 "$pid" 2> /dev/null || ip link del "$l" 2> /dev/null || true
  done
  local cg d
  cg=$(awk '$3 == "cgroup2" {print $2; exit}' /proc/self/mounts)
  for d in "$cg"/ductile/h[0-9]*-*; do
    [ -d "$d" ] || continue
    pid=${d##*/h}; pid=${pid%%-*}
    kill -0 "$pid" 2> /dev/null || find "$d" -depth -type d -exec rmdir {} + 2> /dev/null || true
  done
}

# net_pick: a tag for namespace and link names, a bridge name and a /24 that no address
# of this machine uses. The subnet is derived from the PID, so concurrent test runs get
# different ones; the tag and bridge name are unique per run as well.
net_pick() {
  net_reap
  NET_TAG="dt$$"
  NET_BR="${NET_TAG}br"
  local i a b used
  used=$(ip -4 -o addr show 2> /dev/null; ip -4 route show 2> /dev/null)
  for i in $(seq 0 255); do
    a=$((64 + ((($$ >> 8) + i) % 128)))
    b=$(($$ % 256))
    if ! grep -q " 10\.$a\.$b\." <<< " $used"; then
      NET_PREFIX="10.$a.$b"
      return 0
    fi
  done
  fail "no free 10.x.y.0/24 for the emulated hosts"
}

net_bridge() {
  ip link add "$NET_BR" type bridge 2> /dev/null || hosts_skip "cannot create a bridge here"
  ip link set "$NET_BR" up
  NET_LINKS="${NET_LINKS:-} $NET_BR"
}

# net_attach NS OCTET: a veth from the bridge into namespace NS, at $NET_PREFIX.OCTET.
# The bridge side is named ${NET_TAG}v<OCTET>, the namespace side eth0.
net_attach() {
  local ns=$1 o=$2 v="${NET_TAG}v$2"
  ip link add "$v" type veth peer name "${v}n" || fail "veth for $ns"
  NET_LINKS="${NET_LINKS:-} $v"
  ip link set "$v" master "$NET_BR" up
  ip link set "${v}n" netns "$ns"
  ip -n "$ns" link set "${v}n" name eth0
  ip -n "$ns" addr add "$NET_PREFIX.$o/24" dev eth0
  ip -n "$ns" link set eth0 up
  ip -n "$ns" link set lo up
}

# host_start NAME OCTET: the host process of NAME, ready when this returns.
host_start() {
  local name=$1 o=$2 ns="${NET_TAG}-$1"
  mkdir -p "$HOSTS_DIR"
  ip netns add "$ns" 2> /dev/null || hosts_skip "cannot create network namespaces here"
  echo "$ns" > "$HOSTS_DIR/$name.ns"
  net_attach "$ns" "$o"
  echo "$o" > "$HOSTS_DIR/$name.ip"
  # The home is bind-mounted aside, /tmp is covered (and $T with it), then the home is
  # moved back to its own path: the same path on every host and outside.
  # (not ip netns exec, which would mount a sysfs of its own and lose the cgroup mounts)
  setsid nsenter --net="/run/netns/$ns" unshare --mount --uts --propagation private \
    sh -c 'set -e
      if [ -f "$2" ]; then mount --bind "$2" /etc/hosts; fi
      mount -t tmpfs -o mode=755 tmpfs /run
      mkdir /run/.home && mount --bind "$0" /run/.home
      mount -t tmpfs -o mode=1777 tmpfs /tmp
      mkdir -p "$0" && mount --move /run/.home "$0" && rmdir /run/.home
      mount -t tmpfs -o mode=755 tmpfs /var/spool
      mount -t tmpfs -o mode=1777 tmpfs /dev/shm
      mkdir -m 755 /run/ductile /run/munge
      hostname "$1"
      exec sleep infinity' "$T" "$name" "$HOSTS_DIR/hosts" > "$HOSTS_DIR/$name.err" 2>&1 < /dev/null &
  local pid=$!
  disown $pid
  echo "$pid" > "$HOSTS_DIR/$name.pid"
  wait_for 10 host_ready "$pid" || fail "host $name did not start: $(cat "$HOSTS_DIR/$name.err")"
  [ "$(on "$name" hostname)" = "$name" ] || fail "host $name: hostname $(on "$name" hostname)"
}
host_ready() { [ "$(cat "/proc/$1/comm" 2> /dev/null)" = sleep ]; }

host_pid() { cat "$HOSTS_DIR/$1.pid"; }
host_ip() { echo "$NET_PREFIX.$(cat "$HOSTS_DIR/$1.ip")"; }

# on HOST CMD...: CMD on HOST, in the caller's directory if HOST has it (else /).
on() {
  local h=$1; shift
  [ -f "$HOSTS_DIR/$h.pid" ] || fail "no host '$h'"
  nsenter -t "$(host_pid "$h")" -m -n -u -- /bin/sh -c 'cd "$0" 2> /dev/null || cd /; exec "$@"' \
    "$PWD" "$@"
}

# spawn_on HOST LOG PIDFILE CMD...: a daemon on HOST in a session of its own, its output
# appended to LOG (outside the host: a site's log server), its pid in PIDFILE (outside).
# nsenter and sh exec, so the pid is the daemon's.
spawn_on() {
  local h=$1 log=$2 pidf=$3; shift 3
  setsid nsenter -t "$(host_pid "$h")" -m -n -u -- "$@" >> "$log" 2>&1 < /dev/null &
  echo $! > "$pidf"
  disown $!
}

# host_link HOST up|down: plug or pull the host's cable (the bridge side of its veth).
host_link() { ip link set "${NET_TAG}v$(cat "$HOSTS_DIR/$1.ip")" "$2"; }

# host_pids HOST: every process on HOST (those in its network namespace).
host_pids() { ip netns pids "$(cat "$HOSTS_DIR/$1.ns")" 2> /dev/null; }

# munge_start HOST: munged on HOST with the cluster's MUNGE key, socket /run/munge/munge.sock.
munge_start() {
  on "$1" sh -c 'umask 077; cat > /run/munge/munge.key' < "$HOSTS_DIR/munge.key"
  on "$1" /usr/sbin/munged -f --key-file=/run/munge/munge.key --socket=/run/munge/munge.sock \
    --pid-file=/run/munge/munged.pid --log-file=/run/munge/munged.log \
    --seed-file=/run/munge/munged.seed || fail "munged on $1 would not start"
  wait_for 10 on "$1" test -S /run/munge/munge.sock || fail "munged socket on $1"
}

# hosts_up N [--policy P] [--tick S] [--node-timeout S] [--resize-timeout S]
# [--kill-wait S] [--set KEY=VALUE]...: hosts ctl (.1), login (.2), n1..nN (.11..); munged on each; ductiled
# on ctl listening on its bridge address, ductile-noded on every compute host.
hosts_up() {
  local n=$1; shift
  local policy=easy tick=1 nto=30 rto=60 kw=10 extra=""
  while [ $# -gt 0 ]; do
    case $1 in
      --set) extra="$extra${2%%=*} = ${2#*=}
" ;;
      --policy) policy=$2 ;;
      --tick) tick=$2 ;;
      --node-timeout) nto=$2 ;;
      --resize-timeout) rto=$2 ;;
      --kill-wait) kw=$2 ;;
      *) fail "hosts mode: up does not take $1" ;;
    esac
    shift 2
  done
  net_pick
  net_bridge
  local i h pad=""
  [ "$n" -ge 10 ] && pad=0
  HOSTS_NODES=""
  for i in $(seq "$n"); do
    [ "$n" -ge 10 ] && [ "$i" -lt 10 ] && h="n0$i" || h="n$i"
    HOSTS_NODES="$HOSTS_NODES $h:$((10 + i))"
  done
  # every host knows every other by name, as a site's DNS would say
  mkdir -p "$HOSTS_DIR"
  { echo "127.0.0.1 localhost"
    for h in ctl:1 login:2 $HOSTS_NODES; do echo "$NET_PREFIX.${h#*:} ${h%:*}"; done
  } > "$HOSTS_DIR/hosts"
  for h in ctl:1 login:2 $HOSTS_NODES; do host_start "${h%:*}" "${h#*:}"; done
  HOSTS_NODES=$(for h in $HOSTS_NODES; do echo "${h%:*}"; done)
  head -c 1024 /dev/urandom > "$HOSTS_DIR/munge.key"
  for i in ctl login $HOSTS_NODES; do munge_start "$i"; done
  rm -f "$HOSTS_DIR/munge.key" # each host has its copy now, as on a real site
  mkdir -p "$T/c/log"
  # The configuration: in the home, so the same file on every host.
  cat > "$DUCTILE_CONF" << CONF
# An emulated multi-host cluster (tests/integration/hosts.sh): the same file on every host.
ClusterName = h$$
ControlAddr = $(host_ip ctl)
ControlPort = 6817
ControlSocket = /run/ductile/ctld.sock
NodePort = 6818
Nodes = n[${pad}1-$n]
StateDir = /var/spool/ductile
Policy = $policy
SchedulerTick = $tick
NodeTimeout = $nto
ResizeTimeout = $rto
KillWait = $kw
AuthType = munge
MungeSocket = /run/munge/munge.sock
$extra
CONF
  chmod 644 "$DUCTILE_CONF"
  restart_ctld
  wait_for 10 on ctl test -S /run/ductile/ctld.sock || fail "controller did not start"
  for i in $HOSTS_NODES; do restart_noded "$i"; done
  wait_for 30 sh -c "'$BIN' cluster status | grep -q '$n of $n nodes up'" ||
    fail "nodes did not register: $("$BIN" nodes 2>&1)"
  echo "Cluster up: $n hosts behind $NET_BR ($NET_PREFIX.0/24), controller $(host_ip ctl)" > "$T/up.out"
}

# The ductile command as a user types it on the login host.
hosts_bin() {
  mkdir -p "$HOSTS_DIR"
  cat > "$HOSTS_DIR/ductile" << EOF
#!/bin/sh
# ductile, run on the login host of the emulated cluster (tests/integration/hosts.sh)
exec nsenter -t "\$(cat '$HOSTS_DIR/login.pid')" -m -n -u -- /bin/sh -c 'cd "\$0" 2> /dev/null || cd /; exec "\$@"' "\$PWD" '$REAL_BIN' "\$@"
EOF
  chmod 755 "$HOSTS_DIR/ductile"
  BIN="$HOSTS_DIR/ductile"
}

# hosts_cleanup: every process of every host killed, namespaces and links removed, the
# jobs' cgroups of this cluster removed. Safe to call twice and after a partial start.
hosts_cleanup() {
  local f l d pids i
  for i in 1 2 3 4 5; do
    pids=""
    for f in "$HOSTS_DIR"/*.ns; do
      [ -f "$f" ] || continue
      pids="$pids $(ip netns pids "$(cat "$f")" 2> /dev/null)"
    done
    [ -n "${pids// /}" ] || break
    kill -9 $pids 2> /dev/null || true
    sleep 0.2
  done
  for f in "$HOSTS_DIR"/*.ns; do
    [ -f "$f" ] && ip netns del "$(cat "$f")" 2> /dev/null
  done
  for l in ${NET_LINKS:-}; do ip link del "$l" 2> /dev/null || true; done
  local cg
  cg=$(awk '$3 == "cgroup2" {print $2; exit}' /proc/self/mounts)
  if [ -n "$cg" ] && [ -d "$cg/ductile" ]; then
    for d in "$cg/ductile/h$$-"*; do
      [ -d "$d" ] && find "$d" -depth -type d -exec rmdir {} + 2> /dev/null
    done
  fi
  return 0
}
