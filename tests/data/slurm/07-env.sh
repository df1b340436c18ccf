#!/bin/sh
#SBATCH -o env-%j.out
[ "$SLURM_JOB_ID" = "$SLURM_JOBID" ] && [ "$SLURM_SUBMIT_DIR" = "$(pwd)" ] &&
  [ -n "$SLURMD_NODENAME" ] && [ "$SLURM_JOB_NUM_NODES" = "$SLURM_NNODES" ] && echo "OK env"
