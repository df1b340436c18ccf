#!/usr/bin/env bash
# Issue 34: twenty `--array 0-9999` of one user reached MaxJobs and every other user's
# submission was refused. With the configuration's defaults (MaxJobsPerUser 10,000,
# MaxSubmitRate 20 a second), at full size: nobody's first array is made (a part per
# turn of the loop), the other nineteen are refused in words, another user's job is
# accepted and runs while the array waits, every node stays up, and the array's cancel
# takes every element.
. "$(dirname "$0")/lib.sh"
up 2
pub_setup
ARRAYS=${DUCTILE_DOS_ARRAYS:-20}
as_daemon() { on login setpriv --reuid=daemon --regid=daemon --clear-groups -- "$REAL_BIN" "$@"; }
ok=0
for i in $(seq "$ARRAYS"); do
  if as_nobody "$BIN" submit --parsable -H --array 0-9999 --wrap true > a.out 2> a.err; then
    ok=$((ok + 1))
    a=$(cat a.out)
  else
    grep -q "user nobody has 10000 jobs queued or running and may have at most 10000 (MaxJobsPerUser): wait for some to end$" a.err ||
      fail "array $i: $(cat a.err)"
  fi
done
[ "$ok" = 1 ] || fail "$ok of $ARRAYS arrays of 10,000 accepted under MaxJobsPerUser=10000"
j=$(as_daemon submit --parsable --wrap true) || fail "another user's submission was refused"
expect_state "$j" CD 60
nodes_up() { [ "$(d cluster status --json | python3 -c 'import json, sys; print(json.load(sys.stdin)["nodes_up"])')" = 2 ]; }
nodes_up || fail "a node went down: $(d nodes)"
count() { d queue --json -u nobody | python3 -c 'import json, sys; print(len(json.load(sys.stdin)))'; }
[ "$(count)" = 10000 ] || fail "nobody's array: $(count) elements"
# another user's cancel of the array: refused once, not once per element
! as_daemon cancel "$a" > d.out 2> d.err || fail "daemon cancelled nobody's array"
[ "$(wc -l < d.err)" = 1 ] && grep -q "not yours: permission denied: it belongs to nobody" d.err ||
  fail "daemon's cancel of nobody's array said $(wc -l < d.err) lines: $(head -3 d.err)"
# its first element ended: the array's id still names the others
d cancel "${a}_0" > /dev/null 2>&1 || fail "cancel of element 0"
[ "$(count)" = 9999 ] || fail "after element 0's cancel: $(count) elements"
! as_daemon cancel "$a" > d.out 2> d.err || fail "daemon cancelled nobody's array"
[ "$(wc -l < d.err)" = 1 ] && grep -q "not yours" d.err || fail "daemon's cancel, element 0 ended: $(head -3 d.err)"
as_nobody "$BIN" cancel "$a" > /dev/null 2> c.err || fail "cancel: $(cat c.err)"
[ "$(count)" = 0 ] || fail "left after the cancel: $(count) elements"
echo PASS
