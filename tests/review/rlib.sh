# Review reproductions: a real emulated cluster in a temp dir (as tests/integration/lib.sh)
# but the clean-up kills only pids this script recorded (job scripts write theirs to
# $T/pids), never by name.
set -euo pipefail
BIN=${DUCTILE_BIN:-$(cd "$(dirname "$0")/../.." && pwd)/build/src/ductile}
[ -x "$BIN" ] || BIN=$(cd "$(dirname "$0")/../.." && pwd)/build/ductile
BINDIR=$(dirname "$BIN")
T=$(mktemp -d "${TMPDIR:-/tmp}/ductile-rv-XXXXXX")
chmod 755 "$T"
export DUCTILE_CONF="$T/c/ductile.conf"
cd "$T" # job output files go there
cleanup() {
  local rc=$?
  for f in "$T"/c/noded-*.pid; do [ -f "$f" ] && kill -CONT "$(cat "$f")" 2>/dev/null || true; done
  "$BIN" cluster down --dir "$T/c" --wait 3 >/dev/null 2>&1 || true
  for f in "$T"/c/noded-*.pid "$T"/c/ctld.pid; do [ -f "$f" ] && kill -9 "$(cat "$f")" 2>/dev/null || true; done
  [ -f "$T/pids" ] && while read -r p; do kill -9 "$p" 2>/dev/null || true; done < "$T/pids"
  if [ -n "${KEEP:-}" ]; then echo "kept $T" >&2; else rm -rf "$T"; fi
  exit $rc
}
trap cleanup EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
d() { "$BIN" "$@"; }
up() { local n=$1; shift; d cluster up --nodes "$n" --dir "$T/c" --tick 1 "$@" > "$T/up.out" || fail "cluster up"; }
wait_for() { local limit=$1; shift; local end=$((SECONDS + limit))
  until "$@" >/dev/null 2>&1; do [ $SECONDS -lt $end ] || return 1; sleep 0.05; done; }
state() { d show "$1" | awk '/^State/ {gsub(/[()]/, "", $3); print $3}'; }
is_state() { [ "$(state "$1")" = "$2" ]; }
expect_state() { wait_for "${3:-20}" is_state "$1" "$2" || fail "job $1 is $(state "$1"), expected $2"; }
field() { d show "$1" | awk -v k="$2" '$1 == k {$1 = ""; sub(/^ /, ""); print}'; }
submit() { d submit "$@" | awk '/^Submitted job/ {print $3}'; }
script() { local f="$T/$1"; shift; printf '#!/bin/sh\necho $$ >> %s/pids\n%s\n' "$T" "$*" > "$f"; chmod 755 "$f"; echo "$f"; }
alive() { kill -0 "$1" 2>/dev/null && ! grep -q '^State:.*Z' "/proc/$1/status" 2>/dev/null; }
restart_noded() {
  setsid "$BINDIR/ductile-noded" --conf "$DUCTILE_CONF" --node "$1" >> "$T/c/log/noded-$1.log" 2>&1 < /dev/null &
  echo $! > "$T/c/noded-$1.pid"
}
kill_restart_noded() {
  local c0; c0=$(grep -c ': started' "$T/c/log/noded-$1.log")
  kill -9 "$(cat "$T/c/noded-$1.pid")"
  restart_noded "$1"
  wait_for 10 sh -c "[ \$(grep -c ': started' '$T/c/log/noded-$1.log') -gt $c0 ]" || fail "noded $1 did not restart"
}
