#!/usr/bin/env bash
# A node daemon that cannot reach the controller says so in its log, with the address
# and the reason, once per reason (it retries every second), instead of nothing.
. "$(dirname "$0")/lib.sh"
up 1
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
sed -e "s|^ControlPort.*|ControlPort = $port|" -e "s|^StateDir.*|StateDir = $T/other|" \
  "$DUCTILE_CONF" > "$T/wrong.conf"
"$BINDIR/ductile-noded" --conf "$T/wrong.conf" --node n1 > "$T/wrong.log" 2>&1 &
pid=$!
extra_cleanup() { kill "$pid" 2> /dev/null || true; }
wait_for 10 grep -q "cannot connect to the controller at 127.0.0.1:$port: connection refused" \
  "$T/wrong.log" || fail "no reason in the log: $(cat "$T/wrong.log")"
# three more attempts (one a second) say nothing new
! wait_for 3 sh -c "[ \$(grep -c 'cannot connect' '$T/wrong.log') -gt 1 ]" ||
  fail "said more than once: $(cat "$T/wrong.log")"

# With AuthType = munge and no munged behind MungeSocket: the reason once, not at every
# attempt (it was about 6 lines a second).
kill "$pid" 2> /dev/null || true
grep -v -i -e '^AuthType' -e '^MungeSocket' -e '^AuthKeyFile' "$DUCTILE_CONF" |
  sed -e "s|^StateDir.*|StateDir = $T/other2|" > "$T/munge.conf"
printf 'AuthType = munge\nMungeSocket = %s/no-munged.sock\n' "$T" >> "$T/munge.conf"
"$BINDIR/ductile-noded" --conf "$T/munge.conf" --node n1 > "$T/munge.log" 2>&1 &
pid=$!
wait_for 10 grep -q "no MUNGE credential from munged at $T/no-munged.sock" "$T/munge.log" ||
  fail "no reason in the log: $(cat "$T/munge.log")"
! wait_for 3 sh -c "[ \$(grep -c -i 'munge' '$T/munge.log') -gt 1 ]" ||
  fail "said more than once: $(head "$T/munge.log")"
echo ok
