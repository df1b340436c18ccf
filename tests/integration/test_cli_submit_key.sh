#!/usr/bin/env bash
# Idempotent submission (issue 7, defect 12): every `ductile submit` has a key, and a
# repeat with the same key (a retry after a lost reply) returns the first job's id.
. "$(dirname "$0")/lib.sh"
up 2
cd "$T"
printf '#!/bin/sh\ntrue\n' > plain.sh
jobs_named() { # NAME: how many jobs (queued or finished) carry that name
  { d queue --json; d history --json; } | grep -c "\"name\": \"$1\"" || true
}
# --- 12. a submission has a key: a repeat returns the first job's id
a=$(DUCTILE_SUBMIT_KEY=k-test-1 submit -J idem1 plain.sh)
b=$(DUCTILE_SUBMIT_KEY=k-test-1 submit -J idem1 plain.sh)
[ -n "$a" ] && [ "$a" = "$b" ] || fail "the same key made jobs $a and $b"
[ "$(jobs_named idem1)" = 1 ] || fail "the same key made $(jobs_named idem1) jobs"
c=$(DUCTILE_SUBMIT_KEY=k-test-2 submit -J idem1 plain.sh)
[ "$c" != "$a" ] || fail "another key returned the same job"
! DUCTILE_SUBMIT_KEY='bad key' d submit plain.sh 2> e.txt || fail "a malformed key was accepted"
# keys are per user: another user's key never returns (or reveals) someone else's job
mkdir -m 777 pub && cp plain.sh pub/
jo=$(cd pub && DUCTILE_SUBMIT_KEY=k-test-1 setpriv --reuid=nobody --regid=nogroup --clear-groups -- \
  "$BIN" submit -J idem1 plain.sh | awk '{print $3}')
[ -n "$jo" ] && [ "$jo" != "$a" ] || fail "nobody's key k-test-1 returned root's job $a"
# the reply is lost after the controller committed the job: the retry gets the same job
DUCTILE_TEST_DROP_REPLY=1 d submit -J dropped plain.sh > o.txt 2> e.txt || fail "retry failed: $(cat e.txt)"
grep -q "^Submitted job" o.txt || fail "retry: $(cat o.txt)"
wait_for 10 test "$(jobs_named dropped)" = 1 || true
[ "$(jobs_named dropped)" = 1 ] || fail "a retried submission made $(jobs_named dropped) jobs"

echo ok
