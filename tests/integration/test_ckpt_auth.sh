#!/usr/bin/env bash
# The security issue "checkpoint data is open to every user": root's job with
# --checkpoint-agents has its agent on the checkpoint node n2, keyed with the job's key.
# Another user (nobody), who finds the agent's ports with ss:
# - on the control channel, without the job's key, is dropped and learns nothing (from
#   the login host: an attacker on the network); a connection that never proves it is
#   closed, and a flood of them does not flood the agent's log;
# - on the data endpoint, on n2 itself, guesses region keys 1, 2, 3 at offset 0
#   (tests/tools/fab_guess.c), reading and writing: all refused, and the restore that
#   follows, from the agent's memory (the files removed), checks every element (it read
#   "2 elements differ" when a guess got through);
# - on the endpoints of the job's processes in pull mode (the agent reads and writes
#   their registered memory), on n1, while they commit: all refused, and the job ends
#   with every commit through the agent.
. "$(dirname "$0")/lib.sh"
mpi_setup
export ASAN_OPTIONS="${ASAN_OPTIONS:-}:detect_leaks=0" # the job's Open MPI (see test_mpi.sh)
up 2 --set CheckpointNodes=n2
cd "$T"
ckpt_app_setup
cp "$BINDIR/fab_guess" "$T/fab_guess"
D="$T/ckpt"

# HOST ADDR PID...: the TCP ports the processes listen on at ADDR (wildcard listeners,
# which no libfabric endpoint of ours uses, left out)
listen_ports() {
  local host=$1 addr=$2; shift 2
  local pat; pat=$(printf 'pid=%s,|' "$@")
  on "$host" ss -tlnpH | grep -E "${pat%|}" |
    awk -v a="$addr" '{n = split($4, s, ":"); if (s[1] == a) print s[n]}' | sort -u
}
# guess HOST [OPTIONS] ADDR PORT...: fab_guess as nobody on HOST; its output in $T/guess.out
guess() {
  local host=$1; shift
  on "$host" setpriv --reuid=nobody --regid=nogroup --clear-groups -- "$T/fab_guess" "$@" \
    > "$T/guess.out" 2>&1
}

# The job: two versions in the agent; a run that restarts from the second and computes
# (waits) before its next commit, the agent serving its restart meanwhile (the window a
# guess needs: tcp;ofi_rxm moves data only while the target progresses its endpoint,
# which an agent does between a client's request and its ck_done); beside it, once told,
# a restore that checks every element; then a run in pull mode.
s=$(script auth.sh "#DUCTILE --nodes=1
#DUCTILE --checkpoint-agents
mpirun --oversubscribe -np 2 ./app $D write 2 || exit 1
echo written
while [ ! -e $T/go ]; do sleep 0.1; done
DT_CKPT_APP_HURRY=$T/hurry1 mpirun --oversubscribe -np 2 ./app $D run 3 60 &
while [ ! -e $T/check ]; do sleep 0.1; done
mpirun --oversubscribe -np 2 ./app $D check
wait
DUCTILE_CKPT_TRANSFER=pull mpirun --oversubscribe -np 2 ./app $T/ckpt2 run 40 0.5 > $T/pull.out 2>&1")
j=$(submit "$s")
out="$T/ductile-$j.out"
wait_for 60 grep -q "^written" "$out" || fail "job $j did not commit: $(cat "$out" 2> /dev/null)"
ag=$(field "$j" CkptAgents | awk '{print $1}')
ahost=${ag%:*} aport=${ag##*:}
apid=$(agent_pids n2 "$j")
[ -n "$apid" ] && [ "$(echo "$apid" | grep -c .)" = 1 ] || fail "job $j's agent: '$apid' ($ag)"
# the agent flushed version 2; the files go, so that restores read the agent's memory
latest_is() { [ "$(cat "$D/app/latest" 2> /dev/null)" = 2 ]; }
wait_for 20 latest_is || fail "version 2 not flushed: $(ls "$D/app" 2>&1)"
rm -rf "$D/app"
touch "$T/go"
wait_for 60 grep -q "^starting at step 2" "$out" || fail "no restart: $(cat "$out")"

# the control channel: another user's key is not the job's
on login sh -c "head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n' > $T/nobody.key; echo >> $T/nobody.key"
chown nobody "$T/nobody.key"
chmod 600 "$T/nobody.key"
! as_nobody "$BIN" checkpoints --agents "$ag" --key-file "$T/nobody.key" > "$T/ck" 2>&1 ||
  fail "another user's key listed the agent: $(cat "$T/ck")"
! grep -q "$D" "$T/ck" || fail "another user learnt what the agent holds: $(cat "$T/ck")"

# a connection that never proves the key is closed within the agent's authentication
# deadline (10 s: opened now, looked at once the rest is done); a flood of bad frames
# leaves about a line a second in the agent's log (in its manager's spool), not one each
nobody_on() { local h=$1; shift; on "$h" setpriv --reuid=nobody --regid=nogroup --clear-groups -- "$@"; }
nobody_on n2 bash -c 'exec 3<>"/dev/tcp/$0/$1" && cat <&3 > /dev/null; echo closed' "$ahost" "$aport" \
  > "$T/idle.out" 2>&1 &
idle=$!
nobody_on n2 bash -c 'for i in $(seq 30); do exec 3<>"/dev/tcp/$0/$1" || exit 1
  printf "%064d" 0 >&3; cat <&3 > /dev/null; exec 3<&-; done' "$ahost" "$aport" ||
  fail "could not connect to the agent's control port"
alog=$(on n2 sh -c "cat $(spool_of n2)/agent.$j.*/log")
lines=$(echo "$alog" | grep -c "connection from" || true)
[ "$lines" -ge 1 ] && [ "$lines" -le 10 ] || fail "the agent logged $lines refusals of 30: $alog"

# the data endpoint: the agent's other port
dports=$(listen_ports n2 "$ahost" $apid | grep -vx "$aport" || true)
[ "$(echo "$dports" | grep -c .)" = 1 ] ||
  fail "the agent's data port: '$dports' ($(on n2 ss -tlnpH | grep "pid=$apid,"))"
guess n2 -t 300 -k 3 "$ahost" $dports || fail "a guess on the agent's data port got through: $(cat "$T/guess.out")"
grep -q "0 of 3 reads and 0 of 3 writes got through" "$T/guess.out" || fail "fab_guess: $(cat "$T/guess.out")"

# a restore of version 2 from the agent's memory checks every element; the run goes on
touch "$T/check"
wait_for 60 grep -q "restored" "$out" || fail "no restore: $(cat "$out")"
grep -qx "restored version 2 on 2 processes" "$out" || fail "restore after the attack: $(cat "$out")"
touch "$T/hurry1"
wait_for 60 grep -qx "done at step 3" "$out" || fail "the restarted run: $(cat "$out")"

# the job's processes in pull mode, while they commit (each progresses its endpoint
# only during its commits, every 0.5 s: a guess waits 1.5 s for one)
apps() {
  local p
  for p in $(pgrep -f "$T/ckpt2 run" || true); do
    [ "$(cat "/proc/$p/comm" 2> /dev/null)" = app ] && echo "$p"
  done
}
pull="$T/pull.out"
stepped() { grep -q "^step 3$" "$pull"; }
wait_for 60 stepped || fail "the pull-mode run did not commit: $(cat "$out" "$pull")"
pids=$(apps)
[ "$(echo "$pids" | grep -c .)" = 2 ] || fail "the pull-mode processes: '$pids'"
naddr=$(if [ "$HOSTS" = 1 ]; then host_ip n1; else echo 127.0.0.1; fi)
pports=$(listen_ports n1 "$naddr" $pids)
[ -n "$pports" ] || fail "no port of the job's processes: $(on n1 ss -tlnpH)"
guess n1 -t 1500 -k 1 "$naddr" $pports ||
  fail "a guess on the processes' ports got through: $(cat "$T/guess.out")"
for p in $pids; do alive "$p" || fail "the run ended before the guesses were over: $(cat "$pull")"; done
[ "$(grep -c "0 of 1 reads and 0 of 1 writes got through" "$T/guess.out")" = "$(echo "$pports" | grep -c .)" ] ||
  fail "fab_guess: $(cat "$T/guess.out")"
hurry
expect_state "$j" CD 60
grep -qx "done at step 40" "$pull" || fail "the pull-mode run: $(cat "$pull")"
! grep -q "using the checkpoint files" "$out" "$pull" || fail "a commit fell back to the files: $(cat "$out" "$pull")"
wait_for 20 grep -q closed "$T/idle.out" || fail "an unauthenticated connection is still open"
wait "$idle" || true
echo "ok: the agent's port $dports and the processes' ports $(echo $pports) refused every guess"
