#!/bin/bash
#SBATCH --nodes=2
#SBATCH --ntasks-per-node=1
#SBATCH --output=multi-%j.out

srun -l hostname | sort
hosts=$(scontrol show hostnames "$SLURM_JOB_NODELIST" | wc -l)
tasks=$(srun sh -c 'echo $SLURM_PROCID' | sort | tr '\n' ' ')
[ "$hosts" = 2 ] && [ "$tasks" = "0 1 " ] && [ "$SLURM_NTASKS" = 2 ] && echo "OK multi"
