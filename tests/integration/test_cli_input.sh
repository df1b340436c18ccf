#!/usr/bin/env bash
# What users send and see (issue 7, defect 11): a script is bytes (any bytes but NUL
# pass unchanged to the node); numbers are parsed strictly, on the command line and in
# #DUCTILE lines; names, paths and the working directory are checked at submission,
# and user text is escaped when printed.
. "$(dirname "$0")/lib.sh"
up 2
cd "$T"
printf '#!/bin/sh\ntrue\n' > plain.sh
# --- 11. a script is bytes: invalid UTF-8 passes unchanged to the node
printf '#!/bin/sh\n# caf\xe9 \xff\xfe \xc3\x28\ncat "$0"\n' > bytes.sh
j=$(submit -o bytes.out bytes.sh 2> e.txt) || true
[ -n "$j" ] || fail "a script with invalid UTF-8 was refused: $(cat e.txt)"
expect_state "$j" CD
cmp bytes.sh bytes.out || fail "the script's bytes changed on their way to the node"
# ... also when it waited in the database across a controller restart
printf '#!/bin/sh\nsleep 60\n' > block.sh
jb=$(submit -N 2 block.sh)
expect_state "$jb" R
j=$(submit -o bytes2.out bytes.sh)
expect_state "$j" PD
old=$(cat "$T/c/ctld.pid")
kill -9 "$old"
wait_for 10 sh -c "! kill -0 $old 2>/dev/null" || fail "the controller did not die"
setsid "$BINDIR/ductiled" --conf "$DUCTILE_CONF" >> "$T/c/log/ductiled.log" 2>&1 < /dev/null &
echo $! > "$T/c/ctld.pid"
wait_for 10 d queue || fail "the controller did not come back"
d cancel "$jb"
expect_state "$j" CD 30
cmp bytes.sh bytes2.out || fail "the script's bytes changed in the database"

# numbers are parsed strictly: on the command line and in #DUCTILE lines
for t in inf nan 0x10 1e3 -5 ' 5' 5x 1.5.2 '' 10:99 1:2:3:4 99999999999999999999; do
  ! d submit --time="$t" plain.sh > o.txt 2> e.txt || fail "--time='$t' accepted: $(cat o.txt)"
  grep -q -- "--time" e.txt || fail "--time='$t': unclear error: $(cat e.txt)"
  ! grep -q "cannot encode" e.txt || fail "--time='$t': $(cat e.txt)"
done
for n in 0x2 +2 2.0 ' 2' 0 -1 99999999999999999999; do
  ! d submit -N "$n" plain.sh > o.txt 2> e.txt || fail "-N '$n' accepted: $(cat o.txt)"
  grep -q -- "--nodes" e.txt || fail "-N '$n': unclear error: $(cat e.txt)"
done
printf '#!/bin/sh\n#DUCTILE --time=0x10\ntrue\n' > hex.sh
! d submit hex.sh 2> e.txt || fail "#DUCTILE --time=0x10 accepted"
grep -q "hex.sh:2: #DUCTILE --time" e.txt || fail "directive error: $(cat e.txt)"
printf '#!/bin/sh\n#DUCTILE --nodes=0x1\ntrue\n' > hexn.sh
! d submit hexn.sh 2> e.txt || fail "#DUCTILE --nodes=0x1 accepted"
# what is valid stays valid
j=$(submit --time=90 plain.sh); [ "$(field "$j" TimeLimit)" = "1:30:00" ] || fail "--time=90: $(field "$j" TimeLimit)"
j=$(submit --time=1:30 plain.sh); [ "$(field "$j" TimeLimit)" = "1:30" ] || fail "--time=1:30"
j=$(submit --time=2h plain.sh); [ "$(field "$j" TimeLimit)" = "2:00:00" ] || fail "--time=2h"
# the longest limit the command accepts (100 years) is accepted by the controller too
d submit --time=36500d plain.sh > o.txt 2> e.txt || fail "--time=36500d refused: $(cat e.txt)"
d cancel "$(awk '/^Submitted job/ {print $3}' o.txt)" > /dev/null
j=$(submit --time=1-02:03:04 plain.sh); [ "$(field "$j" TimeLimit)" = "1-02:03:04" ] || fail "--time=1-02:03:04"

# names, output paths and the working directory: no control characters
for bad in "$(printf 'a\nb')" "$(printf 'x\033[2Jy')" "$(printf 'tab\there')"; do
  ! d submit -J "$bad" plain.sh > o.txt 2> e.txt || fail "name with a control character accepted"
  grep -q "job name.*control character" e.txt || fail "name: unclear error: $(cat e.txt)"
  ! d submit -o "$bad" plain.sh > o.txt 2> e.txt || fail "output path with a control character accepted"
  grep -q "output.*control character" e.txt || fail "output: unclear error: $(cat e.txt)"
  ! d submit -e "$bad" plain.sh > o.txt 2> e.txt || fail "error path with a control character accepted"
done
mkdir "$(printf 'dir\nx')"
! (cd "$(printf 'dir\nx')" && d submit "$T/plain.sh") > o.txt 2> e.txt || fail "cwd with a newline accepted"
grep -q "working directory.*control character" e.txt || fail "cwd: unclear error: $(cat e.txt)"
# names from elsewhere (an older controller's database) are escaped when printed
jn=$(submit -J rawname plain.sh)
expect_state "$jn" CD
sqlite3 "$T/c/state/ductile.db" "PRAGMA busy_timeout=5000; UPDATE jobs SET name = 'a' || char(10) || 'b' || char(27) || '[2J' WHERE id = $jn" ||
  fail "cannot edit the database"
d history > h.txt
grep -qF "$(printf '\033')" h.txt && fail "history printed an escape character raw"
grep -qE "^$jn +a\\\\nb\\\\x1b\[2J " h.txt || fail "history does not escape: $(grep -a "^$jn" h.txt)"
d show "$jn" > s.txt
grep -qxF 'Name           a\nb\x1b[2J' s.txt || fail "show does not escape: $(grep -a Name s.txt)"

echo ok
