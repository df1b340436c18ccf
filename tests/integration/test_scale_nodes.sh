#!/usr/bin/env bash
# 2,000 emulated nodes in 2 node daemons (issue 13: ductile-noded --nodes), 5,000 small
# jobs and a malleable job across them, and the controller killed and restarted in the
# middle: every node registers again, every job runs exactly once and completes, and the
# malleable job grows to 1,200 nodes after the restart. The sanitizer build runs a tenth
# of it (DUCTILE_SCALE=10: 200 nodes, 500 jobs, a growth to 120).
. "$(dirname "$0")/lib.sh"
[ "$HOSTS" = 1 ] && { echo "SKIP: one host's daemons emulate the nodes here"; exit 77; }
k=${DUCTILE_SCALE:-1}
N=$((2000 / k)) J=$((5000 / k)) G=$((1200 / k))
up $N --nodes-per-daemon $((N / 2)) --resize-timeout 120
cd "$T"
[ "$(pgrep -fc -- "--conf $DUCTILE_CONF --nodes")" = 2 ] || fail "not 2 node daemons: $(pgrep -fa ductile-noded)"
nodes_up() { d cluster status --json | sed -n 's/.*"nodes_up": \([0-9]*\).*/\1/p'; }
[ "$(nodes_up)" = $N ] || fail "nodes up: $(nodes_up)"
app="$BINDIR/tests/resize_app"
[ -x "$app" ] || fail "resize_app not built"
m=$(submit "$(script grow.sh "#DUCTILE --nodes=$((N / 4)) --malleable --min-nodes=1 --max-nodes=$((N * 3 / 4))
$app commit $T/stop")")
expect_state "$m" R
small=$(script small.sh "echo \$DUCTILE_JOB_ID >> $T/ran")
submit_many() { # COUNT: one ductile submit per job, four at a time
  seq "$1" | xargs -P 4 -n 50 sh -c 'b=$0 s=$1; shift; for i; do "$b" submit "$s" > /dev/null || exit 1; done' "$BIN" "$small" ||
    fail "a submission failed"
}
submit_many $((J / 2))
kill -9 "$(cat "$T/c/ctld.pid")"
restart_ctld
wait_for 60 sh -c "[ \"\$(\"$BIN\" cluster status --json 2> /dev/null | sed -n 's/.*\"nodes_up\": \([0-9]*\).*/\1/p')\" = $N ]" ||
  fail "not every node registered again: $(nodes_up)"
submit_many $((J - J / 2))
is_state "$m" R || fail "the malleable job: $(d show "$m")"
d resize "$m" --nodes $G > "$T/resize.out" 2>&1 || fail "resize: $(cat "$T/resize.out")"
d show "$m" | grep -Eq "^Nodes +$G " || fail "not grown: $(d show "$m")"
touch "$T/stop"
expect_state "$m" CD 60
wait_for 300 sh -c "[ \"\$(\"$BIN\" history -t CD --limit 100000 | grep -c small.sh)\" = $J ]" ||
  fail "completed: $(d history -t CD --limit 100000 | grep -c small.sh) of $J; $(d queue | head -5)"
[ "$(sort -n "$T/ran" | uniq | wc -l)" = $J ] || fail "jobs that ran: $(sort -n "$T/ran" | uniq | wc -l)"
[ -z "$(sort -n "$T/ran" | uniq -d)" ] || fail "jobs ran twice: $(sort -n "$T/ran" | uniq -d | head)"
[ "$(d history --limit 100000 | grep small.sh | grep -vc COMPLETED)" = 0 ] || fail "jobs not completed: $(d history --limit 100000 | grep small.sh | grep -v COMPLETED | head)"
echo ok
