#!/usr/bin/env bash
# Steps through a full state directory (issue 35): each failed commit rolls the batch
# back and reloads the controller's state, which disconnects the node daemons (they
# register again); a `ductile run` inside a job (relayed by its node daemon) and one
# from the controller's host go on through it, re-attach if they lost their link, and
# every line of their output arrives once, in order.
. "$(dirname "$0")/lib.sh"
[ "$(id -u)" -eq 0 ] || { echo "SKIP: needs root to mount a small tmpfs"; exit 77; }
[ "$HOSTS" = 1 ] && { echo "SKIP: the state directory is mounted from the test's host"; exit 77; }
state="$T/c/state"
mkdir -p "$state"
mount -t tmpfs -o size=3m ductile-test-full "$state" || { echo "SKIP: cannot mount tmpfs"; exit 77; }
extra_cleanup() {
  "$BIN" cluster down --dir "$T/c" >/dev/null 2>&1 || true
  umount -l "$state" 2>/dev/null || true
}
up 2
cd "$T"
export PATH="$BINDIR:$PATH"
ticker='i=0; while [ ! -e '"$T"'/stop ]; do i=$((i+1)); echo tick $i; sleep 0.02; done; echo last $i'
s=$(script stream.sh '#DUCTILE --nodes=2
ductile run --label sh -c '"'$ticker'"' > '"$T"'/in.out 2> '"$T"'/in.err
echo "run=$?" > '"$T"'/in.rc
while [ ! -e '"$T"'/end ]; do sleep 0.1; done')
j=$(submit "$s")
wait_for 20 sh -c "[ \$(grep -c tick '$T/in.out' 2>/dev/null || echo 0) -gt 10 ]" || fail "no output streamed"
"$BIN" run --job "$j" -N 1 --label sh -c "$ticker" > out.out 2> out.err &
outside=$!
wait_for 20 sh -c "[ \$(grep -c tick '$T/out.out' 2>/dev/null || echo 0) -gt 10 ]" || fail "no output from the outside step"
pid=$(cat "$T/c/ctld.pid")
dd if=/dev/zero of="$state/filler" bs=64k status=none 2>/dev/null || true
# writes fail for a while: each failed batch reloads the controller
quick=$(script quick.sh 'true')
for i in 1 2 3 4 5; do
  ! d submit "$quick" > /dev/null 2>&1 || fail "submitted on a full disk"
  n_in=$(grep -c tick in.out) n_out=$(grep -c tick out.out)
  wait_for 20 sh -c "[ \$(grep -c tick '$T/in.out') -gt $((n_in + 5)) ] && [ \$(grep -c tick '$T/out.out') -gt $((n_out + 5)) ]" ||
    fail "output stopped on a full disk (round $i): $(cat in.err out.err)"
done
grep -q "reloaded" "$T/c/log/ductiled.log" || fail "no reload happened (test assumption): $(tail "$T/c/log/ductiled.log")"
alive "$pid" || fail "the controller died"
rm -f "$state/filler"
submits() { d submit "$quick" > /dev/null 2>&1; }
wait_for 20 submits || fail "writes did not resume"
touch "$T/stop"
wait_for 30 test -s in.rc || fail "the step in the job did not end: $(cat in.err)"
grep -qx "run=0" in.rc || fail "the step in the job: $(cat in.rc) $(cat in.err)"
wait "$outside" || fail "the step from outside: exit $? $(cat out.err)"
for f in in.out:2 out.out:1; do
  file=${f%:*} n=${f#*:}
  for ((r = 0; r < n; r++)); do
    awk -v r="$r: " 'index($0, r) == 1 { sub(r, ""); print }' "$file" | awk -v who="$file task $r" '
      $1 == "tick" { if ($2 != k + 1) { printf "%s: tick %s after %d\n", who, $2, k; exit 1 } k = $2; next }
      $1 == "last" { if ($2 != k) { printf "%s: last %s after %d\n", who, $2, k; exit 1 } done = 1; next }
      END { if (!done) { printf "%s: no last line\n", who; exit 1 } }' || fail "output of $file"
  done
done
touch "$T/end"
expect_state "$j" CD 30
echo ok
