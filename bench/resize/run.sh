#!/usr/bin/env bash
# The documented resize benchmark of docs/BENCHMARKS.md (bench/resize).
set -euo pipefail
build=$(cd "${1:-build}" && pwd)
"$build/bench/bench_resize" "$build"
