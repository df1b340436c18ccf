#!/bin/bash
#SBATCH -o export-%j.out
# submitted with: sbatch --export=ALL,MYVAR=42 12-export.sh
[ "$MYVAR" = 42 ] && echo "OK export"
