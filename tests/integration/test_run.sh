#!/usr/bin/env bash
# Multi-node jobs with `ductile run`: a task per node, output and exit codes forwarded;
# tasks die with their job and with their client.
. "$(dirname "$0")/lib.sh"
up 4
cd "$T"
export PATH="$BINDIR:$PATH"
s=$(script steps.sh '#DUCTILE --nodes=3
ductile run --label sh -c "echo task \$DUCTILE_PROCID/\$DUCTILE_NPROCS on \$DUCTILE_NODENAME; exit \$DUCTILE_PROCID"
echo "status=$?"
ductile run -N 2 sh -c "echo x"
ductile run --node n3 sh -c "echo only \$DUCTILE_NODENAME"
ductile rsh n2 "echo rsh on \$DUCTILE_NODENAME"
ductile rsh n4 true 2>&1 | sed "s/^/rsh4: /"
ductile run /bin/nosuch
echo "missing=$?"')
j=$(submit "$s")
expect_state "$j" CD 30
out="ductile-$j.out"
for r in 0 1 2; do
  grep -qx "$r: task $r/3 on n$((r + 1))" "$out" || fail "task $r: $(cat "$out")"
done
grep -qx "status=2" "$out" || fail "largest exit status: $(cat "$out")"
[ "$(grep -cx x "$out")" -eq 2 ] || fail "-N 2: $(cat "$out")"
grep -qx "only n3" "$out" || fail "--node"
grep -qx "rsh on n2" "$out" || fail "rsh: $(cat "$out")"
grep -qxF "rsh4: ductile: node n4 is not in job $j's allocation (n[1-3])" "$out" ||
  fail "rsh to a node outside the job: $(grep rsh4 "$out")"
grep -qx "missing=127" "$out" || fail "exec failure status: $(cat "$out")"
grep -q "cannot execute /bin/nosuch" "$out" || fail "exec failure message: $(cat "$out")"

# Cancelling a job kills its tasks on every node.
s=$(script hang.sh '#DUCTILE --nodes=2
ductile run sh -c "echo \$\$ > '"$T"'/task.\$DUCTILE_PROCID; exec sleep 300"')
j=$(submit "$s")
tasks_started() { test -s "$T/task.0" && test -s "$T/task.1"; }
wait_for 20 tasks_started || fail "tasks did not start"
p0=$(cat "$T/task.0"); p1=$(cat "$T/task.1")
alive "$p0" && alive "$p1" || fail "tasks not running"
d cancel "$j"
expect_state "$j" CA
! alive "$p0" || fail "task 0 survived its job"
! alive "$p1" || fail "task 1 survived its job"

# A client that goes away takes its step with it.
s=$(script client.sh '#DUCTILE --nodes=1
sleep 300')
j=$(submit "$s")
expect_state "$j" R
rm -f "$T/task.0"
DUCTILE_JOB_ID=$j "$BIN" run sh -c "echo \$\$ > $T/task.0; exec sleep 300" &
client=$!
wait_for 20 test -s "$T/task.0" || fail "step did not start"
p=$(cat "$T/task.0")
kill -9 "$client"
wait_for 10 sh -c "! kill -0 $p 2>/dev/null || grep -q '^State:.*Z' /proc/$p/status" ||
  fail "the step outlived its client"
# someone else's job: refused
if [ "$(id -u)" -eq 0 ] && command -v setpriv >/dev/null; then
  ! DUCTILE_JOB_ID=$j as_nobody "$BIN" run true 2> e.txt ||
    fail "nobody ran a step in root's job"
  grep -q "permission denied" e.txt || fail "message: $(cat e.txt)"
fi
# standard input: to the first task, whole and in order (binary too); a task that does
# not read it does not hang the command
seq 1 100000 | DUCTILE_JOB_ID=$j "$BIN" run -l sh -c 'wc -l' > wc.out ||
  fail "input through run"
grep -qx "0: 100000" wc.out && ! grep -v "^0: " wc.out | grep -vqx "[0-9]*: 0" ||
  fail "input to rank 0 only: $(cat wc.out)"
head -c 300000 /dev/urandom > in.bin
DUCTILE_JOB_ID=$j "$BIN" run -N 1 sh -c "cat > $T/out.bin" < in.bin || fail "binary input"
cmp in.bin out.bin || fail "the task read other bytes than run was given"
seq 1 1000000 > big.txt
DUCTILE_JOB_ID=$j "$BIN" run -N 1 true < big.txt || fail "a task that reads nothing"
# a step_input with neither data nor its end is refused (the node daemon died of one)
mkfifo feed
DUCTILE_JOB_ID=$j "$BIN" run -N 1 cat < feed > fed.out &
reader=$!
exec 7> feed # (the step's input stays open)
step_on() { d history "$j" --running --steps --parsable --noheader --format JobID,JobName,State | grep "|cat|RUNNING|" | cut -d'|' -f1; }
has_step() { [ -n "$(step_on)" ]; }
wait_for 20 has_step || fail "no cat step: $(d history "$j" --running --steps)"
s=$(step_on); s=$((${s#*.} + 1)) # history's 12.3 is step 4
printf '{"type":"step_input","job":%s,"step":%s}' "$j" "$s" > bad.json
out=$(on ctl "${GARBAGE:?set by ctest}" unix "$(ctl_sock)" request bad.json)
grep -q "give either data or eof" <<< "$out" || fail "step_input without data: $out"
echo after > /dev/fd/7
exec 7>&-
wait "$reader" || fail "the step after a bad step_input"
[ "$(cat fed.out)" = after ] || fail "the step's input: $(cat fed.out)"
for f in "$T"/c/noded-*.pid; do
  kill -0 "$(cat "$f")" || fail "a node daemon died ($f)"
done
d cancel "$j"
echo ok
