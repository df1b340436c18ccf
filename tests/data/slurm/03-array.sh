#!/bin/bash
#SBATCH --job-name=sweep
#SBATCH --array=1-4
#SBATCH --output=sweep-%A_%a.out
#SBATCH --time=0:10:00

PARAMS=(zero alpha beta gamma delta)
p=${PARAMS[$SLURM_ARRAY_TASK_ID]}
echo "task $SLURM_ARRAY_TASK_ID of $SLURM_ARRAY_TASK_COUNT: $p"
[ -n "$p" ] && [ "$SLURM_ARRAY_TASK_COUNT" = 4 ] && echo "OK sweep $SLURM_ARRAY_TASK_ID"
