#!/usr/bin/env bash
# The documented benchmark set of docs/BENCHMARKS.md (bench/sim).
set -euo pipefail
build=${1:-build}
b="$build/bench/bench_sim"
echo "# (a) ESP mix, 230 jobs on 34 nodes, 50 % malleable"
for p in fcfs easy conservative fpsma-pwma perf mebf elastic; do "$b" esp "$p"; done
echo "# (b) 100,000 rigid jobs on 10,000 nodes, ~90 % offered load"
for p in fcfs easy conservative; do "$b" synth 100000 10000 0.9 0 "$p"; done
echo "# (c) the same jobs, every one malleable"
for p in fpsma-pwma perf mebf io-aware elastic; do "$b" synth 100000 10000 0.9 1 "$p"; done
echo "# (d) the rigid jobs with node failures (MTBF 10 years per node, down 1 h)"
for p in conservative sfsj easy; do "$b" synth 100000 10000 0.9 0 "$p" 315360000; done
echo "# (e) the malleable jobs with the same failures"
for p in sfsj:malleable=1; do "$b" synth 100000 10000 0.9 1 "$p" 315360000; done
echo "# (f) the priority's cost in a pass: 100,000 queued jobs of 1,000 users (bench_prio.c)"
for n in 1000 10000; do for p in fcfs easy; do "$b" prio "$p" "$n" 100000 1000; done; done
