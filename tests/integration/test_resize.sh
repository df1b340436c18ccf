#!/usr/bin/env bash
# An operator's manual resize of a running malleable job: the allocation grows and
# shrinks, `ductile run` follows it, the leaving node is cleaned before release, and
# show/history record every change. (The application handshake comes with libductile.)
. "$(dirname "$0")/lib.sh"
up 4
cd "$T"
export PATH="$BINDIR:$PATH"
s=$(script mall.sh '#DUCTILE --nodes=1 --malleable --min-nodes=1 --max-nodes=4
while [ ! -e "'"$T"'/stop" ]; do sleep 0.05; done
ductile run sh -c "echo on \$DUCTILE_NODENAME"')
j=$(submit "$s")
expect_state "$j" R
[ "$(field "$j" NodeList)" = n1 ] || fail "start: $(field "$j" NodeList)"
d resize "$j" --nodes 3
wait_for 10 sh -c "\"$BIN\" show $j | grep -q '^NodeList *n\[1-3\]'" || fail "expand: $(d show "$j")"
# a task on the new nodes, started while the job is at 3 nodes
DUCTILE_JOB_ID=$j d run sh -c 'echo $DUCTILE_NODENAME' | sort > nodes3.txt
[ "$(cat nodes3.txt | tr '\n' ' ')" = "n1 n2 n3 " ] || fail "run after expand: $(cat nodes3.txt)"
# a long task on node 3, then shrink to 2: it must be killed before n3 is released
DUCTILE_JOB_ID=$j d run --node n3 sh -c "echo \$\$ > $T/t3; exec sleep 300" &
wait_for 10 test -s "$T/t3" || fail "task on n3"
d resize "$j" --nodes 2
wait_for 10 sh -c "\"$BIN\" show $j | grep -q '^NodeList *n\[1-2\]'" || fail "shrink: $(d show "$j")"
! alive "$(cat "$T/t3")" || fail "a task survived on the node that left the job"
d nodes | grep -E '^n3 +idle' > /dev/null || fail "n3 not released: $(d nodes)"
# bad requests
! d resize "$j" --nodes 9 2> e.txt || fail "resize beyond the cluster"
r=$(script rigid.sh 'sleep 300')
jr=$(submit "$r")
expect_state "$jr" R
! d resize "$jr" --nodes 2 2> e.txt || fail "a rigid job was resized"
grep -q "rigid" e.txt || fail "message: $(cat e.txt)"
d cancel "$jr"
touch "$T/stop"
expect_state "$j" CD
grep -qx "on n1" "ductile-$j.out" && grep -qx "on n2" "ductile-$j.out" || fail "final step: $(cat "ductile-$j.out")"
! grep -q "on n3" "ductile-$j.out" || fail "n3 still in the job"
d show "$j" | grep -E "expand +1 -> 3" > /dev/null || fail "expand event: $(d show "$j")"
d show "$j" | grep -E "shrink +3 -> 2" > /dev/null || fail "shrink event"
echo ok
