#!/usr/bin/env bash
# How many checkpoint agents a checkpoint node takes (issue 11): each agent may hold
# CheckpointAgentMemory MiB (given to it as --memory), and a node takes as many agents as
# those fit in its memory. Here two fit on n5: a 3-node job asks for three (Algorithm 5)
# and gets two; the next job gets none while they run (its checkpoints go to its files);
# once the first job ended, a job gets its agent again.
. "$(dirname "$0")/lib.sh"
# what n5's daemon reports as its memory (MiB), and a budget of which two fit in it
mem=$(($(getconf _PHYS_PAGES) / 1024 * $(getconf PAGESIZE) / 1024))
budget=$((mem / 3 + 1))
up 5 --set CheckpointNodes=n5 --set CheckpointAgentMemory=$budget
cd "$T"
printf '%s\n' '#!/bin/sh' 'echo "agents=$DUCTILE_CKPT_AGENTS"' \
  'while [ ! -e "stop.$DUCTILE_JOB_ID" ]; do sleep 0.1; done' > wait.sh
chmod 755 wait.sh
sub() { d submit --checkpoint-agents "$@" wait.sh | awk '{print $3}'; }
agents_in() { grep "^agents=" "ductile-$1.out" | cut -d= -f2 | tr ',' '\n' | grep -c . || true; }
said() { grep -q "^agents=" "ductile-$1.out" 2> /dev/null; }

a=$(sub -N 3)
wait_for 30 said "$a" || fail "job $a did not start: $(d show "$a")"
[ "$(agents_in "$a")" = 2 ] || fail "job $a's agents: $(cat "ductile-$a.out")"
grep -q "job $a: room for 2 of its 3 checkpoint agents" "$T/c/log/ductiled.log" ||
  fail "controller's log: $(grep "job $a" "$T/c/log/ductiled.log")"
for p in $(agent_pids n5 "$a"); do
  tr '\0' ' ' < "/proc/$p/cmdline" | grep -q -- "--memory $budget " ||
    fail "agent $p: $(tr '\0' ' ' < "/proc/$p/cmdline")"
done

b=$(sub -N 1)
wait_for 30 said "$b" || fail "job $b did not start: $(d show "$b")"
[ "$(agents_in "$b")" = 0 ] || fail "job $b got agents on a full node: $(cat "ductile-$b.out")"
grep -q "job $b: the checkpoint nodes have no room for another agent: it checkpoints to its files" \
  "$T/c/log/ductiled.log" || fail "controller's log: $(grep "job $b" "$T/c/log/ductiled.log")"
# a job cancelled while it waits for nodes never had agents, and says so
p=$(sub -N 1)
expect_state "$p" PD
d cancel "$p" > /dev/null
expect_state "$p" CA
[ "$(field "$p" CkptAgents)" = none ] || fail "cancelled job $p: CkptAgents $(field "$p" CkptAgents)"
touch "stop.$a" "stop.$b"
expect_state "$a" CD
expect_state "$b" CD

c=$(sub -N 1)
wait_for 30 said "$c" || fail "job $c did not start: $(d show "$c")"
[ "$(agents_in "$c")" = 1 ] || fail "job $c's agents once the node had room: $(cat "ductile-$c.out")"
touch "stop.$c"
expect_state "$c" CD
echo ok
