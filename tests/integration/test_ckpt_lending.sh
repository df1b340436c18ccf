#!/usr/bin/env bash
# Idle nodes lent to the checkpoint service (issue 11; seed 002's Algorithm 11, "favour
# the application": the service's requests served from idle nodes only): with
# CheckpointLending = idle and one agent fitting on the checkpoint node n4, a second job
# with --checkpoint-agents gets its agent on an idle node lent to the service (`ductile
# nodes` shows it lent, and no job starts there); a job that needs that node waits until
# the agent has stopped, and then the node is given back and runs it.
. "$(dirname "$0")/lib.sh"
# what a node's daemon reports as its memory (MiB), and a budget of which one fits in it
mem=$(($(getconf _PHYS_PAGES) / 1024 * $(getconf PAGESIZE) / 1024))
budget=$((mem / 2 + 1))
up 4 --set CheckpointNodes=n4 --set CheckpointAgentMemory=$budget --set CheckpointLending=idle
cd "$T"
printf '%s\n' '#!/bin/sh' 'echo "agents=$DUCTILE_CKPT_AGENTS"' \
  'while [ ! -e "stop.$DUCTILE_JOB_ID" ]; do sleep 0.1; done' > wait.sh
chmod 755 wait.sh
sub() { d submit "$@" wait.sh | awk '{print $3}'; }
agents_in() { grep "^agents=" "ductile-$1.out" | cut -d= -f2 | tr ',' '\n' | grep -c . || true; }
said() { grep -q "^agents=" "ductile-$1.out" 2> /dev/null; }
node_state() { d nodes "$1" | awk -v n="$1" '$1 == n {print $2}'; }
log="$T/c/log/ductiled.log"

a=$(sub --checkpoint-agents -N 1)
wait_for 30 said "$a" || fail "job $a did not start: $(d show "$a")"
[ "$(agents_in "$a")" = 1 ] || fail "job $a's agents: $(cat "ductile-$a.out")"
field "$a" CkptAgents | grep -q "(on n4)" || fail "job $a's agent is not on n4: $(field "$a" CkptAgents)"

b=$(sub --checkpoint-agents -N 1)
wait_for 30 said "$b" || fail "job $b did not start: $(d show "$b")"
[ "$(agents_in "$b")" = 1 ] || fail "job $b got no agent: $(cat "ductile-$b.out"; cat "$log")"
lent=$(field "$b" CkptAgents | sed -n 's/.*(on \(n[0-9]\)).*/\1/p')
case "$lent" in n[1-3]) ;; *) fail "job $b's agent: $(field "$b" CkptAgents)" ;; esac
[ "$lent" != "$(field "$a" NodeList)" ] && [ "$lent" != "$(field "$b" NodeList)" ] ||
  fail "the agent shares $lent with a job"
grep -q "job $b: node $lent lent to the checkpoint service (the checkpoint nodes are full)" "$log" ||
  fail "controller's log: $(grep "job $b" "$log")"
[ "$(node_state "$lent")" = lent ] || fail "$lent is $(node_state "$lent"): $(d nodes)"
d nodes | grep -q "1 lent to checkpoints" || fail "nodes summary: $(d nodes)"
[ -n "$(agent_pids "$lent" "$b")" ] || fail "no agent of job $b runs on $lent"

# a 2-node job waits: one node is free once b ends, the other is the lent one
c=$(sub -N 2)
expect_state "$c" PD
# a restarted controller knows the node is lent (its agent is there), and keeps it so
kill -9 "$(cat "$T/c/ctld.pid")"
restart_ctld
registered() { [ "$(node_state "$lent")" = lent ] && [ "$(node_state n1)" = alloc ]; }
wait_for 30 registered || fail "after a controller restart: $(d nodes)"
expect_state "$c" PD
touch "stop.$b"
expect_state "$b" CD
expect_state "$c" R 30
grep -q "node $lent given back to jobs (no checkpoint agent left on it)" "$log" ||
  fail "controller's log: $(grep "$lent" "$log")"
[ "$(node_state "$lent")" = alloc ] || fail "job $c runs on $(field "$c" NodeList), $lent is $(node_state "$lent")"
agents_end "$lent" "$b" 30
touch "stop.$a" "stop.$c"
expect_state "$a" CD
expect_state "$c" CD
d nodes | grep -q lent && fail "a node is still lent: $(d nodes)"
echo ok
