#!/usr/bin/env bash
# Slurm's variables in jobs and steps (issue 14, SlurmEnvironment = yes by default): a
# script written for Slurm finds SLURM_JOB_ID, SLURM_JOB_NODELIST, SLURM_NNODES,
# SLURM_NTASKS... beside Ductile's; `ductile run`'s tasks their SLURM_PROCID; a plain
# mpirun is kept off its Slurm launcher. With SlurmEnvironment = no, none of them.
. "$(dirname "$0")/lib.sh"
up 2
cd "$T"
cat > env.sh <<'EOS'
#!/bin/sh
#SBATCH -N 2 -n 2 --cpus-per-task=1 -J slurmy
for v in SLURM_JOB_ID SLURM_JOBID SLURM_JOB_NAME SLURM_JOB_NODELIST SLURM_NODELIST \
         SLURM_JOB_NUM_NODES SLURM_NNODES SLURM_NTASKS SLURM_NPROCS SLURM_CPUS_PER_TASK \
         SLURM_SUBMIT_DIR SLURM_CLUSTER_NAME SLURM_NODEID SLURM_CPUS_ON_NODE \
         SLURM_JOB_CPUS_PER_NODE OMPI_MCA_plm OMPI_MCA_ras; do
  eval "echo $v=\${$v-unset}"
done
[ "$SLURMD_NODENAME" = "$DUCTILE_NODENAME" ] && echo "SLURMD_NODENAME=ok"
echo "hosts=$("$DUCTILE" hostnames | tr '\n' ' ')"
"$DUCTILE" run sh -c 'echo "task $SLURM_PROCID of step $SLURM_STEP_ID on $SLURMD_NODENAME job $SLURM_JOB_ID"' | sort
EOS
export DUCTILE="$BIN" # the command the scripts run (the job gets this environment)
j=$(submit -o env-%j.out env.sh)
expect_state "$j" CD
o="env-$j.out"
nl=$(field "$j" NodeList)
cluster=$(awk '$1 == "ClusterName" {print $3}' "$DUCTILE_CONF")
for want in "SLURM_JOB_ID=$j" "SLURM_JOBID=$j" "SLURM_JOB_NAME=slurmy" "SLURM_JOB_NODELIST=$nl" \
            "SLURM_NODELIST=$nl" "SLURM_JOB_NUM_NODES=2" "SLURM_NNODES=2" "SLURM_NTASKS=2" \
            "SLURM_NPROCS=2" "SLURM_CPUS_PER_TASK=1" "SLURM_SUBMIT_DIR=$T" \
            "SLURM_CLUSTER_NAME=$cluster" "SLURM_NODEID=0" "SLURM_CPUS_ON_NODE=1" \
            "SLURM_JOB_CPUS_PER_NODE=1(x2)" "OMPI_MCA_plm=rsh" "OMPI_MCA_ras=^slurm" \
            "SLURMD_NODENAME=ok"; do
  grep -qxF "$want" "$o" || fail "no $want in the job: $(cat "$o")"
done
grep -qxF "hosts=$(d hostnames "$nl" | tr '\n' ' ')" "$o" || fail "hostnames: $(grep hosts= "$o")"
[ "$(grep -c "^task [01] of step 0 on n[0-9]* job $j$" "$o")" = 2 ] ||
  fail "the step's tasks: $(grep '^task' "$o")"
grep -q "^task 0 " "$o" && grep -q "^task 1 " "$o" || fail "SLURM_PROCID: $(grep '^task' "$o")"

# a user's own Open MPI choice stays
j=$(OMPI_MCA_plm=isolated submit -o mca-%j.out --wrap 'echo "plm=$OMPI_MCA_plm"')
expect_state "$j" CD
grep -qx "plm=isolated" "mca-$j.out" || fail "the user's OMPI_MCA_plm: $(cat "mca-$j.out")"

# SlurmEnvironment = no: the node daemons, started again, give none of them
grep -q '^SlurmEnvironment' "$DUCTILE_CONF" && fail "the cluster's file sets SlurmEnvironment already"
echo "SlurmEnvironment = no" >> "$DUCTILE_CONF"
for f in "$T"/c/noded-*.pid; do
  n=$(basename "$f" .pid); n=${n#noded-}
  c0=$(grep -c ': started' "$T/c/log/noded-$n.log")
  old=$(cat "$f")
  kill "$old"
  wait_for 10 sh -c "! kill -0 $old 2> /dev/null" || fail "noded $n did not stop"
  restart_noded "$n"
  wait_for 10 sh -c "[ \$(grep -c ': started' '$T/c/log/noded-$n.log') -gt $c0 ]" ||
    fail "noded $n did not start again"
done
wait_for 20 sh -c "\"$BIN\" nodes | grep -q '^2 nodes: 2 idle'" || fail "nodes: $(d nodes)"
j=$(submit -N 2 -n 2 -o none-%j.out --wrap 'env | grep -c "^SLURM" || true; "$DUCTILE" run env | grep -c "^SLURM" || true')
expect_state "$j" CD
[ "$(cat "none-$j.out")" = "$(printf '0\n0')" ] || fail "SlurmEnvironment = no: $(cat "none-$j.out")"
echo ok
