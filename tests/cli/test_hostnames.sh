#!/usr/bin/env bash
# ductile hostnames (issue 14): a node list expanded one name a line, as Slurm's
# `scontrol show hostnames`; without an argument, the job's own list; no cluster needed.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
unset DUCTILE_CONF DUCTILE_JOB_NODELIST SLURM_JOB_NODELIST
[ "$("$bin" hostnames 'n[01-03,07],login1' | tr '\n' ' ')" = "n01 n02 n03 n07 login1 " ] ||
  fail "expansion: $("$bin" hostnames 'n[01-03,07],login1')"
[ "$(DUCTILE_JOB_NODELIST='c[1-2]' "$bin" hostnames | tr '\n' ' ')" = "c1 c2 " ] ||
  fail "the job's list"
[ "$(SLURM_JOB_NODELIST='s[8-9]' "$bin" hostnames | tr '\n' ' ')" = "s8 s9 " ] ||
  fail "Slurm's variable"
expect_err "no node list given, and not inside a job" hostnames
expect_err "'n\[3-1\]' is not a node list" hostnames 'n[3-1]'
expect_err "one node list at most" hostnames a b
echo ok
