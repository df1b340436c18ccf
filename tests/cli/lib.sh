# Sourced by the shell tests: the binary, the source tree, a scratch directory removed
# on exit, and the two ways a check fails.
bin=${DUCTILE_BIN:?}
src=${DUCTILE_SOURCE_DIR:?}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

# The command fails with a message matching the pattern: expect_err PATTERN ARGS...
expect_err() {
  local pat=$1; shift
  if "$bin" "$@" > "$tmp/o" 2> "$tmp/e"; then fail "expected failure: $*"; fi
  grep -q -- "$pat" "$tmp/e" || fail "message for '$*': $(cat "$tmp/e")"
}
