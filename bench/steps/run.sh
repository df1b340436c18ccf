#!/usr/bin/env bash
# Where a step's output goes, and what it costs: the same step (N tasks, each printing
# MB megabytes) run from the controller's host (its output comes through the
# controller) and from inside the job (it goes from the tasks' node daemons straight to
# the daemon of the client's node; docs/architecture.md, "Step output"). Prints the
# wall time, the CPU seconds of the controller and of all node daemons, and the bytes
# the controller passed on, for each; the client discards the output in both.
#   bash bench/steps/run.sh [BUILD_DIR] [N] [MB]     (defaults: build 4 50)
# Figures are recorded in docs/BENCHMARKS.md.
set -euo pipefail
B=$(cd "${1:-build}" && pwd)
N=${2:-4}
MB=${3:-50}
BIN="$B/ductile"
T=$(mktemp -d "${TMPDIR:-/tmp}/ductile-steps-XXXXXX")
chmod 755 "$T"
cleanup() {
  "$BIN" cluster down --dir "$T/c" > /dev/null 2>&1 || true
  rm -rf "$T"
}
trap cleanup EXIT
export DUCTILE_CONF="$T/c/ductile.conf"
export PATH="$B:$PATH"
"$BIN" cluster up --nodes "$N" --dir "$T/c" --tick 1 > /dev/null
ctld=$(cat "$T/c/ctld.pid")
nodeds=$(cat "$T"/c/noded-*.pid | tr '\n' ' ')
cpu() { # CPU seconds (user + system) of the given pids
  local s=0
  for p in "$@"; do s=$((s + $(awk '{print $14 + $15}' "/proc/$p/stat"))); done
  echo "scale=2; $s / $(getconf CLK_TCK)" | bc
}
relayed() { "$BIN" cluster status --json | awk -F'[:,]' '/step_output_bytes/ {gsub(/ /, "", $2); print $2}'; }
printf '#!/bin/sh\nsleep 3600\n' > "$T/hold.sh"
job=$("$BIN" submit -N "$N" "$T/hold.sh" | awk '{print $3}')
for _ in $(seq 200); do "$BIN" show "$job" | grep -q RUNNING && break; sleep 0.05; done
task="head -c $((MB * 1048576)) /dev/zero | tr '\\\\0' x"
measure() { # LABEL CMD...
  local label=$1 c0 n0 b0 t0 t1
  shift
  c0=$(cpu "$ctld"); n0=$(cpu $nodeds); b0=$(relayed); t0=$(date +%s.%N)
  "$@"
  t1=$(date +%s.%N)
  printf '%-34s wall %6.2f s   ductiled CPU %6.2f s   node daemons CPU %6.2f s   through ductiled %s MB\n' \
    "$label" "$(echo "$t1 - $t0" | bc)" "$(echo "$(cpu "$ctld") - $c0" | bc)" \
    "$(echo "$(cpu $nodeds) - $n0" | bc)" "$(( ($(relayed) - b0) / 1048576 ))"
}
via_ctld() { "$BIN" run --job "$job" sh -c "$task" > /dev/null; }
direct() { # a client inside the job, on its first node
  "$BIN" run --job "$job" --node n1 sh -c "ductile run sh -c \"$task\" > /dev/null"
}
echo "step of $N tasks x $MB MB"
measure "from the controller host" via_ctld
measure "from inside the job (direct)" direct
