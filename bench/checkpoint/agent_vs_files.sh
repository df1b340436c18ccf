#!/usr/bin/env bash
# bench_ckpt twice, one run after the other: on the files, then through one checkpoint
# agent on this host (docs/BENCHMARKS.md, "Checkpoints through an agent").
#   bash bench/checkpoint/agent_vs_files.sh [DIR] [SIZES...]   (default /var/tmp/bck, 8 64 256 1024)
set -e
here=$(cd "$(dirname "$0")/../.." && pwd)
build=${BUILD:-$here/build}
dir=${1:-/var/tmp/bck}
shift || true
sizes=${*:-8 64 256 1024}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
rm -rf "$dir/files" "$dir/agent" "$dir/port"
mkdir -p "$dir"
uptime
echo "== files"
mpirun --oversubscribe -np 4 "$build/bench/bench_ckpt" "$dir/files" $sizes
"$build/ductile-agent" --key-file "$dir/key" --listen 127.0.0.1:0 --port-file "$dir/port" 2> "$dir/agent.log" &
agent=$!
trap 'kill $agent 2> /dev/null || true' EXIT
for _ in $(seq 100); do [ -s "$dir/port" ] && break; sleep 0.1; done
echo "== agent"
DUCTILE_CKPT_AGENTS=127.0.0.1:$(cat "$dir/port") DUCTILE_CKPT_KEY_FILE="$dir/key" \
  mpirun --oversubscribe -np 4 "$build/bench/bench_ckpt" "$dir/agent" $sizes
kill $agent
wait $agent || true
cat "$dir/agent.log"
uptime
