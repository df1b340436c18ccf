#!/usr/bin/env bash
# A resize the application accepted and could not complete ends the job with the
# reason, instead of leaving it R or RS while its processes are stuck (issue 9):
# - it reports the failure (dt_resize_failed): the job fails at once, ResizeFailed;
# - it accepts (dt_offer_accept) and never commits: the job fails at ResizeTimeout;
# - a --requeue job in the same case runs again, twice at most;
# - an offer declined is only withdrawn (the job keeps running).
. "$(dirname "$0")/lib.sh"
up 2 --policy fpsma-pwma --resize-timeout 3 --kill-wait 3 # (KillWait: job reqcg below)
cd "$T"
app="$BINDIR/offer_app"
[ -x "$app" ] || fail "offer_app not built"
reason() { d show "$1" --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["reason"])'; }

s=$(script failrep.sh "#DUCTILE --nodes=1 --malleable --min-nodes=1 --max-nodes=2
$app $T/f.log --fail 'the group for n2 ended during the expansion' --until $T/never")
j=$(submit "$s")
expect_state "$j" F 20
r=$(reason "$j")
[ "$r" = "ResizeFailed:the group for n2 ended during the expansion" ] || fail "reason: $r"
d show "$j" | grep -q "resize_failed" || fail "no resize_failed event: $(d show "$j")"
! pgrep -f "$T/f.log" > /dev/null || fail "the application survived its job"
d nodes | grep -E '^n2 +idle' > /dev/null || fail "n2 not released: $(d nodes)"

s=$(script stall.sh "#DUCTILE --nodes=1 --malleable --min-nodes=1 --max-nodes=2
$app $T/s.log --stall --until $T/never")
j=$(submit "$s")
wait_for 20 grep -q stalled s.log || fail "no offer: $(d show "$j")"
t0=$(date +%s.%N)
expect_state "$j" F 20
t1=$(date +%s.%N)
r=$(reason "$j")
case $r in ResizeFailed:*"within ResizeTimeout (3 s)") ;; *) fail "reason: $r" ;; esac
awk -v a="$t0" -v b="$t1" 'BEGIN {exit !(b - a >= 2)}' || fail "failed before ResizeTimeout"
! pgrep -f "$T/s.log" > /dev/null || fail "the application survived its job"

s=$(script req.sh "#DUCTILE --nodes=1 --malleable --min-nodes=1 --max-nodes=2 --requeue
$app $T/r.log --fail 'stuck' --until $T/never")
j=$(submit "$s")
expect_state "$j" F 30
[ "$(d show "$j" | grep -c ' requeue ')" = 2 ] || fail "requeues: $(d show "$j")"
r=$(reason "$j")
[ "$r" = "ResizeFailed:stuck (the third time: not requeued)" ] || fail "reason: $r"

# cancelled while its processes are being ended for the requeue (they ignore SIGTERM:
# KillWait keeps the job CG): it ends CA and does not run again (it ran again). The
# script's sleep holds the job CG: the application itself ends as soon as its daemon
# drops it, and a CG of a few milliseconds was now and then over before the cancel.
s=$(script reqcg.sh "#DUCTILE --nodes=1 --malleable --min-nodes=1 --max-nodes=2 --requeue
trap '' TERM
$app $T/rc.log --fail 'stuck' --until $T/never
sleep 60")
j=$(submit "$s")
expect_state "$j" CG 20
d cancel "$j"
expect_state "$j" CA 30
[ "$(reason "$j")" = CANCELLED ] || fail "reason after cancel: $(reason "$j")"
[ "$(d show "$j" | grep -c ' start ')" = 1 ] || fail "ran again after its cancel: $(d show "$j")"

# declined (not accepted): withdrawn, the job runs on
s=$(script quiet.sh "#DUCTILE --nodes=1 --malleable --min-nodes=1 --max-nodes=2
exec $BINDIR/offer_app $T/q.log --decline --until $T/stopq")
j=$(submit "$s")
wait_for 20 grep -q declined q.log || fail "no offer: $(d show "$j")"
is_state "$j" R || fail "a declined offer ended the job: $(d show "$j")"
touch stopq
expect_state "$j" CD 20
echo ok
