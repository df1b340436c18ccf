#!/bin/bash
#SBATCH --job-name="quoted name"      # a name with a blank
#SBATCH -o 'quoted-%j.out'            # single quotes
#SBATCH -t 10   # ten minutes
# a plain comment between directives
#SBATCH --exclusive

[ "$SLURM_JOB_NAME" = "quoted name" ] && echo "OK quoted"
