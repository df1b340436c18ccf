#!/usr/bin/env bash
# The end-to-end case of issue 11 through agents: a rigid 2-node MPI job checkpoints
# every step into two checkpoint agents on another host (their memory, over libfabric;
# a node's file to each), loses a node, is requeued, and its second run restores the
# agents' last version; the final data is what an uninterrupted run computes, and the
# agents flushed it to the files.
. "$(dirname "$0")/lib.sh"
mpi_setup
export ASAN_OPTIONS="${ASAN_OPTIONS:-}:detect_leaks=0" # Open MPI's (see test_mpi.sh)
up 4 --node-timeout 3
cd "$T"
mkdir -m 1777 "$T/otmp" # a session directory per node (see test_mpi_plain.sh)
export OMPI_MCA_orte_tmpdir_base="$T/otmp/$(id -un).\$DUCTILE_NODENAME"
export PATH="$BINDIR:$PATH"
cp "$BINDIR/dt_ckpt_app" "$T/app"
# the agent: on the controller's host (a host of its own, standing for a checkpoint node)
if [ "$HOSTS" = 1 ]; then addr=$(host_ip ctl); else addr=127.0.0.1; fi
spawn_agent() { # N: agent N, its port in $T/port.N
  if [ "$HOSTS" = 1 ]; then
    spawn_on ctl "$T/agent.log" "$T/agent.$1.pid" "$BINDIR/ductile-agent" --key-file "$T/key" \
      --listen "$addr:0" --port-file "$T/port.$1"
  else
    "$BINDIR/ductile-agent" --key-file "$T/key" --listen "$addr:0" --port-file "$T/port.$1" \
      2>> "$T/agent.log" &
    echo $! > "$T/agent.$1.pid"
  fi
  wait_for 10 test -s "$T/port.$1" || fail "agent $1 did not start: $(cat "$T/agent.log")"
}
extra_cleanup() {
  kill -CONT "${pid:-0}" 2> /dev/null || true
  kill -9 "$(cat "$T/agent.0.pid")" "$(cat "$T/agent.1.pid")" 2> /dev/null || true
}
# two agents: node file 0 (the job's first node) to the first, node file 1 to the second;
# the first publishes each version in the files once the second's file is there
spawn_agent 0
spawn_agent 1
a0="$addr:$(cat "$T/port.0")" a1="$addr:$(cat "$T/port.1")"
agents="$a0,$a1"
s=$(script ckpt.sh '#DUCTILE --nodes=2
#DUCTILE --requeue
export DUCTILE_CKPT_AGENTS='"$agents"' DUCTILE_CKPT_KEY_FILE='"$T"'/key
mpirun ./app '"$T"'/ckpt run 40 0.25')
j=$(submit "$s")
out="ductile-$j.out"
err="ductile-$j.err"
steps() { grep -c '^step ' "$out" 2> /dev/null || true; }
some_steps() { [ "$(steps)" -ge 4 ]; }
wait_for 60 some_steps || fail "job $j made no progress: $(cat "$out" "$err" 2> /dev/null)"
n2=$(d show "$j" | awk '$1 == "NodeList" {print $2}' | sed 's/n\[\([0-9]*\)[-,]\([0-9]*\).*/n\2/')
pid=$(cat "$T/c/noded-$n2.pid")
kill -STOP "$pid"
down() { d nodes | grep -Eq "^$n2 +down"; }
wait_for 30 down || fail "node $n2 not down: $(d nodes)"
kill -CONT "$pid"
ended() { case "$(state "$1")" in CD | F | CA | TO | NF) return 0 ;; esac; return 1; }
wait_for 120 ended "$j" || fail "job $j still $(state "$j"): $(cat "$out")"
is_state "$j" CD || fail "job $j is $(state "$j"): $(cat "$out" "$err")"
d show "$j" | grep -Eq "^ +[0-9:]+ +requeue " || fail "job $j was not requeued: $(d show "$j")"
start=$(awk '/^starting at step/ {print $4}' "$out")
[ -n "$start" ] && [ "$start" -ge 3 ] || fail "the second run did not restart from a checkpoint: $(cat "$out")"
grep -qx "done at step 40" "$out" || fail "job $j did not finish: $(cat "$out")"
# every commit went to the agent: the library never used the files by itself
! grep -q "using the checkpoint files" "$err" || fail "the job fell back to files: $(cat "$err")"
# each agent holds its node's file of the last version in memory, and both flushed it
agent_has() {
  "$BIN" checkpoints --agents "$agents" --key-file "$T/key" > "$T/list" 2>&1 &&
    grep -Eq "^$a0 +$T/ckpt/app +40 +1 +[0-9.]+ (B|KiB) +flushed$" "$T/list" &&
    grep -Eq "^$a1 +$T/ckpt/app +40 +1 +[0-9.]+ (B|KiB) +flushed$" "$T/list"
}
wait_for 20 agent_has || fail "agent list: $(cat "$T/list")"
[ "$(cat "$T/ckpt/app/latest")" = 40 ] || fail "version 40 not flushed: $(ls "$T/ckpt/app")"
# the last version holds exactly what an uninterrupted run computes, from the files
chk=$(on login env $mpi_env mpirun --oversubscribe -np 3 "$T/app" "$T/ckpt" check 2> "$T/err") ||
  fail "check: $(cat "$T/err")"
[ "$chk" = "restored version 40 on 3 processes" ] || fail "final check: $chk"
[ "$(ls "$T/ckpt/app/v40" | grep -c '^node.*\.dat$')" -eq 2 ] || fail "node files: $(ls "$T/ckpt/app/v40")"
echo "restarted at step $start; ok"
