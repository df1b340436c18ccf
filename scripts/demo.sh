#!/usr/bin/env bash
# What `make demo` shows a newcomer: the ESP benchmark on the simulator (rigid and
# malleable scheduling side by side), then a real emulated cluster running a small mix,
# then a malleable MPI job that the scheduler grows and shrinks around a rigid one.
set -euo pipefail
build=${1:-build}
bin="$(cd "$build" && pwd)/ductile"
out=${DEMO_OUT:-demo-out}
mkdir -p "$out"
out=$(cd "$out" && pwd)

echo "== 1. The simulator: the ESP benchmark (230 jobs) on 34 nodes, half of them malleable"
echo "\$ ductile sim --workload esp --nodes 34 --malleable 0.5 --policy fcfs,easy,fpsma-pwma,perf --gantt $out/esp.svg"
echo
"$bin" sim --workload esp --nodes 34 --malleable 0.5 --policy fcfs,easy,fpsma-pwma,perf \
  --gantt "$out/esp.svg" --jobs-csv "$out/jobs.csv" --events-csv "$out/events.csv" --no-progress |
  grep -E '^(workload|policy| )|makespan|utilization|wait mean|response mean|expansions|shrinks'
echo
echo "Gantt charts: $out/esp.*.svg"
echo

echo "== 2. A local emulated cluster: a controller and 4 node daemons on loopback"
dir="$out/cluster"
rm -rf "$dir"
"$bin" cluster up --nodes 4 --dir "$dir" --tick 1 --policy fpsma-pwma --resize-timeout 30
export DUCTILE_CONF="$dir/ductile.conf"
trap '"$bin" cluster down --dir "$dir" >/dev/null 2>&1 || true' EXIT
work="$out/work"
mkdir -p "$work"
cd "$work"
cat > hello.sh <<'S'
#!/bin/sh
#DUCTILE --nodes=2 --time=1
echo "job $DUCTILE_JOB_ID on $DUCTILE_JOB_NODELIST ($DUCTILE_JOB_NUM_NODES nodes)"
sleep 2
S
cat > wide.sh <<'S'
#!/bin/sh
#DUCTILE --nodes=4 --time=1
sleep 1
S
cat > fails.sh <<'S'
#!/bin/sh
echo "something went wrong" >&2
exit 3
S
chmod +x hello.sh wide.sh fails.sh
echo
echo "\$ ductile submit hello.sh; ductile submit wide.sh; ductile submit -N 1 fails.sh; ductile submit hello.sh"
"$bin" submit hello.sh
"$bin" submit wide.sh
"$bin" submit -N 1 fails.sh
"$bin" submit hello.sh
sleep 0.5
echo
echo "\$ ductile queue"
"$bin" queue
echo
echo "\$ ductile nodes"
"$bin" nodes
# wait for everything to finish (poll with a deadline)
for _ in $(seq 200); do
  [ "$("$bin" queue | wc -l)" -le 1 ] && break
  sleep 0.1
done
echo
echo "\$ ductile history"
"$bin" history
echo
echo "\$ cat ductile-1.out"
cat ductile-1.out

echo
echo "== 3. A malleable MPI job: jacobi2d (heat equation) under the fpsma-pwma policy"
[ "$(id -u)" = 0 ] && export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export PATH="$(dirname "$bin"):$PATH"
cat > heat.sh <<'S'
#!/bin/sh
#DUCTILE --nodes=1 --malleable --min-nodes=1 --max-nodes=4
ductile mpirun jacobi2d --n 256 --iters 3000 --delay-us 2000
S
cat > rigid.sh <<'S'
#!/bin/sh
#DUCTILE --nodes=2
sleep 2
S
echo "\$ cat heat.sh"
cat heat.sh
echo "\$ ductile submit heat.sh    # starts on 1 node; idle nodes are offered to it"
heat=$("$bin" submit heat.sh | awk '{print $3}')
for _ in $(seq 300); do
  grep -q "processes at iteration" "ductile-$heat.out" 2>/dev/null && break
  sleep 0.1
done
echo "\$ ductile submit rigid.sh   # needs 2 nodes: the malleable job gives some back"
"$bin" submit rigid.sh
for _ in $(seq 600); do
  [ "$("$bin" queue | wc -l)" -le 1 ] && break
  sleep 0.1
done
echo
echo "\$ cat ductile-$heat.out"
cat "ductile-$heat.out"
echo
echo "\$ ductile show $heat   (its resizes, as the controller recorded them)"
"$bin" show "$heat" | sed -n '/^Events/,$p'
echo
echo "\$ mpirun -np 2 jacobi2d --n 256 --iters 3000   # the same plate at a fixed size"
mpirun --oversubscribe -np 2 "$(dirname "$bin")/jacobi2d" --n 256 --iters 3000 | grep checksum
echo
"$bin" cluster down --dir "$dir"
trap - EXIT
