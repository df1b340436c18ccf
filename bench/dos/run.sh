#!/usr/bin/env bash
# Denial of service without authentication (issue 7, defect 6): what N unauthenticated
# TCP connections announcing 2 MiB frames, and an ordinary user holding M connections
# on the local socket, cost the controller, and whether root's `ductile queue` still
# works meanwhile.
#   bash bench/dos/run.sh [BUILD_DIR] [N] [M]      (defaults: build 300 20000)
# BUILD_DIR holds ductile, ductiled, ductile-noded and tests/garbage. The local flood
# runs as `nobody` (root and setpriv needed; skipped otherwise) with the controller's
# open-files limit as it inherited it. Figures are recorded in docs/BENCHMARKS.md.
set -euo pipefail
B=$(cd "${1:-build}" && pwd)
N=${2:-300}
M=${3:-20000}
BIN="$B/ductile"
G="$B/tests/garbage"
T=$(mktemp -d "${TMPDIR:-/tmp}/ductile-dos-XXXXXX")
chmod 755 "$T"
held=""
cleanup() {
  [ -z "$held" ] || kill $held 2> /dev/null || true
  "$BIN" cluster down --dir "$T/c" > /dev/null 2>&1 || true
  rm -rf "$T"
}
trap cleanup EXIT
export DUCTILE_CONF="$T/c/ductile.conf"
"$BIN" cluster up --nodes 1 --dir "$T/c" --tick 1 > /dev/null
pid=$(cat "$T/c/ctld.pid")
port=$(awk '$1 == "ControlPort" {print $3}' "$DUCTILE_CONF")
rss() { awk '/^VmRSS/ {printf "%.1f MB", $2 / 1024}' "/proc/$pid/status"; }
fds() { ls "/proc/$pid/fd" | wc -l; }
# root's queue: "ok (S s)" or "FAILED: message"
root_queue() {
  local t0 out
  t0=$(date +%s.%N)
  if out=$(timeout 20 "$BIN" queue 2>&1); then
    printf 'ok (%.2f s)' "$(echo "$(date +%s.%N) - $t0" | bc)"
  else
    printf 'FAILED: %s' "$(echo "$out" | head -1)"
  fi
}
wait_line() { # FILE: until the garbage tool has printed its line
  for _ in $(seq 6000); do
    [ -s "$1" ] && return 0
    sleep 0.05
  done
  return 1
}
release() { kill $held 2> /dev/null || true; wait $held 2> /dev/null || true; held=""; }

echo "controller's open-files limit $(awk '/Max open files/ {print $4}' "/proc/$pid/limits")"
echo "idle:                          RSS $(rss), $(fds) descriptors"
"$G" tcp 127.0.0.1 "$port" bigframe "$N" > "$T/big.out" 2>&1 &
held=$!
wait_line "$T/big.out" || true
echo "$N unauthenticated 2 MiB frames ($(cat "$T/big.out")): RSS $(rss), $(fds) descriptors; root's queue: $(root_queue)"
release
echo "after they hang up:            RSS $(rss)"
if [ "$(id -u)" -eq 0 ] && command -v setpriv > /dev/null; then
  setpriv --reuid=nobody --regid=nogroup --clear-groups -- "$G" unix "$T/c/ctld.sock" hold "$M" > "$T/hold.out" 2>&1 &
  held=$!
  peak=0 # the controller's descriptors, sampled during the flood
  until [ -s "$T/hold.out" ] || ! kill -0 $held 2> /dev/null; do
    n=$(fds)
    [ "$n" -le "$peak" ] || peak=$n
    sleep 0.02
  done
  q=$(root_queue)
  echo "nobody holds $M local connections ($(cat "$T/hold.out")): at most $peak descriptors seen during the flood; root's queue: $q; then $(fds) descriptors, RSS $(rss)"
  release
else
  echo "local flood skipped (needs root and setpriv)"
fi
echo "at the end: root's queue: $(root_queue)"
