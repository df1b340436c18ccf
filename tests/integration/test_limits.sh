#!/usr/bin/env bash
# Limits per user and per account (issue 15): a user's second job waits while their
# first runs (JobsLimit, said in words by show), another user's job behind it starts;
# an account's node limit holds a job that would pass it; a job no limit would ever
# let start, or one past the number of jobs a user may queue, is refused at once.
. "$(dirname "$0")/lib.sh"
up 4
pub_setup

d account add team --add-user root,nobody --max-nodes 3 > /dev/null || fail "account add"
d account user root --max-running 1 --max-submit 2 > /dev/null || fail "account user"
refused "only operators" as_nobody "$BIN" account user nobody --max-running 9
d account list | grep -q "^team .*nodes=3" || fail "limits not listed: $(d account list)"

a=$(sub_root -N 1 wait.sh)
expect_state "$a" R 60
b=$(sub_root -N 1 wait.sh)    # root may run one job at a time
c=$(sub_nobody -N 2 wait.sh)  # the account: 1 + 2 = 3 nodes
expect_state "$c" R 60
is_state "$b" PD || fail "root's second job runs: $(d queue)"
[ "$(field "$b" Reason)" = JobsLimit ] || fail "reason: $(d show "$b")"
field "$b" Limit | grep -q "user root may run 1 job at once" || fail "limit: $(d show "$b")"
e=$(sub_nobody -N 1 wait.sh)  # 4 nodes held would pass the account's 3
wait_for 10 sh -c "[ \"\$(\"$BIN\" show $e | awk '/^Reason/ {print \$2}')\" = NodesLimit ]" ||
  fail "account limit: $(d show "$e")"
field "$e" Limit | grep -q "account team may hold 3 nodes at once" || fail "$(d show "$e")"
# refused at once: more nodes than the account may ever hold; a fourth job of root's
refused "needs at least 4 nodes but account team may hold at most 3" sub_root -N 4 --wrap true
refused "user root has 2 jobs queued or running and may have at most 2" sub_root --wrap true
# the first ends: root's second starts; nobody's waits for nodes of the account
touch "stop.$a"
expect_state "$b" R 60
is_state "$e" PD || fail "nobody's job passed the account's limit: $(d queue)"
touch "stop.$c"
expect_state "$e" R 60
# limits dropped: nothing holds
d account user root --max-running 0 --max-submit 0 > /dev/null
d account list | grep -q "^root " && fail "user limits still listed: $(d account list)"
f=$(sub_root -N 1 wait.sh)
expect_state "$f" R 60
touch "stop.$b" "stop.$e" "stop.$f"
echo PASS
