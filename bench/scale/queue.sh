#!/usr/bin/env bash
# Scale with a full queue (issue 13; docs/BENCHMARKS.md "bench/scale"): on an emulated
# cluster of NODES nodes (ductile-noded --nodes, 2,500 per daemon) with POLICY:
#   1. trivial jobs end to end per second (2,000 one-node `true` jobs, 8 clients);
#   2. NODES running jobs (one node each, `sleep`), then PENDING queued jobs of 2 to
#      NODES/4 nodes with time limits of 1 minute to 1 day; then one running job is
#      cancelled: one node stays free and no queued job fits it, so every pass
#      considers the whole queue (the worst case of a backfilling pass);
#   3. 1,100 more submissions one after the other, each followed by a pass: the
#      controller's pass and commit times over the last 1,024 (`cluster status`);
#   4. the controller's RSS; `ductile queue`, `nodes` and `history` (whole commands,
#      output to /dev/null, best of 3);
#   5. kill -9 of the controller; FINISHED finished jobs written into its database
#      (python3's sqlite3; as `ductile history` keeps them, 3 events each); its restart:
#      seconds until it answers, and until every node is registered again; `history`
#      again.
#   bash bench/scale/queue.sh [BUILD_DIR] [NODES] [POLICY] [PENDING] [FINISHED]
# (defaults: build 1000 easy 100000 0). Malleable policies get malleable queued jobs
# (2 to NODES/4 nodes). Needs python3 for step 5.
set -euo pipefail
build=$(cd "${1:-build}" && pwd)
n=${2:-1000}
policy=${3:-easy}
pending=${4:-100000}
finished=${5:-0}
bin="$build/ductile"
fill="$build/bench/scale_fill"
tmp=$(mktemp -d)
cleanup() { "$bin" cluster down --dir "$tmp/c" > /dev/null 2>&1 || true; rm -rf "$tmp"; }
trap cleanup EXIT
cd "$tmp"
now() { date +%s.%N; }
status() { "$bin" cluster status --json 2> /dev/null; }
field() { python3 -c "import json,sys; d=json.load(sys.stdin); print(eval('d' + sys.argv[1]))" "$1"; }
best3() { # seconds of the best of 3 runs of a command, output discarded
  local b=999 t0 t1
  for _ in 1 2 3; do
    t0=$(now); "$@" > /dev/null; t1=$(now)
    b=$(awk -v a="$b" -v d="$(awk -v x="$t0" -v y="$t1" 'BEGIN {print y - x}')" \
      'BEGIN {print (d < a ? d : a)}')
  done
  echo "$b"
}
wait_jobs() { # until the controller holds $1 jobs (pending + running)
  for _ in $(seq 1 6000); do
    [ "$(status | field '["jobs"]')" = "$1" ] && return 0
    sleep 0.1
  done
  echo "timed out waiting for $1 jobs" >&2; return 1
}
per=$(( n < 2500 ? n : 2500 ))
type=rigid
case "$policy" in easy|conservative|fcfs) ;; *) type=malleable ;; esac
"$bin" cluster up --nodes "$n" --nodes-per-daemon "$per" --dir "$tmp/c" --policy "$policy" \
  --set MaxConnections=100000 > /dev/null
export DUCTILE_CONF="$tmp/c/ductile.conf"
sock="$tmp/c/ctld.sock"
for _ in $(seq 1 600); do [ "$(status | field '["nodes_up"]')" = "$n" ] && break; sleep 0.1; done

# 1. trivial jobs end to end
t0=$(now)
"$fill" "$sock" 2000 8 1 1 rigid $'#!/bin/sh\ntrue\n' 1 > /dev/null
wait_jobs 0
t1=$(now)
trivial=$(awk -v a="$t0" -v b="$t1" 'BEGIN {printf "%.0f", 2000 / (b - a)}')

# 2. the running jobs, then the queue
# in batches of 500 that start before the next (at stop 28 a daemon emulating 2,500
# nodes handed 2,500 starts at once fell silent past NodeTimeout; its starts take turns
# with its heartbeats since, and the batches stay so that the figures compare)
for ((k = 0; k < n; k += 500)); do
  "$fill" "$sock" $(( n - k < 500 ? n - k : 500 )) 8 1 1 rigid \
    $'#!/bin/sh\nexec sleep 1000000\n' $(( 100 + k )) 1000000:1000000 > /dev/null
  for _ in $(seq 1 3000); do [ "$(status | field '["pending"]')" = 0 ] && break; sleep 0.1; done
done
wait_jobs "$n"
first=$("$bin" queue --json | python3 -c 'import json,sys; print(min(j["id"] for j in json.load(sys.stdin)))')
big=$(( n / 4 > 2 ? n / 4 : 2 ))
t0=$(now)
"$fill" "$sock" "$pending" 8 2 "$big" "$type" $'#!/bin/sh\ntrue\n' 3 > /dev/null
t1=$(now)
fill_rate=$(awk -v a="$t0" -v b="$t1" -v p="$pending" 'BEGIN {printf "%.0f", p / (b - a)}')
"$bin" cancel "$first" > /dev/null
wait_jobs $(( n - 1 + pending ))

# 3. passes at that size
t0=$(now)
"$fill" "$sock" 1100 1 2 "$big" "$type" $'#!/bin/sh\ntrue\n' 4 > /dev/null
t1=$(now)
s=$(status)
ctld=$(cat "$tmp/c/ctld.pid")
rss=$(awk '/VmRSS/ {print int($2 / 1024)}' "/proc/$ctld/status")
pass=$(echo "$s" | python3 -c 'import json,sys; p=json.load(sys.stdin)["passes"]; print("%.2f %.2f %.2f" % (p["median_ms"], p["p99_ms"], p["max_ms"]))')
commit=$(echo "$s" | python3 -c 'import json,sys; p=json.load(sys.stdin)["commits"]; print("%.2f %.2f" % (p["median_ms"], p["p99_ms"]))')
queued=$(echo "$s" | field '["pending"]')

# 4. the commands
q=$(best3 "$bin" queue)
nd=$(best3 "$bin" nodes)
h=$(best3 "$bin" history --limit 1000)

# 5. restart, with FINISHED finished jobs written into the database first
kill -9 "$ctld"
while kill -0 "$ctld" 2> /dev/null; do sleep 0.05; done
if [ "$finished" -gt 0 ]; then
  python3 - "$tmp/c/state/ductile.db" "$finished" <<'PY'
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
n = int(sys.argv[2])
base = db.execute("SELECT coalesce(max(id), 0) FROM jobs").fetchone()[0]
script = "#!/bin/sh\n" + "x" * 200 + "\n"
def jobs():
    for i in range(1, n + 1):
        t = 1.7e9 + i
        yield (base + i, "done%d" % (i % 100), "root", 0, 0, "CD", "PD", "rigid", 1, 0, 0,
               "none", 3600, 0, script, "/tmp", '["PATH=/bin"]', None, None, t, t + 1,
               t + 2, 0, 0, 0, '["n1"]', 1, t + 1, "COMPLETED", 1)
def events():
    for i in range(1, n + 1):
        t = 1.7e9 + i
        for k, e in ((0, "submit"), (1, "start"), (2, "end")):
            yield (base + i, t + k, e, 0, 1, '["n1"]', None)
db.executemany("INSERT INTO jobs (id, name, user, uid, gid, state, final, type, nodes,"
               " min_nodes, max_nodes, constraint_, time_limit, requeue, script, cwd, env,"
               " out_path, err_path, submit, start, end_, exit_code, signal, restarts, alloc,"
               " node_seconds, alloc_since, reason, launched) VALUES (" + ",".join("?" * 30) + ")",
               jobs())
db.executemany("INSERT INTO job_events VALUES (?,?,?,?,?,?,?)", events())
db.commit()
db.close()
PY
fi
db_mb=$(du -m "$tmp/c/state/ductile.db" | cut -f1)
t2=$(now)
setsid "$build/ductiled" --conf "$DUCTILE_CONF" >> "$tmp/c/log/ductiled.log" 2>&1 < /dev/null &
echo $! > "$tmp/c/ctld.pid"
for _ in $(seq 1 3000); do status > /dev/null && break; sleep 0.01; done
t3=$(now)
for _ in $(seq 1 3000); do [ "$(status | field '["nodes_up"]')" = "$n" ] && break; sleep 0.05; done
t4=$(now)
h2=$(best3 "$bin" history --limit 1000)
[ "$(status | field '["pending"]')" = "$queued" ] || echo "warning: the restart lost queued jobs" >&2
grep -h "integrity check ok\|live jobs loaded" "$tmp/c/log/ductiled.log" | tail -2

printf "%-6s %-13s %-7s %-6s %-8s %-22s %-12s %-5s %-7s %-7s %-7s %-6s %-9s %-9s %-7s\n" \
  nodes policy queued jobs/s fill/s "pass_ms(med,p99,max)" commit_ms rss queue_s nodes_s hist_s db_MB answer_s all_up_s hist2_s
printf "%-6s %-13s %-7s %-6s %-8s %-22s %-12s %-5s %-7.3f %-7.3f %-7.3f %-6s %-9.2f %-9.2f %-7.3f\n" \
  "$n" "$policy" "$queued" "$trivial" "$fill_rate" "$(echo $pass | tr ' ' ,)" \
  "$(echo $commit | tr ' ' ,)" "$rss" "$q" "$nd" "$h" "$db_mb" \
  "$(awk -v a="$t2" -v b="$t3" 'BEGIN {print b - a}')" \
  "$(awk -v a="$t2" -v b="$t4" 'BEGIN {print b - a}')" "$h2"
