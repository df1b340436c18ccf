#!/usr/bin/env bash
# Job arrays as Slurm users write them (issue 14): --array with ranges, steps, lists and
# a %N throttle; each element a job with its own state, %A/%a in output names and
# SLURM_ARRAY_*; queue folds the pending elements into one line; an element or the
# whole array is cancelled; a dependency on an array waits for every element; the
# throttle holds across a controller restart.
. "$(dirname "$0")/lib.sh"
up 3 --tick 1
cd "$T"
# each element notes how many elements run beside it (marker files), then waits for go
cat > el.sh <<'EOS'
#!/bin/sh
touch "run.$SLURM_ARRAY_TASK_ID"
echo "$(ls run.* | wc -l)" >> "$1"
echo "task $SLURM_ARRAY_TASK_ID of $SLURM_ARRAY_JOB_ID ($DUCTILE_ARRAY_TASK_ID of $DUCTILE_ARRAY_JOB_ID) count $SLURM_ARRAY_TASK_COUNT min $SLURM_ARRAY_TASK_MIN max $SLURM_ARRAY_TASK_MAX"
while [ ! -e "$2" ]; do sleep 0.1; done
rm "run.$SLURM_ARRAY_TASK_ID"
EOS
chmod 755 el.sh
a=$(d submit --parsable --array=0-8:2,9%2 -o 'arr-%A_%a.out' el.sh seen.txt go)
[[ "$a" =~ ^[0-9]+$ ]] || fail "--parsable printed '$a'"
wait_for 20 sh -c "[ \$(\"$BIN\" queue | grep -c ' R ') = 2 ]" || fail "queue: $(d queue)"
q=$(d queue)
grep -qE "^${a}_\[[0-9,:-]+%2\] +el.sh +root +PD .*\(JobArrayTaskLimit\)$" <<< "$q" ||
  fail "the pending elements are not folded: $q"
[ "$(grep -c "^${a}_" <<< "$q")" = 3 ] || fail "queue lines: $q"
field "${a}_4" ArrayElement | grep -qx "${a}_4" || fail "show ${a}_4: $(d show "${a}_4")"
# one element cancelled while it waits; the others run, two at a time at most
d cancel "${a}_6"
touch go
for t in 0 2 4 8 9; do
  j=$(d show "${a}_$t" | awk '$1 == "JobId" {print $2}')
  expect_state "$j" CD 60
  grep -qx "task $t of $a ($t of $a) count 6 min 0 max 9" "arr-${a}_$t.out" ||
    fail "element $t: $(cat "arr-${a}_$t.out" 2> /dev/null)"
done
[ "$(state "$(d show "${a}_6" | awk '$1 == "JobId" {print $2}')")" = CA ] || fail "${a}_6 was not cancelled"
[ ! -e "arr-${a}_6.out" ] || fail "the cancelled element ran"
[ "$(sort -n seen.txt | tail -1)" -le 2 ] || fail "more than 2 elements ran at once: $(cat seen.txt)"
d history | grep -q "^${a}_9 " || fail "history does not name the element: $(d history | head -5)"
# exit codes as sacct writes them: 0:0 for one cancelled before it ran (not -1)
[ "$(d history | awk -v e="${a}_6" '$1 == e {print $(NF-1)}')" = "0:0" ] ||
  fail "the cancelled element's exit: $(d history | grep "^${a}_6 ")"

# the whole array cancelled by its id; a dependency on an array waits for all of it
rm go
b=$(d submit --parsable --array=1-3 el.sh seen2.txt go)
wait_for 20 sh -c "[ \$(\"$BIN\" queue | grep -c ' R ') = 3 ]" || fail "queue: $(d queue)"
after=$(d submit --parsable -d "afterany:$b" -o after.out --wrap 'echo after')
expect_state "$after" PD
d cancel "$b"
wait_for 20 sh -c "! \"$BIN\" queue | grep -q '^${b}_'" || fail "the array was not cancelled: $(d queue)"
expect_state "$after" CD
ok=$(d submit --parsable -d "afterok:$b" --wrap true)
wait_for 20 sh -c "\"$BIN\" show $ok | grep -q 'DependencyNeverSatisfied'" ||
  fail "afterok on a cancelled array: $(field "$ok" Reason)"
d cancel "$ok"

# the throttle across a controller restart
rm -f run.* # (the cancelled elements left theirs)
c=$(d submit --parsable --array=1-4%1 el.sh seen3.txt go)
wait_for 20 sh -c "\"$BIN\" queue | grep -q '^${c}_1 .* R '" || fail "queue: $(d queue)"
# the elements' script and environment are stored once, with the first element (10,000
# copies of a 1 MiB script made one submission write 10 GB), and the restart below
# gives them theirs from it
if [ "$HOSTS" = 1 ]; then db=/var/spool/ductile/ductile.db; else db="$T/c/state/ductile.db"; fi
[ "$(on ctl sqlite3 "$db" ".timeout 5000" "SELECT count(script) || ',' || count(env) FROM jobs WHERE array_id = $c")" = 1,1 ] ||
  fail "the array's script stored per element: $(on ctl sqlite3 "$db" "SELECT id, length(script) FROM jobs WHERE array_id = $c")"
pid=$(cat "$T/c/ctld.pid")
kill -9 "$pid"
wait_for 10 sh -c "! kill -0 $pid 2> /dev/null" || fail "the controller did not die"
restart_ctld
wait_for 20 d queue > /dev/null || fail "the controller did not come back"
d queue | grep -qE "^${c}_\[2-4%1\] .*\(JobArrayTaskLimit\)" || fail "after the restart: $(d queue)"
touch go
for t in 1 2 3 4; do
  j=$(d show "${c}_$t" | awk '$1 == "JobId" {print $2}')
  expect_state "$j" CD 60
done
[ "$(sort -n seen3.txt | tail -1)" = 1 ] || fail "%1 let more run: $(cat seen3.txt)"

# a stepped array folds as squeue writes it, not index by index (a 1,000-element one
# made every line of everyone's queue 4,000 columns wide); an array that folds into a
# long id widens the JOBID column and the header with it (the header was not counted
# in the reply's buffer, which the controller then overran: "out of memory" for every
# queue after, a corrupt heap)
st=$(d submit --parsable -H --array=0-300:2 --wrap true)
d queue --noheader --format JobID | grep -qx "${st}_\[0-300:2\]" || fail "stepped: $(d queue --format JobID)"
squares=1; for k in $(seq 2 150); do squares="$squares,$((k * k))"; done
sq=$(d submit --parsable -H --array="$squares" --wrap true)
d queue > long.txt || fail "queue with a long folded id: $(head -c 300 long.txt)"
head -1 long.txt | grep -q "^JOBID  *NAME" || fail "header: $(head -c 200 long.txt)"
grep -q "^${sq}_\[1,4,9,16,.*,22201,22500\] " long.txt || fail "the long fold: $(grep "^${sq}_" long.txt | head -c 200)"
d cancel "$st" "$sq" > /dev/null

# refused
refused "is not a list of indices" d submit --array=5-3 --wrap true
refused "more than 10000 elements" d submit --array=1-20000 --wrap true
refused "is not a limit" d submit --array=1-3%0 --wrap true
refused "'1_x' is not a job id" d cancel 1_x
d cancel "${c}_77" 2> e.txt && fail "cancel of an element that does not exist succeeded"
grep -q "job ${c}_77: no such job" e.txt || fail "cancel ${c}_77: $(cat e.txt)"
echo ok
