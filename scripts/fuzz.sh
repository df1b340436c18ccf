#!/usr/bin/env bash
# Builds the libFuzzer targets with clang and runs each for SECONDS (default 10).
# `make test` runs them briefly; for a long run: make fuzz FUZZ_SECONDS=600
set -euo pipefail
secs=${1:-10}
# A fixed seed by default: `make test` explores the same inputs on every run (a finding
# there is one to reproduce, not luck). FUZZ_SEED=0 lets libFuzzer pick one.
seed=${FUZZ_SEED:-1}
out=${2:-build-fuzz}
cd "$(dirname "$0")/.."
mkdir -p "$out"
flags="-g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all -D_DEFAULT_SOURCE -D_POSIX_C_SOURCE=200809L -Isrc -Isrc/common"
clang $flags tests/fuzz/fuzz_proto.c src/proto/proto.c src/common/*.c -ljansson -lsodium -lm -o "$out/fuzz_proto"
clang $flags tests/fuzz/fuzz_config.c src/common/*.c -lm -o "$out/fuzz_config"
clang $flags tests/fuzz/fuzz_directives.c src/proto/directives.c src/common/*.c -lm -o "$out/fuzz_directives"
# the node daemon's dispatcher, linked with the daemon (all but its main.c)
noded_src=$(ls src/noded/*.c | grep -v '/main\.c$')
clang $flags -Isrc/proto -Isrc/noded tests/fuzz/fuzz_noded.c $noded_src src/proto/proto.c src/proto/conn.c src/proto/errors.c \
  src/common/*.c -luv -ljansson -lsodium -lmunge -lm -o "$out/fuzz_noded"
# the database loader, linked with the controller (all but its main.c). The include
# paths are per library, as in CMake: src/sched/sched.h must not shadow <sched.h> for
# src/proto/conn.c (_GNU_SOURCE).
objflags=${flags/-fsanitize=fuzzer,/-fsanitize=fuzzer-no-link,}
mkdir -p "$out/obj-db"
for f in src/proto/*.c; do
  clang $objflags -c "$f" -o "$out/obj-db/proto-$(basename "$f" .c).o"
done
ctld_src=$(ls src/ctld/*.c | grep -v '/main\.c$')
clang $flags -Isrc/ctld -Isrc/sched -Isrc/proto tests/fuzz/fuzz_db.c $ctld_src src/common/*.c \
  src/sched/*.c src/sched/policies/*.c "$out"/obj-db/proto-*.o \
  -lsqlite3 -ljansson -luv -lsodium -lmunge -lglpk -lm -o "$out/fuzz_db"
for f in fuzz_proto fuzz_config fuzz_directives fuzz_noded fuzz_db; do
  mkdir -p "$out/corpus-$f"
  echo "fuzz: $f for ${secs}s"
  if ! "$out/$f" -max_total_time="$secs" -max_len=8192 -rss_limit_mb=2048 -seed="$seed" \
      -artifact_prefix="$out/$f-" "$out/corpus-$f" > "$out/$f.log" 2>&1; then
    tail -n 40 "$out/$f.log" >&2
    echo "fuzz: $f found a problem (input saved as $out/$f-*)" >&2
    exit 1
  fi
  grep -E '^Done' "$out/$f.log" || true
done
