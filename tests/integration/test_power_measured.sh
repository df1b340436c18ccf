#!/usr/bin/env bash
# Measured power drives the corridor (docs/power.md, "What jobs draw"): the node daemons
# read RAPL counters (PowerSource = rapl; PowercapDir is a directory whose package
# counter a loop advances at 350 W, standing for the hardware), a malleable job declared
# at 170 W per node is measured at 350 W, the controller widens what the engine plans
# with, and the power policy shrinks the job to bring the draw under the corridor's
# upper bound, which its declared power alone never broke.
. "$(dirname "$0")/lib.sh"
cd "$T"
rapl="$T/rapl/intel-rapl:0"
mkdir -p "$rapl"
echo 1152921504606846976 > "$rapl/max_energy_range_uj"
echo 0 > "$rapl/energy_uj"
# the counter: 350 W is 3.5e8 uJ a second, written every 10 ms
python3 -c '
import os, sys, time
d = sys.argv[1]
t0 = time.monotonic()
while os.path.isdir(d):
    with open(d + "/energy_uj.tmp", "w") as f:
        f.write("%d\n" % int((time.monotonic() - t0) * 3.5e8))
    os.replace(d + "/energy_uj.tmp", d + "/energy_uj")
    time.sleep(0.01)
' "$rapl" &
counter=$!
extra_cleanup() { kill "$counter" 2> /dev/null || true; }
# heartbeats every 3 s: a counter written every 10 ms by a process that a loaded machine
# may hold back for a tenth of a second reads within a few % over 3 s (1 s gave 20 %)
up 6 --policy power --node-timeout 9 --set PowerSource=rapl --set "PowercapDir=$T/rapl" \
  --set PowerUpper=1100
export PATH="$BINDIR:$PATH"
app="$BINDIR/tests/resize_app"
[ -x "$app" ] || fail "resize_app not built"
rapl_nodes() { [ "$(d nodes | grep -c 'W(rapl)')" = 6 ]; }
wait_for 30 rapl_nodes || fail "nodes without RAPL readings: $(d nodes)"
# (the first reading may be low: its start preceded the counter's writer)
n1_350() { d nodes | grep -Eq "n1 .* 3[0-9][0-9]W\(rapl\)"; }
wait_for 30 n1_350 || fail "n1 does not read about 350 W: $(d nodes)"

f=$(script cool.sh "#DUCTILE --nodes=2 --malleable --min-nodes=1 --max-nodes=4
#DUCTILE --power-min=170 --power-max=170
exec $app commit $T/stop-cool")
j=$(submit "$f")
wait_for 20 grep -q attached "$T/ductile-$j.out" || fail "no application: $(d show "$j")"
size() { field "$j" Nodes | awk '{print $1}'; }
# declared 170 W: the corridor (at most 1100 W, idle nodes at 71 W) lets it grow to 4
# (4 x 170 + 2 x 71 = 822 W); measured at 350 W it must come down to 2
# (2 x 350 + 4 x 71 = 984 W; 3 x 350 + 3 x 71 = 1263 W is above; a reading 5 % off
# either way gives the same)
is_size() { [ "$(size)" = "$1" ]; }
wait_for 60 grep -Eq "job $j draws 3[0-9][0-9] W per node, declared 170-170 W" "$T/c/log/ductiled.log" ||
  fail "the measured draw was not taken: $(tail -5 "$T/c/log/ductiled.log"; d power; d nodes)"
wait_for 60 is_size 2 || fail "not shrunk to 2 nodes: $(d show "$j"; d power)"
d power | grep -Eq "measured: planned with 170-3[0-9][0-9] W per node" || fail "power: $(d power)"
# and it stays there: no oscillation back to the declared 170 W over two samples
for _ in 1 2 3 4 5 6; do
  sleep 1
  is_size 2 || fail "the size moved again: $(d show "$j")"
done
touch "$T/stop-cool"
expect_state "$j" CD 30
echo "test_power_measured: ok"
