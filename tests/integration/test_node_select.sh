#!/usr/bin/env bash
# Jobs restricted to some nodes (issue 15): node features, GPUs and memory in the
# configuration; --constraint, --gpus-per-node, --mem, --nodelist and --exclude. Two
# GPU nodes (n3, n4) and two plain ones (n1, n2).
. "$(dirname "$0")/lib.sh"
up 4 --set "NodeFeatures=n[3-4]=gpu,a100 n[1-2]=ib" --set "NodeGres=n[3-4]=gpu:2" \
  --set "NodeMemory=n[3-4]=8G"
cd "$T"
nodelist() { field "$1" NodeList; }
# the nodes carry what the configuration says
d nodes > nodes.txt
grep -qE "^n3 .* 8192M +2 +gpu,a100 " nodes.txt || fail "nodes: $(cat nodes.txt)"
grep -qE "^n1 .* 1024M +0 +ib " nodes.txt || fail "nodes: $(cat nodes.txt)"

s=$(script long.sh 'sleep 60')
# a GPU job runs on the GPU nodes only
ja=$(submit -C gpu -N 2 "$s")
expect_state "$ja" R
[ "$(nodelist "$ja")" = "n[3-4]" ] || fail "constraint gpu ran on $(nodelist "$ja")"
[ "$(field "$ja" Features)" = gpu ] || fail "show Features: $(field "$ja" Features)"
# with the GPU nodes taken, a job that needs 2 GPUs waits though two plain nodes are idle
jb=$(submit --gpus-per-node 2 "$s")
jc=$(submit -N 1 "$s") # a plain job after it starts on a plain node: a pass went by
expect_state "$jc" R
is_state "$jb" PD || fail "the GPU job did not wait: $(d show "$jb")"
[ "$(field "$jb" Reason)" = Resources ] || fail "reason: $(field "$jb" Reason)"
[ "$(nodelist "$jc")" = n1 ] || fail "plain job on $(nodelist "$jc")"
[ "$(field "$jb" GpusPerNode)" = 2 ] || fail "show GpusPerNode: $(field "$jb" GpusPerNode)"
# its node selection survives a restart of the controller
pid=$(cat "$T/c/ctld.pid")
kill -9 "$pid"
wait_for 10 sh -c "! kill -0 $pid" || fail "the controller did not die"
restart_ctld
wait_for 30 d show "$jb" || fail "the controller did not come back"
is_state "$jb" PD || fail "after the restart the GPU job is $(state "$jb")"
[ "$(field "$jb" GpusPerNode)" = 2 ] || fail "restart lost GpusPerNode: $(d show "$jb")"
d cancel "$ja"
expect_state "$jb" R 30
case "$(nodelist "$jb")" in n3 | n4) ;; *) fail "GPU job on $(nodelist "$jb")" ;; esac

# --exclude: n2 is the lowest free node, but not for this job (n3 may still be cleaning
# up after the cancel: n4 then)
d cancel "$jb"
expect_state "$jb" CA
jd=$(submit -x n2 "$s")
expect_state "$jd" R
jdn=$(nodelist "$jd")
case "$jdn" in n3 | n4) ;; *) fail "--exclude n2 ran on $jdn" ;; esac
[ "$(field "$jd" ExcNodeList)" = n2 ] || fail "show ExcNodeList: $(field "$jd" ExcNodeList)"
# --nodelist: that node must be in the allocation; it is busy, so the job waits for it
je=$(submit -w "$jdn" "$s")
jf=$(submit -N 1 "$s")
expect_state "$jf" R
is_state "$je" PD || fail "the job for $jdn did not wait: $(d show "$je")"
d cancel "$jd"
expect_state "$je" R 30
[ "$(nodelist "$je")" = "$jdn" ] || fail "--nodelist $jdn ran on $(nodelist "$je")"
[ "$(field "$je" ReqNodeList)" = "$jdn" ] || fail "show ReqNodeList: $(field "$je" ReqNodeList)"

# #SBATCH directives take the same options
d cancel "$jc" "$je" "$jf" > /dev/null
for j in "$jc" "$je" "$jf"; do expect_state "$j" CA; done
cat > sb.sh << 'EOF'
#!/bin/sh
#SBATCH --constraint=a100
#SBATCH --gres=gpu:1
#SBATCH --nodelist=n4
#SBATCH --mem=4G
echo "on $DUCTILE_JOB_NODELIST"
EOF
jg=$(submit -o sb.out sb.sh)
expect_state "$jg" CD 30
grep -qx "on n4" sb.out || fail "#SBATCH job: $(cat sb.out)"
[ "$(field "$jg" MinMemoryNode)" = 4096M ] || fail "show MinMemoryNode: $(field "$jg" MinMemoryNode)"

# every element of an array keeps to the GPU nodes
d submit --parsable -C gpu --array=1-3 -o arr-%a.out --wrap 'echo "on $DUCTILE_JOB_NODELIST"' \
  > /dev/null || fail "array not submitted"
wait_for 30 sh -c "cat arr-1.out arr-2.out arr-3.out 2>/dev/null | wc -l | grep -qx 3" ||
  fail "array elements did not all run"
[ "$(grep -cE '^on n[34]$' arr-1.out arr-2.out arr-3.out | awk -F: '{s += $2} END {print s}')" = 3 ] ||
  fail "array elements ran off the GPU nodes: $(cat arr-*.out)"

# an update keeps to the job's nodes too
jh=$(submit -H -C gpu "$s")
refused "needs at least 3 nodes but only 2 match" d update "$jh" -N 3
d cancel "$jh"

# what no node could ever satisfy is refused, saying why
refused "no node has the feature h100" d submit -C "a100&h100" "$s"
refused "no node has features gpu&ib" d submit -C "gpu&ib" "$s"
refused "no node has 4 GPUs (the most a node has is 2)" d submit --gpus-per-node 4 "$s"
refused "no node has 16384 MiB of memory" d submit --mem 16G "$s"
refused "needs at least 3 nodes but only 2 match" d submit -N 3 -C gpu "$s"
refused "n9 is not a node of this cluster" d submit -w n9 "$s"
refused "n1 does not meet the job's --constraint" d submit -w n1 -C gpu "$s"
refused "write & (and) or | (or)" d submit -C "gpu,a100" "$s"
refused "'h100' is not gpu:COUNT" d submit --gres h100 "$s"
refused "is not an amount of memory" d submit --mem 4GB "$s"
echo ok
