#!/usr/bin/env bash
# A malleable job (no application attached) shrinks from n[1-2] to n1: the leaving node
# n2 gets a clean-up; its task ignores SIGTERM (KillWait 10 s) and n2's daemon is killed
# -9 and restarted meanwhile (before NodeTimeout). The restarted daemon reports the job;
# nobody asks it to clean up again: the job must still leave RS (RELEASING has no
# ResizeTimeout).
. "$(dirname "$0")/rlib.sh"
up 2 --node-timeout 15 --resize-timeout 20
s="$T/mall.sh"
printf '#!/bin/sh\n#DUCTILE --nodes=1 --malleable --min-nodes=1 --max-nodes=2\necho $$ >> %s/pids\nsleep 300\n' "$T" > "$s"; chmod 755 "$s"
j=$(submit "$s")
expect_state "$j" R
d resize "$j" --nodes 2 > /dev/null || fail "no expand"
on2() { [ "$(field "$j" NodeList)" = "n[1-2]" ] && is_state "$j" R; }
wait_for 20 on2 || fail "not on 2 nodes: $(d show $j | grep -E 'State|NodeList')"
d run --job "$j" --node n2 sh -c 'trap "" TERM; echo $$ >> '"$T"'/pids; while :; do sleep 1; done' > /dev/null 2>&1 &
echo $! >> "$T/pids"
wait_for 10 sh -c "[ \$(wc -l < $T/pids) -ge 3 ]" || fail "no task on n2"
d resize "$j" --nodes 1 --no-wait > /dev/null || fail "no shrink"
expect_state "$j" RS 10
sleep 1 # n2 is ending its task (TERM ignored, KILL in 10 s): the fault
kill_restart_noded n2
for i in $(seq 30); do printf '%s ' "$(state "$j")"; is_state "$j" RS || break; sleep 1; done; echo
grep -E "found run|leftover" "$T/c/log/noded-n2.log" || true
is_state "$j" RS && fail "job $j still RS 30 s after the shrink's leaving node daemon restarted (ResizeTimeout 20); nodes: $(d nodes | grep n2)"
echo "job $j: $(state "$j") $(field "$j" NodeList)"
echo ok
