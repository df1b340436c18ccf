#!/usr/bin/env bash
# The checkpoint service's controller and manager (issue 11; seed 002's scenarios 17-18
# as far as they are built): a job of user nobody submitted with --checkpoint-agents gets
# its agents on the checkpoint node n4, running as nobody with a key only nobody reads;
# they survive their manager's kill (a new incarnation finds them) and the controller's
# (the job keeps them); a job that ends while the manager is away has its agents stopped
# when the manager comes back; an agent that does not stop when told (hung: here
# SIGSTOPped) is killed CheckpointAgentStopWait later; a job one of whose agents does not
# start runs with the others; none is left once the jobs ended.
. "$(dirname "$0")/lib.sh"
up 4 --set CheckpointNodes=n4 --set CheckpointAgentStopWait=2
cd "$T"
d nodes | grep -Eq "^n4 +checkpoint " || fail "n4: $(d nodes)"
mkdir -m 777 "$T/pub"
# the job shows what it was given, then waits for $T/pub/stop.<job>
printf '%s\n' '#!/bin/sh' 'echo "agents=$DUCTILE_CKPT_AGENTS"' \
  'stat -c "key %U %a %s" "$DUCTILE_CKPT_KEY_FILE"' \
  'while [ ! -e "stop.$DUCTILE_JOB_ID" ]; do sleep 0.1; done' > "$T/pub/wait.sh"
chmod 755 "$T/pub/wait.sh"
sub_nobody() { (cd "$T/pub" && as_nobody "$BIN" submit --checkpoint-agents "$@" wait.sh | awk '{print $3}'); }
agents_of() { agent_pids n4 "$1"; }
count_agents() { agents_of "$1" | grep -c . || true; }
none_left() { [ "$(count_agents "$1")" = 0 ]; } # (for wait_for: evaluated at each try)

j=$(sub_nobody -N 2)
expect_state "$j" R
out="$T/pub/ductile-$j.out"
wait_for 10 grep -q "^key" "$out" || fail "job $j said nothing: $(cat "$out")"
ag=$(d show "$j" | awk '$1 == "CkptAgents" {print $2}')
grep -qx "agents=$ag" "$out" || fail "environment: $(cat "$out") against $(d show "$j")"
[ "$(echo "$ag" | tr ',' '\n' | grep -c .)" = 2 ] || fail "agents: $ag"
# the key: the job's user's alone, 64 hex digits and a newline
grep -qx "key nobody 600 65" "$out" || fail "key file: $(cat "$out")"
[ "$(count_agents "$j")" = 2 ] || fail "agent processes: $(pgrep -af ductile-agent)"
for p in $(agents_of "$j"); do
  [ "$(stat -c %U "/proc/$p")" = nobody ] || fail "agent $p runs as $(stat -c %U "/proc/$p")"
  # with nobody's groups, none of the daemon's (root's)
  groups=$(awk '$1 == "Groups:" {$1 = ""; print}' "/proc/$p/status" | xargs -n1 | sort -n | xargs)
  [ "$groups" = "$(id -G nobody | xargs -n1 | sort -n | xargs)" ] || fail "agent $p's groups: $groups"
done

# what they hold, for the job's owner (the controller gives the list and key)
as_nobody "$BIN" checkpoints --job "$j" > "$T/ck" 2>&1 || fail "checkpoints --job: $(cat "$T/ck")"
grep -qx "the checkpoint agents hold no checkpoints" "$T/ck" || fail "checkpoints --job: $(cat "$T/ck")"
! d checkpoints --job 999 2> "$T/ck" || fail "checkpoints of no job"
grep -q "job 999 does not exist" "$T/ck" || fail "no job: $(cat "$T/ck")"

# the manager killed and started again: its agents live on, and it knows them
registrations() { grep -c "registered with the controller" "$T/c/log/noded-n4.log" || true; }
back() { [ "$(registrations)" -gt "$1" ]; }
r0=$(registrations)
kill -9 "$(cat "$T/c/noded-n4.pid")"
restart_noded n4
wait_for 20 back "$r0" || fail "n4 did not come back: $(tail "$T/c/log/noded-n4.log")"
[ "$(count_agents "$j")" = 2 ] || fail "agents lost with their manager"
# the controller killed and started again: the job keeps its agents
kill -9 "$(cat "$T/c/ctld.pid")"
restart_ctld
n4_up() { d nodes | grep -Eq "^n4 +checkpoint "; }
wait_for 20 n4_up || fail "n4 not back after the controller's restart: $(d nodes)"
[ "$(d show "$j" | awk '$1 == "CkptAgents" {print $2}')" = "$ag" ] ||
  fail "agents after a restart: $(d show "$j")"

# a second job; its agents' manager is away when it ends: they stop when it is back
j2=$(sub_nobody -N 1)
wait_for 30 grep -q "^key" "$T/pub/ductile-$j2.out" || fail "job $j2 did not start: $(d show "$j2")"
[ "$(count_agents "$j2")" = 1 ] || fail "job $j2's agent: $(pgrep -af ductile-agent)"
secs() { d show "$1" | awk -v f="$2" '$1 == f {n = split($2, p, ":"); s = 0; for (i = 1; i <= n; i++) s = s * 60 + p[i]; print s}'; }
ran_3s() { [ "$(secs "$j2" Elapsed)" -ge 3 ]; }
wait_for 20 ran_3s || fail "job $j2 does not run: $(d show "$j2")"
d0=$(grep -c "node n4: its daemon disconnected" "$T/c/log/ductiled.log" || true)
kill -9 "$(cat "$T/c/noded-n4.pid")"
touch "$T/pub/stop.$j2"
expect_state "$j2" CD
[ "$(count_agents "$j2")" = 1 ] || fail "job $j2's agent went with its manager: $(pgrep -af ductile-agent)"
# meanwhile (n3 free again) a job starts with no checkpoint node up: without agents (its files)
gone() { [ "$(grep -c "node n4: its daemon disconnected" "$T/c/log/ductiled.log")" -gt "$1" ]; }
wait_for 20 gone "$d0" || fail "the controller did not see n4's daemon go"
j6=$(sub_nobody -N 1)
wait_for 30 grep -q "^agents=" "$T/pub/ductile-$j6.out" ||
  fail "job $j6 did not start: $(d show "$j6")"
grep -qx "agents=" "$T/pub/ductile-$j6.out" || fail "job $j6 got agents: $(cat "$T/pub/ductile-$j6.out")"
grep -q "job $j6: no checkpoint node is up: it checkpoints to its files" "$T/c/log/ductiled.log" ||
  fail "controller's log: $(grep "job $j6" "$T/c/log/ductiled.log")"
touch "$T/pub/stop.$j6"
expect_state "$j6" CD
restart_noded n4
wait_for 30 none_left "$j2" || fail "job $j2's agent not stopped: $(agents_of "$j2")"

# its agent's share of n4 was a third (job 1's two agents there all along): charged
# a third of n4's time while it ran
e2=$(secs "$j2" Elapsed)
c2=$(secs "$j2" CkptNodeSecs)
awk -v e="$e2" -v c="$c2" 'BEGIN {exit !(c >= e / 3 - 2 && c <= e / 3 + 2 && c > 0)}' ||
  fail "job $j2 ran $e2 s and was charged $c2 checkpoint node-seconds"
! d checkpoints --job "$j2" 2> "$T/ck" || fail "checkpoints of an ended job"
grep -q "job $j2 has already ended" "$T/ck" || fail "ended job: $(cat "$T/ck")"

# a job submitted from inside an agents' job does not inherit its agents; agents a user
# names himself (started by hand) are passed on
envs=$(script envs.sh 'env | grep "^DUCTILE_CKPT_" | sort')
kf="$(dirname "$(spool_of n1)")/ckpt.$j.1.key"
j3=$(DUCTILE_CKPT_AGENTS=10.1.1.1:7 DUCTILE_CKPT_KEY_FILE=$kf submit "$envs")
j4=$(DUCTILE_CKPT_AGENTS=10.1.1.1:7 DUCTILE_CKPT_KEY_FILE=$T/mine.key submit "$envs")
expect_state "$j3" CD
expect_state "$j4" CD
[ ! -s "ductile-$j3.out" ] || fail "inherited: $(cat "ductile-$j3.out")"
[ "$(cat "ductile-$j4.out")" = "DUCTILE_CKPT_AGENTS=10.1.1.1:7
DUCTILE_CKPT_KEY_FILE=$T/mine.key" ] || fail "the user's own: $(cat "ductile-$j4.out")"

# a hung agent: told to stop when its job ends, it does not; it is killed 2 s later
j5=$(sub_nobody -N 1)
wait_for 30 grep -q "^key" "$T/pub/ductile-$j5.out" || fail "job $j5 did not start: $(d show "$j5")"
hung=$(agents_of "$j5")
[ -n "$hung" ] || fail "job $j5 has no agent"
kill -STOP $hung
touch "$T/pub/stop.$j5"
expect_state "$j5" CD
wait_for 30 none_left "$j5" || fail "job $j5's hung agent not killed: $(agents_of "$j5")"
grep -q "checkpoint agent of job $j5 (pid $hung) did not stop within 2 s" "$T/c/log/noded-n4.log" ||
  fail "n4's log: $(grep "job $j5" "$T/c/log/noded-n4.log")"

# the first job ends: its agents stop, their key goes
touch "$T/pub/stop.$j"
expect_state "$j" CD
e1=$(secs "$j" Elapsed)
c1=$(secs "$j" CkptNodeSecs)
awk -v e="$e1" -v c="$c1" -v c2="$c2" 'BEGIN {exit !(c > c2 && c <= e + 2)}' ||
  fail "job $j ran $e1 s and was charged $c1 checkpoint node-seconds (job $j2: $c2)"
echo "checkpoint node-seconds: job $j $c1 in $e1 s, job $j2 $c2 in $e2 s"
wait_for 30 none_left "$j" || fail "job $j's agents not stopped"
on n1 sh -c "! ls $(spool_of n1)/../ckpt.$j.* 2> /dev/null" || fail "key file left on n1"
grep -q "stopping the checkpoint agent of job $j " "$T/c/log/noded-n4.log" ||
  fail "n4's log: $(cat "$T/c/log/noded-n4.log")"

# one of a job's two agents does not start (a test hook of the agent's, passed on by
# its manager): the job starts with the other, whose environment is its own, not the
# daemon's
r0=$(registrations)
kill -9 "$(cat "$T/c/noded-n4.pid")"
DUCTILE_TEST_AGENT_FAIL_SLOT=1 NODED_ONLY_MARK=1 restart_noded n4
wait_for 20 back "$r0" || fail "n4 did not come back: $(tail "$T/c/log/noded-n4.log")"
j7=$(sub_nobody -N 2)
wait_for 30 grep -q "^agents=" "$T/pub/ductile-$j7.out" || fail "job $j7 did not start: $(d show "$j7")"
ag7=$(d show "$j7" | awk '$1 == "CkptAgents" {print $2, $4}')
case "$ag7" in *,*) fail "job $j7 has two agents: $ag7" ;; *" n4)") ;; *) fail "job $j7's agents: $(d show "$j7")" ;; esac
grep -qx "agents=${ag7%% *}" "$T/pub/ductile-$j7.out" || fail "job $j7's environment: $(cat "$T/pub/ductile-$j7.out")"
grep -q "job $j7: its checkpoint agent on n4 did not start: .*not starting (DUCTILE_TEST_AGENT_FAIL_SLOT=1)" \
  "$T/c/log/ductiled.log" || fail "controller's log: $(grep "job $j7" "$T/c/log/ductiled.log")"
p7=$(agents_of "$j7")
[ "$(echo "$p7" | grep -c .)" = 1 ] || fail "job $j7's agent processes: $p7"
tr '\0' '\n' < "/proc/$p7/environ" > "$T/agent.env"
grep -qx "PATH=/usr/local/bin:/usr/bin:/bin" "$T/agent.env" && ! grep -q NODED_ONLY_MARK "$T/agent.env" ||
  fail "the agent's environment: $(cat "$T/agent.env")"
touch "$T/pub/stop.$j7"
expect_state "$j7" CD
wait_for 30 none_left "$j7" || fail "job $j7's agent not stopped"
echo ok
