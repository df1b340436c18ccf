#!/bin/bash
#SBATCH -J second
#SBATCH -o second-%j.out
# runs after first.sh succeeded (sbatch --dependency=afterok:$jid)
[ "$(cat result.txt)" = 42 ] && echo "OK second"
