#!/usr/bin/env bash
# Issue 34: one user filled the queue for everyone by default (twenty `--array 0-9999`
# reached MaxJobs in 70 s, every other user's submission refused). Every user now has
# a share out of the box: MaxJobsPerUser jobs queued and running (10,000 by default;
# 40 here), MaxSubmitRate submissions a second (20 by default, bursts of ten times as
# many; 1 here): past the first, a submission is refused in words; past the second,
# the command waits and tries again by itself. Root and operators are exempt, and a
# --max-submit an operator gives a user is theirs instead of the default.
. "$(dirname "$0")/lib.sh"
up 1 --set MaxJobsPerUser=40 --set MaxSubmitRate=1
pub_setup
# nobody's arrays up to the limit, held so that none ends meanwhile
a=$(sub_nobody -H --array=1-25 --wrap true) || fail "nobody's first array"
# an array that would pass the limit, room left: "submit fewer"; none left: not said
refused "has 25 jobs queued or running and may have at most 40 (MaxJobsPerUser): wait for some to end or submit fewer$" \
  sub_nobody -H --array=1-20 --wrap true
b=$(sub_nobody -H --array=1-15 --wrap true) || fail "nobody's second array"
refused "has 40 jobs queued or running and may have at most 40 (MaxJobsPerUser): wait for some to end" \
  sub_nobody -H --wrap true
refused "may have at most 40 (MaxJobsPerUser): wait for some to end$" sub_nobody -H --array=1-2 --wrap true
# root submits on (exempt), and so would any other user
r=$(sub_root -H --array=1-60 --wrap true) || fail "root refused"
[ "$(d queue -u nobody --noheader --format JobID | wc -l)" -ge 2 ] || fail "$(d queue)"
# an operator's limit for the user replaces the default
d account user nobody --max-submit 50 > /dev/null || fail "account user"
c=$(sub_nobody -H --array=1-10 --wrap true) || fail "nobody under their own limit of 50"
refused "user nobody has 50 jobs queued or running and may have at most 50 (its limit)" \
  sub_nobody -H --wrap true
d account user nobody --max-submit 0 > /dev/null
d cancel "$c" "$b" > /dev/null

# the rate: a burst of ten is taken at once, the next waits about a second each, and
# the commands wait and try again by themselves (nobody has 25 jobs now, 15 to go)
t0=$SECONDS
for i in $(seq 14); do sub_nobody -H --wrap true > /dev/null 2>> rate.err || fail "rate: $(cat rate.err)"; done
grep -q "MaxSubmitRate" rate.err || fail "no submission waited: $(cat rate.err)"
[ $((SECONDS - t0)) -ge 2 ] || fail "14 submissions at 1 a second after a burst of 10 took $((SECONDS - t0)) s"
[ "$(d queue -u nobody --noheader --format JobID | wc -l)" = 15 ] || fail "nobody's jobs: $(d queue -u nobody)"
# root is not slowed
for i in $(seq 20); do sub_root -H --wrap true > /dev/null; done
d cancel -u nobody > /dev/null 2>&1 || d cancel "$a" > /dev/null
echo ok
