#!/usr/bin/env bash
# queue's chosen columns (issue 14, "a Slurm user at home"): --format with squeue -O's
# names and FIELD:WIDTH, --sort as squeue -S (letters, names, '-' descending),
# --parsable and --noheader; squeue -o's letters with their widths, -O and -S through
# the Slurm commands; a pending array's folded line in all of them; errors naming the
# unknown field, key or letter.
. "$(dirname "$0")/lib.sh"
up 3
cd "$T"
# squeue as the user types it: `ductile` under that name (on the login host in the
# emulated hosts' mode, as test_slurm_scripts.sh does)
mkdir realbin
ln -s "$REAL_BIN" realbin/squeue
if [ "$HOSTS" = 1 ]; then
  printf '#!/bin/sh\nexec nsenter -t "$(cat %s/login.pid)" -m -n -u -- /bin/sh -c '"'"'cd "$0" && exec "$@"'"'"' "$PWD" %s "$@"\n' \
    "$HOSTS_DIR" "$T/realbin/squeue" > squeue
  chmod 755 squeue
else
  ln -s "$REAL_BIN" squeue
fi
sq() { "$T/squeue" "$@"; }
cluster=$(awk '$1 == "ClusterName" {print $3}' "$DUCTILE_CONF")
cpn=$(awk '$1 == "CoresPerNode" {print $3}' "$DUCTILE_CONF")

# j1 runs on 2 nodes, j2 (3 nodes) waits for it, j3 is held, j4 is held and moldable;
# the array's first element runs on the third node, the others wait on one line
j1=$(submit -N 2 -J long --wrap 'sleep 300')
expect_state "$j1" R
j2=$(submit -N 3 -J big -t 10 --wrap true)
j3=$(submit --hold -J held --wrap true)
j4=$(submit --hold -N 1-2 -J mold --wrap true)
a=$(d submit --parsable --array=1-3 -J arr --wrap 'sleep 300')
wait_for 20 sh -c "\"$BIN\" queue | grep -q '^${a}_1 .* R '" || fail "queue: $(d queue)"
u=$(d queue -j "$j3" --format User --noheader)
[ -n "$u" ] || fail "no user: $(d queue)"

# --- --format: names (any case), headers as squeue -O prints them
d queue --format JobID,name,State,Reason,Type,NumNodes > q.txt
grep -qx "JOBID *NAME *STATE *REASON *TYPE *NODES" q.txt || fail "header: $(cat q.txt)"
grep -qE "^$j1 +long +RUNNING +None +rigid +2$" q.txt || fail "running: $(cat q.txt)"
grep -qE "^$j3 +held +PENDING +JobHeldUser +rigid +1$" q.txt || fail "held: $(cat q.txt)"
grep -qE "^$j4 +mold +PENDING +JobHeldUser +moldable " q.txt || fail "moldable: $(cat q.txt)"
grep -qE "^${a}_\[2-3\] +arr +PENDING " q.txt || fail "the folded line: $(cat q.txt)"
# --parsable: |-separated as sacct -P, with and without the header
[ "$(d queue -j "$j3" --format JobID,StateCompact,Reason --parsable)" = \
  "$(printf 'JOBID|ST|REASON|\n%s|PD|JobHeldUser|' "$j3")" ] ||
  fail "--parsable: $(d queue -j "$j3" --format JobID,StateCompact,Reason --parsable)"
[ "$(d queue -j "$j2" --format JobID,TimeLimit,TimeLeft,StartTime --parsable --noheader)" = \
  "$j2|10:00|10:00|N/A|" ] || fail "limits: $(d queue -j "$j2" --format JobID,TimeLimit,TimeLeft,StartTime --parsable --noheader)"
d queue -j "$j1" --format StartTime,TimeLimit --noheader |
  grep -qE '^20[0-9]{2}-[0-9]{2}-[0-9]{2}T[0-9:]{8}  UNLIMITED$' ||
  fail "start time: $(d queue -j "$j1" --format StartTime,TimeLimit --noheader)"
# FIELD:WIDTH cuts and pads; FIELD:.WIDTH right-justifies
[ "$(d queue -j "$j1" --format JobID:.6,Name:3,NumNodes --noheader)" = \
  "$(printf '%6s  lon  2' "$j1")" ] || fail "widths: $(d queue -j "$j1" --format JobID:.6,Name:3,NumNodes --noheader)"
[ "$(d queue -j "$j2" --format Name:6,NumNodes)" = "$(printf 'NAME    NODES\nbig     3')" ] ||
  fail "padding: $(d queue -j "$j2" --format Name:6,NumNodes)"
# the array's folded line: its id, and its pending elements as ArrayTaskID
[ "$(d queue -j "$a" --format JobID,ArrayJobID,ArrayTaskID --parsable --noheader)" = \
  "$(printf '%s_1|%s|1|\n%s_[2-3]|%s|[2-3]|' "$a" "$a" "$a" "$a")" ] ||
  fail "array: $(d queue -j "$a" --format JobID,ArrayJobID,ArrayTaskID --parsable --noheader)"

# --- --sort: the default is by id; letters and names, '-' descending, ties kept in order
ids() { d queue --noheader --format JobID "$@" | tr '\n' ' '; }
[ "$(ids)" = "$j1 $j2 $j3 $j4 ${a}_1 ${a}_[2-3] " ] || fail "default order: $(ids)"
[ "$(ids --sort=-t,i)" = "$j1 ${a}_1 $j2 $j3 $j4 ${a}_[2-3] " ] || fail "-t,i: $(ids --sort=-t,i)"
[ "$(ids --sort=State,-JobID)" = "${a}_[2-3] $j4 $j3 $j2 ${a}_1 $j1 " ] ||
  fail "State,-JobID: $(ids --sort=State,-JobID)"
[ "$(ids --sort=-D)" = "$j2 $j1 $j4 $j3 ${a}_1 ${a}_[2-3] " ] || fail "-D: $(ids --sort=-D)"
# the usual table, sorted: the same columns as without --sort
# (twice in a row alike: a running job's TIME may turn between the two commands)
same_table() { [ "$(d queue --sort i)" = "$(d queue)" ]; }
wait_for 10 same_table || fail "--sort i changed the table: $(d queue --sort i; d queue)"

# --- squeue -o: Slurm's letters, widths and text between them
[ "$(sq -h -j "$j3" -o "%.18i %.9P %.8j %.8u %.2t %.10M %.6D %R")" = \
  "$(printf '%18s %9.9s %8s %8.8s %2s %10s %6s %s' "$j3" "$cluster" held "$u" PD 0:00 1 '(JobHeldUser)')" ] ||
  fail "squeue -o: $(sq -h -j "$j3" -o "%.18i %.9P %.8j %.8u %.2t %.10M %.6D %R")"
sq -j "$j3" -o "%i %-6j|%T" | head -1 | grep -qx "JOBID NAME  |STATE" ||
  fail "squeue -o header: $(sq -j "$j3" -o "%i %-6j|%T")"
[ "$(sq -h -j "$j2" -o "%A:%l:%L:%C:%r:%S:%%")" = "$j2:10:00:10:00:$((3 * ${cpn:-1})):Resources:N/A:%" ] ||
  fail "squeue -o letters: $(sq -h -j "$j2" -o "%A:%l:%L:%C:%r:%S:%%")"
[ "$(sq -h -j "$a" -o "%i %A %F %K %a")" = \
  "$(printf '%s_1 %s %s 1 N/A\n%s_[2-3] %s %s [2-3] N/A' "$a" "$a" "$a" "$a" $((a + 1)) "$a")" ] ||
  fail "squeue -o on an array: $(sq -h -j "$a" -o "%i %A %F %K %a")"
# -O (names, FIELD:WIDTH) and -S
[ "$(sq -h -O JobID:8,StateCompact -S -D,i -j "$j1,$j2")" = "$(printf '%-8s  PD\n%-8s  R' "$j2" "$j1")" ] ||
  fail "squeue -O -S: $(sq -h -O JobID:8,StateCompact -S -D,i -j "$j1,$j2")"
[ "$(sq -h -o %i --sort=-i -j "$j1,$j2")" = "$(printf '%s\n%s' "$j2" "$j1")" ] ||
  fail "squeue --sort: $(sq -h -o %i --sort=-i -j "$j1,$j2")"

# --- a name with letters of two bytes: cut at 20 characters, not inside one (cut at 20
# bytes inside 'ä', the reply could not be encoded and every queue that listed it hung)
uj=$(submit --hold -J 'relax-Ångström-öäü-2x' --wrap true)
LC_ALL=C.UTF-8 timeout 20 "$BIN" queue > uq.txt || fail "queue with a non-ASCII name: $(cat uq.txt)"
grep -qE "^$uj +relax-Ångström-öäü-2 +$u +PD " uq.txt || fail "non-ASCII name: $(cat uq.txt)"
# the columns stay aligned (counted in characters): USER starts where it does on j2's line
w_u=$(LC_ALL=C.UTF-8 grep "^$uj " uq.txt | sed "s/ $u .*//" | wc -m)
w_2=$(LC_ALL=C.UTF-8 grep "^$j2 " uq.txt | sed "s/ $u .*//" | wc -m)
[ "$w_u" = "$w_2" ] || fail "columns after a non-ASCII name: $w_u, $w_2 characters: $(cat uq.txt)"
[ "$(LC_ALL=C.UTF-8 sq -h -j "$uj" -o '%.8j|%-21j|')" = "relax-Ån|relax-Ångström-öäü-2x|" ] ||
  fail "squeue -o widths: $(sq -h -j "$uj" -o '%.8j|%-21j|')"
d queue -j "$uj" --json | grep -q 'relax-Ångström-öäü-2x' || fail "queue --json: $(d queue -j "$uj" --json)"
d cancel "$uj" > /dev/null

# --- errors name what is wrong, and what is right
refused "queue: --format: 'Bogus' is not a field (JobID, .*Reason" d queue --format JobID,Bogus
refused "queue: --sort: 'Bogus' is not a sort key" d queue --sort=i,-Bogus
refused "queue: --sort: 'x' is not a sort key (.*squeue's letters: i, " d queue --sort x
refused "the width after ':' must be a number" d queue --format JobID:wide
refused "squeue: -o: '%Z' is not a field letter (%i %A" sq -o "%i %Z"
refused "squeue: -O: 'Bogus' is not a field" sq -O Bogus
refused "squeue: -S: 'Z' is not a sort key" sq -S Z
refused "no --format or --parsable with it" d queue --json --format JobID
d cancel "$j1" "$j2" "$j3" "$j4" "$a" > /dev/null
echo ok
