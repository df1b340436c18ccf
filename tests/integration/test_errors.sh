#!/usr/bin/env bash
# Errors with codes, end to end (issue 35): a refusal reaches the user in words, and as
# a code a program can act on: the command's exit status, and {"error", "code"} on
# stdout with --json. Before, every refusal was exit status 1 and its kind was lost
# (the client turned all of them into -EREMOTE).
. "$(dirname "$0")/lib.sh"
up 1
cd "$T"
status() { set +e; "$@" > out.txt 2> err.txt; rc=$?; set -e; }
status d show 999
[ "$rc" = 21 ] && grep -q "job 999 does not exist" err.txt || fail "show of no job: $rc $(cat err.txt)"
status d show 999 --json
[ "$rc" = 21 ] || fail "show --json of no job: exit $rc"
[ "$(jq -r .code out.txt)" = not_found ] && [ "$(jq -r .error out.txt)" = "job 999 does not exist" ] ||
  fail "show --json of no job: $(cat out.txt)"
status as_nobody "$BIN" drain n1
[ "$rc" = 20 ] && grep -q "permission denied" err.txt || fail "drain as nobody: $rc $(cat err.txt)"
status d queue --state XX
[ "$rc" = 1 ] && grep -q "not a list of job states" err.txt || fail "queue --state XX: $rc $(cat err.txt)"
# a cancel's per-job results: not the caller's (20), no such job (21), both (1)
s=$(script hold.sh '#DUCTILE --nodes=1
sleep 300')
j=$(submit "$s")
status d cancel 999
[ "$rc" = 21 ] && grep -q "job 999: no such job" err.txt || fail "cancel of no job: $rc $(cat err.txt)"
status as_nobody "$BIN" cancel "$j"
[ "$rc" = 20 ] && grep -q "job $j: not yours" err.txt || fail "cancel of root's job by nobody: $rc $(cat err.txt)"
status as_nobody "$BIN" cancel "$j" 999
[ "$rc" = 1 ] || fail "cancel of one not yours and one missing: $rc $(cat err.txt)"
# libductile returns a refusal's code as an errno (it returned -EREMOTE for all): a job
# that does not run on the node (not found: ESRCH), another user's job (denied: EPERM)
app="$BINDIR/tests/resize_app"
expect_state "$j" R
sock=$(spool_of n1)/noded.sock
status on n1 env DUCTILE_NODED_SOCKET="$sock" DUCTILE_JOB_ID=999 "$app" commit stop
[ "$rc" = 1 ] && grep -q "dt_attach: the job does not run on this node (No such process)" err.txt ||
  fail "dt_attach to no job: $rc $(cat err.txt)"
status on n1 env DUCTILE_NODED_SOCKET="$sock" DUCTILE_JOB_ID="$j" setpriv --reuid=nobody --regid=nogroup --clear-groups "$app" commit stop
[ "$rc" = 1 ] && grep -q "dt_attach: permission denied: not your job (Operation not permitted)" err.txt ||
  fail "dt_attach to root's job as nobody: $rc $(cat err.txt)"
d cancel "$j"
# no controller at all: unreachable
d cluster down --dir "$T/c" > /dev/null
status d queue
[ "$rc" = 27 ] || fail "queue without a controller: exit $rc $(cat err.txt)"
echo ok
