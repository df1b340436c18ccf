#!/usr/bin/env bash
# Seed 003 §4.1.2 (MEBF against EASY), replayed: the table of docs/experiments.md,
# mean of generator seeds 1-5 of each workload. About a minute.
#   bash bench/experiments/mebf/run.sh [path/to/ductile] [policies, the first the baseline]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
bin=${1:-$here/../../../build/ductile}
pols=${2:-easy,mebf}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for app in compute read write mixed; do
  for n in 100 200 300; do
    for s in 1 2 3 4 5; do
      python3 "$here/workload.py" --jobs $n --app $app --seed $s > "$tmp/w.json"
      python3 "$here/measure.py" --ductile "$bin" --csv --label $app-$n-s$s "$tmp/w.json" "$pols"
    done
  done
done > "$tmp/all.csv"
python3 "$here/agg.py" "$tmp/all.csv"
