#!/bin/bash
#SBATCH -o args-%j.out
# submitted with: sbatch 13-args.sh input.dat 3
[ "$1" = input.dat ] && [ "$2" = 3 ] && [ $# = 2 ] && echo "OK args"
