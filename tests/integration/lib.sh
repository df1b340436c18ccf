# Shared by the integration tests: a real emulated cluster on loopback in a temporary
# directory, always stopped on exit (also on failure); polling with deadlines.
# DUCTILE_TEST_HOSTS=1: the cluster is one of emulated hosts instead (hosts.sh): every
# daemon on a host of its own, $T the only directory they share (the home file system),
# and $BIN the command as typed on the login host.
set -euo pipefail
BIN=${DUCTILE_BIN:?set by ctest}
REAL_BIN=$BIN
BINDIR=$(dirname "$BIN")
# In the sanitizer build a multi-node test runs once, on emulated hosts where they can be
# made: its plain twin (DUCTILE_PLAIN_TWIN=1) runs the same daemons' code on one host, and
# the release build runs both.
if [ "${DUCTILE_PLAIN_TWIN:-0}" = 1 ] && [ "${DUCTILE_TEST_HOSTS:-0}" != 1 ] &&
  (T=/nonexistent; . "$(dirname "${BASH_SOURCE[0]}")/hosts.sh"; hosts_check) > /dev/null; then
  echo "SKIP: in this build it runs on emulated hosts (integration-hosts/)"
  exit 77
fi
T=$(mktemp -d "${TMPDIR:-/tmp}/ductile-it-XXXXXX")
chmod 755 "$T"
export DUCTILE_CONF="$T/c/ductile.conf"
HOSTS=${DUCTILE_TEST_HOSTS:-0}
cleanup() {
  local rc=$?
  if declare -F extra_cleanup > /dev/null; then extra_cleanup || true; fi
  if [ "$HOSTS" = 1 ]; then
    declare -F hosts_cleanup > /dev/null && hosts_cleanup
  elif [ -f "$T/c/ctld.pid" ] || ls "$T"/c/noded-*.pid >/dev/null 2>&1; then
    "$BIN" cluster down --dir "$T/c" --wait 3 >/dev/null 2>&1 || true
  fi
  # a controller started by hand (restart tests)
  [ -f "$T/ctld2.pid" ] && kill -9 "$(cat "$T/ctld2.pid")" 2>/dev/null || true
  # node daemons leave their jobs running when they stop (as on a real node): a test
  # that failed mid-job must not leave them behind
  pkill -9 -f "$T/" 2>/dev/null || true
  # and the cgroups of the daemons that did not remove their own (killed, or jobs kept
  # by `cluster down --keep-jobs`): what is left in them is killed, then they go
  local cg
  for cg in $(sed -n "s/.*jobs' cgroups under \(.*\)$/\1/p" "$T"/*/log/noded-*.log 2> /dev/null | sort -u); do
    case $cg in */ductile/*) ;; *) continue ;; esac
    [ -e "$cg/cgroup.kill" ] && echo 1 > "$cg/cgroup.kill" 2> /dev/null
    for _ in 1 2 3 4 5 6 7 8 9 10; do
      find "$cg" -depth -type d -exec rmdir {} \; 2> /dev/null || true
      [ -d "$cg" ] || break
      sleep 0.1 # the killed processes leave their cgroup as they are reaped
    done
    rmdir "$(dirname "$cg")" 2> /dev/null || true # the cluster's, once its last node's is gone
  done
  if [ $rc -ne 0 ] && [ -d "$T/c/log" ]; then
    # DUCTILE_KEEP_LOGS=DIR: a failed test's whole logs are copied there
    [ -n "${DUCTILE_KEEP_LOGS:-}" ] && cp -r "$T/c/log" "$DUCTILE_KEEP_LOGS"
    for f in "$T"/c/log/*.log; do echo "--- $f"; tail -n 30 "$f"; done >&2
  fi
  rm -rf "$T"
  exit $rc
}
trap cleanup EXIT
trap 'exit 143' TERM # so that cleanup runs when ctest or a person stops the test
trap 'exit 130' INT

fail() { echo "FAIL: $*" >&2; exit 1; }
d() { "$BIN" "$@"; }

if [ "$HOSTS" = 1 ]; then
  . "$(dirname "${BASH_SOURCE[0]}")/hosts.sh"
  hosts_check
  hosts_bin
else
  # on HOST CMD...: every host is this one
  on() { shift; "$@"; }
fi

# up N [extra cluster-up options]; --kill-wait S sets KillWait in both modes (hosts_up
# writes the key itself; the plain cluster takes it with --set)
up() {
  local n=$1; shift
  if [ "$HOSTS" = 1 ]; then
    hosts_up "$n" --tick 1 "$@"
  else
    local a=()
    while [ $# -gt 0 ]; do
      if [ "$1" = --kill-wait ]; then a+=(--set "KillWait=$2"); shift 2; else a+=("$1"); shift; fi
    done
    d cluster up --nodes "$n" --dir "$T/c" --tick 1 "${a[@]}" > "$T/up.out" || fail "cluster up"
  fi
}
# where commands reach the controller: its TCP address and port, its local socket
ctl_addr() { awk '$1 == "ControlAddr" {print $3}' "$DUCTILE_CONF"; }
ctl_port() { awk '$1 == "ControlPort" {print $3}' "$DUCTILE_CONF"; }
ctl_sock() { awk '$1 == "ControlSocket" {print $3}' "$DUCTILE_CONF"; }
# spool_of NODE: the node daemon's spool directory, on its host
spool_of() {
  if [ "$HOSTS" = 1 ]; then echo "/var/spool/ductile/spool/$1"; else echo "$T/c/state/spool/$1"; fi
}
# MPI tests: skip without mpirun; Open MPI as root, oversubscribed, on the test's
# interface; mpi_env goes before the job's `ductile mpirun` (no leak checks in Open MPI)
mpi_setup() {
  command -v mpirun > /dev/null || { echo "SKIP: no mpirun"; exit 77; }
  export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
  export OMPI_MCA_btl_tcp_if_include="$(mpi_if)" OMPI_MCA_oob_tcp_if_include="$(mpi_if)"
  mpi_env="ASAN_OPTIONS=${ASAN_OPTIONS:-}:detect_leaks=0" # (see test_mpi.sh)
}
# an MPI program of tests/integration/apps in $app; mpi_run NP ARGS... starts it on NP
# processes of this host
mpi_app() {
  mpi_setup
  app="$BINDIR/$1"
  [ -x "$app" ] || fail "$1 not built"
}
mpi_run() { # ASan's leak check off: Open MPI leaks
  local np=$1; shift
  env $mpi_env mpirun --oversubscribe -np "$np" "$app" "$@"
}
# ckpt_app_setup: after up and cd "$T", jobs run the checkpoint test program
# (tests/integration/apps/dt_ckpt_app.c) as ./app with a session directory per node
ckpt_app_setup() {
  mkdir -m 1777 "$T/otmp" # (see test_mpi_plain.sh)
  export OMPI_MCA_orte_tmpdir_base="$T/otmp/$(id -un).\$DUCTILE_NODENAME"
  export PATH="$BINDIR:$PATH"
  cp "$BINDIR/dt_ckpt_app" "$T/app"
  hurry_setup
}
# hurry_setup: jobs of ./app submitted from now on stop waiting between their steps once
# the test calls hurry (DT_CKPT_APP_HURRY): their length is there to leave the test time
# to see what it waits for, which it has then seen
hurry_setup() { export DT_CKPT_APP_HURRY="$T/hurry"; }
hurry() { touch "$T/hurry"; }
# the issue-9 fault-making MPI program (tests/integration/apps/dt_faults.c) in $app;
# jobs find `ductile` on PATH
dt_faults_app() {
  export PATH="$BINDIR:$PATH"
  app="$BINDIR/dt_faults"
  [ -x "$app" ] || fail "dt_faults not built"
}
# no live process whose command line matches PATTERN
no_leftovers() {
  local p
  for p in $(pgrep -f "$1"); do alive "$p" && return 1; done
  return 0
}
# mpi_if: the interface Open MPI is to use between nodes (the emulated nodes of the
# plain cluster share loopback, and other tests add and remove interfaces meanwhile;
# an emulated host has its own eth0 on the cluster's bridge)
mpi_if() { if [ "$HOSTS" = 1 ]; then echo eth0; else echo lo; fi; }
# mpi_setup: Open MPI as root on the test's interface (SKIP without mpirun); $mpi_env for
# its processes: under AddressSanitizer, Open MPI's memory at exit sits in components it
# has already unloaded, which LeakSanitizer can neither attribute nor suppress, so no
# leak check for the MPI processes (everything else keeps it)
mpi_setup() {
  command -v mpirun > /dev/null || { echo "SKIP: no mpirun"; exit 77; }
  export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
  export OMPI_MCA_btl_tcp_if_include="$(mpi_if)" OMPI_MCA_oob_tcp_if_include="$(mpi_if)"
  mpi_env="ASAN_OPTIONS=${ASAN_OPTIONS:-}:detect_leaks=0"
}
# state_on_small_tmpfs: before `up`, the controller's StateDir on a 3 MiB tmpfs (full-disk
# tests; SKIP without root); sets $state, unmounted at the end
state_on_small_tmpfs() {
  [ "$(id -u)" -eq 0 ] || { echo "SKIP: needs root to mount a small tmpfs"; exit 77; }
  state="$T/c/state"
  mkdir -p "$state"
  mount -t tmpfs -o "size=${1:-3m}" ductile-test-full "$state" || { echo "SKIP: cannot mount tmpfs"; exit 77; }
  extra_cleanup() {
    "$BIN" cluster down --dir "$T/c" >/dev/null 2>&1 || true
    umount -l "$state" 2>/dev/null || true
  }
}
# $ticker: a step task's shell line: its pid into $T/task.STEP.RANK, then "tick N" every
# 20 ms until $T/stop.STEP exists, then "last N"
ticker='echo $$ > '"$T"'/task.$DUCTILE_STEP_ID.$DUCTILE_PROCID; i=0; while [ ! -e '"$T"'/stop.$DUCTILE_STEP_ID ]; do i=$((i+1)); echo tick $i; sleep 0.02; done; echo last $i'
# check_ticks FILE NTASKS: FILE (`ductile run --label` of $ticker) has, per rank, every
# tick once and in order, at least 20, then its last line
check_ticks() {
  local r
  for ((r = 0; r < $2; r++)); do
    awk -v r="$r: " 'index($0, r) == 1 { sub(r, ""); print }' "$1" | awk -v who="$1 task $r" '
      $1 == "tick" { if ($2 != n + 1) { printf "%s: tick %s after %d\n", who, $2, n; bad = 1; exit 1 } n = $2; next }
      $1 == "last" { if ($2 != n) { printf "%s: last %s after tick %d\n", who, $2, n; bad = 1; exit 1 } done = 1; next }
      { printf "%s: stray line: %s\n", who, $0; bad = 1; exit 1 }
      END { if (!bad && !done) { printf "%s: no last line (after tick %d)\n", who, n; exit 1 }
            if (!bad && n < 20) { printf "%s: only %d ticks\n", who, n; exit 1 } }' || return 1
  done
}
# check_two_steps JOB: the step inside JOB (in.out, in.err, in.rc) and the one from the
# controller's host (out.out, out.err; its client already waited for), both of $ticker,
# came through their breaks whole: every line once, on stderr only what `ductile run`
# says of its breaks, both COMPLETED in history
check_two_steps() {
  local j=$1
  grep -qx "run=0" in.rc || fail "the step in the job: $(cat in.rc in.err)"
  check_ticks in.out 2 || fail "the step in the job's output"
  check_ticks out.out 1 || fail "the outside step's output"
  ! grep -v -e ': lost the connection to the controller (.*): reconnecting$' -e ': reconnected$' in.err out.err ||
    fail "stderr: $(cat in.err out.err)"
  local h
  h=$(d history "$j" --running --steps --parsable --noheader --format JobID,State,ExitCode)
  echo "$h" | grep -qx "$j.0|COMPLETED|0:0|" && echo "$h" | grep -qx "$j.1|COMPLETED|0:0|" ||
    fail "history: $h"
}
# jacobi_ref ARGS...: jacobi2d's checksum from a plain MPI run on 2 processes (the
# reference a malleable run must match); writes $T/ref.out
jacobi_ref() {
  on login env "$mpi_env" mpirun --oversubscribe -np 2 "$BINDIR/jacobi2d" "$@" > "$T/ref.out" 2>&1 ||
    fail "reference run: $(cat "$T/ref.out")"
  grep -o 'checksum=.*' "$T/ref.out" || fail "no reference checksum: $(cat "$T/ref.out")"
}
# peers_known N: every node daemon has been told its N peers (the ones it asks when it
# hears nothing from the controller; told within a second of a registration)
peers_known() { d nodes --json | jq -e "all(.[]; .peers == $1)" > /dev/null; }
# jacobi_started: a malleable jacobi2d job under `ductile mpirun` (2 nodes, 1 to 4) that
# waits for $T/go before it ends, started; sets j (its id), out (its output file) and
# ref (the plate's checksum from a fixed-size run). After `up 4` and `cd "$T"`.
jacobi_started() {
  export PATH="$BINDIR:$PATH"
  local jac="$BINDIR/jacobi2d" args="--n 96 --iters 300" s
  [ -x "$jac" ] || fail "jacobi2d not built"
  ref=$(jacobi_ref $args)
  s=$(script jac.sh "#DUCTILE --nodes=2 --malleable --min-nodes=1 --max-nodes=4
env $mpi_env ductile mpirun --ppn 1 $jac $args --delay-us 2000 --wait-for $T/go")
  j=$(submit "$s")
  expect_state "$j" R
  out="ductile-$j.out"
  wait_for 60 grep -q "started on 2 processes" "$out" || fail "no start: $(cat "$out")"
}
# jacobi_finished: the job of jacobi_started, expanded to 4 on the way, lets it end:
# it completes with every group's step and the fixed-size run's plate
jacobi_finished() {
  touch "$T/go"
  expect_state "$j" CD 90
  grep -q "2 -> 4 processes" "$out" || fail "no expand in the app: $(cat "$out")"
  local got; got=$(grep -o 'checksum=.*' "$out")
  [ "$got" = "$ref" ] || fail "result $got differs from the fixed-size $ref: $(cat "$out")"
  ! grep -q "could not take the step up again" "$out" || fail "a group's step was lost: $(cat "$out")"
}
# as_nobody CMD...: CMD as user nobody (on the login host); $BIN stands for the command
as_nobody() {
  local c=$1; shift
  [ "$c" = "$BIN" ] && c=$REAL_BIN
  on login setpriv --reuid=nobody --regid=nogroup --clear-groups -- "$c" "$@"
}

# pub_setup: $T/pub, where root and nobody both submit (the working directory), with
# wait.sh, a job that waits for $T/pub/stop.<its id>; sub_root and sub_nobody submit
# from there (--parsable: they print the id)
pub_setup() {
  mkdir -m 777 "$T/pub"
  cd "$T/pub"
  printf '#!/bin/sh\nwhile [ ! -e "stop.$DUCTILE_JOB_ID" ]; do sleep 0.1; done\n' > wait.sh
  chmod 755 wait.sh
}
sub_root() { (cd "$T/pub" && on login "$BIN" submit --parsable "$@"); }
sub_nobody() { (cd "$T/pub" && as_nobody "$BIN" submit --parsable "$@"); }

# wait_for SECONDS CMD...: poll until CMD succeeds
wait_for() {
  local limit=$1; shift
  local end=$((SECONDS + limit))
  until "$@" >/dev/null 2>&1; do
    [ $SECONDS -lt $end ] || return 1
    sleep 0.05
  done
}

# state JOB: the two-letter state
state() { d show "$1" | awk '/^State/ {gsub(/[()]/, "", $3); print $3}'; }
is_state() { [ "$(state "$1")" = "$2" ]; }
expect_state() { # JOB STATE [SECONDS]
  wait_for "${3:-20}" is_state "$1" "$2" || fail "job $1 is $(state "$1"), expected $2"
}
field() { d show "$1" | awk -v k="$2" '$1 == k {$1 = ""; sub(/^ /, ""); print}'; }
submit() { d submit "$@" | awk '/^Submitted job/ {print $3}'; }
refused() { # PATTERN COMMAND...: the command fails, saying PATTERN (grep) on stderr
  local pat=$1; shift
  ! "$@" > "$T/refused.out" 2> "$T/refused.err" || fail "accepted: $* ($(cat "$T/refused.out"))"
  grep -q -- "$pat" "$T/refused.err" || fail "$*: unclear refusal: $(cat "$T/refused.err")"
}
script() { # NAME BODY...: writes an executable script in $T
  local f="$T/$1"; shift
  printf '#!/bin/sh\n%s\n' "$*" > "$f"
  chmod 755 "$f"
  echo "$f"
}
alive() { kill -0 "$1" 2>/dev/null && ! grep -q '^State:.*Z' "/proc/$1/status" 2>/dev/null; }

# agent_pids NODE JOB: the checkpoint agents the service started for JOB on NODE (pids
# are global: on the emulated hosts, those in NODE's mount namespace; on the plain
# cluster, those under this test's directory)
agent_pids() {
  local p
  for p in $(pgrep -f "ductile-agent --key-file $(spool_of "$1")/agent\.$2\." || true); do
    if [ "$HOSTS" = 1 ]; then
      [ "$(readlink "/proc/$p/ns/mnt")" = "$(readlink "/proc/$(host_pid "$1")/ns/mnt")" ] || continue
    fi
    echo "$p"
  done
}
# pids_here PATTERN: the processes matching PATTERN (pgrep -f) that work in this test's
# directory (their working directory is $T or below): tests run side by side, and their
# processes share one table (a farm's workers are the same program in every test)
pids_here() {
  local p
  for p in $(pgrep -f -- "$1" || true); do
    case "$(readlink "/proc/$p/cwd" 2> /dev/null)" in "$T" | "$T"/*) echo "$p" ;; esac
  done
}
some_here() { [ -n "$(pids_here "$1")" ]; }
none_here() { [ -z "$(pids_here "$1")" ]; }
# stacks PID...: where each process is (its threads' stacks, for a failure message)
stacks() {
  local p
  for p in "$@"; do
    echo "--- pid $p: $(tr '\0' ' ' < "/proc/$p/cmdline" 2>/dev/null)"
    if command -v gdb > /dev/null; then
      gdb -p "$p" -batch -ex "thread apply all bt" 2>/dev/null | grep -E '^(Thread|#)'
    else
      grep -H . /proc/"$p"/task/*/wchan 2>/dev/null; echo
    fi
  done
}
# agents_end NODE JOB SECONDS: the agents of JOB on NODE end within SECONDS, or the test
# fails with where they are
agents_none() { [ -z "$(agent_pids "$1" "$2")" ]; }
agents_end() {
  wait_for "$3" agents_none "$1" "$2" && return
  local left; left=$(agent_pids "$1" "$2")
  fail "agents of job $2 on $1 still running $3 s after it ended: $left
$(stacks $left)"
}
# restart_noded NODE: start a node daemon by hand (after a kill), as its host's init would
# (pids are global: the emulated hosts share the kernel's process table, so the tests
# read and signal them from outside; $T/c/*.pid are what each host's init would know)
restart_noded() {
  if [ "$HOSTS" = 1 ]; then
    spawn_on "$1" "$T/c/log/noded-$1.log" "$T/c/noded-$1.pid" \
      "$BINDIR/ductile-noded" --conf "$DUCTILE_CONF" --node "$1"
    return
  fi
  setsid "$BINDIR/ductile-noded" --conf "$DUCTILE_CONF" --node "$1" \
    >> "$T/c/log/noded-$1.log" 2>&1 < /dev/null &
  echo $! > "$T/c/noded-$1.pid"
}
# kill_restart_noded NODE [SIG]: stop its daemon (kill -9 by default) and start a new one
# on its host, as an operator or a crash would
kill_restart_noded() {
  local n=$1 sig=${2:-KILL} pid c0
  c0=$(grep -c ': started' "$T/c/log/noded-$n.log")
  pid=$(cat "$T/c/noded-$n.pid")
  kill -"$sig" "$pid"
  wait_for 15 sh -c "! kill -0 $pid 2>/dev/null || grep -q '^State:.*Z' /proc/$pid/status" ||
    fail "noded $n did not stop ($sig)"
  restart_noded "$n"
  wait_for 10 sh -c "[ \$(grep -c ': started' '$T/c/log/noded-$n.log') -gt $c0 ]" ||
    fail "noded $n did not restart"
}
# restart_ctld: start the controller by hand (after a kill), on its host
restart_ctld() {
  if [ "$HOSTS" = 1 ]; then
    spawn_on ctl "$T/c/log/ductiled.log" "$T/c/ctld.pid" "$BINDIR/ductiled" --conf "$DUCTILE_CONF"
    return
  fi
  setsid "$BINDIR/ductiled" --conf "$DUCTILE_CONF" >> "$T/c/log/ductiled.log" 2>&1 < /dev/null &
  echo $! > "$T/c/ctld.pid"
}
# runs_script NAME SECONDS_FIRST SECONDS_LATER: a job that records each run's start and
# end in $T/runs.<job> (pid, time) and writes OVERLAP there if an earlier run of the same
# job is still alive when a run starts; the first run lasts longer than the later ones.
runs_script() {
  script "$1" 'f="'"$T"'/runs.$DUCTILE_JOB_ID"
for p in $(awk "/^start/ {print \$2}" "$f" 2>/dev/null); do
  kill -0 "$p" 2>/dev/null && ! grep -q "^State:.*Z" /proc/$p/status && echo "OVERLAP $p" >> "$f"
done
n=$(grep -c "^start" "$f" 2>/dev/null || true)
echo "start $$ $(date +%s.%N)" >> "$f"
if [ "${n:-0}" -eq 0 ]; then s='"$2"'; else s='"$3"'; fi
i=0; while [ $i -lt $s ]; do sleep 1; i=$((i + 1)); done
echo "end $$ $(date +%s.%N)" >> "$f"'
}
