#!/usr/bin/env bash
# The job lifecycle has one writer (issue 35): every change of a job's state goes
# through set_state in src/ctld/jobs.c, which refuses what the lifecycle table does not
# allow; a new job starts pending in job_new. Any other assignment of a job's state in
# the controller is a transition nobody checks: this test finds it.
. "$(dirname "$0")/lib.sh"
# assignments (not comparisons) to a job's state field: j->state = ..., x.state = JS_...
grep -rnE '(\bj|job|\bjb)->state[[:space:]]*=[^=]|\.state[[:space:]]*=[[:space:]]*JS_' "$src/src/ctld" \
  > "$tmp/writes" || true
# the two that may: set_state's, and job_new's first state
grep -v -e 'src/ctld/jobs.c:[0-9]*:    j->state = to;$' \
  -e 'src/ctld/jobs.c:[0-9]*:    j->state = JS_PENDING; /\* a new job: where every lifecycle begins \*/$' \
  "$tmp/writes" > "$tmp/others" || true
[ ! -s "$tmp/others" ] || fail "a job's state written outside set_state (src/ctld/jobs.c): $(cat "$tmp/others")"
[ "$(wc -l < "$tmp/writes")" -eq 2 ] || fail "set_state or job_new no longer found: $(cat "$tmp/writes")"
echo ok
