#!/usr/bin/env bash
# A measured I/O intensity (docs/policies.md "io-aware", docs/user-guide.md): the node
# daemon reads the job's cgroups' io.pressure (cgroup v2 PSI, "some" total) every
# heartbeat and reports the share of the interval stalled on I/O; the controller keeps
# the run's time-weighted mean (IOMeasured) and a later submission of the same user,
# name and size without --io-intensity is planned with it ("measured over its last
# run"); a declared value wins, another size finds none.
# A host without cgroup v2 (or whose job cgroups have no io.pressure, or whose storage
# never stalls a writer) cannot measure: the test says so and skips (77).
. "$(dirname "$0")/lib.sh"
up 2 --policy io-aware --set HeartbeatInterval=1
cd "$T"

cgdir=$(sed -n "s/.*jobs' cgroups under \(.*\)$/\1/p" "$T"/c/log/noded-*.log 2> /dev/null | head -1)
if [ -z "$cgdir" ]; then
  echo "SKIP: the node daemons run jobs without cgroup v2 here: nothing to measure"
  exit 77
fi

# the workload: writes that reach the disk (O_DIRECT where the file system has it, and
# an fsync), for 6 s of its own time
s=$(script io.sh "end=\$((\$(date +%s) + 6))
while [ \$(date +%s) -lt \$end ]; do
  dd if=/dev/zero of='$T'/f.\$\$ bs=1M count=64 oflag=direct conv=fsync 2>/dev/null ||
    dd if=/dev/zero of='$T'/f.\$\$ bs=1M count=64 conv=fsync 2>/dev/null
done
rm -f '$T'/f.\$\$")
j=$(submit -J iowriter "$s")
[ -n "$j" ] || fail "no job"
expect_state "$j" R 20
# what the node daemon reads: the job's cgroups' io.pressure (on whichever node runs it)
stall=0
has_file=0
read_stall() {
  local f t
  for f in $(ls -d "$(dirname "$cgdir")"/*/job_"$j" "$(dirname "$cgdir")"/*/job_"$j"_* 2> /dev/null); do
    [ -r "$f/io.pressure" ] || continue
    has_file=1
    t=$(awk '$1 == "some" {for (i = 2; i <= NF; i++) if ($i ~ /^total=/) {sub(/total=/, "", $i); print $i}}' "$f/io.pressure")
    [ -n "$t" ] && [ "$t" -gt "$stall" ] && stall=$t
  done
  return 0
}
while is_state "$j" R; do
  read_stall
  sleep 0.2 # sampling the counter while the job runs, not waiting for it
done
expect_state "$j" CD 30
if [ "$has_file" = 0 ]; then
  echo "SKIP: the job's cgroups under $(dirname "$cgdir") have no io.pressure (no PSI): nothing to measure"
  exit 77
fi
if [ "$stall" = 0 ]; then
  echo "SKIP: io.pressure is there but this host's storage never stalled the job's writes (total stayed 0): no measurement to check"
  exit 77
fi
# the run's own measurement, kept with its record
measured=$(d show "$j" --json | awk -F'[:,]' '/"io_measured"/ {print $2 + 0}')
[ -n "$measured" ] || fail "job $j stalled ${stall} us on I/O but has no measurement: $(d show "$j")"
awk -v m="$measured" 'BEGIN {exit !(m > 0 && m <= 1)}' || fail "job $j measured $measured"
field "$j" IOMeasured | grep -q "from its cgroups" || fail "show: $(d show "$j")"

# the next submission of the same user, name and size: planned with it
w=$(script wait.sh "while [ ! -e '$T/stop' ]; do sleep 0.1; done")
j2=$(submit -J iowriter "$w")
field "$j2" IOIntensity | grep -q "(measured over its last run)" ||
  fail "job $j2 is not planned with the measurement: $(d show "$j2")"
js=$(d show "$j2" --json)
echo "$js" | grep -q '"io_from": *"measured"' || fail "--json: $js"
io2=$(echo "$js" | awk -F'[:,]' '/"io_intensity"/ {print $2 + 0}')
awk -v a="$io2" -v b="$measured" 'BEGIN {d = a - b; exit !(d < 1e-6 && d > -1e-6)}' ||
  fail "job $j2 planned with $io2, its last run measured $measured"
# a declared value wins; another size has no history
j3=$(submit -J iowriter --io-intensity 0.05 "$w")
field "$j3" IOIntensity | grep -q "^0.05 (declared)" || fail "declared: $(d show "$j3")"
d show "$j3" --json | grep -q '"io_from": *"declared"' || fail "--json: $(d show "$j3" --json)"
j4=$(submit -J iowriter --nodes 2 "$w")
[ -z "$(field "$j4" IOIntensity)" ] || fail "another size took the history: $(d show "$j4")"

# kept across a controller restart
pid=$(cat "$T/c/ctld.pid")
kill -9 "$pid"
wait_for 10 sh -c "! kill -0 $pid" || fail "the controller did not die"
restart_ctld
wait_for 20 d queue || fail "the controller did not come back"
field "$j2" IOIntensity | grep -q "(measured over its last run)" ||
  fail "after a restart: $(d show "$j2")"
touch "$T/stop"
for x in "$j2" "$j3" "$j4"; do expect_state "$x" CD 60; done
echo "test_io_measured: ok (job $j measured $measured, stalled ${stall} us)"
