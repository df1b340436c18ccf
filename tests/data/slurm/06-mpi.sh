#!/bin/bash
#SBATCH --job-name=mpi
#SBATCH -N 2
#SBATCH --ntasks-per-node=1
#SBATCH -o mpi-%j.out

echo "MPI on $SLURM_JOB_NODELIST with $SLURM_NTASKS tasks"
mpirun -np "$SLURM_NTASKS" ./mpi_hello > ranks.txt
[ "$(grep -c '^rank ' ranks.txt)" = "$SLURM_NTASKS" ] && grep -q '^sum of ranks 1$' ranks.txt &&
  echo "OK mpi"
