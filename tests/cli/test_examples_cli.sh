#!/usr/bin/env bash
# The examples answer --help and refuse what they do not know, instead of starting
# (taskfarm --help hung: it waited for workers that nobody started).
set -euo pipefail
B=$(dirname "${DUCTILE_BIN:?set by ctest}")
out=$(timeout 10 "$B/taskfarm" --help) || { echo "FAIL: taskfarm --help: exit $?"; exit 1; }
grep -q "^usage: taskfarm" <<< "$out" || { echo "FAIL: taskfarm --help said: $out"; exit 1; }
rc=0
timeout 10 "$B/taskfarm" --itms 3 2> /dev/null || rc=$?
[ $rc -eq 2 ] || { echo "FAIL: taskfarm --itms: exit $rc, not 2"; exit 1; }
echo ok
