#!/usr/bin/env bash
# A node daemon asked to start many jobs at once keeps beating: its starts take turns
# with its heartbeats. One daemon emulating 2,500 nodes (issue 13) took 31 s to start
# 2,500 jobs handed to it in one pass, all in one turn of its loop, and the controller
# declared its nodes down (NodeTimeout). Here 40 nodes in one daemon, each start made to
# cost 150 ms (DUCTILE_TEST_START_COST_MS, as a fork of a large daemon), NodeTimeout 3 s:
# the 40 starts take 6 s.
. "$(dirname "$0")/lib.sh"
[ "$HOSTS" = 1 ] && { echo "SKIP: one host's daemon emulates the nodes here"; exit 77; }
export DUCTILE_TEST_START_COST_MS=150
up 40 --nodes-per-daemon 40 --node-timeout 3
cd "$T"
# a job on every node holds them while 40 one-node jobs queue; its end frees them all at
# once, and one pass starts the 40
hold=$(submit -N 40 "$(script hold.sh "while [ ! -e $T/go ]; do sleep 0.05; done")")
expect_state "$hold" R 30
one=$(script one.sh 'sleep 1')
for _ in $(seq 40); do submit -N 1 "$one" >> "$T/ids"; done
[ "$(wc -l < "$T/ids")" = 40 ] || fail "submissions: $(cat "$T/ids")"
touch "$T/go"
expect_state "$hold" CD 30
for j in $(cat "$T/ids"); do expect_state "$j" CD 60; done
# neither side lost the other: the controller declared no node down, and the daemon
# never went NodeTimeout without reading the controller (its own loop stalled)
! grep -q "not responding" "$T/c/log/ductiled.log" ||
  fail "nodes declared down while their daemon started jobs: $(grep "not responding" "$T/c/log/ductiled.log" | head -3)"
! grep -q "nothing heard from the controller" "$T"/c/log/noded-*.log ||
  fail "the daemon stalled: $(grep -h "nothing heard" "$T"/c/log/noded-*.log | head -3)"
echo ok
