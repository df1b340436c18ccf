#!/bin/bash
#SBATCH --ntasks=2
#SBATCH --cpus-per-task=1
#SBATCH -o ntasks-%j.out
# on nodes of one core: two nodes
[ "$SLURM_NNODES" = 2 ] && [ "$SLURM_NTASKS" = 2 ] &&
  [ "$(srun hostname | wc -l)" = 2 ] && echo "OK ntasks"
