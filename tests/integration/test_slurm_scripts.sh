#!/usr/bin/env bash
# Batch scripts as Slurm users write them (tests/data/slurm, issue 14), submitted
# unchanged through Ductile's Slurm commands (sbatch, squeue, scancel, scontrol, sacct,
# srun: `ductile` under those names, as `make install SLURM_WRAPPERS=1` installs them),
# with the habits that go with them: an array with output patterns, an MPI job, a
# --parsable dependency pipeline, a script on standard input, --export, arguments,
# a held job released with scontrol, squeue --me -h, sacct -j.
. "$(dirname "$0")/lib.sh"
command -v mpirun > /dev/null || { echo "SKIP: no mpirun"; exit 77; }
[ -x "$BINDIR/mpi_hello" ] || fail "mpi_hello not built"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_btl_tcp_if_include="$(mpi_if)" OMPI_MCA_oob_tcp_if_include="$(mpi_if)"
export ASAN_OPTIONS="${ASAN_OPTIONS:-}:detect_leaks=0" # Open MPI's (see test_mpi.sh)
up 3 --tick 1
cd "$T"
mkdir -m 1777 otmp # a session directory per emulated node (see test_mpi_plain.sh)
export OMPI_MCA_orte_tmpdir_base="$T/otmp/$(id -un).\$DUCTILE_NODENAME"
# Slurm's commands: links named sbatch... to the ductile the nodes run (realbin, what
# jobs find on their PATH), and for the user's shell the same run on the login host
# (bin: in the emulated hosts' mode, on the login host's namespaces)
mkdir realbin bin
for c in sbatch squeue scancel scontrol sinfo sacct srun salloc; do
  ln -s "$REAL_BIN" "realbin/$c"
  if [ "$HOSTS" = 1 ]; then
    printf '#!/bin/sh\nexec nsenter -t "$(cat %s/login.pid)" -m -n -u -- /bin/sh -c '"'"'cd "$0" && exec "$@"'"'"' "$PWD" %s "$@"\n' \
      "$HOSTS_DIR" "$T/realbin/$c" > "bin/$c"
    chmod 755 "bin/$c"
  else
    ln -s "$REAL_BIN" "bin/$c"
  fi
done
export PATH="$T/realbin:$PATH"
s() { local c=$1; shift; "$T/bin/$c" "$@"; } # a Slurm command typed by the user
cp "$DUCTILE_SOURCE_DIR"/tests/data/slurm/*.sh .
cp "$BINDIR/mpi_hello" .
mkdir work
jobid() { awk '/^Submitted batch job/ {print $4}'; }
done_ok() { # JOB FILE NAME: the job completed and its output says OK NAME
  expect_state "$1" CD 60
  grep -qx "OK $3" "$2" || fail "$3: $(cat "$2" 2> /dev/null)"
}

j=$(s sbatch 01-basic.sh | jobid); done_ok "$j" "basic-$j.out" basic
j=$(s sbatch 02-quoted.sh | jobid); done_ok "$j" "quoted-$j.out" quoted
a=$(s sbatch 03-array.sh | jobid)
for t in 1 2 3 4; do
  e=$(d show "${a}_$t" | awk '$1 == "JobId" {print $2}')
  done_ok "$e" "sweep-${a}_$t.out" "sweep $t"
done
a=$(s sbatch --parsable 04-array-throttle.sh)
for t in 0 1 2 3 4 5; do
  e=$(d show "${a}_$t" | awk '$1 == "JobId" {print $2}')
  done_ok "$e" "throttled-${a}_$t.out" "throttled $t"
done
j=$(s sbatch 05-multinode-srun.sh | jobid); done_ok "$j" "multi-$j.out" multi
grep -q "^0: ." "multi-$j.out" && grep -q "^1: ." "multi-$j.out" ||
  fail "srun -l: $(cat "multi-$j.out")"
j=$(s sbatch 06-mpi.sh | jobid); done_ok "$j" "mpi-$j.out" mpi
j=$(s sbatch 07-env.sh | jobid); done_ok "$j" "env-$j.out" env
# a --parsable pipeline: the second waits for the first
first=$(s sbatch --parsable 08-first.sh)
second=$(s sbatch --parsable --dependency=afterok:"$first" 09-second.sh)
done_ok "$first" "first-$first.out" first
done_ok "$second" "second-$second.out" second
j=$(s sbatch < 10-stdin.sh | jobid); done_ok "$j" "stdin-$j.out" stdin
j=$(s sbatch 11-chdir.sh | jobid); done_ok "$j" "work/chdir-$j.out" chdir
j=$(s sbatch --export=ALL,MYVAR=42 12-export.sh | jobid); done_ok "$j" "export-$j.out" export
j=$(s sbatch 13-args.sh input.dat 3 | jobid); done_ok "$j" "args-$j.out" args
j=$(s sbatch 14-time-formats.sh | jobid); done_ok "$j" "timefmt-$j.out" timefmt
j=$(s sbatch 15-ntasks.sh | jobid); done_ok "$j" "ntasks-$j.out" ntasks
# --wrap one-liners
j=$(s sbatch --wrap="echo OK wrap" -o wrap-%j.out | jobid); done_ok "$j" "wrap-$j.out" wrap
# held, seen with squeue --me -h, released with scontrol
j=$(s sbatch --hold 16-held.sh | jobid)
s squeue --me -h -t PD | grep -qE "^$j +held +.*\(JobHeldUser\)" || fail "squeue: $(s squeue)"
s scontrol release "$j"
done_ok "$j" "held-$j.out" held
# scancel of one element of an array, then of the rest
a=$(s sbatch --parsable --array=1-3 --wrap 'sleep 60')
wait_for 20 sh -c "[ \$(\"$BIN\" queue | grep -c '^${a}_') = 3 ]" || fail "queue: $(d queue)"
s scancel "${a}_2"
s scancel "$a"
wait_for 20 sh -c "! \"$BIN\" queue | grep -q '^${a}_'" || fail "scancel: $(d queue)"
# a job that does not exist: exit 1, as Slurm's (ductile cancel says 21, not found)
rc=0; s scancel 999999 2> e.txt || rc=$?
[ "$rc" = 1 ] || fail "scancel of no job: exit $rc $(cat e.txt)"
rc=0; d cancel 999999 2> e.txt || rc=$?
[ "$rc" = 21 ] || fail "ductile cancel of no job: exit $rc $(cat e.txt)"
# sacct -j: the jobs and their states
s sacct -j "$first,$second" -X | grep -qE "^$second +second +.*COMPLETED" || fail "sacct: $(s sacct -j "$second")"
# sacct -P --format: what scripts split on '|' (the job, then its batch step)
[ "$(s sacct -j "$second" --format=JobID,State,ExitCode -P)" = "$(printf 'JobID|State|ExitCode|\n%s|COMPLETED|0:0|\n%s.batch|COMPLETED|0:0|' "$second" "$second")" ] ||
  fail "sacct -P: $(s sacct -j "$second" --format=JobID,State,ExitCode -P)"
# and what is refused says so
! s squeue -p batch 2> e.txt && grep -q "'batch' is not a partition: this cluster has one queue" e.txt ||
  fail "squeue -p: $(cat e.txt)"
! s sbatch -p batch 01-basic.sh 2> e.txt && grep -q -- "this cluster has no partitions" e.txt ||
  fail "sbatch -p: $(cat e.txt)"
echo ok
