#!/usr/bin/env bash
# An array being made (a part a turn of the loop) when the state's disk fills: each
# part's batch fails and reloads the controller, so the parts must not come a turn each
# (a reload per turn, the node daemons reconnected each time), but one a second; once
# space is back the array is made whole, each index once, and its submission answered.
. "$(dirname "$0")/lib.sh"
state_on_small_tmpfs 16m # (the WAL of the array alone takes several MB)
export DUCTILE_TEST_ARRAY_PART=1
up 1
cd "$T"
log="$T/c/log/ductiled.log"
pid=$(cat "$T/c/ctld.pid")
"$BIN" submit -H --array 0-2999 --wrap true > s.out 2> s.err &
sub=$!
some_made() { [ "$(d queue --json | grep -c array_task)" -gt 20 ]; }
wait_for 20 some_made || fail "no part made: $(cat s.err)"
dd if=/dev/zero of="$state/filler" bs=64k status=none 2>/dev/null || true
wait_for 20 grep -q 'the batch was rolled back' "$log" || fail "no batch failed on the full disk"
reloads() { grep -c 'reloaded .* live jobs from the database' "$log" || true; }
r0=$(reloads)
sleep 3 # (not a wait for an event: the reloads that 3 s of a full disk cause; a part a turn
# made 113, a part a second makes 3 or 4)
r1=$(reloads)
[ $((r1 - r0)) -le 6 ] || fail "$((r1 - r0)) reloads in 3 s of a full disk while an array is made"
alive "$pid" || fail "the controller died: $(tail "$log")"
rm -f "$state/filler"
wait "$sub" || fail "the submission: $(cat s.err)"
a=$(awk '/^Submitted job/ {print $3}' s.out)
[ -n "$a" ] || fail "no array id: $(cat s.out)"
d queue --json | python3 -c '
import json, sys
t = sorted(j["array_task"] for j in json.load(sys.stdin) if j.get("array_id") == int(sys.argv[1]))
sys.exit(0 if t == list(range(3000)) else "the array: %d elements, %d distinct" % (len(t), len(set(t))))' "$a" ||
  fail "the array after the full disk"
echo PASS
