#!/usr/bin/env bash
# Partitions (issue 15): a partition's default time limit lets a job without --time
# backfill (the same job in a partition without one waits); a job runs only on its
# partitions' nodes; a DOWN partition's jobs wait (PartitionDown); MaxNodes, MaxTime,
# AllowAccounts and unknown names are refused in words; the tier counts in the
# priority; queue -p; an operator's change of a partition's state, kept across a restart.
. "$(dirname "$0")/lib.sh"
up 4 --set PriorityWeightPartition=1000 --set PriorityCalcPeriod=0 \
  --set "Partition=batch Nodes=n[1-4] MaxTime=1-0 PriorityTier=2 Default=YES" \
  --set "Partition=short Nodes=n[3-4] DefaultTime=1 MaxTime=30 MaxNodes=2" \
  --set "Partition=nodefault Nodes=n[3-4]" \
  --set "Partition=closed Nodes=n4 State=DOWN" \
  --set "Partition=chem Nodes=n[1-4] AllowAccounts=chem"
pub_setup
d partitions | grep -q "^short .* 0:01:00 .* 0:30:00 .* 2 " || fail "partitions: $(d partitions)"

# B holds n[1-2] for 10 minutes by its estimate; H, all four nodes, reserves after it
b=$(sub_root -N 2 -t 10:00 wait.sh)
expect_state "$b" R 60
[ "$(field "$b" Partition)" = batch ] || fail "the default partition: $(d show "$b")"
h=$(sub_root -N 4 -t 10:00 wait.sh)
# no --time: in short it gets DefaultTime (1 minute) and backfills on n[3-4] before H's
# reservation; in nodefault it has no limit and waits behind H
s=$(sub_root -p short -N 1 wait.sh)
expect_state "$s" R 60
[ "$(field "$s" TimeLimit)" = 1:00 ] || fail "DefaultTime: $(d show "$s")"
case "$(field "$s" NodeList)" in n3 | n4) ;; *) fail "short ran outside n[3-4]: $(d show "$s")" ;; esac
u=$(sub_root -p nodefault -N 1 wait.sh)
wait_for 10 sh -c "\"$BIN\" show $u | grep -q '^Reason .*Resources\|^Reason .*Priority'" ||
  fail "nodefault: $(d show "$u")"
is_state "$u" PD || fail "a job without a time limit backfilled: $(d show "$u")"
is_state "$h" PD || fail "H started: $(d queue)"

# a DOWN partition's jobs wait
x=$(sub_root -p closed -N 1 --wrap true)
wait_for 10 sh -c "[ \"\$(\"$BIN\" show $x | awk '/^Reason/ {print \$2}')\" = PartitionDown ]" ||
  fail "closed: $(d show "$x")"

# refusals, in words
refused "partition short takes jobs of 2 nodes at most (MaxNodes); this one needs 3" \
  sub_root -p short -N 3 --wrap true
refused "partition short takes time limits up to 0:30:00 (MaxTime); this job asks for 1:00:00" \
  sub_root -p short -t 1:00:00 --wrap true
refused "there is no partition 'nope'" sub_root -p nope --wrap true
refused "partition chem is for the accounts chem" sub_nobody -p chem --wrap true
# several: the first that takes it
m=$(sub_root -p short,batch -N 3 -t 5 --wrap true)
[ "$(field "$m" Partition)" = batch ] || fail "short,batch with 3 nodes: $(d show "$m")"

# queue -p (squeue -p): the jobs of those partitions, a running one in the one it runs in
ids() { d queue --noheader --format JobID "$@" | tr -d ' ' | sort | tr '\n' ' '; }
[ "$(ids -p short)" = "$s " ] || fail "queue -p short: $(ids -p short)"
[ "$(ids -p closed,nodefault)" = "$(printf '%s\n' "$u" "$x" | sort | tr '\n' ' ')" ] ||
  fail "queue -p closed,nodefault: $(ids -p closed,nodefault)"
in_batch=" $(ids --partition batch)"
case "$in_batch" in *" $b "*) ;; *) fail "queue -p batch: $in_batch" ;; esac
case "$in_batch" in *" $h "*) ;; *) fail "queue -p batch: $in_batch" ;; esac
case "$in_batch" in *" $s "* | *" $x "*) fail "queue -p batch lists others: $in_batch" ;; esac
refused "'nope' is not a partition ('ductile partitions' lists them)" d queue -p nope

# the tier in the priority: batch's jobs (tier 2) above short's (tier 0)
d priority | awk -v h="$h" '$1 == h && $8 == 1000 {ok = 1} END {exit !ok}' ||
  fail "the tier's factor: $(d priority)"
touch "stop.$b" "stop.$h" "stop.$s" "stop.$u"
for j in "$b" "$h" "$s" "$u"; do expect_state "$j" CD 60; done

# a partition's state changed by an operator: its waiting jobs start (UP) or wait
# (DOWN), and the change outlives a restart of the controller
refused "only operators change a partition's state" as_nobody "$BIN" partitions update closed --state UP
refused "a partition's state is UP, DOWN, DRAIN or INACTIVE" d partitions update closed --state OPEN
refused "'nope' is not a partition" d partitions update nope --state UP
[ "$(d partitions update closed --state UP)" = "Partition closed is UP" ] || fail "update closed"
expect_state "$x" CD 60
d partitions update short --state DOWN > /dev/null || fail "update short DOWN"
y=$(sub_root -p short -N 1 --wrap true)
wait_for 10 sh -c "[ \"\$(\"$BIN\" show $y | awk '/^Reason/ {print \$2}')\" = PartitionDown ]" ||
  fail "short DOWN: $(d show "$y")"
pid=$(cat "$T/c/ctld.pid")
kill -TERM "$pid"
wait_for 20 sh -c "! kill -0 $pid 2> /dev/null" || fail "the controller did not stop"
restart_ctld
wait_for 20 d queue > /dev/null || fail "the controller did not come back"
d partitions | grep -q "^short .* DOWN " || fail "short's state after a restart: $(d partitions)"
is_state "$y" PD || fail "short's job ran while it was DOWN: $(d show "$y")"
ln -s "$REAL_BIN" scontrol
on login ./scontrol update PartitionName=short State=UP > /dev/null || fail "scontrol update PartitionName"
expect_state "$y" CD 60
echo PASS
