#!/usr/bin/env bash
# AuthType=munge: node daemons and remote commands authenticate with MUNGE credentials;
# a command over TCP is who MUNGE says it is. A private munged runs for the test.
. "$(dirname "$0")/lib.sh"
if [ "$(id -u)" -ne 0 ] || [ ! -x /usr/sbin/munged ]; then
  echo "SKIP: needs root and munged"
  exit 77
fi
m="$T/munge"
mkdir -p "$m"
head -c 1024 /dev/urandom > "$m/munge.key"
chmod 600 "$m/munge.key"
/usr/sbin/munged -f --key-file="$m/munge.key" --socket="$m/munge.sock" --pid-file="$m/munged.pid" \
  --log-file="$m/munged.log" --seed-file="$m/munged.seed" || { echo "SKIP: munged would not start"; exit 77; }
extra_cleanup() { kill "$(cat "$m/munged.pid" 2> /dev/null)" 2> /dev/null || true; }
wait_for 10 test -S "$m/munge.sock" || fail "munged socket"
up 2 --auth munge --munge-socket "$m/munge.sock"
grep -q '^AuthType = munge' "$DUCTILE_CONF" || fail "config"
d cluster status | grep -q '2 of 2 nodes up' || fail "nodes did not register with MUNGE"
cd "$T"
# A remote command: the same cluster seen without its local socket, over TCP + MUNGE.
sed "s|^ControlSocket.*|ControlSocket = $T/nonexistent.sock|" "$DUCTILE_CONF" > "$T/remote.conf"
chmod 644 "$T/remote.conf"
mkdir -m 777 "$T/pub"
printf '#!/bin/sh\nid -u\n' > "$T/pub/who.sh"
chmod 755 "$T/pub/who.sh"
j=$(cd "$T/pub" && setpriv --reuid=nobody --regid=nogroup --clear-groups -- \
  "$BIN" submit --conf "$T/remote.conf" who.sh | awk '{print $3}')
[ -n "$j" ] || fail "submission over TCP with MUNGE"
expect_state "$j" CD
[ "$(field "$j" User)" = nobody ] || fail "MUNGE identity: user is $(field "$j" User)"
[ "$(cat "$T/pub/ductile-$j.out")" = "$(id -u nobody)" ] || fail "job ran as $(cat "$T/pub/ductile-$j.out")"
# nobody may not cancel root's jobs over TCP either
printf '#!/bin/sh\nsleep 300\n' > long.sh
jl=$(submit long.sh)
expect_state "$jl" R
! setpriv --reuid=nobody --regid=nogroup --clear-groups -- "$BIN" cancel --conf "$T/remote.conf" "$jl" 2> e.txt ||
  fail "nobody cancelled root's job over TCP"
grep -q "permission denied" e.txt || fail "message: $(cat e.txt)"
! setpriv --reuid=nobody --regid=nogroup --clear-groups -- "$BIN" run --conf "$T/remote.conf" \
  --job "$jl" true 2> e.txt || fail "nobody ran a step in root's job over TCP"
grep -q "permission denied" e.txt || fail "message: $(cat e.txt)"
d cancel "$jl"
# A login host: `ductile run --job N` over TCP + MUNGE for the job's owner, and no one else.
cp long.sh "$T/pub/"
jn=$(cd "$T/pub" && setpriv --reuid=nobody --regid=nogroup --clear-groups -- \
  "$BIN" submit --conf "$T/remote.conf" -N 2 long.sh | awk '{print $3}')
expect_state "$jn" R
out=$(cd "$T/pub" && setpriv --reuid=nobody --regid=nogroup --clear-groups -- \
  "$BIN" run --conf "$T/remote.conf" --job "$jn" --label sh -c 'echo $DUCTILE_NODENAME $(id -u)') ||
  fail "run --job from a login host: $out"
[ "$(echo "$out" | sort)" = "$(printf '0: n1 %s\n1: n2 %s' "$(id -u nobody)" "$(id -u nobody)")" ] ||
  fail "run --job from a login host printed: $out"
d cancel "$jn"
echo ok
