#!/usr/bin/env bash
# Workflows as a Slurm user builds them (issue 14): dependencies (after, afterok,
# afternotok, afterany, singleton, lists with ',' and '?'), holds (--hold, ductile hold,
# release; an operator's hold only an operator releases) and --begin. A job that waits
# for any of these stays out of the engine: with a strict FCFS policy, a later job
# starts past it, as it would not past a job the engine plans for.
. "$(dirname "$0")/lib.sh"
up 2 --policy fcfs --tick 1
cd "$T"
touch go
cat > gate.sh <<'EOS'
#!/bin/sh
# runs until the file named by $1 is gone, then exits with $2
while [ -e "$1" ]; do sleep 0.1; done
exit "$2"
EOS
chmod 755 gate.sh
reason() { field "$1" Reason; }
expect_reason() { # JOB REASON
  wait_for 20 sh -c "\"$BIN\" show $1 | grep -q '^Reason *$2\$'" ||
    fail "job $1: reason $(reason "$1"), not $2"
}

# --- a chain: b after a succeeds, c after a fails (never), d after either ends
touch a.go
a=$(d submit --parsable gate.sh a.go 0)
b=$(d submit --parsable -N 2 -d "afterok:$a" -o b.out --wrap 'echo b') # both nodes
c=$(d submit --parsable -d "afternotok:$a" --wrap 'echo c')
e=$(d submit --parsable -d "afterany:$a" -o e.out --wrap 'echo e')
s=$(d submit --parsable -d "after:$a" -o s.out --wrap 'echo s') # once a has started
expect_state "$a" R
expect_state "$s" CD
for j in "$b" "$c" "$e"; do expect_reason "$j" Dependency; done
field "$b" Dependency | grep -qx "afterok:$a" || fail "show: $(field "$b" Dependency)"
# held back from the engine: with FCFS, b at the head of the queue (2 nodes, one busy)
# would keep a 1-node job after it from starting on the free node
f=$(submit --wrap true)
expect_state "$f" CD
rm a.go
expect_state "$a" CD
expect_state "$b" CD
expect_state "$e" CD
grep -qx b b.out && grep -qx e e.out || fail "outputs: $(cat b.out e.out)"
expect_reason "$c" DependencyNeverSatisfied
d cancel "$c"
# a failure: afternotok runs, afterok never does
touch x.go
x=$(d submit --parsable gate.sh x.go 3)
ok=$(d submit --parsable -d "afterok:$x" --wrap true)
notok=$(d submit --parsable -d "afternotok:$x" -o notok.out --wrap 'echo notok')
rm x.go
expect_state "$x" F
[ "$(d history | awk -v e="$x" '$1 == e {print $(NF-1)}')" = "3:0" ] ||
  fail "exit 3 in history: $(d history | grep "^$x ")"
expect_state "$notok" CD
expect_reason "$ok" DependencyNeverSatisfied
d cancel "$ok"
# '?': any of them; ',': all of them
touch y.go
y=$(d submit --parsable gate.sh y.go 0)
any=$(d submit --parsable -d "afterok:$y?afterany:$x" --wrap true)
all=$(d submit --parsable -d "afterany:$x,afterok:$y" --wrap true)
expect_state "$any" CD
expect_reason "$all" Dependency
rm y.go
expect_state "$all" CD
# singleton: one job of a name and user at a time, in submission order
touch s1.go
s1=$(d submit --parsable -J solo -d singleton gate.sh s1.go 0)
s2=$(d submit --parsable -J solo -d singleton --wrap true)
expect_state "$s1" R
expect_reason "$s2" Dependency
rm s1.go
expect_state "$s2" CD

# --- refused at submission, nothing queued
n0=$(submit --wrap true)
refused "job 99999 does not exist" d submit -d afterok:99999 --wrap true
refused "'later' is not a kind of dependency" d submit -d later:1 --wrap true
refused "not both" d submit -d "afterok:1,afterany:1?singleton" --wrap true
refused "needs job ids" d submit -d afterok --wrap true
refused "--begin: '25:00' is not a time" d submit -b 25:00 --wrap true
[ "$(submit --wrap true)" = $((n0 + 1)) ] || fail "a refused submission made a job"

# --- holds: --hold, then release; hold and release of a pending job; not of others
h=$(d submit --parsable -H -o h.out --wrap 'echo h')
expect_reason "$h" JobHeldUser
field "$h" Held | grep -q "by user" || fail "show: $(field "$h" Held)"
d release "$h"
expect_state "$h" CD
touch z.go
z=$(d submit --parsable -N 2 gate.sh z.go 0) # both nodes: what follows waits
expect_state "$z" R
p=$(submit --wrap true)
d hold "$p"
expect_reason "$p" JobHeldAdmin # root is an operator
! d hold "$z" 2> e.txt || fail "a running job was held"
grep -q "only pending jobs are held" e.txt || fail "hold of a running job: $(cat e.txt)"
! d release "$z" 2> e.txt || fail "a job that is not held was released"
grep -q "it is not held" e.txt || fail "release: $(cat e.txt)"
# another user may not hold or release it, nor release an operator's hold of their own job
! as_nobody "$BIN" release "$p" 2> e.txt || fail "nobody released root's job"
grep -q "permission denied" e.txt || fail "nobody's release: $(cat e.txt)"
rm z.go
expect_state "$z" CD
sleep 1 # (a pass or two: the held job must not start; not a synchronisation)
[ "$(state "$p")" = PD ] || fail "a held job started: $(state "$p")"
# a held job keeps its place across a controller restart, and its hold
pid=$(cat "$T/c/ctld.pid")
kill -9 "$pid"
wait_for 10 sh -c "! kill -0 $pid 2> /dev/null" || fail "the controller did not die"
restart_ctld
wait_for 20 d queue > /dev/null || fail "the controller did not come back"
expect_reason "$p" JobHeldAdmin
d release "$p"
expect_state "$p" CD

# --- requeue by hand: a running job ends and runs again, in its place
touch rq.go
rq=$(d submit --parsable -o rq.out gate.sh rq.go 0)
expect_state "$rq" R
d requeue "$rq"
wait_for 20 sh -c "\"$BIN\" show $rq | grep -q '^Restarts *1$'" || fail "requeue: $(d show "$rq")"
expect_state "$rq" R
! d requeue 99999 2> e.txt || fail "a requeue of no job succeeded"
grep -q "job 99999: not requeued: no such job" e.txt || fail "requeue 99999: $(cat e.txt)"
pq=$(d submit --parsable -N 2 --wrap true) # behind rq: pending
expect_state "$pq" PD
! d requeue "$pq" 2> e.txt || fail "a pending job was requeued"
grep -q "only running jobs are requeued" e.txt || fail "requeue of a pending job: $(cat e.txt)"
rm rq.go
expect_state "$rq" CD
expect_state "$pq" CD

# --- cancel --signal: the signal to a running job, which goes on (scancel -s)
cat > trap.sh <<'EOS'
#!/bin/bash
trap 'echo "got USR1"; touch usr1.seen' USR1
touch trap.ready
while [ ! -e usr1.seen ]; do sleep 0.1; done
echo "still here"
EOS
chmod 755 trap.sh
tj=$(d submit --parsable -o trap.out trap.sh)
wait_for 20 test -e trap.ready || fail "the trapping job did not start"
d cancel --signal USR1 --batch "$tj" # the script alone, as scancel -b: not its sleep
expect_state "$tj" CD
[ "$(cat trap.out)" = "$(printf 'got USR1\nstill here')" ] || fail "--signal USR1: $(cat trap.out)"
! d cancel --signal BOGUS "$tj" 2> e.txt || fail "a bogus signal was accepted"
grep -q "'BOGUS' is not a signal" e.txt || fail "--signal BOGUS: $(cat e.txt)"
d cancel --signal USR1 "$tj" 2> e.txt || true
grep -q "job $tj: already ended" e.txt || fail "--signal to an ended job: $(cat e.txt)"
! d cancel --batch "$tj" 2> e.txt || fail "--batch without --signal was accepted"
grep -q "go with --signal" e.txt || fail "--batch alone: $(cat e.txt)"

# --- --signal=B:USR1@SECS: the script is told that long before its time limit
rm -f usr1.seen # (without the signal it would end TO, at its limit)
wj=$(d submit --parsable -t 6s --signal=B:USR1@4 -o warn.out trap.sh)
expect_state "$wj" CD 20
[ "$(cat warn.out)" = "$(printf 'got USR1\nstill here')" ] || fail "--signal@: $(cat warn.out)"
refused "is not \[B:\]SIGNAL\[@SECONDS\]" d submit --signal=FOO@10 --wrap true

# --- --begin: not before its time
b0=$(date +%s)
bj=$(d submit --parsable -b now+3 -o begin.out --wrap 'date +%s')
expect_reason "$bj" BeginTime
field "$bj" BeginTime | grep -q . || fail "show has no BeginTime"
expect_state "$bj" CD 20
[ "$(cat begin.out)" -ge $((b0 + 3)) ] || fail "began at $(cat begin.out), before $((b0 + 3))"
echo ok
