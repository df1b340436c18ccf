#!/usr/bin/env bash
# An adopted job (its node daemon killed -9 and restarted) reaches its time limit: the
# daemon kills it (on_walltime -> terminate replaces the adopted poll on j->kill), but
# nothing reports the end: the job must end TO.
. "$(dirname "$0")/rlib.sh"
up 1 --node-timeout 5
s=$(script sleeper.sh 'sleep 300 & echo $! >> '"$T"'/pids; wait')
j=$(submit -t 8s "$s")
expect_state "$j" R
wait_for 10 test -s "$T/pids" || fail "no start"
p=$(head -1 "$T/pids")
kill_restart_noded n1
wait_for 10 sh -c "grep -q 'found run' $T/c/log/noded-n1.log" || fail "not adopted"
# the limit passes at ~8 s: the script must be killed and the job end TO
wait_for 20 sh -c "! kill -0 $p 2>/dev/null" || fail "the time limit did not kill the adopted job"
echo "script $p killed by the limit; job state now: $(state "$j")"
wait_for 20 is_state "$j" TO || fail "adopted job $j killed by its limit but is still $(state "$j") 20 s later: $(d show "$j" | head -12)"
echo ok
