#!/usr/bin/env bash
# The end-to-end case of issue 11 through agents: a rigid 2-node MPI job checkpoints
# every step into two checkpoint agents on another host (their memory, over libfabric;
# a node's file to each), loses a node, is requeued, and its second run restores the
# agents' last version; the final data is what an uninterrupted run computes, and the
# agents flushed it to the files.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/ckpt_requeue.sh"
ckpt_requeue_setup
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
ckpt_requeue_run "export DUCTILE_CKPT_AGENTS=$agents DUCTILE_CKPT_KEY_FILE=$T/key"
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
ckpt_requeue_check
echo "restarted at step $start; ok"
