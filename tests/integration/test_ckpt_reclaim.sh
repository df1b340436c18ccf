#!/usr/bin/env bash
# A lent node taken back for a waiting job (issue 11; seed 002's Algorithm 11, "favour the
# application": the checkpoint service's nodes are reclaimed for waiting jobs): with
# CheckpointLending = idle and one agent fitting on the checkpoint node n4, job b's agent
# runs on a lent node; once a's agent has left n4, a 2-node job c that would start with
# the lent node makes the controller take it back: b's agent moves to n4 (asked for
# there first, the old one stopped once its deadline passed), the node is given back,
# and c runs on it; no node is lent again afterwards.
. "$(dirname "$0")/lib.sh"
mem=$(($(getconf _PHYS_PAGES) / 1024 * $(getconf PAGESIZE) / 1024))
budget=$((mem / 2 + 1))
up 4 --set CheckpointNodes=n4 --set CheckpointAgentMemory=$budget --set CheckpointLending=idle \
  --set CheckpointReclaimWait=2 --set CheckpointAgentStopWait=2
cd "$T"
printf '%s\n' '#!/bin/sh' 'echo "agents=$DUCTILE_CKPT_AGENTS"' \
  'while [ ! -e "stop.$DUCTILE_JOB_ID" ]; do sleep 0.1; done' > wait.sh
chmod 755 wait.sh
sub() { d submit "$@" wait.sh | awk '{print $3}'; }
said() { grep -q "^agents=" "ductile-$1.out" 2> /dev/null; }
node_state() { d nodes "$1" | awk -v n="$1" '$1 == n {print $2}'; }
log="$T/c/log/ductiled.log"

a=$(sub --checkpoint-agents -N 1)
wait_for 30 said "$a" || fail "job $a did not start: $(d show "$a")"
field "$a" CkptAgents | grep -q "(on n4)" || fail "job $a's agent is not on n4: $(field "$a" CkptAgents)"
b=$(sub --checkpoint-agents -N 1)
wait_for 30 said "$b" || fail "job $b did not start: $(d show "$b")"
lent=$(field "$b" CkptAgents | sed -n 's/.*(on \(n[0-9]\)).*/\1/p')
case "$lent" in n[1-3]) ;; *) fail "job $b's agent: $(field "$b" CkptAgents)" ;; esac
[ "$(node_state "$lent")" = lent ] || fail "$lent is $(node_state "$lent"): $(d nodes)"
old=$(agent_pids "$lent" "$b")
[ -n "$old" ] || fail "no agent of job $b runs on $lent"

# a's agent leaves n4 with a; its node is free, and c needs two
touch "stop.$a"
expect_state "$a" CD
agents_end n4 "$a" 30
c=$(sub -N 2)
expect_state "$c" R 60
grep -q "node $lent taken back from the checkpoint service (a waiting job needs it)" "$log" ||
  fail "controller's log: $(grep -i "lent\|taken\|agent" "$log" | tail)"
grep -q "job $b: 1 checkpoint agent moves off $lent" "$log" || fail "controller's log: $(grep "job $b" "$log")"
grep -q "node $lent given back to jobs (no checkpoint agent left on it)" "$log" ||
  fail "controller's log: $(grep "$lent" "$log")"
case "$(field "$c" NodeList)" in # n[1,3] or n[2-3]: single digits
  *"${lent#n}"*) ;;
  *) fail "job $c runs on $(field "$c" NodeList), not on $lent" ;;
esac
# b's agent is on n4 now, and only there
field "$b" CkptAgents | grep -q "(on n4)" || fail "job $b's agents: $(field "$b" CkptAgents)"
[ -n "$(agent_pids n4 "$b")" ] || fail "no agent of job $b on n4"
agents_end "$lent" "$b" 30
d nodes | grep -q lent && fail "a node is lent again: $(d nodes)"
touch "stop.$c"
expect_state "$c" CD

# lending turned off while a node is lent (ductile reconfigure): it is taken back, the
# agent there leaves its job (n4 is full with b's), and the node returns to jobs
e=$(sub --checkpoint-agents -N 1)
wait_for 30 said "$e" || fail "job $e did not start: $(d show "$e")"
lent2=$(field "$e" CkptAgents | sed -n 's/.*(on \(n[0-9]\)).*/\1/p')
[ "$(node_state "$lent2")" = lent ] || fail "job $e's agent: $(field "$e" CkptAgents); $(d nodes)"
sed -i 's/^CheckpointLending .*/CheckpointLending = none/' "$DUCTILE_CONF"
d reconfigure | grep -qx "now in effect: CheckpointLending" || fail "reconfigure"
back() { [ "$(node_state "$lent2")" = idle ]; }
wait_for 30 back || fail "$lent2 is $(node_state "$lent2"): $(grep "$lent2" "$log")"
grep -q "node $lent2 taken back from the checkpoint service (CheckpointLending is none now)" "$log" ||
  fail "controller's log: $(grep "$lent2" "$log")"
field "$e" CkptAgents | grep -q "^none" || fail "job $e's agents: $(field "$e" CkptAgents)"
touch "stop.$b" "stop.$e"
expect_state "$b" CD
expect_state "$e" CD
echo ok
