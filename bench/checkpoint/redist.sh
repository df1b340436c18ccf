#!/usr/bin/env bash
# bench_redist through one checkpoint agent on this host (docs/BENCHMARKS.md, "A resize
# through the agents"): a resize's data moved by dt_ckpt_redistribute against MPI.
#   bash bench/checkpoint/redist.sh [DIR] [P_OLD] [P] [SIZES...]   (default /var/tmp/brd 2 4 8 64 256)
set -e
here=$(cd "$(dirname "$0")/../.." && pwd)
build=${BUILD:-$here/build}
dir=${1:-/var/tmp/brd}
old=${2:-2}
p=${3:-4}
shift 3 || shift $#
sizes=${*:-8 64 256}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
rm -rf "$dir"
mkdir -p "$dir"
uptime
"$build/ductile-agent" --key-file "$dir/key" --listen 127.0.0.1:0 --port-file "$dir/port" 2> "$dir/agent.log" &
agent=$!
trap 'kill $agent 2> /dev/null || true' EXIT
for _ in $(seq 100); do [ -s "$dir/port" ] && break; sleep 0.1; done
DUCTILE_CKPT_AGENTS=127.0.0.1:$(cat "$dir/port") DUCTILE_CKPT_KEY_FILE="$dir/key" \
  mpirun --oversubscribe -np "$p" "$build/bench/bench_redist" "$dir/ckpt" "$old" $sizes
kill $agent
wait $agent || true
uptime
