#!/bin/bash
#SBATCH --chdir=work
#SBATCH -o chdir-%j.out
[ "$(basename "$(pwd)")" = work ] && echo "OK chdir"
