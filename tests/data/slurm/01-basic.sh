#!/bin/bash
#SBATCH --job-name=basic
#SBATCH --nodes=1
#SBATCH --time=00:05:00
#SBATCH --output=basic-%j.out

echo "Running on $(hostname) as job $SLURM_JOB_ID"
[ "$SLURM_JOB_NAME" = basic ] && [ "$SLURM_NNODES" = 1 ] && echo "OK basic"
