#!/usr/bin/env bash
# Offers per minute to an application that declines everything (docs/BENCHMARKS.md,
# bench/resize): a malleable job on 1 of 4 idle nodes under fpsma-pwma, whose leader
# (tests/tools/offer_app --decline) declines every offer, for SECONDS (default 60).
# "before": ResizeBackoff = 0, the engine offers the same change again at once (as it
# did before issue 9); "after": the default back-off (10 s doubling to 300 s).
# Prints the offers seen by the application and the controller's database WAL size.
#   bash bench/resize/decline.sh [BUILD_DIR] [SECONDS]
set -euo pipefail
build=$(cd "${1:-build}" && pwd)
secs=${2:-60}
bin="$build/ductile"
tmp=$(mktemp -d)
trap 'for c in "$tmp"/c*; do "$bin" cluster down --dir "$c" > /dev/null 2>&1 || true; done; rm -rf "$tmp"' EXIT
printf "%-8s %-14s %8s %14s %10s\n" case ResizeBackoff seconds "offers/minute" "WAL [KiB]"
for c in before after; do
  set_opt=()
  [ "$c" = before ] && set_opt=(--set ResizeBackoff=0 --set ResizeBackoffMax=0)
  "$bin" cluster up --nodes 4 --dir "$tmp/c$c" --policy fpsma-pwma --tick 1 "${set_opt[@]}" > /dev/null
  export DUCTILE_CONF="$tmp/c$c/ductile.conf"
  printf '#!/bin/sh\n#DUCTILE --nodes=1 --malleable --min-nodes=1 --max-nodes=4\nexec %s %s --decline --until %s\n' \
    "$build/offer_app" "$tmp/$c.log" "$tmp/$c.stop" > "$tmp/$c.sh"
  "$bin" submit "$tmp/$c.sh" > /dev/null
  for _ in $(seq 200); do [ -s "$tmp/$c.log" ] && break; sleep 0.1; done
  t0=$(date +%s.%N)
  sleep "$secs" # the measurement window itself
  n=$(grep -c declined "$tmp/$c.log" || true)
  t1=$(date +%s.%N)
  wal=$(stat -c %s "$tmp/c$c/state/ductile.db-wal" 2> /dev/null || echo 0)
  touch "$tmp/$c.stop"
  awk -v c="$c" -v b="$([ "$c" = before ] && echo 0 || echo 10-300)" -v n="$n" -v a="$t0" -v e="$t1" -v w="$wal" \
    'BEGIN {printf "%-8s %-14s %8.0f %14.1f %10.0f\n", c, b, e - a, n * 60 / (e - a), w / 1024}'
  "$bin" cluster down --dir "$tmp/c$c" > /dev/null
done
