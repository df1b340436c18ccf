#!/usr/bin/env bash
# Install the Debian packages Ductile needs, but only those that are missing.
# Called by `make demo` and `make test`; safe to run repeatedly.
set -euo pipefail
pkgs=(build-essential cmake pkg-config clang libjansson-dev libcmocka-dev libsqlite3-dev
      libuv1-dev libfabric-dev libglpk-dev libsodium-dev libmunge-dev munge libopenmpi-dev openmpi-bin
      iproute2 procps)
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0
echo "deps: installing ${missing[*]}" >&2
SUDO=""
[ "$(id -u)" -ne 0 ] && SUDO="sudo"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
