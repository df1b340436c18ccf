#!/bin/bash
#SBATCH --time=1-00:00:00
#SBATCH --nodes=1-2
#SBATCH -o timefmt-%j.out
[ "$SLURM_NNODES" -ge 1 ] && [ "$SLURM_NNODES" -le 2 ] && echo "OK timefmt"
