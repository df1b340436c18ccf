#!/usr/bin/env bash
# A job cancelled while its script is between fork and exec, whose exec then fails
# (a missing interpreter): the node daemon must still confirm the clean-up, else the
# job stays CG and its node allocated forever. Tried ROUNDS times (default 4).
. "$(dirname "$0")/rlib.sh"
up 1 --node-timeout 10
DUCTILE_TEST_EXEC_DELAY_MS=1500 kill_restart_noded n1
wait_for 10 sh -c "\"$BIN\" nodes | grep -Eq '^n1 +idle'" || fail "n1 not up"
f="$T/bad.sh"; printf '#!/nonexistent/interpreter\necho hi\n' > "$f"; chmod 755 "$f"
stuck=0
for r in $(seq "${ROUNDS:-4}"); do
  j=$(submit -N 1 "$f")
  expect_state "$j" R
  d cancel "$j" > /dev/null
  if wait_for 15 sh -c "\"$BIN\" show $j | grep -q CANCELLED"; then
    echo "round $r: job $j CA"
  else
    echo "round $r: job $j stuck in $(state "$j") 15 s after the cancel; nodes: $(d nodes | tail -1)"
    stuck=$((stuck + 1))
    break
  fi
done
grep -E "job_cleanup|could not start" "$T/c/log/noded-n1.log" | tail -3 || true
[ $stuck -eq 0 ] || fail "$stuck job(s) stuck in CG after a cancel during a failed start"
echo ok
