#!/usr/bin/env bash
# The fault-injection harness in its short form (tests/fault/harness.py; the long form is
# `make faults`): 5 rounds with a fixed seed, each a real emulated cluster with a mixed
# workload (rigid loops, task farm, jacobi2d under `ductile mpirun`, malleable under
# fpsma-pwma, some with --requeue), one or two faults injected at random times, and the
# invariants checked after each round: every acknowledged job exists once, no job runs
# twice at a time, final states match what the jobs did, no daemon dies of a fault that
# did not kill it, nothing of the cluster is left after `cluster down`.
#
# FAULTS picks the fault kinds and WORKLOAD the job kinds. What today's code is known to
# fail is left out by default, each until its defect is fixed (docs/reliability-harness.md):
#   nodestop  issue 7 defect 1 (a --requeue job runs twice after a node timeout)
#   nodekill  issue 7 defect 2 (a node daemon killed -9 orphans its job, recorded FAILED)
#   diskfull  issue 7 defect 5 (a full disk makes the controller exit)
#   conndrop  issue 7 defects 7/8 (malleable jobs hang when a node's connection drops
#             and returns during a resize)
#   jacobi    finding H1 (a controller restart fails a running `ductile mpirun` job:
#             "the connection was closed", exit 255)
# Switch one on by adding it: FAULTS=controller,nodestop ctest -R test_faults
# KillWait is 2 s here (KILL_WAIT; 10 in the long form): the jobs end on SIGTERM, and a
# job requeued after a node stop waits NodeTimeout + KillWait + 1 s to run again.
set -euo pipefail
BIN=${DUCTILE_BIN:?set by ctest}
SRC=${DUCTILE_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
command -v python3 > /dev/null || { echo "SKIP: no python3"; exit 77; }
exec python3 "$SRC/tests/fault/harness.py" --bin "$BIN" --seed "${SEED:-7}" \
  --rounds "${ROUNDS:-5}" --faults "${FAULTS:-controller,nodekill,nodestop,conndrop,diskfull}" \
  --workload "${WORKLOAD:-rigid,farm}" --kill-wait "${KILL_WAIT:-2}"
