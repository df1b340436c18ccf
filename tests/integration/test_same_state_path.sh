#!/usr/bin/env bash
# Two clusters with the same ClusterName and the same StateDir path on one kernel (two
# containers, each its own mount namespace) shared their jobs' cgroups, named by the
# cluster's name and a hash of that path: a node daemon starting in the second ended the
# first's running job as a leftover of its own (issue 35). The cgroups are now named by
# an id made with each node's state (StateDir/noded-id). Here: cluster A runs a job,
# cluster B starts at the same path in another mount namespace; A's job runs on, and
# their cgroups differ.
. "$(dirname "$0")/lib.sh"
command -v unshare > /dev/null && command -v nsenter > /dev/null || { echo "SKIP: no unshare/nsenter"; exit 77; }
SAME="/tmp/ductile-same-$$"
mkdir -p "$SAME" "$T/a" "$T/b"
extra_cleanup() {
  local d
  for d in a b; do
    [ -f "$T/$d/ctld.pid" ] && nsenter -t "$(cat "$T/$d/ctld.pid")" -m -- "$BIN" cluster down \
      --dir "$SAME" --wait 3 > /dev/null 2>&1
  done
  pkill -9 -f "$SAME/" 2> /dev/null || true
  rmdir "$SAME" 2> /dev/null || true
}
up_in() { # DIR: a cluster at $SAME, with DIR mounted there, in a mount namespace of its own
  unshare -m --propagation private sh -c "mount --bind '$1' '$SAME' && exec '$BIN' cluster up --nodes 1 --dir '$SAME' --tick 1" \
    > "$1/up.out" 2>&1 || fail "cluster up in $1: $(cat "$1/up.out")"
}
in_() { # DIR CMD...: CMD in that cluster's namespace
  local d=$1
  shift
  nsenter -t "$(cat "$d/ctld.pid")" -m -- env DUCTILE_CONF="$SAME/ductile.conf" "$@"
}
cgroups_of() { sed -n "s/.*jobs' cgroups under \(.*\)$/\1/p" "$1"/log/noded-n1.log | tail -1; }
up_in "$T/a"
[ -n "$(cgroups_of "$T/a")" ] || { echo "SKIP: no cgroup v2 for jobs here"; exit 77; }
grep -q "^ClusterName *= *local$" "$T/a/ductile.conf" || grep -q "cluster local" "$T/a/log/ductiled.log" ||
  fail "cluster A's name: $(grep -i cluster "$T/a/ductile.conf")"
j=$(in_ "$T/a" "$BIN" submit --parsable --wrap "echo \$\$ > '$T/a/job.pid'; while [ ! -e '$T/a/stop' ]; do sleep 0.1; done")
wait_for 20 test -s "$T/a/job.pid" || fail "cluster A's job did not start: $(in_ "$T/a" "$BIN" queue)"
up_in "$T/b"
wait_for 20 grep -q "registered with the controller" "$T/b/log/noded-n1.log" || fail "cluster B's node did not register"
[ "$(cgroups_of "$T/a")" != "$(cgroups_of "$T/b")" ] || fail "both clusters' jobs under $(cgroups_of "$T/a")"
! grep -q "leftover" "$T/b/log/noded-n1.log" || fail "cluster B's node: $(grep leftover "$T/b/log/noded-n1.log")"
alive "$(cat "$T/a/job.pid")" || fail "cluster B's start ended cluster A's job"
[ "$(in_ "$T/a" "$BIN" queue --noheader --format State -j "$j")" = RUNNING ] ||
  fail "cluster A's job: $(in_ "$T/a" "$BIN" queue)"
# each keeps its id: a restart of A's node daemon finds its job (adopted, not ended)
[ -s "$T/a/state/noded-id" ] && [ -s "$T/b/state/noded-id" ] || fail "no noded-id: $(ls "$T/a/state" "$T/b/state")"
touch "$T/a/stop"
done_a() { [ "$(in_ "$T/a" "$BIN" history "$j" --noheader --format State 2> /dev/null)" = COMPLETED ]; }
wait_for 30 done_a || fail "cluster A's job: $(in_ "$T/a" "$BIN" history "$j" 2>&1)"
# a state that a daemon before the id ran on (an upgrade with jobs running): its
# cgroups' old name, the hash of the StateDir path, is kept
cg=$(cgroups_of "$T/a")
root=${cg%/ductile/*}
h=$(python3 -c '
import sys
h = 2166136261
for b in sys.argv[1].encode():
    h = ((h ^ b) * 16777619) & 0xffffffff
print("%08x" % h)' "$T/u/state")
mkdir -p "$root/ductile/local-$h"
"$BIN" cluster up --nodes 1 --dir "$T/u" --tick 1 > "$T/u.out" 2>&1 || fail "cluster up: $(cat "$T/u.out")"
got=$(cgroups_of "$T/u")
"$BIN" cluster down --dir "$T/u" > /dev/null 2>&1
rmdir "$root/ductile/local-$h" 2> /dev/null || true
[ "$got" = "$root/ductile/local-$h/n1" ] || fail "after an upgrade: cgroups under $got, not $root/ductile/local-$h/n1"
[ "$(cat "$T/u/state/noded-id")" = "$h" ] || fail "noded-id: $(cat "$T/u/state/noded-id")"
echo PASS
