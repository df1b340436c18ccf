#!/usr/bin/env bash
# Denial of service without authentication (issue 7, defect 6): unauthenticated
# TCP peers announcing big frames must not grow the controller's memory; an ordinary
# user holding every connection it can must not lock root out; a half-sent frame that
# stalls is closed after FrameTimeout.
. "$(dirname "$0")/lib.sh"
GARBAGE=${GARBAGE:?set by ctest}
if [ "$(id -u)" -ne 0 ] || ! command -v setpriv > /dev/null || ! command -v prlimit > /dev/null; then
  echo "needs root, setpriv and prlimit"
  exit 77
fi
# (AuthTimeout 60: section 3's flood of 5,000 connections outlasts the default 10 s)
up 1 --set AuthTimeout=60
cd "$T"
port=$(awk '$1 == "ControlPort" {print $3}' "$DUCTILE_CONF")
sock="$T/c/ctld.sock"
ctld_pid() { cat "$T/c/ctld.pid"; }
rss_kb() { awk '/^VmRSS/ {print $2}' "/proc/$(ctld_pid)/status"; }
nfds() { ls "/proc/$(ctld_pid)/fd" | wc -l; }
as_nobody() { setpriv --reuid=nobody --regid=nogroup --clear-groups -- "$@"; }
held=""
extra_cleanup() { [ -z "$held" ] || kill $held 2>/dev/null || true; }
release() { kill $held 2>/dev/null || true; wait $held 2>/dev/null || true; held=""; }

# 1. 200 unauthenticated TCP connections, each announcing a 2 MiB frame and sending
#    all of it but one byte. Before the fix the controller buffered every byte
#    (about 400 MB); now it refuses the announced length at the header.
d queue > /dev/null
rss0=$(rss_kb)
"$GARBAGE" tcp 127.0.0.1 "$port" bigframe 200 > big.out 2>&1 &
held=$!
wait_for 300 grep -q '^sent' big.out || fail "the big frames were not sent: $(cat big.out)"
d queue > /dev/null || fail "root's queue failed during the big-frame flood"
rss1=$(rss_kb)
echo "controller RSS: ${rss0} kB before, ${rss1} kB with 200 big unauthenticated frames"
[ "$rss1" -le $((rss0 * 4 + 16384)) ] || fail "controller RSS grew from ${rss0} to ${rss1} kB"
release

# 2. An ordinary user opens more connections than the controller has descriptors
#    (its limit lowered to 1024 for the test). Root's command must still work, and the
#    user is told why its own extra connections are refused.
prlimit --pid "$(ctld_pid)" --nofile=1024:1024
as_nobody "$GARBAGE" unix "$sock" hold 1500 > hold.out 2>&1 &
held=$!
peak=0 # the controller's descriptors during the flood: refusals must release theirs at once
end=$((SECONDS + 120))
until grep -q '^held' hold.out; do
  [ $SECONDS -lt $end ] || fail "the local flood did not finish: $(cat hold.out)"
  n=$(nfds)
  [ "$n" -le "$peak" ] || peak=$n
  sleep 0.01
done
wait_for 10 d queue || fail "root's queue fails while nobody holds connections: $(d queue 2>&1)"
d queue > /dev/null || fail "root's queue failed"
d cluster status | grep -q '1 of 1 nodes up' || fail "node lost during the flood"
! as_nobody "$BIN" queue > /dev/null 2> e.txt || fail "nobody got past its connection limit"
grep -q "too many connections" e.txt || fail "refusal message: $(cat e.txt)"
n=$(nfds)
echo "controller descriptors with nobody holding $(cat hold.out): $n (at most $peak seen during the flood)"
[ "$n" -lt 200 ] || fail "the controller holds $n descriptors"
[ "$peak" -lt 500 ] || fail "the controller reached $peak descriptors during the flood"
release

# 3. Unauthenticated TCP connections from 40 addresses (issue 34): at 128 each they took
#    all 4,096 of the controller's connections, the operators' reserve too, and root's
#    queue was refused; the same on a node daemon's step port refused the jobs' steps.
#    Now at most MaxUnauthConnections (a quarter of MaxConnections) are let in, and at
#    most half the reserve. The controller restarts with its own limit again (raised to
#    its hard limit), after section 2 lowered it.
kill "$(ctld_pid)"
wait_for 20 sh -c "! kill -0 $(ctld_pid) 2>/dev/null" || fail "controller did not stop"
setsid "$BINDIR/ductiled" --conf "$DUCTILE_CONF" >> "$T/c/log/ductiled.log" 2>&1 < /dev/null &
echo $! > "$T/c/ctld.pid"
wait_for 30 sh -c "'$BIN' cluster status | grep -q '1 of 1 nodes up'" || fail "controller did not come back"
stepper=$(script stepper.sh "while [ ! -e '$T/go' ]; do sleep 0.1; done; '$BIN' run true && echo stepped")
sj=$(submit -o "$T/stepper.out" "$stepper")
expect_state "$sj" R
noded_port=$(ss -Htlnp | awk '/ductile-noded/ {n = split($4, a, ":"); print a[n]; exit}')
[ -n "$noded_port" ] || fail "no step port: $(ss -tlnp)"
GARBAGE_SOURCES=40 "$GARBAGE" tcp 127.0.0.1 "$port" hold 5000 > flood.out 2>&1 &
held=$!
GARBAGE_SOURCES=40 "$GARBAGE" tcp 127.0.0.1 "$noded_port" hold 5000 > flood2.out 2>&1 &
held="$held $!"
wait_for 60 grep -q '^held' flood.out || fail "the flood did not finish: $(cat flood.out)"
wait_for 60 grep -q '^held' flood2.out || fail "the step port's flood did not finish: $(cat flood2.out)"
d queue > /dev/null || fail "root's queue refused during a flood from 40 addresses"
as_nobody "$BIN" queue > /dev/null || fail "nobody's queue refused during a flood from 40 addresses"
touch "$T/go"
expect_state "$sj" CD 30
grep -q stepped "$T/stepper.out" || fail "the job's step during the flood: $(cat "$T/stepper.out")"
grep -q "MaxUnauthConnections" "$T/c/log/ductiled.log" || fail "no refusal logged"
echo "flood from 40 addresses: $(cat flood.out) on the controller, $(cat flood2.out) on the step port"
release

# 4. A frame that stops half-way is closed after FrameTimeout (2 s here), on TCP and
#    on the local socket; with a small MaxConnections and no per-user cap, the
#    reserve keeps root's way in. The controller is restarted with these settings.
kill "$(ctld_pid)"
wait_for 20 sh -c "! kill -0 $(ctld_pid) 2>/dev/null" || fail "controller did not stop"
sed -i '/^AuthTimeout/d' "$DUCTILE_CONF"
printf 'FrameTimeout = 2\nAuthTimeout = 3\nMaxConnections = 48\nReservedConnections = 8\nMaxConnectionsPerUser = 0\n' >> "$DUCTILE_CONF"
setsid "$BINDIR/ductiled" --conf "$DUCTILE_CONF" >> "$T/c/log/ductiled.log" 2>&1 < /dev/null &
echo $! > "$T/c/ctld.pid"
wait_for 30 sh -c "'$BIN' cluster status | grep -q '1 of 1 nodes up'" || fail "controller did not come back"
"$GARBAGE" tcp 127.0.0.1 "$port" stall 20 > stall-tcp.out || fail "TCP stall: $(cat stall-tcp.out)"
"$GARBAGE" unix "$sock" stall 20 > stall-unix.out || fail "unix stall: $(cat stall-unix.out)"
echo "stalled frames: TCP $(cat stall-tcp.out), unix $(cat stall-unix.out)"
as_nobody "$GARBAGE" unix "$sock" hold 200 > hold2.out 2>&1 &
held=$!
wait_for 60 grep -q '^held' hold2.out || fail "the second local flood did not finish: $(cat hold2.out)"
d queue > /dev/null || fail "root's queue failed with the ordinary connections all taken"
! as_nobody "$BIN" queue > /dev/null 2> e.txt || fail "nobody got into the reserve"
grep -q "reserved for operators" e.txt || fail "reserve message: $(cat e.txt)"
release
# and an unauthenticated TCP peer is closed after AuthTimeout (3 s here)
"$GARBAGE" tcp 127.0.0.1 "$port" silent 20 > silent.out || fail "silent TCP peer: $(cat silent.out)"
echo "silent unauthenticated TCP peer: $(cat silent.out)"
# the node daemon's long-lived connection survives the timeouts
sleep_job=$(script idle.sh 'sleep 6')
j=$(submit "$sleep_job")
expect_state "$j" CD 30
d cluster status | grep -q '1 of 1 nodes up' || fail "node lost"
echo ok
