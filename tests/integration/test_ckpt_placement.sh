#!/usr/bin/env bash
# Algorithm 6 by the managers' measurements (seed 002 §7.1.2; docs/checkpointing.md):
# two checkpoint nodes, n4 holding one job's large checkpoint and moving nothing, n5
# holding another job's small checkpoints and moving them ten times a second. By what
# the managers measure, `memory` places the next job's agent on n5 (the most free
# memory: counting agents alone, each node has one and n4 would come first), and after
# `ductile reconfigure`, `bandwidth` and `frequency` place it on n4 (no traffic, no
# commits there).
. "$(dirname "$0")/lib.sh"
mpi_setup
export ASAN_OPTIONS="${ASAN_OPTIONS:-}:detect_leaks=0" # Open MPI's (see test_mpi.sh)
up 5 --set "CheckpointNodes=n[4-5]" --set CheckpointNodeMemory=60 --set CheckpointAgentMemory=20 \
  --set HeartbeatInterval=1
cd "$T"
ckpt_app_setup
# where a job's single agent is
agent_on() { field "$1" CkptAgents | sed -n 's/.*(on \(n[0-9]\)).*/\1/p'; }
placed() { [ -n "$(agent_on "$1")" ]; }
# what n's manager measured last, from `ductile nodes --json`
meas() { # NODE KEY
  d nodes --json | python3 -c "import json,sys
n=[x for x in json.load(sys.stdin) if x['name']=='$1'][0]
print(n.get('checkpoints',{}).get('$2',0))"
}

# job a: one version of 8 MiB in its agent on n4, then nothing moves
s=$(script big.sh "#DUCTILE --checkpoint-agents
DT_CKPT_APP_PAD_KIB=8192 mpirun ./app $T/cka write 1
echo written
while [ ! -e stop.\$DUCTILE_JOB_ID ]; do sleep 0.1; done")
a=$(submit "$s")
wait_for 30 placed "$a" || fail "job $a: $(d show "$a")"
[ "$(agent_on "$a")" = n4 ] || fail "job $a's agent: $(d show "$a")"
written() { grep -qx written "ductile-$a.out" 2> /dev/null; }
wait_for 60 written || fail "job $a: $(cat "ductile-$a.out")"
held_n4() { python3 -c "import sys; sys.exit(not $(meas n4 held) > 8e6)"; }
wait_for 30 held_n4 || fail "n4's measurements: $(d nodes --json)"
# job b: small versions ten times a second in its agent on n5
s=$(script busy.sh "#DUCTILE --checkpoint-agents
mpirun ./app $T/ckb run 100000 0.1")
b=$(submit "$s")
wait_for 30 placed "$b" || fail "job $b: $(d show "$b")"
[ "$(agent_on "$b")" = n5 ] || fail "job $b's agent: $(d show "$b")"
measured() {
  python3 -c "import sys; sys.exit(not ($(meas n4 held) > 8e6 and $(meas n4 traffic) == 0 and
    $(meas n5 traffic) > 0 and $(meas n5 ops) > 1 and $(meas n5 held) < 4e6))"
}
wait_for 60 measured || fail "measurements: $(d nodes --json)"

printf '%s\n' '#!/bin/sh' 'echo "agents=$DUCTILE_CKPT_AGENTS"' > show.sh
chmod 755 show.sh
place() { # POLICY: where a new job's agent goes under it
  if [ "$1" != memory ]; then
    sed -i '/^CheckpointPlacement/d' "$DUCTILE_CONF"
    echo "CheckpointPlacement = $1" >> "$DUCTILE_CONF"
    d reconfigure > "$T/rc.out" 2>&1 || fail "reconfigure: $(cat "$T/rc.out")"
  fi
  local j
  j=$(submit --checkpoint-agents -N 1 show.sh)
  expect_state "$j" CD 30
  sed -n "s/^ductiled: job $j: 1 checkpoint agent asked for on \(n[0-9]\)$/\1/p" "$T/c/log/ductiled.log"
}
[ "$(place memory)" = n5 ] || fail "memory: not the most free memory: $(d nodes --json)"
[ "$(place bandwidth)" = n4 ] || fail "bandwidth: not the least traffic: $(d nodes --json)"
[ "$(place frequency)" = n4 ] || fail "frequency: not the fewest commits: $(d nodes --json)"
grep -q "now in effect: CheckpointPlacement" "$T/rc.out" || fail "reconfigure: $(cat "$T/rc.out")"
touch "stop.$a"
d cancel "$b" > /dev/null
expect_state "$a" CD
echo ok
