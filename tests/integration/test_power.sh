#!/usr/bin/env bash
# The power corridor on a running cluster (issue 10; docs/power.md): node daemons report
# modelled power every heartbeat (`ductile nodes`), jobs declare their power per node
# (--power-min/--power-max) or get it from their history, two malleable jobs (a "hot"
# one at 250 W per node, a "cool" one at 170 W) are resized through the handshake when
# an operator lowers the corridor, the draw is back inside within a bounded time, the
# raised corridor (set to come at a later time) fills the idle node, the corridor an
# operator set survives a controller restart, and jobs' energy is in show and history.
. "$(dirname "$0")/lib.sh"
# six nodes, heartbeats every second, the power policy
up 6 --policy power --node-timeout 3
cd "$T"
export PATH="$BINDIR:$PATH"
app="$BINDIR/tests/resize_app"
[ -x "$app" ] || fail "resize_app not built"

# bad input, in the user's words, and nothing submitted
s=$(script plain.sh "true")
! d submit --power-min abc "$s" 2> e.txt || fail "--power-min abc accepted"
grep -q "'abc' is not a power in watts per node" e.txt || fail "--power-min abc: $(cat e.txt)"
! d submit --power-min 300 --power-max 200 "$s" 2> e.txt || fail "max below min accepted"
grep -q "is below --power-min" e.txt || fail "max below min: $(cat e.txt)"
! d power corridor --lower 2000 --upper 1000 2> e.txt || fail "an empty corridor accepted"
grep -q "is below --lower" e.txt || fail "empty corridor: $(cat e.txt)"
! d power corridor --lower 1000 2> e.txt || fail "a corridor without --upper accepted"
grep -q "give both --lower" e.txt || fail "no --upper: $(cat e.txt)"
! d power corridor --lower 1 --upper 2 --at soon 2> e.txt || fail "--at soon accepted"
grep -q "'soon' is not a time" e.txt || fail "--at soon: $(cat e.txt)"
! as_nobody "$BIN" power corridor --lower 1 --upper 2 2> e.txt || fail "a user changed the corridor"
grep -q "only operators" e.txt || fail "user's change: $(cat e.txt)"
[ -z "$(d queue | tail -n +2)" ] || fail "a refused submission left a job: $(d queue)"

# every idle node reports the model's idle power (71 W by default)
idle_nodes() { [ "$(d nodes | grep -c '71W(model)')" = 6 ]; }
wait_for 10 idle_nodes || fail "nodes without their power: $(d nodes)"

# draw: the measured draw, W
draw() { d power | awk '$1 == "Draw" {print $2}'; }
inside() { local w; w=$(draw); [ -n "$w" ] && [ "$w" -ge "$1" ] && [ "$w" -le "$2" ]; }
size() { field "$1" Nodes | awk '{print $1}'; }
sizes() { [ "$(size "$1")" = "$3" ] && [ "$(size "$2")" = "$4" ]; }
# app_job NAME WATTS: a malleable job of 2 (1 to 4) nodes whose application takes every
# offer; it ends when $T/stop-NAME exists
app_job() {
  local f j
  f=$(script "$1.sh" "#DUCTILE --nodes=2 --malleable --min-nodes=1 --max-nodes=4
#DUCTILE --power-min=$2 --power-max=$2
exec $app commit $T/stop-$1")
  j=$(submit "$f")
  wait_for 20 grep -q attached "$T/ductile-$j.out" || fail "job $j ($1): no application: $(d show "$j")"
  echo "$j"
}
hot=$(app_job hot 250)
cool=$(app_job cool 170)
field "$hot" Power | grep -q "250-250 W per node (declared)" || fail "hot's power: $(d show "$hot")"
# no corridor yet: the policy gives the idle nodes to the malleable jobs
all_used() { [ $(( $(size "$hot") + $(size "$cool") )) = 6 ]; }
wait_for 20 all_used || fail "idle nodes left: $(d queue)"

# 1. The operator lowers the corridor to 1000-1100 W. The model's best answer: one idle
# node (none would take at least 1180 W), hot 2 and cool 3 nodes (1081 W; the fewest
# nodes moved among the answers with one idle node).
d power corridor --lower 1000 --upper 1100 > out.txt || fail "corridor: $(cat out.txt)"
grep -q "^Corridor *1000-1100 W (operator" out.txt || fail "corridor output: $(cat out.txt)"
lowered=$SECONDS
wait_for 30 inside 1000 1100 || fail "not inside 1000-1100 W within 30 s: $(d power; d queue)"
echo "inside the lowered corridor after $((SECONDS - lowered)) s"
sizes "$hot" "$cool" 2 3 || fail "sizes $(size "$hot") and $(size "$cool"), expected 2 and 3"
d show "$hot" | grep -Eq "shrink +4 -> 2" || fail "no shrink in: $(d show "$hot")"
d power --json | grep -q '"watt_seconds"' || fail "power --json without the violations"

# 2. Raised to 1200-1400 W in 3 s: shown as the next change, then applied; the idle
# node goes to the hot job (3 and 3: 1260 W, one node moved).
d power corridor --lower 1200 --upper 1400 --at +3s > out.txt || fail "--at: $(cat out.txt)"
grep -q "^Corridor 1200-1400 W from" out.txt || fail "--at output: $(cat out.txt)"
d power | grep -q "^Next *1200-1400 W (operator, at" || fail "no next change: $(d power)"
inside 1000 1100 || fail "the change to come was applied early: $(d power)"
wait_for 30 inside 1200 1400 || fail "not inside 1200-1400 W: $(d power; d queue)"
wait_for 10 all_used || fail "the idle node was not filled: $(d queue)"
sizes "$hot" "$cool" 3 3 || fail "sizes $(size "$hot") and $(size "$cool"), expected 3 and 3"

# 3. The operator's corridor survives a controller restart.
kill -9 "$(cat "$T/c/ctld.pid")"
restart_ctld
wait_for 20 d power || fail "the controller did not come back"
d power | grep -q "^Corridor *1200-1400 W (operator" || fail "corridor lost: $(d power)"

# A corridor that cannot be met (six nodes draw 1500 W at most): reported, and the
# closest plan taken (no loop); a time in the past means now, also after a restart
d power corridor --lower 5000 --upper 6000 --at 2020-01-01T00:00 > out.txt || fail "past --at"
grep -q "^Corridor *5000-6000 W (operator, since $(date +%Y)" out.txt || fail "past --at: $(cat out.txt)"
unreachable() { d power | grep -q "^Unreachable .* cannot be met"; }
wait_for 20 unreachable || fail "an unreachable corridor not reported: $(d power)"
# logged at the next sample of the draw (every heartbeat)
wait_for 10 grep -q "the power corridor \[5000, 6000\] W cannot be met" "$T/c/log/ductiled.log" ||
  fail "not in the log: $(tail -5 "$T/c/log/ductiled.log")"
# the draw stays outside: counted as a violation, with its time and W s outside (the
# lowered corridor above may have been met between two samples, and counted nothing)
violated() { d power | grep -Eq "^Violations *[1-9][0-9]* since .*: [1-9][0-9.]* s outside, [1-9][0-9]* W s; OUTSIDE now"; }
wait_for 10 violated || fail "no violation counted: $(d power)"
kill -9 "$(cat "$T/c/ctld.pid")"
restart_ctld
wait_for 20 d power || fail "the controller did not come back"
d power | grep -q "^Corridor *5000-6000 W (operator" || fail "restart: $(d power)"

# 4. A forecast of the recorded draw (samples since the controller started), with its
# measured error
has_forecast() { d power --forecast > out.txt && grep -q "^Forecast *next" out.txt; }
wait_for 20 has_forecast || fail "no forecast: $(cat out.txt)"
grep -q "^Forecast *next 6 samples" out.txt || fail "no forecast: $(cat out.txt)"
grep -q "^Error *over [0-9]* recorded samples: one ahead MAE" out.txt || fail "no error: $(cat out.txt)"

# 5. Energy: the jobs end; show and history have it
touch "$T/stop-hot" "$T/stop-cool"
expect_state "$hot" CD 30
expect_state "$cool" CD 30
energy_j() { d history --json | python3 -c "import json,sys; print(int([j for j in json.load(sys.stdin) if j['id']==$1][0]['energy']))"; }
e=$(energy_j "$hot")
ns=$(d show "$hot" | awk '$1 == "NodeSeconds" {print $2}')
# about 250 W on every node-second it held: below by at most a heartbeat at each resize
# (a node that joined draws 71 W in its last reading until its next heartbeat; five
# resizes of 1-2 nodes in about 40 node-s), never above
[ "$e" -ge $((ns * 175)) ] && [ "$e" -le $((ns * 260)) ] || fail "hot's energy $e J for $ns node-s"
echo "hot: $e J for $ns node-s"
field "$hot" Energy | grep -q "kJ" || fail "show without energy: $(d show "$hot")"
d history | grep -q "ENERGY" || fail "history without energy: $(d history)"

# 6. A job that declares nothing: estimated from the finished jobs of the same user,
# name and size (hot.sh: about 250 W), else DefaultJobPower (200 W)
f=$(script est.sh "sleep 30")
j=$(submit -J hot.sh --nodes 2 --rigid "$f")
# (hot's energy per node-second, within the bounds its energy was checked against
# above: on a loaded machine it came to 197 W, under the 200 a stricter check wanted)
est=$(field "$j" Power | sed -nE 's/^([0-9]+)-([0-9]+) W per node \(history\)$/\1 \2/p')
[ -n "$est" ] && [ "${est% *}" -ge 175 ] && [ "${est#* }" -le 260 ] ||
  fail "no estimate from history: $(field "$j" Power)"
j2=$(submit -J other --nodes 2 "$f")
field "$j2" Power | grep -q "^200-200 W per node (default)" || fail "default: $(field "$j2" Power)"
d cancel "$j" "$j2" > /dev/null
echo "test_power: ok"
