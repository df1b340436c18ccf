#!/usr/bin/env bash
# Checkpoints through an agent (issue 11; docs/checkpointing.md, "Agents"): commits go
# to the agent's memory over libfabric and are flushed to the files behind the
# application's back; a restart reads them from memory on any process count (the files
# removed, to show where they come from), asynchronous commits too; a commit killed
# before publication leaves the version before; two applications share one agent; an
# agent killed, one with another key and a list that cannot be parsed make the library
# use the files and say so once; a new agent takes the next commits.
. "$(dirname "$0")/lib.sh"
mpi_setup
app="$BINDIR/dt_ckpt_app"
agent="$BINDIR/ductile-agent"
[ -x "$app" ] && [ -x "$agent" ] || fail "dt_ckpt_app or ductile-agent not built"
run() { # NP ARGS...
  local np=$1; shift
  env $mpi_env mpirun --oversubscribe -np "$np" "$app" "$@"
}
apid=
start_agent() { # KEYFILE [OPTIONS]: an agent on a free port; sets apid and DUCTILE_CKPT_AGENTS
  rm -f "$T/port"
  "$agent" --key-file "$@" --port-file "$T/port" 2>> "$T/agent.log" &
  apid=$!
  wait_for 10 test -s "$T/port" || fail "the agent did not start: $(cat "$T/agent.log")"
  export DUCTILE_CKPT_AGENTS="127.0.0.1:$(cat "$T/port")"
}
extra_cleanup() { [ -z "$apid" ] || kill -9 "$apid" 2> /dev/null; }
export DUCTILE_CKPT_KEY_FILE="$T/key"
start_agent "$T/key"
D="$T/ckpt"
latest_is() { [ "$(cat "$D/app/latest" 2> /dev/null)" = "$1" ]; }

# a round trip through the agent; its flush puts the versions in the files
run 4 "$D" write 3 > /dev/null 2> "$T/err" || fail "write on 4: $(cat "$T/err")"
[ ! -s "$T/err" ] || fail "write through the agent said: $(cat "$T/err")"
wait_for 20 latest_is 3 || fail "not flushed: latest $(cat "$D/app/latest" 2>&1), $(cat "$T/agent.log")"
[ -f "$D/app/v3/manifest.json" ] && [ -f "$D/app/v3/node0.dat" ] || fail "flushed: $(ls -R "$D")"
# the files go: what the restarts read comes from the agent's memory (level 1)
rm -rf "$D/app"
for np in 6 1; do
  out=$(run "$np" "$D" check 2> "$T/err") || fail "check on $np from memory: $(cat "$T/err")"
  [ "$out" = "restored version 3 on $np processes" ] || fail "check on $np: $out"
done
run 16 "$D" write 1 > /dev/null 2> "$T/err" || fail "write on 16: $(cat "$T/err")"
rm -rf "$D/app"
out=$(run 8 "$D" check 2> "$T/err") || fail "16 -> 8: $(cat "$T/err")"
[ "$out" = "restored version 4 on 8 processes" ] || fail "16 -> 8: $out"
# asynchronous commits: the data changes as soon as each returns
run 4 "$D" write-async 2 > /dev/null 2> "$T/err" || fail "async: $(cat "$T/err")"
rm -rf "$D/app"
out=$(run 5 "$D" check 2> "$T/err") || fail "check after async: $(cat "$T/err")"
[ "$out" = "restored version 6 on 5 processes" ] || fail "async: $out"

# a commit killed after its data reached the agent and before it was published
! DUCTILE_TEST_CKPT_CRASH=7 run 2 "$D" write 1 > /dev/null 2>&1 || fail "the crash hook did not fire"
rm -rf "$D/app"
out=$(run 3 "$D" check 2> "$T/err") || fail "check after the crash: $(cat "$T/err")"
[ "$out" = "restored version 6 on 3 processes" ] || fail "after the crash: $out"

# two applications on one agent, each with its own versions
D2="$T/other"
run 2 "$D2" write 2 > /dev/null 2> "$T/err" || fail "second application: $(cat "$T/err")"
out=$(run 2 "$D2" check 2> /dev/null)
[ "$out" = "restored version 2 on 2 processes" ] || fail "second application: $out"
out=$(run 2 "$D" check 2> /dev/null)
[ "$out" = "restored version 6 on 2 processes" ] || fail "first application: $out"
# what the agent holds: the two complete versions of each, and the interrupted one
"$BIN" checkpoints --agents "$DUCTILE_CKPT_AGENTS" > "$T/list" 2>&1 || fail "list: $(cat "$T/list")"
a=$DUCTILE_CKPT_AGENTS
for row in "$D/app 5 1 .* flushed" "$D/app 6 1 .* flushed" "$D/app 7 1 .* writing" \
  "$D2/app 1 1 .* flushed" "$D2/app 2 1 .* flushed"; do
  set -- $row
  grep -Eq "^$a +$1 +$2 +$3 +[0-9.]+ KiB +$5$" "$T/list" || fail "no '$row' in: $(cat "$T/list")"
done
[ "$(wc -l < "$T/list")" = 6 ] || fail "agent list: $(cat "$T/list")"
# a run that ends releasing its checkpoints: the agent drops them once in the files
D6="$T/released"
run 2 "$D6" write-release 2 > /dev/null 2> "$T/err" || fail "release: $(cat "$T/err")"
released() {
  "$BIN" checkpoints --agents "$a" > "$T/list" 2>&1 && ! grep -q "$D6/app" "$T/list"
}
wait_for 20 released || fail "released versions still held: $(cat "$T/list")"
grep -q "$D/app" "$T/list" || fail "another application's versions went too: $(cat "$T/list")"
out=$(run 3 "$D6" check 2> /dev/null)
[ "$out" = "restored version 2 on 3 processes" ] || fail "after release, from the files: $out"
# the mistakes: no key, another key, an agent that is not there
! DUCTILE_CKPT_KEY_FILE= "$BIN" checkpoints --agents "$a" 2> "$T/err" || fail "listed without a key"
grep -q "needs the service's key: --key-file FILE or DUCTILE_CKPT_KEY_FILE" "$T/err" || fail "$(cat "$T/err")"
! "$BIN" checkpoints --agents "127.0.0.1:1" > /dev/null 2> "$T/err" || fail "listed a missing agent"
grep -qx "ductile: checkpoints: checkpoint agent 127.0.0.1:1: cannot connect: Connection refused" "$T/err" || fail "missing agent: $(cat "$T/err")"

# the agent killed: the files take the commits, said once; the restart reads them
run 2 "$D" write 1 > /dev/null 2> "$T/err" || fail "write 7: $(cat "$T/err")"
wait_for 20 latest_is 7 || fail "version 7 not flushed"
kill -9 "$apid"
wait "$apid" 2> /dev/null || true
apid=
run 4 "$D" write 3 > /dev/null 2> "$T/err" || fail "write without the agent: $(cat "$T/err")"
[ "$(grep -c 'using the checkpoint files in' "$T/err")" = 1 ] || fail "fall-back said: $(cat "$T/err")"
grep -q "^libductile: a checkpoint restart: checkpoint agent 127.0.0.1:[0-9]*: cannot connect: Connection refused; using the checkpoint files in $D/app instead$" "$T/err" ||
  fail "fall-back message: $(cat "$T/err")"
latest_is 10 || fail "the files' latest: $(cat "$D/app/latest")"
out=$(run 3 "$D" check 2> /dev/null)
[ "$out" = "restored version 10 on 3 processes" ] || fail "from the files: $out"

# an agent with another key: refused, the files again; a list that is not host:port
start_agent "$T/otherkey"
run 2 "$D" write 1 > /dev/null 2> "$T/err" || fail "write with the wrong key: $(cat "$T/err")"
grep -q "using the checkpoint files in" "$T/err" || fail "wrong key: $(cat "$T/err")"
latest_is 11 || fail "wrong key: latest $(cat "$D/app/latest")"
DUCTILE_CKPT_AGENTS=nohost run 2 "$D" write 1 > /dev/null 2> "$T/err" || fail "bad list: $(cat "$T/err")"
grep -q "DUCTILE_CKPT_AGENTS: 'nohost' is not host:port (such as 10.0.0.5:7300); checkpoints go to the files" "$T/err" ||
  fail "bad list message: $(cat "$T/err")"
kill "$apid"
wait "$apid" 2> /dev/null || true
apid=

# an agent that dies in the middle of a commit (its region handed out, the data not
# yet there): that commit goes to the files, whole
DUCTILE_TEST_AGENT_DIE=2 start_agent "$T/key"
D4="$T/dies"
run 2 "$D4" write 3 > /dev/null 2> "$T/err" || fail "agent dying: $(cat "$T/err")"
[ "$(grep -c 'using the checkpoint files in' "$T/err")" = 1 ] || fail "agent dying said: $(cat "$T/err")"
grep -q "^libductile: a checkpoint commit: checkpoint agent 127.0.0.1:[0-9]*: .*; using the checkpoint files in $D4/app instead$" "$T/err" ||
  fail "agent dying message: $(cat "$T/err")"
latest_in() { [ "$(cat "$1/app/latest" 2> /dev/null)" = "$2" ]; }
latest_in "$D4" 3 || fail "agent dying: latest $(cat "$D4/app/latest" 2>&1)"
out=$(run 3 "$D4" check 2> /dev/null)
[ "$out" = "restored version 3 on 3 processes" ] || fail "after the agent died: $out"
wait "$apid" 2> /dev/null || true
apid=

# a slow file system: a restart while a version is being flushed leaves the flush alone,
# two flushes at once leave `latest` on the newer (both were lost or wrong before)
DUCTILE_TEST_FLUSH_DELAY_MS=2000 start_agent "$T/key"
D5="$T/slow"
run 2 "$D5" write 1 > /dev/null 2> "$T/err" || fail "slow: $(cat "$T/err")"
out=$(run 2 "$D5" check 2> "$T/err") || fail "slow check: $(cat "$T/err")"
[ "$out" = "restored version 1 on 2 processes" ] || fail "slow check: $out"
run 2 "$D5" write 2 > /dev/null 2> "$T/err" || fail "slow: $(cat "$T/err")"
wait_for 20 latest_in "$D5" 3 || fail "slow: latest $(cat "$D5/app/latest" 2>&1), $(tail -3 "$T/agent.log")"
# the two flushes run side by side: version 2's may end after `latest` names 3
kept_2_3() { [ -d "$D5/app/v2" ] && [ ! -e "$D5/app/v1" ]; }
wait_for 20 kept_2_3 || fail "slow: versions kept: $(ls "$D5/app")"
! grep -q "not flushed" "$T/agent.log" || fail "slow: $(cat "$T/agent.log")"
# a version the agent cannot write to the files: the application hears of it
mkdir -p "$T/noflush/app" && touch "$T/noflush/app/v1.flush"
# stopped (SIGTERM) while it flushes (version 4: the agent held 3): it ends the flush first
rm -rf "$D5/app"
run 2 "$D5" write 1 > /dev/null 2> "$T/err" || fail "slow: $(cat "$T/err")"
kill "$apid"
wait "$apid" 2> /dev/null || true
apid=
latest_in "$D5" 4 || fail "stopped while flushing: $(ls "$D5/app"), $(tail -2 "$T/agent.log")"
start_agent "$T/key"
run 2 "$T/noflush" write 2 > /dev/null 2> "$T/err" || fail "no flush: $(cat "$T/err")"
grep -q "^libductile: checkpoint agent 127.0.0.1:[0-9]* could not write version 1 to $T/noflush/app: .* (it holds it in memory only)$" "$T/err" ||
  fail "no flush message: $(cat "$T/err")"
kill "$apid"
wait "$apid" 2> /dev/null || true
apid=

# an agent with room for one version spills the next ones to the files as they come:
# every commit still goes through it, and a restart reads them from it
start_agent "$T/key" --memory 20K
D3="$T/small"
run 2 "$D3" write 3 > /dev/null 2> "$T/err" || fail "small agent: $(cat "$T/err")"
! grep -q 'using the checkpoint files in' "$T/err" || fail "small agent: the files: $(cat "$T/err")"
grep -q "^ductile-agent: version 3 of $D3/app: node file 0 (12 KiB) goes to the files as it comes (12 KiB held, at most 20)$" "$T/agent.log" ||
  fail "no spill: $(cat "$T/agent.log")"
out=$(run 3 "$D3" check 2> /dev/null)
[ "$out" = "restored version 3 on 3 processes" ] || fail "after the memory limit: $out"
! "$agent" --key-file "$T/key" --memory 0 2> "$T/err" || fail "--memory 0 accepted"
grep -qx "ductile-agent: --memory 0: give what it may hold in MiB, or with K, M or G, such as 4096 or 4G" "$T/err" ||
  fail "--memory message: $(cat "$T/err")"
kill "$apid"
wait "$apid" 2> /dev/null || true
apid=

# a new agent, empty: the restart reads the files, the next commits go to the agent
start_agent "$T/key"
run 4 "$D" write 2 > /dev/null 2> "$T/err" || fail "write to a new agent: $(cat "$T/err")"
[ ! -s "$T/err" ] || fail "a new agent: $(cat "$T/err")"
wait_for 20 latest_is 14 || fail "not flushed by the new agent: $(cat "$D/app/latest")"
rm -rf "$D/app"
out=$(run 2 "$D" check 2> "$T/err")
[ "$out" = "restored version 14 on 2 processes" ] || fail "from the new agent: $out $(cat "$T/err")"
echo ok
