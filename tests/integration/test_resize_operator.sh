#!/usr/bin/env bash
# Operator resizes end to end (`ductile resize`): it says what happened and waits for
# the outcome (committed, declined by the application, refused, still pending), or
# returns at once with --no-wait; a pending resize shows in `show` and `queue --json`;
# the size an operator sets holds against the policy (fpsma-pwma grew a job back 0.4 s
# after an operator shrank it) until `--release` or OperatorResizeHold; bad input gets
# a clear error.
. "$(dirname "$0")/lib.sh"
# a hold of 4 s (the default is an hour)
up 4 --policy fpsma-pwma --resize-timeout 3 --set OperatorResizeHold=4
cd "$T"
export PATH="$BINDIR:$PATH"
app="$BINDIR/tests/resize_app"
[ -x "$app" ] || fail "resize_app not built"
size() { field "$1" Nodes | awk '{print $1}'; }
# app_job NAME MODE NODES MAX: a malleable job whose application (resize_app MODE) has
# attached; it ends when $T/stop-NAME exists
app_job() {
  local s j
  s=$(script "$1.sh" "#DUCTILE --nodes=$3 --malleable --min-nodes=1 --max-nodes=$4
exec $app $2 $T/stop-$1")
  j=$(submit "$s")
  wait_for 20 grep -q attached "$T/ductile-$j.out" || fail "job $j ($1): no application: $(d show "$j")"
  echo "$j"
}
has_size() { [ "$(size "$1")" = "$2" ]; }

# bad input, in the user's words
! d resize 5 -N 0 2> e.txt || fail "-N 0 accepted"
grep -q "'0' is not a node count" e.txt || fail "-N 0: $(cat e.txt)"
! d resize 5 -N abc 2> e.txt || fail "-N abc accepted"
grep -q "'abc' is not a node count" e.txt || fail "-N abc: $(cat e.txt)"
! d resize abc -N 2 2> e.txt || fail "job abc accepted"
grep -q "'abc' is not a job id" e.txt || fail "job abc: $(cat e.txt)"
! d resize 5 2> e.txt || fail "no size accepted"
grep -q "give the new size" e.txt || fail "no size: $(cat e.txt)"
! d resize 5 -N 2 --release 2> e.txt || fail "-N with --release accepted"
grep -q "either" e.txt || fail "-N with --release: $(cat e.txt)"
set +e; d resize 999 -N 2 2> e.txt; rc=$?; set -e
[ $rc = 21 ] || fail "unknown job: exit $rc" # not_found (docs/protocol.md, Errors)
grep -q "999" e.txt || fail "unknown job: $(cat e.txt)"

# 1. Under fpsma-pwma an application that takes every offer is grown to 4 nodes. The
# operator shrinks it to 2: committed, and held there while the policy ticks every
# second; after OperatorResizeHold (4 s) the policy grows it again.
j=$(app_job grow commit 1 4)
wait_for 20 has_size "$j" 4 || fail "not grown to 4: $(d show "$j")"
set +e; d resize "$j" -N 2 > out.txt 2> e.txt; rc=$?; set -e
[ $rc = 0 ] || fail "shrink: exit $rc: $(cat out.txt e.txt)"
grep -q "job $j: committed at 2 nodes (4 -> 2)" out.txt || fail "shrink output: $(cat out.txt)"
grep -q "held at that size" out.txt || fail "no hold in: $(cat out.txt)"
committed=$SECONDS
d show "$j" | grep -q "^SizeHold *2 nodes" || fail "show without the hold: $(d show "$j")"
d show "$j" --json | grep -q '"hold"' || fail "show --json without the hold"
# held: still 2 nodes over the next 2 s (the policy would have grown it within 1 s)
while [ $((SECONDS - committed)) -lt 2 ]; do
  has_size "$j" 2 || fail "the policy undid the operator's shrink: $(d show "$j")"
  sleep 0.1
done
wait_for 15 has_size "$j" 4 || fail "not grown after the hold ended: $(d show "$j")"
! d show "$j" | grep -q "^SizeHold" || fail "hold still shown: $(d show "$j")"

# 2. --release: shrunk to 1 and held, released, the policy grows it at once.
d resize "$j" -N 1 > out.txt || fail "shrink to 1: $(cat out.txt)"
has_size "$j" 1 || fail "not at 1: $(d show "$j")"
d resize "$j" --release > out.txt || fail "release"
grep -q "released" out.txt || fail "release output: $(cat out.txt)"
wait_for 3 has_size "$j" 4 || fail "not grown after --release: $(d show "$j")"
set +e; d resize "$j" --release > out.txt; rc=$?; set -e
[ $rc = 0 ] && grep -q "nothing to release" out.txt || fail "second release: $rc $(cat out.txt)"
touch "$T/stop-grow"
expect_state "$j" CD

# 3. Pending: a rigid job holds 3 nodes, a malleable one the 4th. Asking for 2 nodes
# pends for want of a free node: --no-wait says so and returns 0; show and queue
# --json show the pending resize; a bounded wait ends with status 3; --release drops
# it; asked again, the wait ends committed when the rigid job ends.
r=$(script rigid.sh "#DUCTILE --nodes=3
while [ ! -e $T/stop3 ]; do sleep 0.05; done")
jr=$(submit "$r")
expect_state "$jr" R
j=$(app_job small commit 1 2)
set +e; d resize "$j" -N 2 --no-wait > out.txt 2> e.txt; rc=$?; set -e
[ $rc = 0 ] || fail "--no-wait: exit $rc $(cat out.txt e.txt)"
grep -q "job $j: resize to 2 nodes pending: not enough free nodes (0 free, 1 more needed)" out.txt ||
  fail "--no-wait output: $(cat out.txt)"
d show "$j" | grep -q "^Resize *2 nodes (operator), pending since .*: not enough free nodes" ||
  fail "show: $(d show "$j")"
d queue --json | tr -d ' \n' > q.json
grep -q '"operator_resize":{[^}]*"state":"pending"' q.json || fail "queue --json: $(cat q.json)"
grep -q '"operator_resize":{[^}]*"why":"notenoughfreenodes' q.json || fail "queue --json why: $(cat q.json)"
d show "$j" --json | tr -d ' \n' | grep -q '"operator_resize":{[^}]*"nodes":2' || fail "show --json"
set +e; d resize "$j" -N 2 --wait 1 > out.txt 2> e.txt; rc=$?; set -e
[ $rc = 3 ] || fail "bounded wait: exit $rc $(cat out.txt e.txt)"
grep -q "still pending after 1 s: not enough free nodes" e.txt || fail "bounded wait: $(cat e.txt)"
d resize "$j" --release > out.txt || fail "release of a pending resize"
grep -q "the pending resize to 2 nodes is dropped" out.txt || fail "release: $(cat out.txt)"
! d show "$j" | grep -q "^Resize.*pending" || fail "still pending after --release: $(d show "$j")"
d resize "$j" -N 2 > out.txt 2> e.txt &
waiter=$!
wait_for 10 sh -c "\"$BIN\" show $j | grep -q '^Resize.*pending'" || fail "not pending: $(d show "$j")"
touch "$T/stop3"
expect_state "$jr" CD
set +e; wait "$waiter"; rc=$?; set -e
[ $rc = 0 ] || fail "waited resize: exit $rc $(cat out.txt e.txt)"
grep -q "job $j: committed at 2 nodes (1 -> 2)" out.txt || fail "waited resize: $(cat out.txt)"
d show "$j" | grep -qE "expand +1 -> 2" || fail "expand event: $(d show "$j")"
touch "$T/stop-small"
expect_state "$j" CD

# 4. Declined: an application that declines every offer; exit status 2.
j=$(app_job decline decline 2 2)
set +e; d resize "$j" -N 1 > out.txt 2> e.txt; rc=$?; set -e
[ $rc = 2 ] || fail "declined: exit $rc $(cat out.txt e.txt)"
grep -q "job $j: resize to 1 node declined by the application" e.txt || fail "declined: $(cat e.txt)"
has_size "$j" 2 || fail "size after the decline: $(d show "$j")"
d show "$j" | grep -q "^Resize *1 node (operator), declined" || fail "show: $(d show "$j")"
touch "$T/stop-decline"
expect_state "$j" CD

# 5. An application that declines offers in advance (dt_set_inhibit): the resize
# pends for it; the job cancelled meanwhile, the resize has failed.
j=$(app_job inhibit inhibit 1 2)
wait_for 5 sh -c "\"$BIN\" resize $j -N 2 --no-wait | grep -q 'pending: the application declines offers for now'" ||
  fail "inhibit: $(d resize "$j" -N 2 --no-wait)"
# the job ends while its resize pends: the waiting command says so, status 2
d resize "$j" -N 2 > out.txt 2> e.txt &
waiter=$!
wait_for 10 sh -c "\"$BIN\" show $j | grep -q '^Resize.*pending'" || fail "not pending: $(d show "$j")"
# the waiting command's own request is in (it says so after half a second of pending):
# cancelled before that, its request would find the job ending and be refused
wait_for 10 grep -q "pending: .*waiting up to" e.txt || fail "the waiter: $(cat out.txt e.txt)"
d cancel "$j"
set +e; wait "$waiter"; rc=$?; set -e
[ $rc = 2 ] || fail "cancelled while pending: exit $rc $(cat out.txt e.txt)"
grep -q "job $j: resize to 2 nodes failed: the job ended" e.txt || fail "cancelled: $(cat e.txt)"
expect_state "$j" CA

# 6. Refused, with why; exit status 1, or the refusal's code (20 not yours, 22 ended).
r=$(script rigid2.sh "#DUCTILE --nodes=1
while [ ! -e $T/stop6 ]; do sleep 0.05; done")
jr=$(submit "$r")
expect_state "$jr" R
set +e; d resize "$jr" -N 2 2> e.txt; rc=$?; set -e
[ $rc = 1 ] && grep -q "rigid" e.txt || fail "rigid: $rc $(cat e.txt)"
s=$(script m.sh "#DUCTILE --nodes=1 --malleable --min-nodes=1 --max-nodes=2
while [ ! -e $T/stop6 ]; do sleep 0.05; done")
j=$(submit "$s")
expect_state "$j" R
set +e; d resize "$j" -N 3 2> e.txt; rc=$?; set -e
[ $rc = 1 ] && grep -q "outside its \[1, 2\]" e.txt || fail "outside max: $rc $(cat e.txt)"
set +e; as_nobody "$BIN" resize "$j" -N 2 2> e.txt; rc=$?; set -e
[ $rc = 20 ] && grep -q "permission denied: job $j belongs to" e.txt || fail "not yours: $rc $(cat e.txt)"
touch "$T/stop6"
expect_state "$j" CD
set +e; d resize "$j" -N 2 2> e.txt; rc=$?; set -e
[ $rc = 22 ] && grep -q "has already ended" e.txt || fail "ended job: $rc $(cat e.txt)"
echo ok
