#!/usr/bin/env bash
# Job-side traffic through the node daemon: a compute host has no controller socket and
# no user credentials, yet everything a job does works there (`ductile run`, `rsh`,
# commands, submissions), as the job's owner and nobody else. A controller restart
# while a step streams output ends the step with a clear status; nothing hangs.
. "$(dirname "$0")/lib.sh"
# Node daemons hold a descriptor per relayed client and per node sending step output:
# they take the hard open-files limit, and jobs get the one the daemons started with.
soft=1024
[ "$(ulimit -Hn)" = unlimited ] || [ "$(ulimit -Hn)" -gt $soft ] || soft=$(ulimit -Hn)
ulimit -Sn $soft
up 3
cd "$T"
noded1=$(cat "$T"/c/noded-n1.pid)
[ "$(awk '/Max open files/ {print $4}' /proc/$noded1/limits)" = "$(ulimit -Hn)" ] ||
  fail "the node daemon's open-files limit: $(grep 'open files' /proc/$noded1/limits)"
s=$(script lim.sh 'ulimit -n')
jl=$(submit "$s")
expect_state "$jl" CD
[ "$(cat "ductile-$jl.out")" = "$soft" ] || fail "a job's open-files limit: $(cat "ductile-$jl.out"), not $soft"
export PATH="$BINDIR:$PATH"
# What a compute host's configuration looks like from a job: the controller's socket is
# on another host.
sed "s|^ControlSocket.*|ControlSocket = $T/not-on-this-host.sock|" "$DUCTILE_CONF" > "$T/compute.conf"
chmod 644 "$T/compute.conf"
printf '#!/bin/sh\necho inner ran\n' > "$T/inner.sh"
chmod 755 "$T/inner.sh"
s=$(script relay.sh '#DUCTILE --nodes=2
export DUCTILE_CONF='"$T"'/compute.conf
ductile run --label sh -c "echo on \$DUCTILE_NODENAME"
echo "run=$?"
ductile rsh n2 "echo rsh on \$DUCTILE_NODENAME"
echo "rsh=$?"
ductile show $DUCTILE_JOB_ID | grep "^User"
ductile queue > /dev/null
echo "queue=$?"
ductile submit '"$T"'/inner.sh')
j=$(submit "$s")
expect_state "$j" CD 30
out="ductile-$j.out"
grep -qx "0: on n1" "$out" && grep -qx "1: on n2" "$out" || fail "run on a compute host: $(cat "$out")"
grep -qx "run=0" "$out" || fail "run status: $(cat "$out")"
grep -qx "rsh on n2" "$out" && grep -qx "rsh=0" "$out" || fail "rsh on a compute host: $(cat "$out")"
grep -Eq "^User +root" "$out" || fail "show from a job: $(cat "$out")"
grep -qx "queue=0" "$out" || fail "queue from a job: $(cat "$out")"
inner=$(awk '/^Submitted job/ {print $3}' "$out")
[ -n "$inner" ] || fail "submission from a job: $(cat "$out")"
expect_state "$inner" CD 30
grep -qx "inner ran" "ductile-$inner.out" || fail "inner job output"

# A step's output goes from its tasks' nodes straight to the node of its client, not
# through the controller: every line arrives, before the step's end, and the controller
# passes none of it on. From the controller's own host it comes through the controller.
relayed() { d cluster status --json | awk -F'[:,]' '/step_output_bytes/ {gsub(/ /, "", $2); print $2}'; }
b0=$(relayed)
[ -n "$b0" ] || fail "cluster status --json: $(d cluster status --json)"
s=$(script big.sh '#DUCTILE --nodes=3
export DUCTILE_CONF='"$T"'/compute.conf
ductile run sh -c "seq 1 100000" | wc -l > '"$T"'/big.lines
touch '"$T"'/big.done
sleep 300')
jb=$(submit "$s")
wait_for 60 test -e "$T/big.done" || fail "the big step did not end"
[ "$(cat "$T/big.lines")" -eq 300000 ] || fail "direct output: $(cat "$T/big.lines") lines, not 300000"
b1=$(relayed)
[ $((b1 - b0)) -lt 4096 ] || fail "the controller relayed $((b1 - b0)) bytes of a direct step's output"
[ "$(d run --job "$jb" sh -c 'seq 1 100000' | wc -l)" -eq 300000 ] || fail "output through the controller"
# A step started from outside the job knows its job too (a command in it may use ductile).
[ "$(d run --job "$jb" --node n2 sh -c 'echo $DUCTILE_JOB_ID')" = "$jb" ] || fail "DUCTILE_JOB_ID in a step"
b2=$(relayed)
[ $((b2 - b1)) -gt 1000000 ] || fail "the controller counted $((b2 - b1)) bytes of a step it relayed"
d cancel "$jb"

# The node daemon vouches only for who the kernel says is calling: a job of nobody
# cannot act on root's jobs through it.
s=$(script long.sh 'sleep 300')
jl=$(submit "$s")
expect_state "$jl" R
mkdir -m 777 "$T/pub"
printf '#!/bin/sh\nexport DUCTILE_CONF=%s/compute.conf\nductile cancel %s; echo "cancel=$?"\nductile run --job %s true; echo "run=$?"\n' \
  "$T" "$jl" "$jl" > "$T/pub/evil.sh"
chmod 755 "$T/pub/evil.sh"
je=$(cd "$T/pub" && as_nobody "$BIN" submit evil.sh | awk '{print $3}')
[ -n "$je" ] || fail "submission as nobody"
expect_state "$je" CD 30
eo="$T/pub/ductile-$je.out"
grep -qx "cancel=20" "$eo" || fail "nobody's job cancelled root's job: $(cat "$eo")"
grep -qx "run=1" "$eo" || fail "nobody's job ran a step in root's job: $(cat "$eo")"
grep -q "permission denied" "$eo" || fail "message: $(cat "$eo")"
is_state "$jl" R || fail "root's job is $(state "$jl")"
d cancel "$jl"

# A controller restart while a step streams output (issue 35): `ductile run` says it
# lost the connection, takes its step up again through the node daemon once that is
# back, and the tasks stream on (tests/integration/test_step_restart.sh checks every line).
s=$(script stream.sh '#DUCTILE --nodes=2
export DUCTILE_CONF='"$T"'/compute.conf
ductile run sh -c "echo \$\$ > '"$T"'/task.\$DUCTILE_PROCID; while [ ! -e '"$T"'/stop ]; do echo tick; sleep 0.05; done" \
  > '"$T"'/stream.out 2> '"$T"'/stream.err
echo "run=$?" > '"$T"'/stream.rc
sleep 300')
js=$(submit "$s")
wait_for 20 sh -c "[ \$(grep -c tick '$T/stream.out' 2>/dev/null || echo 0) -gt 10 ]" || fail "no output streamed"
wait_for 10 test -s "$T/task.1" || fail "task 1 did not start"
p0=$(cat "$T/task.0"); p1=$(cat "$T/task.1")
kill -9 "$(cat "$T/c/ctld.pid")"
wait_for 10 grep -q "lost the connection to the controller" "$T/stream.err" ||
  fail "ductile run did not notice: $(cat "$T/stream.err")"
restart_ctld
wait_for 30 grep -q "reconnected" "$T/stream.err" || fail "no re-attach: $(cat "$T/stream.err")"
alive "$p0" && alive "$p1" || fail "the step's tasks died with the controller"
n=$(grep -c tick "$T/stream.out")
wait_for 20 sh -c "[ \$(grep -c tick '$T/stream.out') -gt $((n + 10)) ]" || fail "no output after the restart"
touch "$T/stop"
wait_for 20 test -s "$T/stream.rc" || fail "the step did not end"
grep -qx "run=0" "$T/stream.rc" || fail "status: $(cat "$T/stream.rc") $(cat "$T/stream.err")"
expect_state "$js" R
# A step started after the restart is a new step: only its own output comes back.
d run --job "$js" sh -c 'echo fresh' > "$T/fresh.out" || fail "step after the restart"
[ "$(sort -u "$T/fresh.out")" = fresh ] || fail "step after the restart: $(head "$T/fresh.out")"
d cancel "$js"
echo ok
