#!/usr/bin/env bash
# Accounting as sacct gives it (issue 14): a job's steps in history (12.batch for its
# script, 12.0, 12.1 for its `ductile run` steps) with their exit codes, CPU time and
# peak memory (TotalCPU, MaxRSS: from the tasks' cgroups, or what wait4 reports), the
# job's totals, and jobs that have not ended with --running; sacct shows steps and
# running jobs by default, and the jobs alone with -X.
. "$(dirname "$0")/lib.sh"
up 2
cd "$T"
ln -s "$REAL_BIN" sacct
cat > acct.sh <<EOF
#!/bin/sh
"$REAL_BIN" run -N 1 sh -c 'exit 3'
"$REAL_BIN" run -N 2 sh -c 'i=0; while [ \$i -lt 200000 ]; do i=\$((i + 1)); done'
x=\$(head -c 60000000 /dev/zero | tr '\\0' a) # 60 MB in the script's shell
echo \${#x}
EOF
chmod 755 acct.sh
j=$(d submit --parsable -N 2 -o acct.out acct.sh)
expect_state "$j" CD 60
rows=$(d history "$j" --steps --parsable --noheader --format JobID,JobName,State,ExitCode,NNodes,TotalCPU,MaxRSS)
echo "$rows" > rows.txt
[ "$(wc -l < rows.txt)" = 4 ] || fail "history --steps: $rows"
line() { awk -F'|' -v id="$1" '($1 "") == (id "")' rows.txt; } # (as strings: 1.0 is not 1)
col() { line "$1" | cut -d'|' -f"$2"; }
line "$j.batch" | grep -q "^$j.batch|batch|COMPLETED|0:0|1|" || fail "the batch step: $(line "$j.batch")"
line "$j.0" | grep -q "^$j.0|sh|FAILED|3:0|1|" || fail "the failed step: $(line "$j.0")"
line "$j.1" | grep -q "^$j.1|sh|COMPLETED|0:0|2|" || fail "the busy step: $(line "$j.1")"
# CPU time: the busy step's two tasks counted; memory: the script held 60 MB
cpu_ms() { awk -F'[:.]' '{print ($1 * 60 + $2) * 1000 + $3}' <<< "$1"; }
[ -n "$(col "$j.1" 6)" ] && [ "$(cpu_ms "$(col "$j.1" 6)")" -ge 100 ] ||
  fail "TotalCPU of the busy step: '$(col "$j.1" 6)'"
[ "$(cpu_ms "$(col "$j" 6)")" -ge "$(cpu_ms "$(col "$j.1" 6)")" ] ||
  fail "the job's TotalCPU $(col "$j" 6) is below its step's $(col "$j.1" 6)"
rss=$(col "$j.batch" 7)
[ "${rss%K}" -ge 58000 ] 2> /dev/null || fail "MaxRSS of the batch step: '$rss'"
[ "$(col "$j" 7)" = "$rss" ] || fail "the job's MaxRSS $(col "$j" 7), not its largest step's $rss"

# --running: a job that has not ended; sacct: by default, and steps unless -X
touch go
r=$(d submit --parsable --wrap "while [ -e $T/go ]; do sleep 0.1; done")
expect_state "$r" R
d history --parsable --noheader --format JobID | grep -qx "$r|" && fail "history shows a running job"
d history --running --parsable --noheader --format JobID,State | grep -qx "$r|RUNNING|" ||
  fail "history --running: $(d history --running)"
on login ./sacct -P -n --format JobID,State > sacct.txt || fail "sacct"
grep -qx "$r|RUNNING|" sacct.txt && grep -qx "$j.batch|COMPLETED|" sacct.txt ||
  fail "sacct: $(cat sacct.txt)"
ids=$(awk -F'|' '$1 !~ /\./ {print $1}' sacct.txt)
[ "$ids" = "$(sort -n <<< "$ids")" ] || fail "sacct's jobs not in the order of their ids: $ids"
on login ./sacct -X -P -n -j "$j" --format JobID > x.txt
[ "$(cat x.txt)" = "$j|" ] || fail "sacct -X: $(cat x.txt)"
on login ./sacct -X -P -n -j "$j" -E now --format JobID > e.txt || fail "sacct -E now"
[ "$(cat e.txt)" = "$j|" ] || fail "sacct -E now: $(cat e.txt)"
# a step running when the controller stops is taken up again (issue 35): RUNNING after
# the restart, its client re-attaches, it completes; the next one is numbered after it
touch stepgo
DUCTILE_JOB_ID=$r "$BIN" run sh -c "while [ -e $T/stepgo ]; do sleep 0.1; done" > /dev/null 2> client.err &
client=$!
step_is() { d history "$r" --running --steps --parsable --noheader --format JobID,State,ExitCode | grep -qx "$1"; }
wait_for 20 step_is "$r.0|RUNNING|0:0|" || fail "no running step: $(d history "$r" --running --steps)"
pid=$(cat "$T/c/ctld.pid")
kill -9 "$pid"
wait_for 10 sh -c "! kill -0 $pid 2> /dev/null" || fail "the controller did not die"
restart_ctld
wait_for 20 d queue > /dev/null || fail "the controller did not come back"
step_is "$r.0|RUNNING|0:0|" || fail "the step after a restart: $(d history "$r" --running --steps)"
wait_for 30 grep -q reconnected client.err || fail "the client did not re-attach: $(cat client.err)"
rm stepgo
wait "$client" || fail "the step's client: exit $? ($(cat client.err))"
step_is "$r.0|COMPLETED|0:0|" || fail "the step after it ended: $(d history "$r" --running --steps)"
# the next step is numbered after it, not over it
rn=$(field "$r" NodeList)
wait_for 20 sh -c "\"$BIN\" nodes | grep -q '^$rn .*alloc'" || fail "$rn: $(d nodes)"
DUCTILE_JOB_ID=$r "$BIN" run true || fail "a step after the restart"
step_is "$r.1|COMPLETED|0:0|" && step_is "$r.0|COMPLETED|0:0|" ||
  fail "steps after a restart: $(d history "$r" --running --steps)"
rm go
expect_state "$r" CD
echo ok
