#!/usr/bin/env bash
# `ductile cluster down` ends the cluster's jobs (issue 7, defect 16): a job's batch
# script, its step tasks on other nodes and a process that left the job's session are
# all gone when `down` returns; with --keep-jobs they keep running.
. "$(dirname "$0")/lib.sh"
cd "$T"
export PATH="$BINDIR:$PATH"

# a job whose processes record their pids: the script, a step task per node, and a
# process that escaped the session (setsid)
job() {
  local s
  s=$(script "job$1.sh" '#DUCTILE --nodes=2
echo $$ > '"$T"'/pids'"$1"'.script
setsid sh -c "echo \$\$ > '"$T"'/pids'"$1"'.escaped; exec sleep 300" &
ductile run sh -c "echo \$\$ > '"$T"'/pids'"$1"'.task\$DUCTILE_PROCID; exec sleep 300" &
exec sleep 300')
  submit "$s"
}
pids() { cat "$T"/pids"$1".*; }
started() { [ "$(ls "$T"/pids"$1".* 2>/dev/null | wc -l)" -eq 4 ]; }
all_gone() { for p in $(pids "$1"); do ! alive "$p" || return 1; done; }

up 2
j=$(job 1)
wait_for 30 started 1 || fail "job 1's processes did not start: $(ls "$T")"
for p in $(pids 1); do alive "$p" || fail "process $p of job 1 is not running"; done
d cluster down --dir "$T/c" > down.out || fail "cluster down failed: $(cat down.out)"
cat down.out
wait_for 5 all_gone 1 || fail "processes of job $j survived cluster down: $(for p in $(pids 1); do alive "$p" && ps -o pid=,args= -p "$p"; done)"
grep -q "Ended job $j" down.out || fail "cluster down did not say it ended job $j: $(cat down.out)"

# --keep-jobs: the daemons stop, the jobs stay
up 2
j=$(job 2)
wait_for 30 started 2 || fail "job 2's processes did not start"
d cluster down --dir "$T/c" --keep-jobs > down2.out || fail "cluster down --keep-jobs failed"
grep -q "Ended job" down2.out && fail "--keep-jobs ended a job: $(cat down2.out)"
for p in $(pids 2); do alive "$p" || fail "--keep-jobs: process $p of job $j is gone"; done
for p in $(pids 2); do kill -9 "$p" 2>/dev/null || true; done
wait_for 5 all_gone 2 || fail "could not clean job 2's processes"

# up makes its directory's missing parents, as mkdir -p (it said "No such file or
# directory" for --dir /tmp/new/c), and down takes the cluster down again
d cluster up --nodes 1 --dir "$T/new/deeper/c" > up3.out || fail "cluster up in a new directory: $(cat up3.out)"
d cluster down --dir "$T/new/deeper/c" > down3.out || fail "cluster down: $(cat down3.out)"

! d cluster down --dir "$T/c" --bogus 2> e.txt || fail "cluster down accepted --bogus"
grep -q "bad option" e.txt || fail "message: $(cat e.txt)"
echo ok
