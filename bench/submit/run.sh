#!/usr/bin/env bash
# Submissions as users make them, Ductile and Slurm side by side in one run (issue 13;
# docs/BENCHMARKS.md "bench/submit"). One `ductile submit` process per job against a
# 16-node emulated cluster whose nodes are drained (jobs stay queued), and one `sbatch
# --hold` process per job against Debian's Slurm 22.05 started by the project's baseline
# (../shared/tools/slurm-baseline: 16 slurmd, its own munged), in alternating loops:
#   round r: Ductile sequential, Slurm sequential, Ductile parallel, Slurm parallel
# sequential: LOOP submissions from one shell, one after the other (a user's loop);
# parallel: PAR shells at once, LOOP submissions each (the baseline's measure.sh "a").
# Each loop reports submissions/s and CPU per submission: the clients' (the loop's
# shells and everything they started, from their rusage), the daemons' (ductiled and
# ductile-noded; slurmctld, slurmd and munged) and the whole host's (/proc/stat busy
# time, which also counts other work on the machine).
#   bash bench/submit/run.sh [BUILD_DIR [OTHER_BUILD_DIR...]]
# Other build directories (an earlier commit's build, say) get a cluster each and their
# own loops in every round, named ductile2, ductile3...: before and after in one run.
# Knobs (environment): ROUNDS=8 LOOP=250 PAR=8 (0: no parallel loops) NODES=16
#   SLURM=1 (0: Ductile alone) SLURM_BASELINE=<repo>/../shared/tools/slurm-baseline
#   CLEAR=1: after each loop (not timed) its jobs are counted in the queue and cancelled,
#   so every loop meets an empty queue, as the baseline's held blocks do (0: the queues
#   grow over the run; Ductile's scheduling pass then walks every queued job, drained)
#   OUT=FILE (also write the raw rows there, tab-separated)
#   FLOOR=1: every round also runs the same loops of `/bin/true` (system "true"): what
#   one process per submission costs before the program does anything, the floor of
#   both systems (0: not measured)
# Needs: bash, awk, a built tree (make build); for the Slurm side root and Debian's
# `apt-get install -y slurm-wlm munge` (this script installs nothing). Without sbatch or
# the baseline's scripts it measures Ductile alone and says so.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
builds=()
for b in "${@:-build}"; do builds+=("$(cd "$b" && pwd)"); done
ROUNDS=${ROUNDS:-8}
LOOP=${LOOP:-250}
PAR=${PAR:-8}
NODES=${NODES:-16}
SLURM=${SLURM:-1}
CLEAR=${CLEAR:-1}
FLOOR=${FLOOR:-1}
SLURM_BASELINE=${SLURM_BASELINE:-$here/../../../shared/tools/slurm-baseline}
OUT=${OUT:-}
for b in "${builds[@]}"; do
  [ -x "$b/ductile" ] || { echo "no $b/ductile: run make build first" >&2; exit 1; }
done
dname() { if [ "$1" = 0 ]; then echo ductile; else echo "ductile$(( $1 + 1 ))"; fi; }

if [ "$SLURM" = 1 ]; then
  why=
  [ -x "$SLURM_BASELINE/start.sh" ] || why="no $SLURM_BASELINE/start.sh (set SLURM_BASELINE)"
  command -v sbatch > /dev/null || why="no sbatch (apt-get install -y slurm-wlm munge)"
  [ "$(id -u)" = 0 ] || why="the Slurm baseline runs as root"
  if [ -z "$why" ] && pgrep -x slurmctld > /dev/null; then
    why="a slurmctld is already running on this host (another run of the baseline?)"
  fi
  if [ -n "$why" ]; then
    echo "Slurm side skipped: $why" >&2
    SLURM=0
  fi
fi

tmp=$(mktemp -d)
chmod 755 "$tmp"
slurm_up=0
cleanup() {
  local rc=$?
  local i
  for i in "${!builds[@]}"; do
    "${builds[$i]}/ductile" cluster down --dir "$tmp/c$i" > /dev/null 2>&1 || true
  done
  if [ "$slurm_up" = 1 ]; then
    SB="$tmp/sb" "$SLURM_BASELINE/stop.sh" > /dev/null 2>&1 || true
  fi
  rm -rf "$tmp"
  exit $rc
}
trap cleanup EXIT
trap 'exit 143' TERM
trap 'exit 130' INT

# --- Ductile: an emulated cluster per build, every node drained ---
for i in "${!builds[@]}"; do
  "${builds[$i]}/ductile" cluster up --nodes "$NODES" --dir "$tmp/c$i" > /dev/null
  nodes=$(awk '$1 == "Nodes" {print $3}' "$tmp/c$i/ductile.conf")
  "${builds[$i]}/ductile" --conf "$tmp/c$i/ductile.conf" drain "$nodes" --reason bench > /dev/null
done
printf '#!/bin/sh\ntrue\n' > "$tmp/job.sh"
chmod 755 "$tmp/job.sh"

# --- Slurm: the baseline, under $tmp/sb ---
if [ "$SLURM" = 1 ]; then
  export SB="$tmp/sb"
  slurm_up=1
  NODES=$NODES "$SLURM_BASELINE/start.sh" > "$tmp/slurm-start.log" 2>&1 ||
    { cat "$tmp/slurm-start.log" >&2; echo "the Slurm baseline did not start" >&2; exit 1; }
  export SLURM_CONF="$SB/etc/slurm.conf"
fi

ticks_of() { # PIDFILE...: user+system ticks of the processes named by the pid files
  local f p t=0
  for f in "$@"; do
    p=$(cat "$f" 2> /dev/null) || continue
    [ -r "/proc/$p/stat" ] && t=$((t + $(awk '{print $14 + $15}' "/proc/$p/stat")))
  done
  echo "$t"
}
use() { # SYSTEM (ductile, ductile2...): its command, cluster directory and DUCTILE_CONF
  local i=$(( ${1#ductile} + 0 ))
  [ "$i" = 0 ] || i=$(( i - 1 ))
  sub_bin="${builds[$i]}/ductile"
  cdir="$tmp/c$i"
  export DUCTILE_CONF="$cdir/ductile.conf" # as a user's shell finds the cluster
}
daemon_ticks() { # SYSTEM
  if [ "$1" = true ]; then
    echo 0
  elif [ "$1" = slurm ]; then
    ticks_of "$SB/run/slurmctld.pid" "$SB"/run/slurmd-*.pid "$SB/munge/munged.pid"
  else
    use "$1"
    ticks_of "$cdir/ctld.pid" "$cdir"/noded-*.pid
  fi
}
host_ticks() { awk '/^cpu / {print $2 + $3 + $4 + $7 + $8 + $9}' /proc/stat; }
hz=$(getconf CLK_TCK)

one() { # SYSTEM: one submission, its output discarded; a failure stops the run
  if [ "$1" = slurm ]; then
    sbatch --hold --wrap=true -o /dev/null > /dev/null
  elif [ "$1" = true ]; then
    /bin/true
  else
    "$sub_bin" submit "$tmp/job.sh" > /dev/null
  fi
}
# shells SYSTEM N: N shells of LOOP submissions each; prints the ticks the shells and
# every process they started used (their rusage, read before this subshell ends)
shells() (
  for _ in $(seq 1 "$2"); do
    (for _ in $(seq 1 "$LOOP"); do one "$1"; done) &
  done
  wait
  awk '{print $14 + $15 + $16 + $17}' "/proc/$BASHPID/stat"
)

[ -z "$OUT" ] || printf 'round\tsystem\tmode\tsubmissions\tseconds\tper_s\tclient_ms\tdaemon_ms\thost_ms\n' > "$OUT"
printf '%-5s %-7s %-10s %6s %8s %9s %10s %10s %10s\n' round system mode subs seconds subs/s \
  client_ms daemon_ms host_ms
queued() { # SYSTEM: jobs in its queue
  if [ "$1" = slurm ]; then
    squeue -h | wc -l
  else
    "$sub_bin" queue | tail -n +2 | wc -l
  fi
}
clear_queue() { # SYSTEM EXPECTED: checks that every submission is there, then cancels them
  local got
  got=$(queued "$1")
  [ "$got" = "$2" ] || echo "warning: $1's queue holds $got jobs, $2 were submitted" >&2
  if [ "$1" = slurm ]; then
    scancel -u "$(id -un)" --state=PENDING
  else
    "$sub_bin" cancel -t PD > /dev/null
  fi
  for _ in $(seq 1 600); do [ "$(queued "$1")" = 0 ] && return; sleep 0.1; done
  echo "warning: $1's queue did not empty" >&2
}
measure() { # ROUND SYSTEM MODE SHELLS
  local n=$(( $4 * LOOP )) d0 h0 t0 c d1 h1 t1
  [ "$2" = slurm ] || [ "$2" = true ] || use "$2"
  d0=$(daemon_ticks "$2"); h0=$(host_ticks); t0=$EPOCHREALTIME
  c=$(shells "$2" "$4")
  t1=$EPOCHREALTIME; d1=$(daemon_ticks "$2"); h1=$(host_ticks)
  awk -v r="$1" -v s="$2" -v m="$3" -v n="$n" -v t0="$t0" -v t1="$t1" -v c="$c" \
    -v d="$((d1 - d0))" -v h="$((h1 - h0))" -v hz="$hz" -v out="$OUT" 'BEGIN {
    sec = t1 - t0; k = 1000 / hz / n
    printf "%-5s %-7s %-10s %6d %8.2f %9.1f %10.2f %10.2f %10.2f\n", r, s, m, n, sec, n / sec,
      c * k, d * k, h * k
    if (out != "")
      printf "%s\t%s\t%s\t%d\t%.3f\t%.1f\t%.3f\t%.3f\t%.3f\n", r, s, m, n, sec, n / sec,
        c * k, d * k, h * k >> out }'
  [ "$CLEAR" = 1 ] && [ "$2" != true ] && clear_queue "$2" "$n"
  return 0
}
systems=
for i in "${!builds[@]}"; do systems="$systems $(dname "$i")"; done
[ "$SLURM" = 1 ] && systems="$systems slurm"
[ "$FLOOR" = 1 ] && systems="$systems true"
for r in $(seq 1 "$ROUNDS"); do
  for s in $systems; do measure "$r" "$s" sequential 1; done
  if [ "$PAR" -gt 0 ]; then
    for s in $systems; do measure "$r" "$s" "parallel-$PAR" "$PAR"; done
  fi
done
if [ "$CLEAR" = 0 ]; then # every submission is there
  want=$(( ROUNDS * LOOP * (1 + PAR) ))
  for s in ${systems% true}; do
    [ "$s" = slurm ] || use "$s"
    got=$(queued "$s")
    [ "$got" = "$want" ] || echo "warning: $s's queue holds $got jobs, $want were submitted" >&2
  done
fi
