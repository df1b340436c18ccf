#!/usr/bin/env bash
# The cost of the controller's start-up integrity check (PRAGMA quick_check) on a
# large database: docs/BENCHMARKS.md (bench/db).
#   bash bench/db/quick_check.sh [BUILD] [JOBS]     (default: build 100000)
# Makes a cluster's database with JOBS finished jobs (1 KiB scripts, 3 events each,
# as `ductile history` keeps them), then starts the controller 3 times and reports the
# check's time as the controller logs it, and its whole start-up (to its first answer).
set -euo pipefail
build=$(cd "${1:-build}" && pwd)
njobs=${2:-100000}
d=$(mktemp -d "${TMPDIR:-/tmp}/ductile-bench-db-XXXXXX")
trap '"$build/ductile" cluster down --dir "$d/c" >/dev/null 2>&1 || true; rm -rf "$d"' EXIT
"$build/ductile" cluster up --nodes 2 --dir "$d/c" > /dev/null
"$build/ductile" cluster down --dir "$d/c" > /dev/null
db="$d/c/state/ductile.db"
sqlite3 "$db" > /dev/null <<SQL
PRAGMA journal_mode=WAL;
BEGIN;
WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < $njobs)
INSERT INTO jobs (id, name, user, uid, gid, state, final, type, nodes, min_nodes, max_nodes,
  constraint_, time_limit, requeue, script, cwd, env, out_path, err_path, submit, start,
  end_, exit_code, signal, restarts, alloc, node_seconds, alloc_since, reason, launched)
SELECT i, 'job' || i, 'alice', 1000, 1000, 'CD', 'PD', 'rigid', 2, 0, 0, 'none', 0, 0,
  '#!/bin/sh' || char(10) || printf('%.*c', 1000, 'x'), '/home/alice', '["PATH=/bin"]',
  NULL, NULL, 1.7e9 + i, 1.7e9 + i + 1, 1.7e9 + i + 2, 0, 0, 0, '["n1","n2"]', 2,
  1.7e9 + i + 1, 'COMPLETED', 1 FROM n;
WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < $njobs)
INSERT INTO job_events SELECT i, 1.7e9 + i + k, e, 0, 2, '["n1","n2"]', NULL
  FROM n, (SELECT 0 AS k, 'submit' AS e UNION ALL SELECT 1, 'start' UNION ALL SELECT 2, 'end');
COMMIT;
PRAGMA wal_checkpoint(TRUNCATE);
SQL
echo "database: $njobs finished jobs, $(du -m "$db" | cut -f1) MB ($db)"
echo "quick_check in the sqlite3 shell: $( { /usr/bin/time -f '%e s' sqlite3 "$db" 'PRAGMA quick_check' ; } 2>&1 | tr '\n' ' ')"
for run in 1 2 3; do
  log="$d/ctld.$run.log"
  t0=$(date +%s.%N)
  setsid "$build/ductiled" --conf "$d/c/ductile.conf" > "$log" 2>&1 < /dev/null &
  pid=$!
  until DUCTILE_CONF="$d/c/ductile.conf" "$build/ductile" nodes > /dev/null 2>&1; do
    kill -0 $pid 2>/dev/null || { cat "$log"; exit 1; }
    sleep 0.01
  done
  t1=$(date +%s.%N)
  kill $pid
  wait $pid || true
  check=$(sed -n 's/.*integrity check ok (\([0-9]*\) ms).*/\1/p' "$log")
  printf 'run %d: integrity check %s ms, start-up to the first answer %.0f ms\n' "$run" \
    "$check" "$(echo "($t1 - $t0) * 1000" | bc)"
done
