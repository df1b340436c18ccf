#!/usr/bin/env bash
# A job's memory (--mem, per node) and its processes (MaxProcessesPerJob) are limits of
# its cgroups on its nodes, memory.max and pids.max (they were not limited: --mem 256M
# touched 2 GiB, 600 processes ran); a job killed for its memory ends OUT_OF_MEMORY, as
# Slurm says. Where a node's cgroup v2 hierarchy lacks the controller, `ductile nodes`
# says that the limit is not enforced there (and its jobs run without it).
. "$(dirname "$0")/lib.sh"
up 1 --set MaxProcessesPerJob=64
cd "$T"
enforced() { d nodes --json | jq -e ".[0].limits.$1" > /dev/null; }
d nodes --json | jq -e '.[0].limits | has("memory") and has("pids")' > /dev/null ||
  fail "nodes --json does not say which limits n1 enforces: $(d nodes --json)"
d nodes > nodes.txt
for l in memory:--mem pids:MaxProcessesPerJob; do
  if enforced "${l%%:*}"; then
    ! grep -q "^note: ${l#*:} is not enforced" nodes.txt || fail "an enforced limit said not: $(cat nodes.txt)"
  else
    grep -qx "note: ${l#*:} is not enforced on n1 (no cgroup v2 ${l%%:*} controller there)" nodes.txt ||
      fail "nodes does not say that ${l#*:} is not enforced: $(cat nodes.txt)"
  fi
done

# a job within its memory, and one that passes it (dd's 256 MiB buffer, all touched)
ok=$(submit --mem 64M --wrap 'dd if=/dev/zero of=/dev/null bs=16M count=1')
big=$(submit --mem 64M --wrap 'dd if=/dev/zero of=/dev/null bs=256M count=1')
expect_state "$ok" CD 30
if enforced memory; then
  expect_state "$big" OOM 30
  field "$big" Reason | grep -q OutOfMemory || fail "reason: $(d show "$big")"
  d history --state OOM | grep -q "^$big " || fail "history: $(d history)"
else
  echo "SKIP (part): no cgroup v2 memory controller here, the job ran without its limit"
  expect_state "$big" CD 30
fi

# a fork bomb stops at the cap (64, the script and pgrep among them)
bomb=$(submit --wrap 'for i in $(seq 100); do sleep 60 & done 2> /dev/null; echo "live=$(pgrep -c -s 0)"; kill 0')
wait_for 30 grep -q '^live=' "ductile-$bomb.out" || fail "the fork bomb did not report: $(d show "$bomb")"
live=$(sed -n 's/^live=//p' "ductile-$bomb.out")
if enforced pids; then
  [ "$live" -le 64 ] || fail "$live processes in a job capped at 64"
else
  echo "SKIP (part): no cgroup v2 pids controller here, $live processes ran"
fi
echo ok
