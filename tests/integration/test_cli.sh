#!/usr/bin/env bash
# What users send and see (issue 7, defects 11, 12, 14, 15): scripts are bytes; numbers
# are parsed strictly; names, paths and the working directory are checked at submission
# and escaped when printed; a submission is idempotent (one key per invocation, retried
# with it); every command refuses what it does not use or implements it as a filter;
# a cancel of many jobs is one request with a result per job.
. "$(dirname "$0")/lib.sh"
up 2
cd "$T"
printf '#!/bin/sh\ntrue\n' > plain.sh
jobs_named() { # NAME: how many jobs (queued or finished) carry that name
  { d queue --json; d history --json; } | grep -c "\"name\": \"$1\"" || true
}

# --- 11. a script is bytes: invalid UTF-8 passes unchanged to the node
printf '#!/bin/sh\n# caf\xe9 \xff\xfe \xc3\x28\ncat "$0"\n' > bytes.sh
j=$(submit -o bytes.out bytes.sh 2> e.txt) || true
[ -n "$j" ] || fail "a script with invalid UTF-8 was refused: $(cat e.txt)"
expect_state "$j" CD
cmp bytes.sh bytes.out || fail "the script's bytes changed on their way to the node"

# numbers are parsed strictly: on the command line and in #DUCTILE lines
for t in inf nan 0x10 1e3 -5 ' 5' 5x 1.5.2 '' 10:99 1:2:3:4 99999999999999999999; do
  ! d submit --time="$t" plain.sh > o.txt 2> e.txt || fail "--time='$t' accepted: $(cat o.txt)"
  grep -q -- "--time" e.txt || fail "--time='$t': unclear error: $(cat e.txt)"
  ! grep -q "allocate" e.txt || fail "--time='$t': $(cat e.txt)"
done
for n in 0x2 +2 2.0 ' 2' 0 -1 99999999999999999999; do
  ! d submit -N "$n" plain.sh > o.txt 2> e.txt || fail "-N '$n' accepted: $(cat o.txt)"
  grep -q -- "--nodes" e.txt || fail "-N '$n': unclear error: $(cat e.txt)"
done
printf '#!/bin/sh\n#DUCTILE --time=0x10\ntrue\n' > hex.sh
! d submit hex.sh 2> e.txt || fail "#DUCTILE --time=0x10 accepted"
grep -q "hex.sh:2: --time" e.txt || fail "directive error: $(cat e.txt)"
printf '#!/bin/sh\n#DUCTILE --nodes=0x1\ntrue\n' > hexn.sh
! d submit hexn.sh 2> e.txt || fail "#DUCTILE --nodes=0x1 accepted"
# what is valid stays valid
j=$(submit --time=90 plain.sh); [ "$(field "$j" TimeLimit)" = "1:30:00" ] || fail "--time=90: $(field "$j" TimeLimit)"
j=$(submit --time=1:30 plain.sh); [ "$(field "$j" TimeLimit)" = "1:30" ] || fail "--time=1:30"
j=$(submit --time=2h plain.sh); [ "$(field "$j" TimeLimit)" = "2:00:00" ] || fail "--time=2h"
j=$(submit --time=1-02:03:04 plain.sh); [ "$(field "$j" TimeLimit)" = "1-02:03:04" ] || fail "--time=1-02:03:04"

# names, output paths and the working directory: no control characters
for bad in "$(printf 'a\nb')" "$(printf 'x\033[2Jy')" "$(printf 'tab\there')"; do
  ! d submit -J "$bad" plain.sh > o.txt 2> e.txt || fail "name with a control character accepted"
  grep -q "job name.*control character" e.txt || fail "name: unclear error: $(cat e.txt)"
  ! d submit -o "$bad" plain.sh > o.txt 2> e.txt || fail "output path with a control character accepted"
  grep -q "output.*control character" e.txt || fail "output: unclear error: $(cat e.txt)"
  ! d submit -e "$bad" plain.sh > o.txt 2> e.txt || fail "error path with a control character accepted"
done
mkdir "$(printf 'dir\nx')"
! (cd "$(printf 'dir\nx')" && d submit "$T/plain.sh") > o.txt 2> e.txt || fail "cwd with a newline accepted"
grep -q "working directory.*control character" e.txt || fail "cwd: unclear error: $(cat e.txt)"
# names from elsewhere (an older controller's database) are escaped when printed
jn=$(submit -J rawname plain.sh)
expect_state "$jn" CD
sqlite3 "$T/c/ductile.db" "PRAGMA busy_timeout=5000; UPDATE jobs SET name = 'a' || char(10) || 'b' || char(27) || '[2J' WHERE id = $jn" ||
  fail "cannot edit the database"
d history > h.txt
grep -qF "$(printf '\033')" h.txt && fail "history printed an escape character raw"
grep -qE "^$jn +a\\\\nb\\\\x1b\[2J " h.txt || fail "history does not escape: $(grep -a "^$jn" h.txt)"
d show "$jn" > s.txt
grep -qxF 'Name           a\nb\x1b[2J' s.txt || fail "show does not escape: $(grep -a Name s.txt)"

# --- 12. a submission has a key: a repeat returns the first job's id
a=$(DUCTILE_SUBMIT_KEY=k-test-1 submit -J idem1 plain.sh)
b=$(DUCTILE_SUBMIT_KEY=k-test-1 submit -J idem1 plain.sh)
[ -n "$a" ] && [ "$a" = "$b" ] || fail "the same key made jobs $a and $b"
[ "$(jobs_named idem1)" = 1 ] || fail "the same key made $(jobs_named idem1) jobs"
c=$(DUCTILE_SUBMIT_KEY=k-test-2 submit -J idem1 plain.sh)
[ "$c" != "$a" ] || fail "another key returned the same job"
! DUCTILE_SUBMIT_KEY='bad key' d submit plain.sh 2> e.txt || fail "a malformed key was accepted"
# keys are per user: another user's key never returns (or reveals) someone else's job
mkdir -m 777 pub && cp plain.sh pub/
jo=$(cd pub && DUCTILE_SUBMIT_KEY=k-test-1 setpriv --reuid=nobody --regid=nogroup --clear-groups -- \
  "$BIN" submit -J idem1 plain.sh | awk '{print $3}')
[ -n "$jo" ] && [ "$jo" != "$a" ] || fail "nobody's key k-test-1 returned root's job $a"
# the reply is lost after the controller committed the job: the retry gets the same job
DUCTILE_TEST_DROP_REPLY=1 d submit -J dropped plain.sh > o.txt 2> e.txt || fail "retry failed: $(cat e.txt)"
grep -q "^Submitted job" o.txt || fail "retry: $(cat o.txt)"
wait_for 10 test "$(jobs_named dropped)" = 1 || true
[ "$(jobs_named dropped)" = 1 ] || fail "a retried submission made $(jobs_named dropped) jobs"

# --- 14. commands refuse what they do not use
! d queue 31 2> e.txt || fail "queue 31 accepted"
grep -q "unexpected argument '31'" e.txt || fail "queue 31: $(cat e.txt)"
! d queue --limit 3 2> e.txt || fail "queue --limit accepted"
! d queue --reason x 2> e.txt || fail "queue --reason accepted"
! d show 1 --state R 2> e.txt || fail "show --state accepted"
! d nodes --limit 3 2> e.txt || fail "nodes --limit accepted"
! d nodes n1 n2 2> e.txt || fail "nodes n1 n2 accepted"
! d history --nodes 3 2> e.txt || fail "history --nodes accepted"
! d history --reason x 2> e.txt || fail "history --reason accepted"
! d drain n1 --state PD 2> e.txt || fail "drain --state accepted"
! d resize 1 --user root 2> e.txt || fail "resize --user accepted"
! d cancel --limit 3 1 2> e.txt || fail "cancel --limit accepted"
! d cancel 2> e.txt || fail "cancel without ids nor filters accepted"
# ... or use them as filters
d nodes n1 > n.txt
[ "$(grep -c '^n[0-9]' n.txt)" = 1 ] && grep -q '^n1 ' n.txt || fail "nodes n1: $(cat n.txt)"
d nodes 'n[1-2]' > n.txt
[ "$(grep -c '^n[0-9]' n.txt)" = 2 ] || fail "nodes n[1-2]: $(cat n.txt)"
! d nodes n9 2> e.txt || fail "nodes n9 (unknown) accepted"
expect_state "$j" CD
d history "$j" --json > h.txt
[ "$(grep -c '"id":' h.txt)" = 1 ] && grep -q "\"id\": $j," h.txt || fail "history $j: $(cat h.txt)"
d history "$j" > h.txt
[ "$(grep -c '^[0-9]' h.txt)" = 1 ] || fail "history $j (table): $(cat h.txt)"

printf '#!/bin/sh\nsleep 60\n' > long.sh
r=$(submit -N 1 -t 10 -J running long.sh)
expect_state "$r" R
p1=$(submit -N 2 -J waiting long.sh)   # waits for both nodes
p2=$(submit -N 1 -J small long.sh)     # no limit: may not backfill before p1
p3=$(submit -N 1 -J small long.sh)
p4=$(submit -N 1 -J small long.sh)
expect_state "$p1" PD
d queue -j "$r,$p2" --json > q.txt
[ "$(grep -c '"id":' q.txt)" = 2 ] && grep -q "\"id\": $r," q.txt && grep -q "\"id\": $p2," q.txt ||
  fail "queue -j: $(cat q.txt)"
! d queue -j 1x 2> e.txt || fail "queue -j 1x accepted"
# cancel --state PD of a running job leaves it alone
d cancel --state PD "$r" > c.txt 2>&1 || fail "cancel --state PD: $(cat c.txt)"
is_state "$r" R || fail "cancel --state PD cancelled running job $r"
grep -q "$r" c.txt || fail "cancel does not say why $r was left: $(cat c.txt)"
# nobody may not cancel root's jobs with a filter, nor name another user
! setpriv --reuid=nobody --regid=nogroup --clear-groups -- "$BIN" cancel --user root 2> e.txt ||
  fail "nobody cancelled root's jobs"
grep -q "permission denied" e.txt || fail "cancel --user root by nobody: $(cat e.txt)"
setpriv --reuid=nobody --regid=nogroup --clear-groups -- "$BIN" cancel --name small > /dev/null 2>&1 || true
is_state "$p2" PD || fail "nobody's cancel --name small reached root's job"

# --- 15. a cancel of many jobs is one request: nothing starts in between
d cancel "$p1" "$p2" "$p3" "$p4" 99999 "$jn" > c.txt 2>&1 && fail "cancel with an unknown job returned 0"
for p in "$p1" "$p2" "$p3" "$p4"; do
  expect_state "$p" CA
  [ "$(field "$p" StartTime)" = - ] || fail "job $p started before it was cancelled"
  [ ! -e "ductile-$p.out" ] || fail "job $p created its output before it was cancelled"
done
grep -q "99999.*no such job" c.txt || fail "no per-job result for 99999: $(cat c.txt)"
grep -q "$jn.*already ended" c.txt || fail "no per-job result for $jn: $(cat c.txt)"
d cancel --json "$r" "$p1" > c.txt || true
grep -q "\"result\": \"cancelled\"" c.txt && grep -q "\"result\": \"already ended\"" c.txt ||
  fail "cancel --json: $(cat c.txt)"
expect_state "$r" CA
# a filter without ids: the caller's matching jobs
f1=$(submit -N 2 -J farm long.sh); f2=$(submit -N 2 -J farm long.sh); g=$(submit -N 2 -J other long.sh)
expect_state "$f1" R
d cancel --name farm --state PD > /dev/null || fail "cancel --name farm --state PD"
expect_state "$f2" CA
is_state "$f1" R || fail "cancel --name farm --state PD reached running job $f1"
d cancel --name farm > /dev/null || fail "cancel --name farm"
expect_state "$f1" CA
is_state "$g" R || is_state "$g" PD || fail "cancel --name farm reached job $g"
d cancel "$g"
echo "ok"
