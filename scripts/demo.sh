#!/usr/bin/env bash
# What `make demo` shows a newcomer: the ESP benchmark mix on the simulator, rigid
# scheduling next to malleable scheduling, with a Gantt chart to look at.
set -euo pipefail
build=${1:-build}
bin="$build/ductile"
out=${DEMO_OUT:-demo-out}
mkdir -p "$out"
echo "== The ESP benchmark (230 jobs, 14 job types) on 34 simulated nodes, half of the jobs malleable"
echo "== \$ ductile sim --workload esp --nodes 34 --malleable 0.5 --policy fcfs,easy,fpsma-pwma,perf --gantt $out/esp.svg"
echo
"$bin" sim --workload esp --nodes 34 --malleable 0.5 --policy fcfs,easy,fpsma-pwma,perf \
  --gantt "$out/esp.svg" --jobs-csv "$out/jobs.csv" --events-csv "$out/events.csv" --no-progress
echo
echo "Gantt charts (one per policy): $out/esp.*.svg; per-job rows: $out/jobs.*.csv;"
echo "allocation changes: $out/events.*.csv. 'ductile sim --help' lists every policy."
