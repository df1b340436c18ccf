#!/usr/bin/env bash
# ductile update and scontrol update (issue 14): a job's owner lowers its time limit,
# only an operator raises it; a waiting job's name and size change; a running job's new
# limit goes to the node that runs its script and is kept when that node's daemon
# restarts, as is a --signal warning.
. "$(dirname "$0")/lib.sh"
up 2
cd "$T"
chmod 755 "$T"

# --- a waiting job of another user's: what its owner may and may not change
p=$(as_nobody "$BIN" submit --parsable -H -t 10 -D / -o /dev/null --wrap true) ||
  fail "nobody's submission: $p"
as_nobody "$BIN" update "$p" -t 5 > out.txt || fail "the owner lowers the limit: $(cat out.txt)"
grep -q "time limit 5:00$" out.txt || fail "update said: $(cat out.txt)"
[ "$(field "$p" TimeLimit)" = 5:00 ] || fail "show: $(field "$p" TimeLimit)"
refused "only an operator may raise a time limit" as_nobody "$BIN" update "$p" -t 20
refused "only an operator may raise a time limit" as_nobody "$BIN" update "$p" -t UNLIMITED
d update "$p" -t 30 > /dev/null || fail "an operator raises the limit"
[ "$(field "$p" TimeLimit)" = 30:00 ] || fail "show: $(field "$p" TimeLimit)"
as_nobody "$BIN" update "$p" -J renamed -N 2 > /dev/null || fail "name and size"
[ "$(field "$p" Name)" = renamed ] || fail "name: $(field "$p" Name)"
field "$p" Nodes | grep -q "^2 (requested 2" || fail "size: $(field "$p" Nodes)"
refused "needs at least 3 nodes" as_nobody "$BIN" update "$p" -N 3
field "$p" Nodes | grep -q "^2 (requested 2" || fail "a refused size changed it: $(field "$p" Nodes)"
refused "rigid" d update "$p" -N 1-2
refused "permission denied" as_nobody "$BIN" update "$(submit -H --wrap true)" -t 1
refused "nothing to change" d update "$p"
refused "does not exist" d update 99999 -t 1
refused "not a duration" d update "$p" -t soon
# Slurm's spelling, through the scontrol command
ln -s "$REAL_BIN" scontrol
on login ./scontrol update JobId="$p" TimeLimit=7 JobName=slurmname > /dev/null ||
  fail "scontrol update"
[ "$(field "$p" TimeLimit)" = 7:00 ] && [ "$(field "$p" Name)" = slurmname ] ||
  fail "scontrol update: $(d show "$p")"
refused "not supported" on login ./scontrol update JobId="$p" Partition=debug
# on disk: a controller restart keeps every change
pid=$(cat "$T/c/ctld.pid")
kill -9 "$pid"
wait_for 10 sh -c "! kill -0 $pid 2> /dev/null" || fail "the controller did not die"
restart_ctld
wait_for 20 d queue > /dev/null || fail "the controller did not come back"
[ "$(field "$p" TimeLimit)" = 7:00 ] && [ "$(field "$p" Name)" = slurmname ] &&
  field "$p" Nodes | grep -q "^2 (requested 2" || fail "after a restart: $(d show "$p")"
# scancel --me: the controller says who "me" is, not $USER (which said someone else)
ln -s "$REAL_BIN" scancel
h=$(d submit --parsable -H --wrap true)
USER=somebody-else on login ./scancel --me > /dev/null || fail "scancel --me"
expect_state "$h" CA
[ "$(state "$p")" = PD ] || fail "scancel --me cancelled nobody's job $p" # (synchronous)
d cancel "$p" > /dev/null

# --- an array's id: every element, as scontrol and sacct take it
a=$(d submit --parsable -H -a 1-3 -t 10 --wrap true)
d update "$a" -t 4 > out.txt || fail "update of an array"
grep -q "Array $a updated (3 elements)" out.txt || fail "update of an array said: $(cat out.txt)"
for e in 1 2 3; do
  [ "$(field "${a}_$e" TimeLimit)" = 4:00 ] || fail "element $e: $(field "${a}_$e" TimeLimit)"
done
d update "${a}_2" -t 3 > /dev/null
[ "$(field "${a}_2" TimeLimit)" = 3:00 ] && [ "$(field "${a}_3" TimeLimit)" = 4:00 ] ||
  fail "an element's update"
d cancel "$a" > /dev/null
ln -s "$REAL_BIN" sacct
[ "$(on login ./sacct -X -P -n -j "$a" --format JobID | tr '\n' ' ')" = "${a}_1| ${a}_2| ${a}_3| " ] ||
  fail "sacct -j ARRAY: $(on login ./sacct -X -P -n -j "$a" --format JobID)"

# --- a running job's limit lowered: it times out by the new one
j=$(d submit --parsable -t 10 --wrap 'sleep 300')
expect_state "$j" R
d update "$j" -t 0:02 > /dev/null || fail "lowering a running job's limit"
expect_state "$j" TO 30

# --- raised: it runs past its first limit, also when the node daemon that enforces it
# restarts in between (the limit and its --signal warning are on the node's record)
cat > long.sh <<'EOS'
#!/bin/sh
start=$(date +%s)
trap 'echo $(( $(date +%s) - start )) > warned' USR1
i=0; while [ $i -lt 150 ] && [ ! -e stop ]; do sleep 0.2; i=$((i + 1)); done
EOS
chmod 755 long.sh
j=$(d submit --parsable -t 0:12 --signal=B:USR1@3 long.sh) # warned at 9 s
expect_state "$j" R
d update "$j" -t 0:24 > /dev/null || fail "raising a running job's limit" # now at 21 s
node=$(field "$j" NodeList)
pid=$(cat "$T/c/noded-$node.pid")
kill -9 "$pid"
wait_for 10 sh -c "! kill -0 $pid 2> /dev/null" || fail "the node daemon did not die"
restart_noded "$node"
wait_for 40 test -s warned || fail "no warning: $(d show "$j")"
[ "$(cat warned)" -ge 15 ] || fail "warned $(cat warned) s in: by the old limit"
[ "$(state "$j")" = R ] || fail "job $j is $(state "$j") once warned, not R (its old limit was 12 s)"
touch stop
expect_state "$j" CD 20
echo ok
