#!/usr/bin/env bash
# Submit, run, environment, output files, exit codes, history, queue reasons.
. "$(dirname "$0")/lib.sh"
up 4
cd "$T"
# The local cluster's controller port lies below the kernel's ephemeral range: a port
# the kernel may hand to any connection or listener before the controller binds it (or
# binds it again after a restart) was taken now and then ("address already in use").
if [ "${HOSTS:-0}" != 1 ]; then
  cport=$(awk '$1 == "ControlPort" {print $3}' "$DUCTILE_CONF")
  low=$(awk '{print $1}' /proc/sys/net/ipv4/ip_local_port_range)
  [ "$cport" -lt "$low" ] || fail "ControlPort $cport is in the ephemeral range (from $low)"
fi
export MY_VAR="captured at submission"
s=$(script env.sh '#DUCTILE --nodes=2 --job-name=envtest
echo "id=$DUCTILE_JOB_ID n=$DUCTILE_JOB_NUM_NODES list=$DUCTILE_JOB_NODELIST dir=$DUCTILE_SUBMIT_DIR"
echo "my=$MY_VAR pwd=$(pwd)"
echo "to stderr" >&2
exit 0')
j1=$(submit -o 'out-%j.txt' -e 'err-%j.txt' "$s")
[ -n "$j1" ] || fail "no job id"
expect_state "$j1" CD
grep -qx "id=$j1 n=2 list=n\[1-2\] dir=$T" "out-$j1.txt" || fail "env: $(cat "out-$j1.txt")"
grep -qx "my=captured at submission pwd=$T" "out-$j1.txt" || fail "user env/cwd: $(cat "out-$j1.txt")"
grep -qx "to stderr" "err-$j1.txt" || fail "stderr file"
! grep -q "to stderr" "out-$j1.txt" || fail "stderr leaked into stdout"
[ "$(field "$j1" Name)" = envtest ] || fail "job name from #DUCTILE"

# exit codes: non-zero -> F with the code; killed by a signal -> F with 128+signal
s=$(script three.sh 'exit 3')
j2=$(submit "$s")
expect_state "$j2" F
[ "$(field "$j2" ExitCode)" = 3 ] || fail "exit code 3: $(field "$j2" ExitCode)"
s=$(script selfkill.sh 'kill -KILL $$')
j3=$(submit "$s")
expect_state "$j3" F
[ "$(field "$j3" ExitCode)" = "137 signal KILL" ] || fail "signal: $(field "$j3" ExitCode)"
# a script without #! runs with /bin/sh; the default output is ductile-%j.out in cwd
printf 'echo plain\n' > "$T/plain.sh"
j4=$(submit "$T/plain.sh")
expect_state "$j4" CD
grep -qx plain "ductile-$j4.out" || fail "default output file"
# show names the default output file instead of an empty StdOut (a newcomer's question)
[ "$(field "$j4" StdOut)" = "ductile-$j4.out (the default, in WorkDir)" ] || fail "show StdOut: $(field "$j4" StdOut)"
[ "$(field "$j1" StdOut)" = "out-%j.txt" ] || fail "show StdOut given: $(field "$j1" StdOut)"

# queue: a job larger than what is free waits with a reason, behind it others wait
s=$(script long.sh 'sleep 30')
j5=$(submit -N 3 "$s")
expect_state "$j5" R
j6=$(submit -N 4 "$s")
j7=$(submit -N 1 -t 1 "$s")
sleep 0.3
d queue > q.txt
grep -E "^$j6 .* PD .*\(Resources\)" q.txt || fail "reason Resources: $(cat q.txt)"
# easy backfills the short job 7 into the free node: it ends (1 min) before job 5 (no limit)?
# job 5 has no time limit, so the shadow time is unbounded and 7 may backfill
wait_for 10 is_state "$j7" R || fail "job 7 should backfill: $(cat q.txt)"
d cancel "$j5" "$j6" "$j7"
expect_state "$j5" CA
expect_state "$j6" CA
# history lists finished jobs with state, elapsed and exit code
d history > h.txt
grep -E "^$j2 +three.sh +root +FAILED .* 3:0 +[0-9>]+$" h.txt || fail "history: $(cat h.txt)"
d history --state CA --json | grep -q "\"id\": $j6" || fail "history --state CA"
# chosen fields, |-separated with --parsable (as sacct -P); dates as --since and --until
[ "$(d history "$j2" --format=JobID,JobName,State,ExitCode --parsable)" = \
  "$(printf 'JobID|JobName|State|ExitCode|\n%s|three.sh|FAILED|3:0|' "$j2")" ] ||
  fail "history --format: $(d history "$j2" --format=JobID,JobName,State,ExitCode --parsable)"
d history --since "$(date +%F)" | grep -q "^$j2 " || fail "history --since today"
[ "$(d history --until "$(date -d yesterday +%F)" | wc -l)" = 1 ] || fail "history --until yesterday"
! d history --format=JobID,Bogus 2> e.txt || fail "an unknown field was accepted"
grep -q "'Bogus' is not a field" e.txt || fail "--format Bogus: $(cat e.txt)"
d queue --json | grep -q '^\[' || fail "queue --json"
# accounting: node-seconds of the 2-node job
ns=$(field "$j1" NodeSeconds)
[ "$ns" -ge 0 ] || fail "node seconds"
# errors: one line, non-zero exit
! d submit "$T/nosuch.sh" 2> e.txt || fail "missing script accepted"
grep -q "cannot read" e.txt || fail "message: $(cat e.txt)"
! d submit -N 9 "$s" 2> e.txt || fail "9 nodes on 4 accepted"
grep -q "needs at least 9 nodes but the cluster has 4" e.txt || fail "size message: $(cat e.txt)"
! d submit --checkpoint-agents "$s" 2> e.txt || fail "agents without checkpoint nodes accepted"
grep -q "this cluster has no checkpoint nodes for --checkpoint-agents" e.txt ||
  fail "agents message: $(cat e.txt)"
! d show 99999 2> e.txt || fail "unknown job"
grep -q "does not exist" e.txt || fail "unknown job message"

# A job that cannot start says why in full: its working directory, removed before it
# ran, is named whole in its reason (it was cut at 47 characters).
wd="$T/a-working-directory-with-a-rather-long-name-that-goes-away"
mkdir -p "$wd"
d drain n1,n2,n3,n4 > /dev/null
s=$(script gone.sh 'true')
jg=$(cd "$wd" && submit "$s")
rmdir "$wd"
d resume n1,n2,n3,n4 > /dev/null
wait_for 20 sh -c "\"$BIN\" show $jg | grep -q '^State.*FAILED'" || fail "job $jg: $(d show "$jg")"
field "$jg" Reason | grep -qF "$wd" || fail "reason cut: $(field "$jg" Reason)"
echo ok
