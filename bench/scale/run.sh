#!/usr/bin/env bash
# Scale (issue 13; docs/BENCHMARKS.md "Scale"): an emulated cluster of N nodes in node
# daemons of 2,500 nodes each (ductile-noded --nodes), for each N given (default 1000
# 4000 10000). For each: seconds until every node is up after `cluster up`; the idle
# controller's CPU (% of one core over 20 s) and RSS; after a kill -9 of the controller,
# seconds from its restart until every node is registered again; the controller's CPU
# per trivial job end to end (one `ductile submit` process per job, 500 jobs).
#   bash bench/scale/run.sh [BUILD_DIR] [N...]
set -euo pipefail
build=$(cd "${1:-build}" && pwd); shift || true
sizes=${*:-1000 4000 10000}
bin="$build/ductile"
tmp=$(mktemp -d)
cleanup() { "$bin" cluster down --dir "$tmp/c" > /dev/null 2>&1 || true; rm -rf "$tmp"; }
trap cleanup EXIT
ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }
hz=$(getconf CLK_TCK)
now() { date +%s.%N; }
up_count() { "$bin" cluster status --json 2> /dev/null | sed -n 's/.*"nodes_up": \([0-9]*\).*/\1/p'; }
printf "%-7s %-8s %-10s %-10s %-9s %-10s %-12s\n" nodes daemons up_s idle_cpu% rss_MiB restart_s cpu_ms/job
for n in $sizes; do
  per=$(( n < 2500 ? n : 2500 ))
  t0=$(now)
  "$bin" cluster up --nodes "$n" --nodes-per-daemon "$per" --dir "$tmp/c" \
    --set MaxConnections=100000 > /dev/null
  t1=$(now)
  export DUCTILE_CONF="$tmp/c/ductile.conf"
  ctld=$(cat "$tmp/c/ctld.pid")
  sleep 5
  c0=$(ticks "$ctld"); sleep 20; c1=$(ticks "$ctld")
  rss=$(awk '/VmRSS/ {print int($2 / 1024)}' "/proc/$ctld/status")
  kill -9 "$ctld"
  while kill -0 "$ctld" 2> /dev/null; do sleep 0.05; done
  t2=$(now)
  setsid "$build/ductiled" --conf "$DUCTILE_CONF" >> "$tmp/c/log/ductiled.log" 2>&1 < /dev/null &
  echo $! > "$tmp/c/ctld.pid"
  ctld=$!
  for _ in $(seq 1 1200); do [ "$(up_count)" = "$n" ] && break; sleep 0.1; done
  t3=$(now)
  [ "$(up_count)" = "$n" ] || echo "warning: only $(up_count) of $n nodes back after the restart" >&2
  printf '#!/bin/sh\ntrue\n' > "$tmp/t.sh"; chmod +x "$tmp/t.sh"
  j0=$(ticks "$ctld")
  for _ in $(seq 1 500); do "$bin" submit "$tmp/t.sh" > /dev/null; done
  for _ in $(seq 1 600); do [ "$("$bin" history -t CD --limit 1000 | grep -c t.sh)" = 500 ] && break; sleep 0.2; done
  j1=$(ticks "$ctld")
  awk -v n="$n" -v d=$(( (n + per - 1) / per )) -v t0="$t0" -v t1="$t1" -v t2="$t2" -v t3="$t3" \
    -v c0="$c0" -v c1="$c1" -v j0="$j0" -v j1="$j1" -v hz="$hz" -v rss="$rss" 'BEGIN {
    printf "%-7s %-8s %-10.2f %-10.2f %-9s %-10.2f %-12.2f\n", n, d, t1 - t0,
      (c1 - c0) * 100 / hz / 20, rss, t3 - t2, (j1 - j0) * 1000 / hz / 500 }'
  "$bin" cluster down --dir "$tmp/c" > /dev/null
  rm -rf "$tmp/c"
done
