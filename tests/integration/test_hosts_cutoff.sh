#!/usr/bin/env bash
# On emulated hosts only: a compute host cut off from the network (its cable pulled at
# the switch) while it runs a job submitted with --requeue. The controller calls the node
# down and requeues the job, which runs again on the other node; then the cable is
# plugged back. The copy left on the cut-off host must be ended, checked from that host
# itself (no process of the job left among its processes, no run record left in its
# private spool), and the job's record of its runs must show no two runs at once.
# (Until a55e9a6 the cut-off node went on running its copy and the requeued copy
# started beside it, about 10 s after the cut: OVERLAP, the defect docs/reliability.md
# named. Now the cut-off node's daemon ends its requeueable job first.)
export DUCTILE_TEST_HOSTS=1
. "$(dirname "$0")/lib.sh"
up 2 --node-timeout 3 --kill-wait 2
cd "$T"
runs=$(runs_script runs.sh 60 3)
j=$(submit -N 1 --requeue "$runs")
expect_state "$j" R
wait_for 10 test -s "$T/runs.$j" || fail "job $j did not start"
n=$(field "$j" NodeList)
case $n in n1) other=n2 ;; n2) other=n1 ;; *) fail "job $j on '$n'" ;; esac
first=$(awk '/^start/ {print $2; exit}' "$T/runs.$j")
# job_procs HOST: the processes on HOST that are neither the host itself, its munged
# nor its node daemon, i.e. those of jobs
job_procs() {
  local p c
  for p in $(host_pids "$1"); do
    [ "$p" = "$(host_pid "$1")" ] && continue
    c=$(tr '\0' ' ' < "/proc/$p/cmdline" 2> /dev/null) || continue
    case $c in ''|*/munged\ *|*/ductile-noded\ *) continue ;; esac
    echo "$p $c"
  done
}
# the host's own record of the run (its spool, private to it)
spool=/var/spool/ductile/spool/$n
on "$n" test -e "$spool/run.$j" || fail "no run record of job $j on $n: $(on "$n" ls "$spool")"
procs=$(job_procs "$n")
grep -q "^$first " <<< "$procs" || fail "job $j's script ($first) not seen on host $n: $(job_procs "$n")"

t0=$SECONDS
host_link "$n" down
node_down() { d nodes | grep -Eq "^$1 +down"; }
wait_for 20 node_down "$n" || fail "node $n not down after its cable was pulled: $(d nodes)"
on_other() { [ "$(field "$j" NodeList)" = "$other" ] && is_state "$j" R; }
wait_for 40 on_other || fail "job $j not requeued onto $other: $(d show "$j")"
wait_for 20 sh -c "[ \$(grep -c '^start' '$T/runs.$j') -ge 2 ]" || fail "no second run: $(cat "$T/runs.$j")"
d show "$j" | grep -q requeue || fail "no requeue event: $(d show "$j")"

t1=$SECONDS
host_link "$n" up
# the old copy is ended once the host is back (bounded wait), seen from the host itself
no_job_procs() { [ -z "$(job_procs "$1")" ]; }
wait_for 30 no_job_procs "$n" || fail "processes of job $j's first run left on $n: $(job_procs "$n")"
echo "cut for $((t1 - t0)) s; the first copy was gone $((SECONDS - t1)) s after the cable was back"
! alive "$first" || fail "the first run of job $j ($first) still runs"
no_record() { on "$n" test ! -e "$spool/run.$j"; }
wait_for 10 no_record || fail "$n still records a run of job $j: $(on "$n" cat "$spool/run.$j")"
wait_for 20 sh -c "\"$BIN\" nodes | grep -Eq '^$n +idle'" || fail "node $n not back: $(d nodes)"
expect_state "$j" CD 30
[ "$(grep -c '^start' "$T/runs.$j")" -eq 2 ] || fail "job $j runs: $(cat "$T/runs.$j")"
! grep -q "^end $first " "$T/runs.$j" || fail "the first run ended on its own: $(cat "$T/runs.$j")"
! grep -q OVERLAP "$T/runs.$j" || fail "job $j ran twice at once: $(cat "$T/runs.$j")"
echo ok
