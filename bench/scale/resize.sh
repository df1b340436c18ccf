#!/usr/bin/env bash
# Resizes at scale (issue 13; docs/BENCHMARKS.md "bench/scale"): on an emulated cluster
# of NODES nodes (2,500 per daemon) with policy equi (equal shares for the running
# malleable jobs), JOBS malleable jobs (1 to NODES nodes) whose application commits
# every offer at once (tests/tools/resize_app): submitted one after the other, each
# arrival shrinks the running ones; then ended one after the other, each end grows the
# others. Reports the resizes committed (expand and shrink events of the database), the
# seconds, resizes per second, the controller's CPU per resize, and its commit times.
#   bash bench/scale/resize.sh [BUILD_DIR] [NODES] [JOBS]      (defaults: build 1000 8)
set -euo pipefail
build=$(cd "${1:-build}" && pwd)
n=${2:-1000}
jobs=${3:-8}
bin="$build/ductile"
app="$build/tests/resize_app"
tmp=$(mktemp -d)
cleanup() { "$bin" cluster down --dir "$tmp/c" > /dev/null 2>&1 || true; rm -rf "$tmp"; }
trap cleanup EXIT
cd "$tmp"
now() { date +%s.%N; }
ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }
hz=$(getconf CLK_TCK)
per=$(( n < 2500 ? n : 2500 ))
"$bin" cluster up --nodes "$n" --nodes-per-daemon "$per" --dir "$tmp/c" --policy equi \
  --set MaxConnections=100000 > /dev/null
export DUCTILE_CONF="$tmp/c/ductile.conf"
ctld=$(cat "$tmp/c/ctld.pid")
up_count() { "$bin" cluster status --json 2> /dev/null | sed -n 's/.*"nodes_up": \([0-9]*\).*/\1/p'; }
for _ in $(seq 1 1200); do [ "$(up_count)" = "$n" ] && break; sleep 0.1; done
[ "$(up_count)" = "$n" ] || { echo "only $(up_count) of $n nodes up" >&2; exit 1; }
states() { "$bin" queue 2> /dev/null | awk 'NR > 1 {print $4}' | sort | uniq -c | tr '\n' ' '; }
# settled: every job of the set running (no PD, no RS)
settled() {
  for _ in $(seq 1 3000); do
    local s
    s=$(states)
    case "$s" in *PD*|*RS*|*CG*) sleep 0.05 ;; *) return 0 ;; esac
  done
  echo "not settled: $(states)" >&2; return 1
}
resizes() {
  python3 -c 'import sqlite3,sys; print(sqlite3.connect(sys.argv[1]).execute("SELECT count(*) FROM job_events WHERE event IN (\"expand\",\"shrink\")").fetchone()[0])' \
    "$tmp/c/state/ductile.db"
}
for i in $(seq 1 "$jobs"); do
  printf '#!/bin/sh\nexec %s commit %s/stop.%d\n' "$app" "$tmp" "$i" > "job$i.sh"
done
r0=$(resizes); c0=$(ticks "$ctld"); t0=$(now)
for i in $(seq 1 "$jobs"); do
  "$bin" submit --malleable -N 1 --min-nodes 1 --max-nodes "$n" -o /dev/null "job$i.sh" > /dev/null
  settled
done
t1=$(now); r1=$(resizes); c1=$(ticks "$ctld")
for i in $(seq 1 "$jobs"); do
  touch "stop.$i"
  for _ in $(seq 1 3000); do
    [ "$("$bin" queue 2> /dev/null | grep -c "job$i.sh")" = 0 ] && break; sleep 0.05
  done
  settled
done
t2=$(now); r2=$(resizes); c2=$(ticks "$ctld")
cm=$("$bin" cluster status --json | python3 -c 'import json,sys; p=json.load(sys.stdin)["commits"]; print("%.2f,%.2f,%.2f" % (p["median_ms"], p["p99_ms"], p["max_ms"]))')
printf "%-6s %-5s %-17s %-17s %-13s %-13s %-20s\n" nodes jobs "arrivals:resizes" "departures:resizes" "resizes/s" "cpu_ms/resize" "commit_ms(med,p99,max)"
awk -v n="$n" -v m="$jobs" -v a=$((r1 - r0)) -v b=$((r2 - r1)) -v t0="$t0" -v t1="$t1" -v t2="$t2" \
  -v c0="$c0" -v c2="$c2" -v hz="$hz" -v cm="$cm" 'BEGIN {
  printf "%-6s %-5s %-17s %-17s %-13.1f %-13.2f %-20s\n", n, m, a " in " sprintf("%.1f", t1 - t0) "s",
    b " in " sprintf("%.1f", t2 - t1) "s", (a + b) / (t2 - t0), (c2 - c0) * 1000 / hz / (a + b), cm }'
