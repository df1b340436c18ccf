#!/usr/bin/env bash
# The io-aware policy on the cluster (docs/policies.md, "io-aware"): beside a running
# I/O-heavy job, a compute-heavy job starts ahead of an I/O-heavy one that has waited
# longer, with the reason IOBalance; at alpha 0 they start in queue order.
. "$(dirname "$0")/lib.sh"
up 2 --policy io-aware:alpha=0.6
cd "$T"
s=$(script busy.sh "while [ ! -e '$T/stop' ]; do sleep 0.1; done")
scenario() { # alpha: which job starts, with which reason
  rm -f "$T/stop"
  local a h b c first second why
  a=$(submit --io-intensity 0.9 "$s")
  expect_state "$a" R
  h=$(submit "$s") # holds the other node until both wait
  expect_state "$h" R
  b=$(submit --io-intensity 0.9 "$s")
  c=$(submit --io-intensity 0.1 "$s")
  d cancel "$h" > /dev/null
  if [ "$1" = 0.6 ]; then first=$c second=$b why=IOBalance; else first=$b second=$c why=Order; fi
  expect_state "$first" R 20
  [ "$(field "$second" State)" = "PENDING (PD)" ] ||
    fail "alpha $1: job $second: $(d show "$second")"
  d show "$first" | grep -Eq "start +0 -> 1 +$why" ||
    fail "alpha $1: job $first did not start with $why: $(d show "$first")"
  touch "$T/stop"
  expect_state "$second" CD 30
}
scenario 0.6
sed -i "s|^Policy .*|Policy = io-aware:alpha=0|" "$DUCTILE_CONF"
grep -q '^Policy = io-aware:alpha=0$' "$DUCTILE_CONF" || echo "Policy = io-aware:alpha=0" >> "$DUCTILE_CONF"
# the policy takes effect when the controller restarts (docs/configuration.md)
pid=$(cat "$T/c/ctld.pid")
kill "$pid"
wait_for 10 sh -c "! kill -0 $pid 2> /dev/null" || fail "the controller did not stop"
restart_ctld
wait_for 20 d queue > /dev/null || fail "the controller did not come back"
scenario 0
echo ok
