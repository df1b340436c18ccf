#!/usr/bin/env bash
# Preemption (issue 15): a job of a higher tier whose partition preempts stops a job of
# a lower tier that may run again (--requeue): it waits again (Preempted) and runs once
# the higher one is done; a job without --requeue is not stopped.
. "$(dirname "$0")/lib.sh"
up 2 --set "Partition=low Nodes=n[1-2] Default=YES" \
  --set "Partition=high Nodes=n[1-2] PriorityTier=2 PreemptMode=REQUEUE"
pub_setup
d partitions | grep -q "^high .* 2 " || fail "partitions: $(d partitions)"

l=$(sub_root -N 2 --requeue wait.sh)
expect_state "$l" R 60
h=$(sub_root -p high -N 2 wait.sh)
expect_state "$h" R 60
expect_state "$l" PD 60
d show "$l" | grep -q "interrupt .*Preempted:job $h" || fail "event: $(d show "$l")"
touch "stop.$h"
expect_state "$l" R 60 # it runs again once the higher job ended
# without --requeue it is not stopped
touch "stop.$l"
expect_state "$l" CD 60
rm -f "stop.$l" "stop.$h"
n=$(sub_root -N 2 wait.sh)
expect_state "$n" R 60
h2=$(sub_root -p high -N 1 wait.sh)
wait_for 10 sh -c "\"$BIN\" show $h2 | grep -q '^Reason'" || fail "h2: $(d show "$h2")"
is_state "$n" R || fail "a job without --requeue was stopped: $(d show "$n")"
is_state "$h2" PD || fail "h2 started: $(d queue)"
touch "stop.$n"
expect_state "$h2" R 60
touch "stop.$h2"
echo PASS
