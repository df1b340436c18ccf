#!/usr/bin/env bash
# The checkpoint service's transfer modes (seed 002 §4, its acceptance scenario 5;
# docs/checkpointing.md, "Transfer modes"): the same data committed push and pull, from
# a region per process (MR) and from one per node (SHMR), through a staging region
# smaller than every process's part and every node's file (pipelined), makes the same
# checkpoint: the agent flushes byte-equal node files and equal manifests, and each
# version restores from the agent's memory (the files removed) on other process counts,
# in its own mode and in another. Each run says what its transfers used
# (DUCTILE_CKPT_STATS): pull must be the agent's transfers and none of the processes',
# SHMR one endpoint and region per node, MR one per process, and as many transfers as
# staging-sized chunks. Also: an asynchronous commit pulled, the mode set by
# dt_ckpt_set_transfer, the mistakes in the user's words, and on a cluster the site's
# CheckpointTransfer and CheckpointRegions in a job's environment (its own first).
. "$(dirname "$0")/lib.sh"
mpi_setup
app="$BINDIR/dt_ckpt_app"
agent="$BINDIR/ductile-agent"
[ -x "$app" ] && [ -x "$agent" ] || fail "dt_ckpt_app or ductile-agent not built"
command -v jq > /dev/null || { echo "SKIP: no jq"; exit 77; }
run() { # NP MODE ARGS...: MODE is TRANSFER:REGIONS
  local np=$1 m=$2; shift 2
  env $mpi_env DUCTILE_CKPT_TRANSFER="${m%:*}" DUCTILE_CKPT_REGIONS="${m#*:}" \
    mpirun --oversubscribe -np "$np" "$app" "$@"
}
"$agent" --key-file "$T/key" --port-file "$T/port" 2> "$T/agent.log" &
apid=$!
extra_cleanup() { kill -9 "$apid" 2> /dev/null; }
# (DUCTILE_CKPT_STATS=1 stays for the cluster's jobs below)
wait_for 10 test -s "$T/port" || fail "the agent did not start: $(cat "$T/agent.log")"
export DUCTILE_CKPT_AGENTS="127.0.0.1:$(cat "$T/port")" DUCTILE_CKPT_KEY_FILE="$T/key"
# 1000-byte staging regions: every part (about 3 KB on 4 processes) and node file
# (6 KB) takes several transfers; every 2 processes count as a node (2 node files)
export DUCTILE_CKPT_STAGING=1000 DUCTILE_CKPT_STATS=1 DUCTILE_TEST_CKPT_PPN=2
latest_in() { [ "$(cat "$1/app/latest" 2> /dev/null)" = "$2" ]; }
chunks() { # DIR VERSION mr|shmr: the staging-sized chunks of the version's parts or files
  local d=$1/app/v$2
  if [ "$3" = shmr ]; then
    for f in "$d"/node*.dat; do stat -c %s "$f"; done
  else
    jq '.vars as $v | .ranks[] | [.counts as $c | range($c | length) | $c[.] * $v[.].esize] | add' \
      "$d/manifest.json"
  fi | awk '{ n += int(($1 + 999) / 1000) } END { print n }'
}
stats_line() { grep '^libductile: checkpoint transfers' "$1"; }
modes="push:mr push:shmr pull:mr pull:shmr"
first=
for m in $modes; do
  t=${m%:*} r=${m#*:} D="$T/$t-$r"
  run 4 "$m" "$D" write 2 > /dev/null 2> "$T/err" || fail "write $m: $(cat "$T/err")"
  wait_for 20 latest_in "$D" 2 || fail "$m not flushed: $(ls "$D/app" 2>&1), $(tail -3 "$T/agent.log")"
  ! grep -q "using the checkpoint files" "$T/err" || fail "$m went to the files: $(cat "$T/err")"
  n=$(( $(chunks "$D" 1 "$r") + $(chunks "$D" 2 "$r") ))
  [ "$n" -gt 8 ] || fail "$m: $n chunks: not pipelined"
  ends=4 && [ "$r" = shmr ] && ends=2
  if [ "$t" = push ]; then by="transfers by the processes $n, by the agents 0"
  else by="transfers by the processes 0, by the agents $n"; fi
  want="libductile: checkpoint transfers ($t, $r): endpoints $ends, registered regions $ends, $by"
  [ "$(stats_line "$T/err")" = "$want" ] || fail "$m: '$(stats_line "$T/err")', not '$want'"
  echo "$m: $(stats_line "$T/err" | sed 's/.*: //')"
  [ "$(ls "$D/app/v2")" = "$(printf 'manifest.json\nnode0.dat\nnode1.dat')" ] || fail "$m: $(ls "$D/app/v2")"
  if [ -z "$first" ]; then first=$D; continue; fi
  for v in 1 2; do
    for f in node0.dat node1.dat; do
      cmp "$first/app/v$v/$f" "$D/app/v$v/$f" || fail "$m: v$v/$f differs from push:mr's"
    done
    [ "$(jq -S 'del(.time)' "$first/app/v$v/manifest.json")" = \
      "$(jq -S 'del(.time)' "$D/app/v$v/manifest.json")" ] || fail "$m: v$v's manifest differs"
  done
done
# every version restored from the agent's memory (its files removed), on 3 processes in
# its own mode, on 5 in the next one; pull restores are the agent's transfers too
set -- $modes
for m in $modes; do
  shift
  next=${1:-push:mr}
  D="$T/${m%:*}-${m#*:}"
  rm -rf "$D/app"
  for c in "3 $m" "5 $next"; do
    np=${c% *} mode=${c#* }
    out=$(run "$np" "$mode" "$D" check 2> "$T/err") || fail "check of $m on $np in $mode: $(cat "$T/err")"
    [ "$out" = "restored version 2 on $np processes" ] || fail "$m on $np in $mode: $out"
    line=$(stats_line "$T/err")
    case $mode in
      pull:*) [[ "$line" =~ ", transfers by the processes 0, by the agents "[1-9][0-9]*$ ]] ;;
      push:*) [[ "$line" =~ ", transfers by the processes "[1-9][0-9]*", by the agents 0"$ ]] ;;
    esac || fail "restore of $m in $mode: $line"
  done
done
# an asynchronous commit pulled (the thread asks the agent), restored pushed
D="$T/async"
run 4 pull:mr "$D" write-async 2 > /dev/null 2> "$T/err" || fail "async pull: $(cat "$T/err")"
[[ "$(stats_line "$T/err")" =~ ", transfers by the processes 0, by the agents "[1-9][0-9]*$ ]] ||
  fail "async pull: $(cat "$T/err")"
out=$(run 2 push:shmr "$D" check 2> "$T/err") || fail "async check: $(cat "$T/err")"
[ "$out" = "restored version 2 on 2 processes" ] || fail "async: $out"
# the mode set by the call rather than the environment
out=$(DT_CKPT_APP_TRANSFER="pull shmr" run 4 push:mr "$T/call" write 1 2>&1 > /dev/null) ||
  fail "dt_ckpt_set_transfer: $out"
[[ "$out" =~ "checkpoint transfers (pull, shmr): endpoints 2, registered regions 2, transfers by the processes 0, by the agents "[1-9] ]] ||
  fail "dt_ckpt_set_transfer: $out"
# the mistakes
! run 2 sideways:mr "$T/bad" write 1 > /dev/null 2> "$T/err" || fail "DUCTILE_CKPT_TRANSFER=sideways accepted"
grep -q "^libductile: rank 0: dt_ckpt_init: DUCTILE_CKPT_TRANSFER is 'sideways': it must be push (the processes write into the agents' memory) or pull (the agents read the processes' memory)$" "$T/err" ||
  fail "bad transfer: $(cat "$T/err")"
! run 2 push:node "$T/bad" write 1 > /dev/null 2> "$T/err" || fail "DUCTILE_CKPT_REGIONS=node accepted"
grep -q "^libductile: rank 0: dt_ckpt_init: DUCTILE_CKPT_REGIONS is 'node': it must be mr (a registered region and an endpoint per process) or shmr (one shared-memory region and endpoint per node)$" "$T/err" ||
  fail "bad regions: $(cat "$T/err")"
! DUCTILE_CKPT_STAGING=1x run 2 push:mr "$T/bad" write 1 > /dev/null 2> "$T/err" || fail "DUCTILE_CKPT_STAGING=1x accepted"
grep -q "^libductile: rank 0: dt_ckpt_init: DUCTILE_CKPT_STAGING is '1x': give the size of the registered region a transfer goes through, in bytes (at least 64) or with K, M or G, such as 4M$" "$T/err" ||
  fail "bad staging: $(cat "$T/err")"
! DT_CKPT_APP_TRANSFER="pull sharedmem" run 2 push:mr "$T/bad" write 1 > /dev/null 2> "$T/err" ||
  fail "dt_ckpt_set_transfer(pull, sharedmem) accepted"
grep -q "^libductile: rank 0: dt_ckpt_set_transfer: the regions are 'sharedmem': it must be mr " "$T/err" ||
  fail "bad call: $(cat "$T/err")"

# the site's choice (ductile.conf): a job with agents has CheckpointTransfer and
# CheckpointRegions in its environment, unless it set them itself at submission
kill "$apid"
wait "$apid" 2> /dev/null || true
unset DUCTILE_CKPT_AGENTS DUCTILE_CKPT_KEY_FILE DUCTILE_CKPT_STAGING DUCTILE_TEST_CKPT_PPN
export ASAN_OPTIONS="${ASAN_OPTIONS:-}:detect_leaks=0" # Open MPI's (see test_mpi.sh)
up 3 --set CheckpointNodes=n3 --set CheckpointTransfer=pull --set CheckpointRegions=shmr
cd "$T"
mkdir -m 1777 "$T/otmp" # a session directory per node (see test_mpi_plain.sh)
export OMPI_MCA_orte_tmpdir_base="$T/otmp/$(id -un).\$DUCTILE_NODENAME"
s=$(script conf.sh "#DUCTILE --nodes=2
#DUCTILE --checkpoint-agents
env | grep '^DUCTILE_CKPT_[RT]' | sort
mpirun --oversubscribe $app $T/conf write 2")
for c in "pull shmr" "push shmr"; do
  if [ "$c" = "pull shmr" ]; then j=$(submit "$s"); else j=$(DUCTILE_CKPT_TRANSFER=push submit "$s"); fi
  expect_state "$j" CD 60
  o="ductile-$j.out"
  [ "$(grep '^DUCTILE_CKPT_' "$o")" = "$(printf 'DUCTILE_CKPT_REGIONS=shmr\nDUCTILE_CKPT_TRANSFER=%s' "${c% *}")" ] ||
    fail "job $j's environment: $(cat "$o")"
  grep -q "^libductile: checkpoint transfers (${c% *}, shmr): " "$o" || fail "job $j: $(cat "$o")"
  ! grep -q "using the checkpoint files" "$o" || fail "job $j went to the files: $(cat "$o")"
done
echo ok
