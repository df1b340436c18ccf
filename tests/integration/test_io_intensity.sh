#!/usr/bin/env bash
# A job's declared I/O intensity (--io-intensity, the io-aware policy; docs/policies.md
# "io-aware"): given on the command line or as a #DUCTILE line, checked in the user's
# words before anything is submitted, shown by `ductile show` (text and --json), passed
# to the engine, and kept across a controller restart.
. "$(dirname "$0")/lib.sh"
up 2 --policy io-aware
cd "$T"

# jobs that run until the test lets them end (the job polls, not the test)
s=$(script busy.sh "while [ ! -e '$T/stop' ]; do sleep 0.1; done")
printf '#!/bin/sh\n#DUCTILE --io-intensity=0.25\nwhile [ ! -e %s/stop ]; do sleep 0.1; done\n' \
  "'$T'" > dir.sh
chmod 755 dir.sh

# bad input, in the user's words, and nothing submitted
njobs() { d queue | tail -n +2 | grep -c . || true; }
! d submit --io-intensity 2 "$s" 2> e.txt || fail "--io-intensity 2 accepted"
grep -q "^ductile: --io-intensity: '2' is not a share between 0 and 1 (the part of the job's run time spent in I/O)" e.txt ||
  fail "--io-intensity 2: $(cat e.txt)"
! d submit --io-intensity 40% "$s" 2> e.txt || fail "--io-intensity 40% accepted"
grep -q "'40%' is not a share between 0 and 1" e.txt || fail "--io-intensity 40%: $(cat e.txt)"
! d submit --io-intensity -0.1 "$s" 2> e.txt || fail "--io-intensity -0.1 accepted"
grep -q "'-0.1' is not a share between 0 and 1" e.txt || fail "--io-intensity -0.1: $(cat e.txt)"
printf '#!/bin/sh\n#DUCTILE --io-intensity=1.5\ntrue\n' > bad.sh
! d submit bad.sh 2> e.txt || fail "#DUCTILE --io-intensity=1.5 accepted"
grep -q "bad.sh:2: #DUCTILE --io-intensity: '1.5' is not a share between 0 and 1" e.txt ||
  fail "#DUCTILE --io-intensity=1.5: $(cat e.txt)"
[ "$(njobs)" = 0 ] || fail "a refused submission left a job: $(d queue)"

# declared on the command line, in a script, and not at all
j1=$(submit --io-intensity 0.4 "$s")
j2=$(submit dir.sh)
j3=$(submit --io-intensity 0.6 dir.sh) # the command line wins over the script
j0=$(submit "$s")
[ -n "$j1" ] && [ -n "$j2" ] && [ -n "$j3" ] && [ -n "$j0" ] || fail "submissions: $j1 $j2 $j3 $j0"
io() { field "$1" IOIntensity | awk '{print $1}'; }
io_json() { d show "$1" --json | awk -F'[:,]' '/"io_intensity"/ {print $2 + 0}'; }
check() { # what each job shows, as text and as JSON
  [ "$(io "$j1")" = 0.4 ] || fail "$1: job $j1: $(d show "$j1")"
  [ "$(io "$j2")" = 0.25 ] || fail "$1: job $j2: $(d show "$j2")"
  [ "$(io "$j3")" = 0.6 ] || fail "$1: job $j3: $(d show "$j3")"
  [ -z "$(io "$j0")" ] || fail "$1: job $j0 declared nothing: $(d show "$j0")"
  [ "$(io_json "$j1")" = 0.4 ] || fail "$1: job $j1 --json: $(d show "$j1" --json)"
  [ -z "$(io_json "$j0")" ] || fail "$1: job $j0 --json: $(d show "$j0" --json)"
}
check submitted
# the io-aware policy schedules them (two nodes: two run, two wait)
running() { [ "$(d queue | awk '$4 == "R"' | wc -l)" = 2 ]; }
wait_for 20 running || fail "nothing runs under io-aware: $(d queue)"

# kept across a controller restart
pid=$(cat "$T/c/ctld.pid")
kill -9 "$pid"
wait_for 10 sh -c "! kill -0 $pid" || fail "the controller did not die"
restart_ctld
wait_for 20 d queue || fail "the controller did not come back"
check "after a restart"

# and in the finished jobs' records
touch "$T/stop"
for j in "$j1" "$j2" "$j3" "$j0"; do expect_state "$j" CD 60; done
check "finished"
echo ok
