#!/usr/bin/env bash
# A job's files are created with its submitter's umask, as Slurm's are (they were 0644
# whatever it was: a user with umask 077 got output others could read): its output, the
# files and directories it makes, and its steps', whose umask is the `ductile run`
# command's. SLURM_UMASK says it in four octal digits, as sbatch records it.
. "$(dirname "$0")/lib.sh"
up 2
cd "$T"
export PATH="$BINDIR:$PATH"
mode() { stat -c %a "$1"; }
s=$(script files.sh 'echo "SLURM_UMASK=$SLURM_UMASK"
touch "made.$DUCTILE_JOB_ID"
mkdir "dir.$DUCTILE_JOB_ID"
ductile run -N 1 sh -c "touch step.$DUCTILE_JOB_ID; echo step SLURM_UMASK=\$SLURM_UMASK"
(umask 027 && ductile run -N 1 touch "step027.$DUCTILE_JOB_ID")')
private=$(umask 077 && submit "$s")
public=$(umask 022 && submit "$s")
expect_state "$private" CD 30
expect_state "$public" CD 30
for f in "ductile-$private.out" "made.$private" "step.$private"; do
  [ "$(mode "$f")" = 600 ] || fail "umask 077: $f is $(mode "$f")"
done
[ "$(mode "dir.$private")" = 700 ] || fail "umask 077: a directory is $(mode "dir.$private")"
[ "$(mode "step027.$private")" = 640 ] || fail "a step with umask 027: $(mode "step027.$private")"
for f in "ductile-$public.out" "made.$public" "step.$public"; do
  [ "$(mode "$f")" = 644 ] || fail "umask 022: $f is $(mode "$f")"
done
[ "$(mode "dir.$public")" = 755 ] || fail "umask 022: a directory is $(mode "dir.$public")"
grep -qx "SLURM_UMASK=0077" "ductile-$private.out" || fail "SLURM_UMASK: $(cat "ductile-$private.out")"
grep -qx "step SLURM_UMASK=0077" "ductile-$private.out" || fail "a step's SLURM_UMASK: $(cat "ductile-$private.out")"
grep -qx "SLURM_UMASK=0022" "ductile-$public.out" || fail "SLURM_UMASK: $(cat "ductile-$public.out")"
# an element of an array has its array's; an interactive allocation's command is the
# user's own, its steps get the umask of the `ductile run` that starts them
a=$(umask 077 && submit --array=1-2 -o 'arr-%a.out' --wrap 'touch "arr.$DUCTILE_ARRAY_TASK_ID"')
wait_for 30 test -e arr.2 || fail "the array did not run: $(d queue)"
expect_state "${a}_2" CD 30
[ "$(mode arr.2)" = 600 ] && [ "$(mode arr-2.out)" = 600 ] || fail "array element: $(mode arr.2) $(mode arr-2.out)"
(umask 077 && d alloc -N 1 ductile run touch alloc.f) > alloc.out 2>&1 || fail "alloc: $(cat alloc.out)"
[ "$(mode alloc.f)" = 600 ] || fail "a step in an allocation: $(mode alloc.f)"
echo ok
