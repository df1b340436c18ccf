#!/usr/bin/env bash
# `elastic` against `easy` (and the seeds' malleable policies) on the ESP mix, 34
# nodes, 10 / 50 / 100 % malleable, mean of seeds 1-5 of the mix: the table of
# docs/experiments.md ("Malleable backfilling against EASY").
#   bash bench/experiments/elastic.sh [build-dir] [policies] [sim options...]
set -euo pipefail
build=${1:-build}
pols=${2:-easy,elastic,mebf,fpsma-pwma,perf}
shift 2 2>/dev/null || shift $#
rows='^(makespan|utilization|wait mean|bounded slowdown mean|bounded slowdown p95|bounded slowdown max) '
for m in 0.1 0.5 1; do
  for s in 1 2 3 4 5; do
    "$build/ductile" sim --no-progress --workload esp --nodes 34 --malleable "$m" --seed "$s" \
      --policy "$pols" "$@" | grep -E "$rows" | sed -E "s/ \([^)]*\)//g; s/ \[s\]//; s/^/$m /"
  done
done | awk -v pols="$pols" '
  BEGIN { np = split(pols, P, ",") }
  {
    m = $1; k = NF - np; metric = ""
    for (i = 2; i <= k; i++) metric = metric (i > 2 ? " " : "") $i
    if (!(metric in seen)) { seen[metric] = 1; order[++nm] = metric }
    for (p = 1; p <= np; p++) sum[m, metric, p] += $(k + p)
    cnt[m, metric]++
  }
  END {
    split("0.1 0.5 1", M, " ")
    for (a = 1; a <= 3; a++) {
      printf "### %s malleable (mean of seeds 1-5; ratio to %s)\n", M[a] * 100 "%", P[1]
      printf "%-24s", "metric"; for (p = 1; p <= np; p++) printf " %20s", P[p]; printf "\n"
      for (o = 1; o <= nm; o++) {
        mt = order[o]; c = cnt[M[a], mt]; base = sum[M[a], mt, 1] / c
        printf "%-24s", mt
        for (p = 1; p <= np; p++) {
          v = sum[M[a], mt, p] / c
          if (p == 1) printf " %20.3f", v; else printf " %12.3f (%5.3f)", v, (base ? v / base : 0)
        }
        printf "\n"
      }
    }
  }'
