#!/usr/bin/env bash
# fill_history.sh DB TEMPLATE_ID COUNT: COUNT copies of an ended job TEMPLATE_ID (its row
# and its events) in a stopped controller's database, ids from max(id) + 1 on, ending
# one second apart after it: a long history (300,000 jobs in a few seconds) for the
# tests and benchmarks of what a large database costs the controller (test_dos_requests,
# bench/dos). The id counter and the live-job triggers see the rows as any other.
set -euo pipefail
db=$1 tmpl=$2 count=$3
cols=$(sqlite3 "$db" "SELECT group_concat(name) FROM pragma_table_info('jobs')
  WHERE name NOT IN ('id', 'submit', 'start', 'end_')")
base=$(sqlite3 "$db" "SELECT max(id) FROM jobs")
sqlite3 "$db" <<SQL
.timeout 10000
BEGIN;
WITH RECURSIVE n(k) AS (SELECT 1 UNION ALL SELECT k + 1 FROM n WHERE k < $count)
INSERT INTO jobs (id, submit, start, end_, $cols)
  SELECT $base + k, t.submit + k, t.start + k, t.end_ + k, $cols
  FROM n, jobs t WHERE t.id = $tmpl;
WITH RECURSIVE n(k) AS (SELECT 1 UNION ALL SELECT k + 1 FROM n WHERE k < $count)
INSERT INTO job_events (job, time, event, nodes_before, nodes_after, alloc, detail)
  SELECT $base + k, e.time + k, e.event, e.nodes_before, e.nodes_after, e.alloc, e.detail
  FROM n, job_events e WHERE e.job = $tmpl;
COMMIT;
SQL
