#!/usr/bin/env bash
# What one user's requests cost everyone (issue 34): the attacks an ordinary user could
# make on the controller's single loop before the fixes, each run on a local emulated
# cluster of 4 nodes, with for each
# - the loop's longest turn, its turns over 100 ms and the time it was held
#   (`cluster status --json`: loop.longest_turn_ms, loop.slow_turns, stalled_s; "n/a" on
#   a build without them), the controller restarted before each attack so that the
#   figures are the attack's own;
# - a prober's longest wait: user `bin` runs `ductile queue --me` (one CLI process per
#   call, a small answer whatever the queue holds) every 50 ms; a call that fails is
#   retried, and the wait runs from the first failed call to the next answer;
# - whether a node was called down (the controller's log, "is down"), the controller's
#   RSS after the attack (and its peak since the restart), and what became of the request.
#   bash bench/dos/stalls.sh BUILD_DIR [ROWS]     (ROWS: history rows, default 300000)
# BUILD_DIR holds ductile and ductiled (of any version: the script reads the figures a
# build has). Needs root, setpriv, sqlite3, python3 and bc; tests/tools/fill_history.sh
# and tests/tools/garbage (with GARBAGE_SOURCES) are taken from this tree (GARBAGE=PATH
# to give another). The attacks:
#  1. a 500-term dependency (`afterok:1:1:...`, 505 terms) on ROWS ended jobs
#  2. a chain of 5,000 dependent jobs on that database, loaded and its head released
#  3. `ductile history --limit 1000000 --json` of the ROWS jobs
#  4. a job named 'relax-Ångström-öäü-2', then root's `ductile queue`
#  5. 5,000 unauthenticated TCP connections from 40 loopback addresses, held, then
#     root's `ductile queue`
#  6. nobody submits twenty `--array 0-9999` (MaxJobs 200000, as in the example
#     configuration), then daemon submits one job (6a); nobody cancels the arrays (6b)
#  7. the controller stopped (SIGSTOP) for twice NodeTimeout (6 s) with a --requeue job
#     running
# Each wait is bounded: DOS_CAP seconds (default 180) for an attack, after which its
# figures read "> N s". DOS_KEEP=1 keeps the clusters' directories (their logs) and
# says where; DOS_CHAIN, DOS_ARRAYS, DOS_CHAIN_WATCH (30 s) and DOS_SETTLE (5 s) make a
# quicker trial. Prints one Markdown table row per attack (in order of the numbers,
# though 2 runs after 5: it needs the controller stopped). The figures are recorded in
# docs/BENCHMARKS.md.
set -uo pipefail
if [ $# -lt 1 ] || [ ! -x "$1/ductile" ] || [ ! -x "$1/ductiled" ]; then
  echo "usage: bash bench/dos/stalls.sh BUILD_DIR [ROWS]  (BUILD_DIR with ductile and ductiled)" >&2
  exit 2
fi
B=$(cd "$1" && pwd)
ROWS=${2:-300000}
CAP=${DOS_CAP:-180}       # the longest wait for one attack, in seconds
SETTLE=${DOS_SETTLE:-5}   # watched after each attack's request, in seconds
CHAIN=${DOS_CHAIN:-5000}
CHAIN_WATCH=${DOS_CHAIN_WATCH:-30}
ARRAYS=${DOS_ARRAYS:-20}
SRC=$(cd "$(dirname "$0")/../.." && pwd)
BIN="$B/ductile"
CTLD="$B/ductiled"
for t in setpriv sqlite3 python3 bc timeout; do
  command -v $t > /dev/null || { echo "stalls.sh: needs $t" >&2; exit 2; }
done
[ "$(id -u)" = 0 ] || { echo "stalls.sh: needs root (the attacks run as nobody)" >&2; exit 2; }
G=${GARBAGE:-}
if [ -z "$G" ]; then
  for g in "$B/tests/garbage" "$SRC/build/tests/garbage"; do
    if [ -x "$g" ] && grep -qa GARBAGE_SOURCES "$g"; then G=$g; break; fi
  done
fi

T=$(mktemp -d "${TMPDIR:-/tmp}/ductile-stalls-XXXXXX")
chmod 1777 "$T" # the users' working directory
cd "$T" || exit 1
CUR=""
CLUSTERS=()
PROBER=""
FLOOD=""
cleanup() {
  [ -z "$PROBER" ] || { touch "$T/probe.stop"; kill "$PROBER" 2> /dev/null; }
  [ -z "$FLOOD" ] || kill "$FLOOD" 2> /dev/null
  local d p
  for d in "${CLUSTERS[@]}"; do
    p=$(cat "$d/ctld.pid" 2> /dev/null) && kill -CONT "$p" 2> /dev/null
    timeout 60 "$BIN" cluster down --dir "$d" > /dev/null 2>&1
    for p in "$d"/*.pid; do # whatever cluster down left
      [ -e "$p" ] && kill -KILL "$(cat "$p")" 2> /dev/null
    done
  done
  wait 2> /dev/null
  if [ "${DOS_KEEP:-0}" = 1 ]; then say "kept $T"; else cd / && rm -rf "$T"; fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

now() { date +%s.%N; }
since() { printf '%.2f' "$(echo "$(now) - $1" | bc)"; }
say() { echo "stalls: $*" >&2; }
# ordinary users (prefixes of a command, so that timeout can run them)
NOBODY=(setpriv --reuid=nobody --regid=nogroup --clear-groups --)
DAEMON=(setpriv --reuid=daemon --regid=daemon --clear-groups --)
PROBER_USER=(setpriv --reuid=bin --regid=bin --clear-groups --)
first_line() { head -1 | cut -c1-120; }
job_of() { sed -n 's/^Submitted job \([0-9_]*\).*/\1/p' | head -1; }
ctld_pid() { cat "$CUR/ctld.pid"; }
log() { echo "$CUR/log/ductiled.log"; }
# status JSON KEY: a field of `cluster status --json` ("loop.x"), empty if absent
status_field() {
  python3 -c "import json, sys
try:
    v = json.load(open(sys.argv[1]))
    for k in sys.argv[2].split('.'): v = v[k]
    print(round(v, 1) if isinstance(v, float) else v)
except Exception:
    pass" "$1" "$2"
}
mem() { # FIELD (VmRSS, VmHWM) of the controller, in MB
  awk -v f="$1:" '$1 == f {printf "%.0f", $2 / 1024}' "/proc/$(ctld_pid)/status" 2> /dev/null
}
wait_until() { # SECONDS CMD...: true once CMD is
  local end=$(($(date +%s) + $1))
  shift
  until "$@" > /dev/null 2>&1; do
    [ "$(date +%s)" -lt "$end" ] || return 1
    sleep 0.2
  done
}
nodes_up() {
  [ "$(timeout 20 "$BIN" cluster status --json 2> /dev/null |
    python3 -c 'import json, sys; print(json.load(sys.stdin)["nodes_up"])')" = 4 ]
}

cluster_up() { # DIR ARGS...
  local d=$1
  shift
  CLUSTERS+=("$d")
  CUR=$d
  export DUCTILE_CONF="$d/ductile.conf"
  timeout 120 "$BIN" cluster up --nodes 4 --dir "$d" --tick 1 "$@" > /dev/null || return 1
  wait_until 60 nodes_up
}
stop_ctld() {
  local p
  p=$(ctld_pid)
  kill -CONT "$p" 2> /dev/null
  kill -TERM "$p" 2> /dev/null
  wait_until 30 sh -c "! kill -0 $p" && return 0
  say "the controller did not stop within 30 s: killed"
  kill -KILL "$p" 2> /dev/null
  wait_until 10 sh -c "! kill -0 $p"
}
START_S="" # how long the last start took until the controller answered
start_ctld() {
  local t0
  t0=$(now)
  setsid "$CTLD" --conf "$CUR/ductile.conf" >> "$(log)" 2>&1 < /dev/null &
  echo $! > "$CUR/ctld.pid"
  wait_until "$CAP" timeout 20 "$BIN" queue --me || { START_S="> $(since "$t0")"; return 1; }
  START_S=$(since "$t0")
  wait_until 60 nodes_up
}

# The prober: bin's `ductile queue --me` every 50 ms, "start end rc" a line.
probe_start() {
  PLOG="$T/probe-$1.log"
  : > "$PLOG"
  rm -f "$T/probe.stop"
  (
    while [ ! -e "$T/probe.stop" ]; do
      s=$(now)
      timeout 100 "${PROBER_USER[@]}" "$BIN" queue --me > /dev/null 2>&1
      rc=$?
      echo "$s $(now) $rc" >> "$PLOG"
      sleep 0.05
    done
  ) &
  PROBER=$!
}
probe_stop() {
  touch "$T/probe.stop"
  wait_until 110 sh -c "! kill -0 $PROBER"
  kill "$PROBER" 2> /dev/null
  wait "$PROBER" 2> /dev/null
  PROBER=""
}
answered_since() { # TIME: a call started after TIME was answered
  awk -v m="$1" '$1 >= m && $3 == 0 {f = 1} END {exit !f}' "$PLOG"
}
# the longest wait: "S s" (and the failed calls), "> S s" if the last ones had no answer
probe_figure() {
  awk '{ if ($3 != 0) { if (rs == "") rs = $1; nf++; last = $2; next }
         w = $2 - (rs == "" ? $1 : rs); if (w > max) max = w; rs = ""; n++ }
       END { s = sprintf("%.2f s", max)
             if (rs != "") { w = last - rs; s = (w > max) ? sprintf("> %.0f s", w) : s " (then > " sprintf("%.0f", w) " s)" }
             if (nf) s = s sprintf(" (%d failed)", nf)
             if (n + nf == 0) s = "no call"
             print s }' "$PLOG"
}

# begin NAME: a fresh controller (its figures from zero), then watch it
begin() {
  stop_ctld
  start_ctld || say "$1: the controller did not answer within $CAP s of its start"
  watch "$1"
}
watch() { # NAME: the prober started, the log's figures from here
  LOGOFF=$(stat -c %s "$(log)")
  probe_start "$1"
  sleep 1
  T0=$(now)
}
# finish NUM NAME RESULT: watched SETTLE s more and until the prober is answered
finish() {
  local mark st turn slow down stalled line
  mark=$(now)
  sleep "$SETTLE"
  local left
  left=$(awk -v c="$CAP" -v n="$(now)" -v t="$T0" 'BEGIN {printf "%d", c - (n - t)}')
  [ "$left" -gt 0 ] && wait_until "$left" answered_since "$mark"
  probe_stop
  st="$T/status-$1.json"
  timeout 30 "$BIN" cluster status --json > "$st" 2> /dev/null
  turn=$(status_field "$st" loop.longest_turn_ms)
  if [ -n "$turn" ]; then
    slow=$(status_field "$st" loop.slow_turns)
    turn="$turn ms (longest work: $(status_field "$st" loop.longest_work) $(status_field "$st" loop.longest_work_ms) ms)"
    stalled="$(status_field "$st" stalled_s) s"
  elif [ -s "$st" ]; then
    turn="n/a" slow="n/a" stalled="n/a"
  else
    turn="? (no status)" slow="?" stalled="?"
  fi
  down=$(tail -c +"$((LOGOFF + 1))" "$(log)" | grep -c " is down")
  if [ "$down" -gt 0 ]; then
    down="yes ($down)"
  elif [ -s "$st" ]; then
    down="no"
  else
    down="none called (it never answered)"
  fi
  line="| $1 | $2 | $turn | $slow | $stalled | $(probe_figure) | $down | $(mem VmRSS) MB ($(mem VmHWM) MB) | $3 |"
  echo "$line" >> "$T/results"
  say "$line"
}
# timed CAP CMD...: runs CMD, its output in $OUT, its time in $SECS, its status returned
timed() {
  local t0 c=$1 rc
  shift
  t0=$(now)
  OUT=$(timeout "$c" "$@" 2>&1)
  rc=$?
  SECS=$(since "$t0")
  [ $rc -ne 124 ] || OUT="no answer within $c s (killed)"
  return $rc
}
range() { # FIGURES...: "min-max" (or the one figure)
  printf '%s\n' "$@" | sort -g | awk 'NR == 1 {a = $1} {b = $1} END {print (a == b) ? a : a "-" b}'
}
mb() { awk -v b="$1" 'BEGIN {printf "%.1f MB", b / 1e6}'; }
outcome() { # RC: "accepted/answered in S s" or "failed in S s: message"
  if [ "$1" = 0 ]; then echo "$2 in $SECS s"; else echo "failed in $SECS s: $(echo "$OUT" | tail -1 | sed 's/^ductile: //' | cut -c1-120)"; fi
}

say "build $B ($("$BIN" --version 2> /dev/null | head -1)), $ROWS history rows, in $T"

# ---- cluster a: ROWS ended jobs of nobody's ----
cluster_up "$T/a" --node-timeout 10 || { say "cluster a did not come up"; exit 1; }
tmpl=$("${NOBODY[@]}" "$BIN" submit --export=NONE --wrap true 2>&1 | job_of)
wait_until 60 sh -c "'$BIN' history $tmpl --noheader --format State | grep -q COMPLETED" ||
  say "the template job $tmpl did not complete"
head=$("${NOBODY[@]}" "$BIN" submit --export=NONE --hold -J chain --wrap true 2>&1 | job_of)
db="$T/a/state/ductile.db"
stop_ctld
t0=$(now)
bash "$SRC/tests/tools/fill_history.sh" "$db" "$tmpl" "$ROWS" || say "fill_history failed"
say "$ROWS history rows written in $(since "$t0") s"
start_ctld || say "the controller did not come back"
say "the controller answered $START_S s after its start on $ROWS rows"

# 1. a 500-term dependency, held (its terms are checked at submission)
begin dep
terms=$(printf ":$tmpl%.0s" $(seq 505))
timed "$CAP" "${NOBODY[@]}" "$BIN" submit -H -d "afterok$terms" --wrap true
r=$(outcome $? accepted)
finish 1 "500-term dependency on $ROWS rows" "submit: $r"
timeout 60 "${NOBODY[@]}" "$BIN" cancel --me -t PD -n wrap > /dev/null 2>&1

# 3. a history of every row, as nobody
begin history
t0=$(now)
bytes=$(timeout "$CAP" "${NOBODY[@]}" "$BIN" history --limit 1000000 --json 2> "$T/hist.err" | wc -c)
rc=${PIPESTATUS[0]}
SECS=$(since "$t0")
if [ "$rc" = 0 ]; then
  r="answered in $SECS s ($(mb "$bytes"))"
elif [ "$rc" = 124 ]; then
  r="no answer within $CAP s (killed; $(mb "$bytes") came)"
else
  r="failed in $SECS s: $(tail -1 "$T/hist.err" | cut -c1-100)"
fi
finish 3 "history --limit 1000000 --json of $ROWS rows" "$r"

# 4. a name of non-ASCII letters, then everyone's queue
begin name
timed 60 "${NOBODY[@]}" "$BIN" submit -H -J 'relax-Ångström-öäü-2' --wrap true
r="submit: $(outcome $? accepted)"
if timed 90 "$BIN" queue; then
  if echo "$OUT" | grep -q 'relax-'; then r="$r; root's queue: answered in $SECS s"; else r="$r; root's queue: answered in $SECS s, the job not listed"; fi
else
  r="$r; root's queue: failed in $SECS s: $(echo "$OUT" | tail -1 | cut -c1-60)"
fi
finish 4 "job named relax-Ångström-öäü-2" "$r"
timeout 60 "${NOBODY[@]}" "$BIN" cancel --me -t PD -n 'relax-Ångström-öäü-2' > /dev/null 2>&1

# 5. unauthenticated TCP connections from 40 addresses, held
begin flood
if [ -n "$G" ]; then
  port=$(awk '$1 == "ControlPort" {print $3}' "$DUCTILE_CONF")
  GARBAGE_SOURCES=40 "$G" tcp 127.0.0.1 "$port" hold 5000 > "$T/flood.out" 2>&1 &
  FLOOD=$!
  wait_until 120 test -s "$T/flood.out"
  sleep 2
  fds=$(find "/proc/$(ctld_pid)/fd" -mindepth 1 | wc -l)
  timed 90 "$BIN" queue
  r="$(head -1 "$T/flood.out") of 5000, controller at $fds descriptors; root's queue: $(outcome $? answered)"
  kill "$FLOOD" 2> /dev/null
  wait "$FLOOD" 2> /dev/null
  FLOOD=""
else
  r="skipped: no tests/garbage with GARBAGE_SOURCES (GARBAGE=PATH)"
fi
finish 5 "5000 TCP connections from 40 addresses" "$r"

# 2. the chain: job k waits for job k-1, the first for the held head; loaded at a start
stop_ctld
cols=$(sqlite3 "$db" "SELECT group_concat(name) FROM pragma_table_info('jobs')
  WHERE name NOT IN ('id', 'hold', 'depend')")
base=$(sqlite3 "$db" "SELECT max(id) FROM jobs")
sqlite3 "$db" ".timeout 10000" "
  WITH RECURSIVE n(k) AS (SELECT 1 UNION ALL SELECT k + 1 FROM n WHERE k < $CHAIN)
  INSERT INTO jobs (id, hold, depend, $cols)
  SELECT $base + k, 0, 'afterok:' || CASE k WHEN 1 THEN $head ELSE $base + k - 1 END, $cols
  FROM n, jobs t WHERE t.id = $head;" || say "the chain was not written"
# the start that loads the chain is part of the attack: the prober from its first answer
if start_ctld; then
  watch chain
  r="loaded: answered $START_S s after its start"
  timed "$CAP" "${NOBODY[@]}" "$BIN" release "$head"
  r="$r; release: $(outcome $? answered)"
  sleep "$CHAIN_WATCH"
  done_=$(sqlite3 "$db" ".timeout 5000" "SELECT count(*) FROM jobs WHERE id > $base AND state = 'CD'")
  r="$r; $done_ links done $CHAIN_WATCH s later"
else
  watch chain
  r="loaded: no answer within $CAP s of its start (its log: $(tail -1 "$(log)" | cut -c1-100))"
fi
finish 2 "chain of $CHAIN dependent jobs on $ROWS rows" "$r"
stop_ctld
timeout 60 "$BIN" cluster down --dir "$T/a" > /dev/null 2>&1

# ---- cluster b: one user's arrays ----
cluster_up "$T/b" --node-timeout 10 --set MaxJobs=200000 || { say "cluster b did not come up"; exit 1; }
begin arrays
ids=()
times=()
refused=""
for i in $(seq "$ARRAYS"); do
  if timed 90 "${NOBODY[@]}" "$BIN" submit -H --array 0-9999 --wrap true; then
    ids+=("$(echo "$OUT" | job_of)")
    times+=("$SECS")
  else
    [ -n "$refused" ] || refused="#$i: $(echo "$OUT" | tail -1 | sed 's/^ductile: //' | cut -c1-120)"
    times+=("$SECS")
  fi
done
r="${#ids[@]} of $ARRAYS accepted ($(range "${times[@]}") s each)"
[ -z "$refused" ] || r="$r, first refused: $refused"
timed 90 "${DAEMON[@]}" "$BIN" submit -H --wrap true
rc=$?
if [ $rc = 0 ]; then r="$r; daemon's submit: accepted in $SECS s"; else r="$r; daemon's submit: refused in $SECS s ($(echo "$OUT" | tail -1 | sed 's/^ductile: //' | cut -c1-120))"; fi
finish 6a "nobody submits $ARRAYS --array 0-9999" "$r"
timeout 60 "${DAEMON[@]}" "$BIN" cancel --me > /dev/null 2>&1

begin cancel
ctimes=()
cfail=0
for id in "${ids[@]}"; do
  timed 120 "${NOBODY[@]}" "$BIN" cancel "$id" || cfail=$((cfail + 1))
  ctimes+=("$SECS")
done
r="${#ids[@]} arrays cancelled ($(range "${ctimes[@]:-0}") s each, $cfail failed)"
finish 6b "nobody cancels the arrays" "$r"
stop_ctld
timeout 60 "$BIN" cluster down --dir "$T/b" > /dev/null 2>&1

# ---- cluster c: the controller stopped for twice NodeTimeout ----
cluster_up "$T/c" --node-timeout 6 || { say "cluster c did not come up"; exit 1; }
begin stop
job=$("${NOBODY[@]}" "$BIN" submit --export=NONE --requeue -N 1 --wrap 'sleep 600' 2>&1 | job_of)
wait_until 60 sh -c "'$BIN' queue -j $job --noheader --format StateCompact | grep -qx R" ||
  say "the requeue job $job did not start"
LOGOFF=$(stat -c %s "$(log)")
kill -STOP "$(ctld_pid)"
sleep 12
kill -CONT "$(ctld_pid)"
states="R" # the job's states in the 20 s after, as they change
end=$(($(date +%s) + 20))
while [ "$(date +%s)" -lt "$end" ]; do
  state=$(timeout 20 "$BIN" queue -j "$job" --noheader --format StateCompact 2>&1 | first_line)
  [ "${states##*-> }" = "${state:-gone}" ] || states="$states -> ${state:-gone}"
  sleep 0.5
done
restarts=$(timeout 20 "$BIN" show "$job" --json 2> /dev/null |
  python3 -c 'import json, sys; print(json.load(sys.stdin).get("restarts", "?"))' 2> /dev/null)
finish 7 "controller stopped 12 s (NodeTimeout 6)" "the --requeue job's states: $states (20 s after), restarts ${restarts:-?}"
timeout 60 "${NOBODY[@]}" "$BIN" cancel "$job" > /dev/null 2>&1

echo "build: $B"
echo "| # | attack | longest turn | turns > 100 ms | stalled_s | longest queue wait | nodes down | ctld RSS (peak) | what happened |"
echo "|---|---|---|---|---|---|---|---|---|"
sort -t'|' -k2,2 "$T/results"
