#!/bin/bash
#SBATCH -J first
#SBATCH -o first-%j.out
echo 42 > result.txt
echo "OK first"
