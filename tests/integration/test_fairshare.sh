#!/usr/bin/env bash
# Fair share (issue 15): two users in two accounts; once root's account has used the
# cluster, nobody's job, submitted after root's, starts first; `ductile priority` shows
# why; the usage survives a controller restart, a job running meanwhile charged for the
# controller's downtime; the accounts' rules refuse what they
# should (a member of another account, an unknown one, a negative nice from a user).
. "$(dirname "$0")/lib.sh"
up 2 --set PriorityWeightFairshare=1000 --set PriorityCalcPeriod=0 \
  --set PriorityDecayHalfLife=3600 --set PriorityWeightAge=1000 --set PriorityMaxAge=100000
pub_setup

d account add physics --add-user root > /dev/null || fail "account add physics"
d account add chem --add-user nobody --shares 1 > /dev/null || fail "account add chem"
refused "exists already" d account add chem
refused "only operators" as_nobody "$BIN" account add mine
refused "is under" d account modify physics --parent physics
refused "not a member of account physics" sub_nobody -A physics --wrap true
refused "no account 'nope'" sub_root -A nope --wrap true
refused "only operators" sub_nobody --nice=-5 --wrap true
# in the user's words, not the protocol's (the review)
refused "root is the top of the tree" d account add root
refused "an account's name is 1 to 64" d account add aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa
refused "'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa' is not a user name" d account add extra --add-user aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa
refused "account: --max-nodes: '20000000' is not a whole number from 0 (no limit) to 16777216" \
  d account add extra --max-nodes 20000000
refused "account: --max-node-hours: 'x' is not a number of node-hours" \
  d account add extra --max-node-hours x
refused "nobody is not a member of account physics: nothing to remove" \
  d account modify physics --remove-user nobody

# root's account uses the whole cluster for a while
u=$(sub_root -N 2 --wrap "sleep 2")
expect_state "$u" CD 60
[ "$(field "$u" Account)" = physics ] || fail "the default account: $(d show "$u")"

# a blocker, then root's job, then nobody's: nobody's goes first
b=$(sub_root -N 2 wait.sh)
expect_state "$b" R 60
a=$(sub_root -N 2 wait.sh)
n=$(sub_nobody -N 2 wait.sh)
[ -n "$a" ] && [ -n "$n" ] || fail "submissions"
first=$(d priority | awk 'NR == 2 {print $1}')
[ "$first" = "$n" ] || fail "nobody's job is not first by priority: $(d priority)"
d priority | awk -v n="$n" '$1 == n && $3 == "chem" && $6 > 0 {ok = 1} END {exit !ok}' ||
  fail "priority's factors: $(d priority)"
# Slurm's names for them
ln -s "$REAL_BIN" sprio
ln -s "$REAL_BIN" sshare
ln -s "$REAL_BIN" scontrol
on login ./sprio | awk -v n="$n" 'NR == 2 && $1 == n {ok = 1} END {exit !ok}' ||
  fail "sprio: $(on login ./sprio)"
on login ./sshare | grep -q "^chem " || fail "sshare: $(on login ./sshare)"
on login ./scontrol update JobId="$a" Nice=7 > /dev/null || fail "scontrol update Nice"
[ "$(field "$a" Nice)" = 7 ] || fail "Nice=7: $(d show "$a")"
touch "stop.$b"
expect_state "$n" R 60
is_state "$a" PD || fail "root's job started before nobody's: $(d queue)"
touch "stop.$n"
expect_state "$a" R 60
touch "stop.$a"
expect_state "$a" CD 60

# the usage: physics used more than chem, and its factor is lower
usage_of() { d account list --json | python3 -c "
import json, sys
for a in json.load(sys.stdin)['accounts']:
    if a['name'] == sys.argv[1]: print(a['usage'], a['fairshare'])" "$1"; }
read -r pu pf <<< "$(usage_of physics)"
read -r cu cf <<< "$(usage_of chem)"
python3 -c "import sys; p, c, pf, cf = map(float, sys.argv[1:]); sys.exit(not (p > c > 0 and pf < cf))" \
  "$pu" "$cu" "$pf" "$cf" || fail "account list: physics $pu $pf, chem $cu $cf"

# kept across a restart (saved at a stop)
pid=$(cat "$T/c/ctld.pid")
kill -TERM "$pid"
wait_for 20 sh -c "! kill -0 $pid 2> /dev/null" || fail "the controller did not stop"
restart_ctld
wait_for 20 d queue > /dev/null || fail "the controller did not come back"
read -r pu2 pf2 <<< "$(usage_of physics)"
python3 -c "import sys; a, b = map(float, sys.argv[1:]); sys.exit(not (b > 0.9 * a))" "$pu" "$pu2" ||
  fail "usage after a restart: $pu2 (was $pu)"

# a job that runs while the controller is away is charged for that time too (it was
# charged from the restart on: the downtime was lost)
r=$(sub_root -N 2 wait.sh)
expect_state "$r" R 60
read -r pu3 _ <<< "$(usage_of physics)"
pid=$(cat "$T/c/ctld.pid")
kill -TERM "$pid"
wait_for 20 sh -c "! kill -0 $pid 2> /dev/null" || fail "the controller did not stop"
sleep 5 # the controller's downtime, what is measured
restart_ctld
wait_for 20 d queue > /dev/null || fail "the controller did not come back"
read -r pu4 _ <<< "$(usage_of physics)"
python3 -c "import sys; a, b = map(float, sys.argv[1:]); sys.exit(not (b - a >= 2 * 5 * 0.9))" \
  "$pu3" "$pu4" || fail "the downtime was not charged: usage $pu3 before, $pu4 after"
touch "stop.$r"
expect_state "$r" CD 60

# nice: the owner raises it; the job's priority falls by as much
h2=$(sub_nobody -N 2 wait.sh)
expect_state "$h2" R 60
w=$(sub_nobody -N 2 --wrap true)
(cd "$T/pub" && as_nobody "$BIN" update "$w" --nice 300) > /dev/null || fail "update --nice"
refused "only an operator" as_nobody "$BIN" update "$w" --nice=-1
d priority | awk -v w="$w" '$1 == w && $9 == 300 {ok = 1} END {exit !ok}' ||
  fail "nice not shown: $(d priority)"
touch "stop.$h2"

# a held job's age counts from its release (Slurm's eligible time), not its submission
bl=$(sub_root -N 2 wait.sh)
expect_state "$bl" R 60
hj=$(sub_root --hold -N 2 --wrap true)
oj=$(sub_root -N 2 --wrap true)
sleep 2 # the time held, what is measured
d release "$hj" > /dev/null || fail "release"
age_of() { d priority --json | python3 -c "
import json, sys
print([j['age'] for j in json.load(sys.stdin) if j['id'] == int(sys.argv[1])][0])" "$1"; }
wait_for 20 age_of "$hj" || fail "the released job is not in the queue: $(d priority)"
# priorities as of a recalculation after the release: a submission makes a pass
a0=$(age_of "$oj")
sleep 1
dj=$(sub_root -N 2 --wrap true)
grown() { python3 -c "import sys; sys.exit(not float(sys.argv[1]) > float(sys.argv[2]))" "$(age_of "$oj")" "$a0"; }
wait_for 20 grown || fail "no recalculation after the release: $(d priority --json)"
python3 -c "import sys; h, o = map(float, sys.argv[1:]); sys.exit(not h < o)" \
  "$(age_of "$hj")" "$(age_of "$oj")" ||
  fail "the held job aged while held: $(d priority --json)"
touch "stop.$bl"
for x in "$oj" "$hj" "$dj"; do expect_state "$x" CD 60; done

# a member removed from its default account gets another of its accounts as default
d account add extra --add-user root --max-node-hours 0.5 > /dev/null || fail "account add extra"
d account modify physics --remove-user root > /dev/null || fail "remove root from physics"
d account list | grep -q "^extra .* root\*" || fail "root's default after its removal: $(d account list)"
echo "PASS"
