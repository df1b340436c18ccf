#!/usr/bin/env bash
# Reservations (issue 15): a maintenance reservation ahead keeps off the jobs whose
# estimate reaches into it (a job without a time limit does not start on its node; a
# short one does); a user reservation's nodes run its users' jobs only; refusals in
# words; deleting one frees its nodes.
. "$(dirname "$0")/lib.sh"
up 3
pub_setup
d reservation create --name mine --nodelist n1 --start now --duration 1h --users nobody \
  > /dev/null || fail "create mine"
d reservation create --name upgrade --nodelist n3 --start now+1minute --duration 1h \
  --maintenance > /dev/null || fail "create upgrade"
d reservation list | grep -q "^upgrade .* n3 .*(maintenance)" || fail "list: $(d reservation list)"
refused "would share nodes with reservation upgrade at the same time" d reservation create --nodelist n3 --start now \
  --duration 2h --users root
refused "is not a duration (minutes, .*; a reservation ends)" d reservation create --nodes 1 \
  --start now --duration UNLIMITED
refused "only operators" as_nobody "$BIN" reservation create --nodes 1 --start now \
  --duration 1h --users nobody
refused "is for maintenance: it takes no jobs" sub_root --reservation upgrade --wrap true
d reservation create --name later --nodelist n1 --start now+2hours --duration 1h \
  --users root > /dev/null || fail "create later"
refused "reservation later is for root: user nobody is not one of them" \
  sub_nobody --reservation later --wrap true
refused "there is no reservation 'nope'" sub_root --reservation nope --wrap true

# nobody's job runs on the reservation's node
r=$(sub_nobody --reservation mine -t 30 wait.sh)
expect_state "$r" R 60
[ "$(field "$r" NodeList)" = n1 ] || fail "in its reservation: $(d show "$r")"
# root's job without a time limit: n2, the only node no reservation holds while it runs
a=$(sub_root wait.sh)
expect_state "$a" R 60
[ "$(field "$a" NodeList)" = n2 ] || fail "no time limit: $(d show "$a")"
# a short one ends before the maintenance: n3
s=$(sub_root -t 0:20 --wrap "sleep 1")
expect_state "$s" CD 60
grep -q "n3" <<< "$(field "$s" NodeList)" || fail "short: $(d show "$s")"
# another without a time limit waits for n2 although n3 is free: n1 and n3 are reserved
# while it would run
w=$(sub_root wait.sh)
wait_for 10 sh -c "[ \"\$(\"$BIN\" show $w | awk '/^Reason/ {print \$2}')\" = Resources ]" ||
  fail "reason: $(d show "$w")"
is_state "$w" PD || fail "it started on a reserved node: $(d show "$w")"
# two nodes for 10 minutes: only n2 is free of reservations then
x=$(sub_root -N 2 -t 10 --wrap true)
wait_for 10 sh -c "[ \"\$(\"$BIN\" show $x | awk '/^Reason/ {print \$2}')\" = ReservedNodes ]" ||
  fail "ReservedNodes: $(d show "$x")"
d cancel "$x" > /dev/null
# the maintenance called off: it starts on n3
d reservation delete upgrade > /dev/null || fail "delete"
expect_state "$w" R 60
[ "$(field "$w" NodeList)" = n3 ] || fail "after delete: $(d show "$w")"
d reservation list | grep -q upgrade && fail "still listed: $(d reservation list)"
touch "stop.$r" "stop.$a" "stop.$w"
echo PASS
