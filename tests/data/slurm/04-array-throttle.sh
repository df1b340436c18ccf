#!/bin/bash
#SBATCH -J throttled
#SBATCH -a 0-5%2
#SBATCH -o throttled-%A_%a.out

touch "running.$SLURM_ARRAY_TASK_ID"
n=$(ls running.* | wc -l)
sleep 0.5
rm -f "running.$SLURM_ARRAY_TASK_ID"
[ "$n" -le 2 ] && echo "OK throttled $SLURM_ARRAY_TASK_ID"
