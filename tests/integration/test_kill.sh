#!/usr/bin/env bash
# Cancellation and walltime: TERM, then KILL; every process of the job goes, also
# background children and daemons that left the job's session.
. "$(dirname "$0")/lib.sh"
up 2 --node-timeout 30 --kill-wait 3 # (KillWait: the stubborn job below)
cd "$T"
s=$(script tree.sh 'sleep 300 & echo $! > "'"$T"'/child.$DUCTILE_JOB_ID"
setsid sh -c "echo \$\$ > '"$T"'/daemon.$DUCTILE_JOB_ID; exec sleep 300" &
echo $$ > "'"$T"'/main.$DUCTILE_JOB_ID"
wait')
j=$(submit "$s")
expect_state "$j" R
wait_for 10 test -s "$T/daemon.$j" || fail "job did not start its processes"
pids="$(cat "$T/main.$j") $(cat "$T/child.$j") $(cat "$T/daemon.$j")"
for p in $pids; do alive "$p" || fail "process $p not running"; done
d cancel "$j"
expect_state "$j" CA
for p in $pids; do
  wait_for 5 sh -c "! kill -0 $p 2>/dev/null || grep -q '^State:.*Z' /proc/$p/status" ||
    fail "process $p of cancelled job $j survived"
done

# A script that ignores SIGTERM is killed after KillWait (10 s default: 3 here).
s=$(script stubborn.sh 'trap "" TERM; echo $$ > "'"$T"'/stub.$DUCTILE_JOB_ID"; while :; do sleep 1; done')
j=$(submit -t 2s "$s")
expect_state "$j" R
wait_for 10 test -s "$T/stub.$j" || fail "stubborn job did not start"
p=$(cat "$T/stub.$j")
# time limit 2 s: TERM at 2 s (ignored), KILL at 2 + KillWait (3) s
expect_state "$j" TO 30
! alive "$p" || fail "stubborn process survived its time limit"
[ "$(field "$j" ExitCode)" = "137 signal KILL" ] || fail "TO exit: $(field "$j" ExitCode)"
# history writes it as Slurm's sacct does, CODE:SIGNAL
[ "$(d history | awk -v e="$j" '$1 == e {print $(NF-1)}')" = "0:9" ] ||
  fail "history's exit: $(d history | grep "^$j ")"

# A well-behaved job over its limit ends TO after TERM, quickly.
s=$(script sleeper.sh 'sleep 300')
j=$(submit -t 1s "$s")
expect_state "$j" TO 15
[ "$(field "$j" ExitCode)" = "143 signal TERM" ] || fail "TERM exit: $(field "$j" ExitCode)"
# nodes are free again
wait_for 5 sh -c "\"$BIN\" nodes | grep -q '2 idle'" || fail "nodes not released: $(d nodes)"
echo ok
