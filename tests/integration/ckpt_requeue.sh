# Shared by test_ckpt_requeue and test_ckpt_agent_requeue (sourced after lib.sh): a
# rigid 2-node MPI job that checkpoints every step (dt_ckpt_app run 40 0.25) loses its
# second node, is requeued (--requeue) and restarts from its last complete checkpoint.
# extra_cleanup must resume $pid (the stopped node daemon) if the test fails meanwhile.

# ckpt_requeue_setup [NODES [UP OPTIONS...]]: the cluster (4 nodes by default)
ckpt_requeue_setup() {
  mpi_setup
  export ASAN_OPTIONS="${ASAN_OPTIONS:-}:detect_leaks=0" # Open MPI's (see test_mpi.sh)
  local n=${1:-4}
  shift || true
  # KillWait 2: a job requeued after a node failure runs again NodeTimeout + KillWait + 1
  # seconds after it (jobs_node_failed's fence), 14 s with the default 10
  up "$n" --node-timeout 3 --kill-wait 2 "$@"
  cd "$T"
  ckpt_app_setup
}

# ckpt_requeue_run [SCRIPT LINE]: the job (the line first in its script), its second
# node stopped until down, the job to its end; sets j, out, err and start (the step its
# second run started at). Fails unless it completed after a requeue, restarting from a
# checkpoint (step 3 or later), and reached step 40.
ckpt_requeue_run() {
  local s
  s=$(script ckpt.sh "#DUCTILE --nodes=2
#DUCTILE --requeue
${1:-}
mpirun ./app $T/ckpt run 40 0.25")
  j=$(submit "$s")
  out="ductile-$j.out"
  err="$out" # the job's standard error goes with its output
  steps() { grep -c '^step ' "$out" 2> /dev/null || true; }
  some_steps() { [ "$(steps)" -ge 4 ]; }
  wait_for 60 some_steps || fail "job $j made no progress: $(cat "$out" "$err" 2> /dev/null)"
  # the job's second node stops answering: down after NodeTimeout, the job requeued
  n2=$(d show "$j" | awk '$1 == "NodeList" {print $2}' | sed 's/n\[\([0-9]*\)[-,]\([0-9]*\).*/n\2/')
  pid=$(cat "$T/c/noded-$n2.pid")
  kill -STOP "$pid"
  down() { d nodes | grep -Eq "^$n2 +down"; }
  wait_for 30 down || fail "node $n2 not down: $(d nodes)"
  kill -CONT "$pid"
  # once its second run has restarted from a checkpoint, the job need not take its time
  restarted() { grep -q '^starting at step [1-9]' "$out" 2> /dev/null; }
  if wait_for 60 restarted; then hurry; fi
  ended() { case "$(state "$1")" in CD | F | CA | TO | NF) return 0 ;; esac; return 1; }
  wait_for 120 ended "$j" || fail "job $j still $(state "$j"): $(cat "$out")"
  is_state "$j" CD || fail "job $j is $(state "$j"): $(cat "$out" "$err")"
  d show "$j" | grep -Eq "^ +[0-9:]+ +requeue " || fail "job $j was not requeued: $(d show "$j")"
  start=$(awk '/^starting at step/ {print $4}' "$out")
  [ -n "$start" ] && [ "$start" -ge 3 ] ||
    fail "the second run did not restart from a checkpoint: $(cat "$out")"
  grep -qx "done at step 40" "$out" || fail "job $j did not finish: $(cat "$out")"
}

# The last version, read from the files on another host, holds exactly what an
# uninterrupted run computes (dt_ckpt_app checks every element), in one file per node.
ckpt_requeue_check() {
  local chk
  chk=$(on login env $mpi_env mpirun --oversubscribe -np 3 "$T/app" "$T/ckpt" check 2> "$T/err") ||
    fail "check: $(cat "$T/err")"
  [ "$chk" = "restored version 40 on 3 processes" ] || fail "final check: $chk"
  [ "$(ls "$T/ckpt/app/v40" | grep -c '^node.*\.dat$')" -eq 2 ] ||
    fail "node files: $(ls -la "$T/ckpt/app" "$T/ckpt/app/v40")"
}
