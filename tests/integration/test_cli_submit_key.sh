#!/usr/bin/env bash
# Idempotent submission (issue 7, defect 12): every `ductile submit` has a key, and a
# repeat with the same key (a retry after a lost reply) returns the first job's id.
. "$(dirname "$0")/lib.sh"
up 2
cd "$T"
printf '#!/bin/sh\ntrue\n' > plain.sh
jobs_named() { # NAME: how many jobs (queued or finished) carry that name, counted by
  # id: a job that ends between the two commands is in both lists
  { d queue --json; d history --json; } | python3 -c '
import json, sys
ids, text, dec, at = set(), sys.stdin.read(), json.JSONDecoder(), 0
while text[at:].strip():
    while text[at].isspace():
        at += 1
    jobs, at = dec.raw_decode(text, at)
    ids |= {j["id"] for j in jobs if j.get("name") == sys.argv[1]}
print(len(ids))' "$1"
}
# NAME N: exactly N jobs carry that name (for wait_for: the count is taken at each try;
# `wait_for 10 test "$(jobs_named X)" = 1` took it once, before the restarted controller
# answered, and waited out its deadline on that 0)
named_count() { [ "$(jobs_named "$1")" = "$2" ]; }
# --- 12. a submission has a key: a repeat returns the first job's id
a=$(DUCTILE_SUBMIT_KEY=k-test-1 submit -J idem1 plain.sh)
b=$(DUCTILE_SUBMIT_KEY=k-test-1 submit -J idem1 plain.sh)
[ -n "$a" ] && [ "$a" = "$b" ] || fail "the same key made jobs $a and $b"
[ "$(jobs_named idem1)" = 1 ] || fail "the same key made $(jobs_named idem1) jobs"
c=$(DUCTILE_SUBMIT_KEY=k-test-2 submit -J idem1 plain.sh)
[ "$c" != "$a" ] || fail "another key returned the same job"
! DUCTILE_SUBMIT_KEY='bad key' d submit plain.sh 2> e.txt || fail "a malformed key was accepted"
# refused for what it is, and nothing else (it went on with an unset key: "out of memory"
# in one build, a job submitted with whatever the stack held in another)
grep -q "DUCTILE_SUBMIT_KEY must be 1 to 64" e.txt && [ "$(wc -l < e.txt)" = 1 ] ||
  fail "a malformed key: $(cat e.txt)"
# keys are per user: another user's key never returns (or reveals) someone else's job
mkdir -m 777 pub && cp plain.sh pub/
jo=$(cd pub && DUCTILE_SUBMIT_KEY=k-test-1 setpriv --reuid=nobody --regid=nogroup --clear-groups -- \
  "$BIN" submit -J idem1 plain.sh | awk '{print $3}')
[ -n "$jo" ] && [ "$jo" != "$a" ] || fail "nobody's key k-test-1 returned root's job $a"
# the reply is lost after the controller committed the job: the retry gets the same job
DUCTILE_TEST_DROP_REPLY=1 d submit -J dropped plain.sh > o.txt 2> e.txt || fail "retry failed: $(cat e.txt)"
grep -q "^Submitted job" o.txt || fail "retry: $(cat o.txt)"
wait_for 10 named_count dropped 1 || true
[ "$(jobs_named dropped)" = 1 ] || fail "a retried submission made $(jobs_named dropped) jobs"


# the controller dies after committing a job and before replying: the CLI retries
# with its key until a new controller answers, and gets the first job's id
ctld="$BINDIR/ductiled"
kill "$(cat "$T/c/ctld.pid")"
wait_for 10 sh -c "! kill -0 $(cat "$T/c/ctld.pid") 2>/dev/null" || fail "the controller did not stop"
DUCTILE_TEST_CRASH_AFTER_SUBMIT=1 setsid "$ctld" --conf "$DUCTILE_CONF" >> "$T/c/log/ductiled.log" 2>&1 < /dev/null &
crashing=$!
echo $crashing > "$T/c/ctld.pid"
wait_for 10 test -S "$T/c/ctld.sock" || fail "the controller did not start"
DUCTILE_SUBMIT_RETRY_SECONDS=60 d submit -J across plain.sh > across.out 2> across.err &
client=$!
wait "$crashing" || true   # it exits after its commit, before its reply
grep -q "exiting after the commit of job" "$T/c/log/ductiled.log" || fail "the test hook did not run"
setsid "$ctld" --conf "$DUCTILE_CONF" >> "$T/c/log/ductiled.log" 2>&1 < /dev/null &
echo $! > "$T/c/ctld.pid"
wait "$client" || fail "the submission failed: $(cat across.err)"
grep -q "trying again" across.err || fail "the CLI did not retry: $(cat across.err)"
ja=$(awk '/^Submitted job/ {print $3}' across.out)
[ -n "$ja" ] || fail "no job id: $(cat across.out)"
wait_for 10 named_count across 1 || fail "the retry made $(jobs_named across) jobs"
[ "$(field "$ja" Name)" = across ] || fail "the CLI was given job $ja, not the job it made"

# the controller stops answering (SIGSTOP): after an attempt's timeout the CLI sends
# again on a new connection; both reach the controller when it resumes: one job
wait_for 10 d queue || fail "the controller is not answering"
stopped=$(cat "$T/c/ctld.pid")
kill -STOP "$stopped"
DUCTILE_SUBMIT_ATTEMPT_SECONDS=1 d submit -J stalled plain.sh > stalled.out 2> stalled.err &
client=$!
wait_for 20 grep -q "no answer within" stalled.err || { kill -CONT "$stopped"; fail "no retry after a timeout: $(cat stalled.err)"; }
kill -CONT "$stopped"
wait "$client" || fail "the stalled submission failed: $(cat stalled.err)"
wait_for 10 named_count stalled 1 || fail "a retry after a timeout made $(jobs_named stalled) jobs"
echo ok
