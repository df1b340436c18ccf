#!/usr/bin/env bash
# A running controller reads ductile.conf again (`ductile reconfigure`, SIGHUP; seed 002's
# scenario 11, its dynamic configuration): the keys that may change at run time take
# effect for what comes next (here the checkpoint service's placement: CheckpointCandidates
# puts a job's agents on one node, then on two again), the others are named as waiting
# for a restart; a file with a mistake changes nothing and says where the mistake is;
# only operators may ask, and Operators itself changes at run time.
. "$(dirname "$0")/lib.sh"
up 6 --set CheckpointNodes=n[5-6] --set CheckpointAgentStopWait=2
cd "$T"
conf=$DUCTILE_CONF
# setconf KEY VALUE: the key's line replaced, or added
setconf() {
  if grep -q "^$1 " "$conf"; then sed -i "s|^$1 .*|$1 = $2|" "$conf"; else echo "$1 = $2" >> "$conf"; fi
}
mkdir -m 777 "$T/pub"
printf '%s\n' '#!/bin/sh' 'while [ ! -e "stop.$DUCTILE_JOB_ID" ]; do sleep 0.1; done' > "$T/pub/wait.sh"
chmod 755 "$T/pub/wait.sh"
sub() { (cd "$T/pub" && d submit --checkpoint-agents -N 2 wait.sh | awk '{print $3}'); }
# where a job's agents run, once it has them: "n5,n6"
agents_on() { d show "$1" | sed -n 's/^CkptAgents .*(on \([^);]*\).*/\1/p'; }
has_agents() { [ -n "$(agents_on "$1")" ]; }

# by default, a job's agents go round-robin over every checkpoint node with room
a=$(sub)
expect_state "$a" R
wait_for 20 has_agents "$a" || fail "job $a has no agents: $(d show "$a")"
[ "$(agents_on "$a")" = "n5,n6" ] || fail "job $a's agents: $(agents_on "$a")"

# one candidate node, and a key that waits for a restart
setconf CheckpointCandidates 1
setconf SchedulerTick 5
d reconfigure > "$T/rc.out" 2>&1 || fail "reconfigure: $(cat "$T/rc.out")"
grep -qx "the controller read .*ductile.conf again" "$T/rc.out" || fail "reconfigure said: $(cat "$T/rc.out")"
grep -qx "now in effect: CheckpointCandidates" "$T/rc.out" || fail "reconfigure said: $(cat "$T/rc.out")"
grep -qx "changed, but kept as they were until the daemons restart: SchedulerTick" "$T/rc.out" ||
  fail "reconfigure said: $(cat "$T/rc.out")"
b=$(sub)
expect_state "$b" R
wait_for 20 has_agents "$b" || fail "job $b has no agents: $(d show "$b")"
[ "$(agents_on "$b")" = "n5,n5" ] || fail "job $b's agents, one candidate: $(agents_on "$b")"
# nothing changed since: said so
d reconfigure > "$T/rc.out" 2>&1 || fail "reconfigure: $(cat "$T/rc.out")"
grep -qx "now in effect: no change" "$T/rc.out" || fail "reconfigure said: $(cat "$T/rc.out")"

# a mistake: named with its line, and nothing changes (the candidates stay at one)
setconf CheckpointCandidates many
line=$(grep -n "^CheckpointCandidates" "$conf" | cut -d: -f1)
! d reconfigure > "$T/rc.out" 2>&1 || fail "a bad file was taken: $(cat "$T/rc.out")"
grep -q "ductile.conf:$line: CheckpointCandidates: 'many' is not an integer" "$T/rc.out" ||
  fail "reconfigure said: $(cat "$T/rc.out")"
grep -q "nothing changed" "$T/rc.out" || fail "reconfigure said: $(cat "$T/rc.out")"
# the same by SIGHUP: the controller's log says it and what it keeps
log="$T/c/log/ductiled.log"
kill -HUP "$(cat "$T/c/ctld.pid")"
bad_seen() { grep -q "reconfigure: .*ductile.conf:$line: CheckpointCandidates: 'many' is not an integer.*: nothing changed" "$log"; }
wait_for 10 bad_seen || fail "SIGHUP with a bad file: $(tail -3 "$log")"
setconf CheckpointCandidates 1
d reconfigure > "$T/rc.out" 2>&1 || fail "reconfigure: $(cat "$T/rc.out")"
grep -qx "now in effect: no change" "$T/rc.out" || fail "the bad file changed something: $(cat "$T/rc.out")"

# a policy the controller would not start with changes nothing (a good one changes at
# run time: test_reconfigure_policy)
setconf Policy nosuch
! d reconfigure > "$T/rc.out" 2>&1 || fail "an unknown policy was taken: $(cat "$T/rc.out")"
grep -q "Policy: unknown policy 'nosuch'.*(the controller would not start with it); nothing changed" "$T/rc.out" ||
  fail "reconfigure said: $(cat "$T/rc.out")"
setconf Policy easy

# operators only; Operators itself changes at run time
! as_nobody "$BIN" reconfigure > "$T/rc.out" 2>&1 || fail "nobody reconfigured the controller"
grep -q "permission denied: only operators may reconfigure" "$T/rc.out" ||
  fail "nobody was told: $(cat "$T/rc.out")"
setconf Operators nobody
d reconfigure > "$T/rc.out" 2>&1 || fail "reconfigure: $(cat "$T/rc.out")"
grep -qx "now in effect: Operators" "$T/rc.out" || fail "reconfigure said: $(cat "$T/rc.out")"
as_nobody "$BIN" reconfigure > "$T/rc.out" 2>&1 || fail "operator nobody was refused: $(cat "$T/rc.out")"

# SIGHUP does the same: every checkpoint node a candidate again
setconf CheckpointCandidates 0
kill -HUP "$(cat "$T/c/ctld.pid")"
hup_seen() { grep -q "reconfigured from .*now in effect: CheckpointCandidates" "$log"; }
wait_for 10 hup_seen || fail "SIGHUP: $(tail -3 "$log")"
touch "$T/pub/stop.$a"
expect_state "$a" CD
c=$(sub)
expect_state "$c" R
wait_for 20 has_agents "$c" || fail "job $c has no agents: $(d show "$c")"
# n6 has the most room now (b's two agents are on n5): it comes first
[ "$(agents_on "$c")" = "n6,n5" ] || fail "job $c's agents, every node a candidate: $(agents_on "$c")"
touch "$T/pub/stop.$b" "$T/pub/stop.$c"
expect_state "$b" CD
expect_state "$c" CD
# a local cluster whose file has a mistake is not half stopped: cluster down says so
if [ "$HOSTS" != 1 ]; then
  setconf CheckpointCandidates many
  ! d cluster down --dir "$T/c" > "$T/down.out" 2>&1 || fail "cluster down with a bad file: $(cat "$T/down.out")"
  grep -q "correct it and run cluster down again (nothing was stopped)" "$T/down.out" ||
    fail "cluster down said: $(cat "$T/down.out")"
  alive "$(cat "$T/c/ctld.pid")" || fail "cluster down stopped the controller without its file"
  setconf CheckpointCandidates 0
fi
echo "PASS"
