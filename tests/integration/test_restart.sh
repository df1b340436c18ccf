#!/usr/bin/env bash
# kill -9 of the controller during a stream of submissions and while jobs run: after
# a restart every acknowledged job is there, and running jobs finish normally.
. "$(dirname "$0")/lib.sh"
up 4
cd "$T"
long=$(script long.sh 'sleep 3; echo done')
quick=$(script quick.sh 'true')
jl=$(submit -N 2 "$long")
expect_state "$jl" R

# 8 clients submitting 25 jobs each; a client retries until its job is acknowledged
# (for 5 minutes at most: a failed test must not leave them submitting)
clients=""
extra_cleanup() { for p in $clients; do kill "$p" 2> /dev/null || true; done; }
give_up=$((SECONDS + 300))
for c in 1 2 3 4 5 6 7 8; do
  (
    for i in $(seq 25); do
      until out=$("$BIN" submit "$quick" 2>/dev/null); do
        [ $SECONDS -lt $give_up ] || exit 1
        sleep 0.05
      done
      echo "$out" >> "$T/acked.$c"
    done
  ) &
  clients="$clients $!"
done
# (60 s: under ASan, beside other tests, the first 40 take a while)
wait_for 60 sh -c "cat $T/acked.* 2>/dev/null | wc -l | awk '\$1 >= 40 {exit 0} {exit 1}'" ||
  fail "submissions did not get going"
kill -9 "$(cat "$T/c/ctld.pid")"
before=$(cat "$T"/acked.* | wc -l)
sleep 0.5
restart_ctld
wait $clients
total=$(cat "$T"/acked.* | wc -l)
[ "$total" -eq 200 ] || fail "$total of 200 submissions acknowledged"
echo "acknowledged before the kill: $before, in all: $total"
# every acknowledged job exists and runs to completion (one history query per try, not
# one show per job: 200 commands cost a minute under the sanitizers)
awk '{print $3}' "$T"/acked.* | sort > "$T/ids_acked"
not_done() {
  d history --state CD --limit 1000000 --json | awk -F'[:,]' '/"id":/ {print $2 + 0}' | sort |
    comm -23 "$T/ids_acked" -
}
all_done() { [ -z "$(not_done)" ]; }
wait_for 120 all_done || fail "acknowledged jobs not completed: $(not_done | head -5 | xargs)"
# ids are unique
[ "$(awk '{print $3}' "$T"/acked.* | sort -u | wc -l)" -eq 200 ] || fail "duplicate job ids"
# and no job beyond them: a client whose reply was lost in the kill retried with its
# submission key, which gave back its first job instead of a duplicate (issue 7, 12)
made=$(d history --limit 1000000 --json | grep -c '"name": "quick.sh"')
[ "$made" -eq 200 ] || fail "$made jobs made for 200 acknowledged submissions"
# the job that ran across the restart finished normally
expect_state "$jl" CD 30
grep -qx done "ductile-$jl.out" || fail "long job output: $(cat "ductile-$jl.out")"
# and it was not started twice
[ "$(d show "$jl" | grep -c ' start ')" -eq 1 ] || fail "long job restarted: $(d show "$jl")"
echo ok
