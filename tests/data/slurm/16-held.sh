#!/bin/bash
#SBATCH -o held-%j.out
#SBATCH -J held
echo "OK held"
