#!/usr/bin/env bash
# Review: a local non-root user (nobody) sends node-daemon messages through its node
# daemon's socket, hoping the controller takes them as the node's or root's: relay
# (with uid 0 and another channel), relay_close of another channel, register,
# step_output / step_exit into root's step, and a cancel of root's job.
# Usage: DUCTILE_BIN=build/ductile bash tests/review/impersonate.sh
. "$(dirname "$0")/../integration/lib.sh"
GARBAGE=${GARBAGE:-$BINDIR/tests/garbage}
up 2
cd "$T"
export PATH="$BINDIR:$PATH"
sock="$T/c/state/spool/n1/noded.sock"
s=$(script stream.sh '#DUCTILE --nodes=1
ductile run sh -c "while :; do echo tick; sleep 0.1; done" > '"$T"'/stream.out 2> '"$T"'/stream.err
echo "run=$?" > '"$T"'/stream.rc')
j=$(submit "$s")
wait_for 20 sh -c "[ \$(grep -c tick '$T/stream.out' 2>/dev/null || echo 0) -gt 3 ]" || fail "no output"
i=0
for m in \
  '{"type":"relay","chan":1,"uid":0,"gid":0,"msg":{"type":"cancel","jobs":['"$j"']}}' \
  '{"type":"relay_close","chan":1}' \
  '{"type":"register","node":"n1","runs":true,"first":true}' \
  '{"type":"step_output","job":'"$j"',"step":1,"rank":0,"stream":1,"offset":0,"data":"aGFja2VkCg=="}' \
  '{"type":"step_exit","job":'"$j"',"step":1,"rank":0,"kind":0,"code":7}' \
  '{"type":"cancel","jobs":['"$j"'],"uid":0}' \
  '{"type":"run","job":'"$j"',"argv":["/bin/true"],"cwd":"/","env":[]}'; do
  i=$((i + 1)); printf '%s' "$m" > m$i.json
  echo "$(head -c 60 m$i.json)... -> $(setpriv --reuid=nobody --regid=nogroup --clear-groups -- "$GARBAGE" unix "$sock" request m$i.json | head -c 160)"
done
sleep 1
is_state "$j" R || fail "root's job is $(state "$j")"
[ -s stream.rc ] && fail "root's step ended: $(cat stream.rc stream.err)"
grep -q hacked stream.out && fail "nobody's output reached root's step"
grep -E "registered|disconnected" "$T/c/log/ductiled.log" "$T/c/log/noded-n1.log" | tail -3
echo ok
