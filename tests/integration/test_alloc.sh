#!/usr/bin/env bash
# Interactive work (issue 14): ductile alloc (salloc) waits for nodes and runs a command
# with the job's variables, whose `ductile run` (srun) starts steps on them, and
# releases them when it exits (the job COMPLETED); ductile run (srun) outside a job
# makes an allocation of its own for its step; a wait given up with Ctrl-C cancels the
# job; a job that ends under the command (its time limit) sends it SIGHUP.
. "$(dirname "$0")/lib.sh"
up 2
cd "$T"
ln -s "$REAL_BIN" salloc
ln -s "$REAL_BIN" srun
R=$REAL_BIN # the command inside an allocation, on the login host

# --- alloc: the command runs here, its steps on the nodes; its exit status is alloc's
set +e
d alloc -N 2 sh -c "echo \$SLURM_JOB_NODELIST \$DUCTILE_JOB_NUM_NODES > nl; \"$R\" run -l sh -c 'echo \$SLURM_PROCID' > steps; exit 3" 2> alloc.err
rc=$?
set -e
[ "$rc" = 3 ] || fail "alloc's exit status $rc, not the command's 3: $(cat alloc.err)"
grep -q "granted: 2 nodes" alloc.err || fail "alloc said: $(cat alloc.err)"
j=$(sed -n 's/.*job \([0-9]*\) granted.*/\1/p' alloc.err)
[ -n "$j" ] || fail "no job in: $(cat alloc.err)"
read -r nl nn < nl
[ "$nn" = 2 ] && [ -n "$nl" ] || fail "the command's variables: $(cat nl)"
[ "$(sort steps | tr '\n' ' ')" = "0: 0 1: 1 " ] || fail "steps in the allocation: $(cat steps)"
expect_state "$j" CD
[ "$(field "$j" Name)" = interactive ] || fail "name: $(field "$j" Name)"

# --- salloc with Slurm's options
on login ./salloc -N 1 -J mine sh -c 'echo "$SLURM_JOB_NAME $SLURM_NNODES" > s.out' 2> /dev/null ||
  fail "salloc"
[ "$(cat s.out)" = "mine 1" ] || fail "salloc's variables: $(cat s.out)"

# --- run / srun outside a job: an allocation for one step, released after it
out=$(on login ./srun -N 2 -l -t 5 sh -c 'echo $SLURM_JOB_NUM_NODES; exit 4' 2> srun.err) && rc=0 || rc=$?
[ "$rc" = 4 ] || fail "srun's exit status $rc, not 4: $(cat srun.err)"
[ "$(sort <<< "$out" | tr '\n' ' ')" = "0: 2 1: 2 " ] || fail "srun outside a job: $out"
refused "no command given" d run -N 1
refused "not for an interactive allocation" d alloc -o x.out true
[ ! -e x.out ] || fail "a refused alloc made its output file"
refused "outside a job there is none" d run --node n1 true

# --- waiting for busy nodes: Ctrl-C gives up and cancels the job
touch busy
b=$(d submit --parsable -N 2 --wrap "while [ -e $T/busy ]; do sleep 0.1; done")
expect_state "$b" R
"$BIN" alloc -N 1 true 2> wait.err & # (not d: $! is then alloc itself)
apid=$!
wait_for 20 grep -q "queued, waiting" wait.err || fail "alloc did not say it waits: $(cat wait.err)"
w=$(sed -n 's/.*job \([0-9]*\) queued.*/\1/p' wait.err)
kill -INT "$apid"
wait "$apid" && rc=0 || rc=$?
[ "$rc" = 130 ] || fail "alloc given up with Ctrl-C exited $rc, not 130"
grep -q "cancelling job $w" wait.err || fail "alloc given up said: $(cat wait.err)"
expect_state "$w" CA
rm busy
expect_state "$b" CD

# --- the job ends under the command: it gets SIGHUP
set +e
d alloc -N 1 -t 0:02 sh -c 'trap "echo hup > hup; exit 9" HUP; while :; do sleep 0.1; done' 2> rev.err
rc=$?
set -e
[ "$rc" = 9 ] && [ -e hup ] || fail "revoked allocation: exit $rc: $(cat rev.err)"
grep -q "the allocation is revoked" rev.err || fail "alloc said: $(cat rev.err)"

# --- released before its script runs on its node: the release is not lost (the job
# is running to the controller a moment before its script is; a node whose starts take
# 1.5 s between fork and exec makes that moment long). A lost release left the nodes
# held until the time limit, and the next allocation waited for them (a clean-clone CI
# hung so).
old=$(cat "$T/c/noded-n1.pid")
kill -9 "$old"
wait_for 10 sh -c "! kill -0 $old 2> /dev/null" || fail "noded n1 survived kill -9"
DUCTILE_TEST_EXEC_DELAY_MS=1500 restart_noded n1
wait_for 20 sh -c "\"$BIN\" nodes | grep -q '^n1 .*idle'" || fail "n1 is not back: $(d nodes)"
d alloc -N 2 true 2> early.err || fail "alloc: $(cat early.err)"
e=$(sed -n 's/.*job \([0-9]*\) granted.*/\1/p' early.err)
expect_state "$e" CD 20
echo ok
