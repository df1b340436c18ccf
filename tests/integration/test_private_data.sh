#!/usr/bin/env bash
# PrivateData (Slurm's; docs/security.md, "What users see of each other"). With jobs,usage,accounts, nobody sees
# only their own jobs (queue, squeue, show, scontrol show job, history, sacct, priority,
# sprio), their own usage and the accounts they belong to (account list, sshare); a
# hidden job is answered as one that does not exist; the nodes' states and the counts
# stay public; root and the users of Operators see everything. Without it (reconfigure:
# it changes at run time) everything is visible again, as before.
. "$(dirname "$0")/lib.sh"
up 2 --set PrivateData=jobs,usage,accounts --set PriorityWeightFairshare=1000 \
  --set PriorityCalcPeriod=0
pub_setup
for s in squeue scontrol sacct sprio sshare; do ln -s "$REAL_BIN" "$T/pub/$s"; done
nb() { as_nobody "$BIN" "$@"; }    # ductile, as nobody
nbs() { as_nobody "$T/pub/$@"; }   # a Slurm command, as nobody
has() { grep -qw -- "$1" <<< "$2"; } # WORD TEXT

d account add physics --add-user root > /dev/null || fail "account add physics"
d account add chem --add-user nobody > /dev/null || fail "account add chem"
# root: a job that ended, one running on both nodes, one waiting; nobody: one waiting
f=$(sub_root -J rootdone --wrap true)
expect_state "$f" CD
r=$(sub_root -N 2 -J rootrun wait.sh)
expect_state "$r" R
p=$(sub_root -J rootwait --wrap true)
n=$(sub_nobody -J nobodywait --wrap true)
o=$(sub_nobody -J nobodydone --hold --wrap true) # ended by its owner: in history
nb cancel "$o" > /dev/null || fail "nobody cancels their own"
expect_state "$o" CA

# nobody: their own jobs, nothing of root's
out=$(nb queue)
has nobodywait "$out" && ! has root "$out" || fail "queue as nobody: $out"
out=$(nb queue --json)
[ "$(jq -c '[.[].id]' <<< "$out")" = "[$n]" ] || fail "queue --json as nobody: $out"
[ "$(nb queue -u root --noheader)" = "" ] || fail "queue -u root as nobody: $(nb queue -u root)"
[ "$(nb queue -j "$r" --noheader)" = "" ] || fail "queue -j $r as nobody"
out=$(nbs squeue)
has nobodywait "$out" && ! has root "$out" || fail "squeue as nobody: $out"
# another's job as one that does not exist (Slurm: Invalid job id specified)
refused "job $r does not exist" nb show "$r"
refused "job $f does not exist" nb show "$f"
refused "job $r does not exist" nbs scontrol show job "$r"
nb show "$n" | grep -q nobodywait || fail "show of nobody's own job: $(nb show "$n")"
# acting on it says no, without naming its owner
refused "belongs to another user" nb update "$p" --nice 5
out=$(nb history --running)
has nobodydone "$out" && has nobodywait "$out" && ! has root "$out" || fail "history as nobody: $out"
[ "$(nb history "$f" "$r" --noheader)" = "" ] || fail "history of root's jobs as nobody"
[ "$(nb history -u root --running --noheader)" = "" ] || fail "history -u root as nobody"
out=$(nbs sacct)
has nobodydone "$out" && ! has root "$out" || fail "sacct as nobody: $out"
out=$(nb priority)
has "$n" "$out" && ! has root "$out" || fail "priority as nobody: $out"
out=$(nbs sprio)
has "$n" "$out" && ! has "$p" "$out" || fail "sprio as nobody: $out"
# their own account and usage; not physics, not root's
out=$(nb account list)
has chem "$out" && ! has physics "$out" || fail "account list as nobody: $out"
grep -q "not shown, PrivateData = usage,accounts" <<< "$out" || fail "no note of what is hidden: $out"
out=$(nb account list --json)
[ "$(jq -c '[.associations[].user]' <<< "$out")" = '["nobody"]' ] || fail "associations: $out"
[ "$(jq -c '.accounts[0] | has("usage")' <<< "$out")" = false ] || fail "an account's usage: $out"
out=$(nbs sshare)
has chem "$out" && ! has physics "$out" || fail "sshare as nobody: $out"
# public: the nodes' states and the counts
nb nodes | grep -q "2 allocated" || fail "nodes as nobody: $(nb nodes)"
nb cluster status | grep -q "3 jobs (2 pending)" || fail "status as nobody: $(nb cluster status)"

# root, an operator, sees everything
out=$(d queue)
for w in rootrun rootwait nobodywait; do has "$w" "$out" || fail "queue as root: $out"; done
d show "$n" > /dev/null || fail "show of nobody's job as root"
out=$(d history --running)
for w in rootdone nobodydone rootrun; do has "$w" "$out" || fail "history as root: $out"; done
out=$(d account list)
has physics "$out" && has chem "$out" || fail "account list as root: $out"
d priority | grep -qw "$p" || fail "priority as root: $(d priority)"

# an operator of Operators, as root: everything (Operators and PrivateData change at
# run time)
echo "Operators = nobody" >> "$DUCTILE_CONF"
d reconfigure | grep -qx "now in effect: Operators" || fail "reconfigure: $(d reconfigure)"
has rootrun "$(nb queue)" || fail "queue as nobody, an operator: $(nb queue)"
nb show "$f" | grep -q rootdone || fail "show as nobody, an operator"
sed -i '/^Operators/d' "$DUCTILE_CONF"

# without PrivateData all is visible, as before
sed -i '/^PrivateData/d' "$DUCTILE_CONF"
d reconfigure | grep -qx "now in effect: Operators, PrivateData" ||
  fail "reconfigure: $(d reconfigure)"
has rootrun "$(nb queue)" || fail "queue as nobody without PrivateData: $(nb queue)"
nb show "$r" | grep -q rootrun || fail "show as nobody without PrivateData"
has rootdone "$(nb history)" || fail "history as nobody without PrivateData"
out=$(nb account list --json)
[ "$(jq -c '.accounts | map(has("usage")) | all' <<< "$out")" = true ] &&
  [ "$(jq '.associations | length' <<< "$out")" -ge 2 ] || fail "account list: $out"
d priority --json | jq -e ".[] | select(.id == $p) | .fairshare" > /dev/null ||
  fail "priority: $(d priority --json)"
nb priority --json | jq -e ".[] | select(.id == $p) | .priority" > /dev/null ||
  fail "priority as nobody without PrivateData: $(nb priority --json)"
refused "belongs to root" nb update "$p" --nice 5
touch "stop.$r"
echo "PASS"
