#!/usr/bin/env bash
# The documented cluster benchmark of docs/BENCHMARKS.md (bench/cluster).
set -euo pipefail
build=${1:-build}
"$build/bench/bench_cluster" "$(cd "$build" && pwd)" "${2:-10000}" "${3:-100000}" "${4:-2000}"
