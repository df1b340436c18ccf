#!/bin/sh
#SBATCH --job-name=fromstdin
#SBATCH --output=stdin-%j.out
[ "$SLURM_JOB_NAME" = fromstdin ] && echo "OK stdin"
