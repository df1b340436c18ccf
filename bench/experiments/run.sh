#!/usr/bin/env bash
# Replays of the seeds' experiments; docs/experiments.md records the output.
set -euo pipefail
build=${1:-build}
d=$(dirname "$0")
sim() { "$build/ductile" sim --no-progress "$@"; }
rows='^ |makespan|utilization|wait mean|response mean|bounded slowdown mean|expansions|shrinks'

echo "## seed 000 §7.3: the 5-job case study (16 nodes)"
sim --workload "$d/case5.json" --policy fcfs,fpsma-pwma,fpsma-prma,egs-pwma,egs-prma | grep -E "$rows"

echo; echo "## seed 000 §7.4: the 10-job ESP subset (16 nodes), 10 / 50 / 100 % malleable"
for s in s1 s2 s3; do
  echo "### $s"
  sim --workload "$d/esp10-$s.json" --policy fcfs,fpsma-pwma,fpsma-prma,egs-pwma,egs-prma | grep -E "$rows"
done

echo; echo "## seed 002 §9.1: the ESP mix (230 jobs) on 34 nodes, 10 / 50 / 80 / 90 / 100 % malleable"
for m in 0.1 0.5 0.8 0.9 1; do
  echo "### malleable $m, seed 1"
  sim --workload esp --nodes 34 --malleable "$m" --policy easy,fcfs,fpsma-pwma,perf | grep -E "$rows"
done
echo "### malleable 1, mean over seeds 1-5 (makespan, wait mean, response mean)"
for p in easy fpsma-pwma perf; do
  for s in 1 2 3 4 5; do
    sim --workload esp --nodes 34 --malleable 1 --seed "$s" --policy "$p" --json |
      awk -v p="$p" '/"makespan"/{m=$2} /"wait"/{w=1} w&&/"mean"/{wm=$2; w=0} /"response"/{r=1} r&&/"mean"/{rm=$2; r=0} END{gsub(",","",m); gsub(",","",wm); gsub(",","",rm); print p, m, wm, rm}'
  done
done | awk '{n[$1]++; m[$1]+=$2; w[$1]+=$3; r[$1]+=$4} END{for (p in n) printf "%-12s makespan %.1f  wait %.1f  response %.1f\n", p, m[p]/n[p], w[p]/n[p], r[p]/n[p]}' | sort

echo; echo "## seed 002 §9.2.2-9.2.3: the power-corridor runtime (application power only)"
prows='^ |makespan|expansions|shrinks|peak|corridor'
pol=easy,power:waiting=0:admit=0:fill=0:tick=10,power:tick=10
out=$(mktemp -d)
for run in upper:3000-4000 lower:1500-2500 dynamic:100-600,700-1200@240,1300-1900@480,100-600@700; do
  echo "### ${run%%:*}"
  sim --workload "$d/power-${run%%:*}.json" --idle-power 0 --corridor "${run#*:}" --policy "$pol" \
    --events-csv "$out/ev.csv" | grep -E "$prows"
  grep -E 'shrink|expand' "$out/ev.power_waiting_0_admit_0_fill_0_tick_10.csv"
done
rm -rf "$out"

echo; echo "## seed 002 §9.2.4: the power corridor with 20 jobs (14 nodes)"
sim --workload "$d/power20.json" --policy easy,power:waiting=0:admit=0:fill=0,power \
  --corridor 1700-2500,1000-1700@400,2500-3500@650 | grep -E "$prows"

echo; echo "## seed 003 §3.1: node failures on the ESP mix (34 nodes, 50 % malleable), mean of seeds 1-5"
echo "policy mtbf makespan response_mean response_max response_weighted interrupts restarts lost_node_s"
for mtbf in 86400 43200 21600; do
  for p in conservative sfsj sfsj:malleable=1; do
    for s in 1 2 3 4 5; do
      sim --workload esp --nodes 34 --malleable 0.5 --seed "$s" --policy "$p" --mtbf "$mtbf" \
        --downtime 1800 --json |
        awk -v p="$p" -v t="$mtbf" '
          /"makespan"/{m=$2} /"response": \{/{r=1} r&&/"mean"/{rm=$2} r&&/"max"/{rx=$2; r=0}
          /"response_weighted"/{w=$2} /"interrupts"/{i=$2} /"restarts"/{n=$2} /"lost_node_seconds"/{l=$2}
          END{print p, t, m+0, rm+0, rx+0, w+0, i+0, n+0, l+0}'
    done
  done
done | awk '{k=$1" "$2; c[k]++; for (f=3; f<=9; f++) v[k,f]+=$f; if (!(k in o)) o[k]=++no; key[o[k]]=k}
  END{for (x=1; x<=no; x++) {k=key[x]; printf "%-18s %s", k, ""; for (f=3; f<=9; f++) printf " %.1f", v[k,f]/c[k]; printf "\n"}}'

echo; echo "## seed 003 §4.2.5: I/O-aware scheduling on io-peaks (4000 jobs, 500 nodes, 20 % malleable), mean of seeds 1-5"
echo "policy makespan response_mean io_phase_mean io_slowdown fs_utilization gap_W_S"
for p in fpsma-prma io-aware:alpha=0 io-aware:alpha=0.2 io-aware:alpha=0.3 io-aware:alpha=0.4 \
  io-aware:alpha=0.5 io-aware:alpha=0.6 io-aware:alpha=0.6:fit=1; do
  for s in 1 2 3 4 5; do
    sim --workload io-peaks --seed "$s" --policy "$p" --json |
      awk -v p="$p" '/"makespan"/{m=$2} /"response": \{/{r=1} r&&/"mean"/{rm=$2; r=0}
        /"phase_mean"/{io=$2} /"slowdown": [0-9]/{sd=$2} /"utilization": [0-9]/{u=$2}
        /"intensity_gap"/{g=$2} END{print p, m+0, rm+0, io+0, sd+0, u+0, g+0}'
  done
done | awk '{k=$1; c[k]++; for (f=2; f<=7; f++) v[k,f]+=$f; if (!(k in o)) o[k]=++no; key[o[k]]=k}
  END{for (x=1; x<=no; x++) {k=key[x]; printf "%-24s %.0f %.0f %.2f %.2f %.3f %.4f\n", k,
      v[k,2]/c[k], v[k,3]/c[k], v[k,4]/c[k], v[k,5]/c[k], v[k,6]/c[k], v[k,7]/c[k]}}'

echo; echo "## fair share (issue 15): tests/data/fairshare.swf, 7 users, user 1 floods the queue"
t="$d/../../tests/data/fairshare.swf"
for prio in "" "--priority fairshare=1000"; do
  echo "### ${prio:-no priority (submission order)}"
  sim --workload "$t" --policy fcfs,easy --per-user $prio | grep -E "^priority|wait mean|wait max|^wait per user|^ +(user|[0-9])"
done
