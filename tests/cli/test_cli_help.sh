#!/usr/bin/env bash
# Every command answers --help and -h (as Slurm's do) with its usage and exit 0, without
# a cluster; `cluster --help` lists its actions (it said "unknown action '--help'").
set -euo pipefail
. "$(dirname "$0")/lib.sh"
unset DUCTILE_CONF
for cmd in submit queue show cancel hold release requeue history nodes drain resume resize reconfigure hostnames; do
  for h in --help -h; do
    "$bin" $cmd $h > "$tmp/o" 2> "$tmp/e" || fail "$cmd $h: $(cat "$tmp/e")"
    grep -q "^usage: ductile $cmd" "$tmp/o" || fail "$cmd $h said: $(cat "$tmp/o" "$tmp/e")"
  done
done
for h in --help -h; do
  "$bin" cluster $h > "$tmp/o" || fail "cluster $h"
  grep -q '^  status ' "$tmp/o" || fail "cluster $h said: $(cat "$tmp/o")"
done
# and each of its actions (status and backup refused --help)
for a in up down status backup; do
  for h in --help -h; do
    "$bin" cluster $a $h > "$tmp/o" 2> "$tmp/e" || fail "cluster $a $h: $(cat "$tmp/e")"
    grep -q "^usage: ductile cluster $a" "$tmp/o" || fail "cluster $a $h said: $(cat "$tmp/o" "$tmp/e")"
  done
done
"$bin" reconfigure --help | grep -q "reads its ductile.conf again" || fail "reconfigure --help says what it does"
# an option without its value says so (what follows the script is its arguments, as with
# sbatch: test_submit_slurm)
expect_err "option '--io-intensity' needs a value" submit --io-intensity
# a negative value after an option whose value is optional: said in words (it was
# "--nice: not an option of ductile submit")
expect_err "-10: a number is not an option; an option with an optional value takes it after '=' (--nice=-10)" \
  submit --nice -10 --wrap true
# a value after a space, where the script's name goes: said in words (it was "cannot
# read 10000001"), out of range or not; a file of that name is still the script
expect_err "--nice 10000001: out of range (-10000000 to 10000000); an option with an optional value takes it after '=' (--nice=N)" \
  submit --nice 10000001 script.sh
expect_err "--nice 5: an option with an optional value takes it after '=' (--nice=5); 5 is not the script" \
  submit --nice 5 script.sh
(cd "$tmp" && printf '#!/bin/sh\ntrue\n' > 7 && expect_err "no cluster" submit --nice 7)
# a list of partitions with no name in it (it printed "ductile: " alone)
expect_err "--partition: ',' names no partition: give a partition's name, or several joined by ','" \
  submit -p , --wrap true
expect_err "--partition: 'a,,b' has an empty name" submit -p a,,b --wrap true
"$bin" partitions --help | grep -q "partitions update NAME --state" || fail "partitions --help shows update"
echo ok
