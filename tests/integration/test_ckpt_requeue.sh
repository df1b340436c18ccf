#!/usr/bin/env bash
# A rigid MPI job that checkpoints (issue 11, at the file level: docs/checkpointing.md)
# loses a node: the controller requeues it (--requeue), and its second run restarts from
# the last complete checkpoint instead of from the beginning; the final data is what an
# uninterrupted run computes (dt_ckpt_app checks every element of the last version).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/ckpt_requeue.sh"
ckpt_requeue_setup
extra_cleanup() { kill -CONT "${pid:-0}" 2> /dev/null || true; }
ckpt_requeue_run
ckpt_requeue_check
echo "restarted at step $start; ok"
