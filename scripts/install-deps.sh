#!/bin/sh
# Installs the Debian packages etcompare needs to build, test and plot.
# Idempotent, non-interactive, needs root (or sudo) only when something is missing.
set -eu

pkgs="build-essential cmake pkg-config libopenblas-dev libpng-dev libzip-dev \
zlib1g-dev libjansson-dev gnuplot-nox flatbuffers-compiler python3 python3-jsonschema clang"
[ "${ETC_WITH_VALGRIND:-0}" = 1 ] && pkgs="$pkgs valgrind"

missing=""
for p in $pkgs; do
	if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed"; then
		missing="$missing $p"
	fi
done
[ -z "$missing" ] && exit 0

echo "install-deps: installing:$missing" >&2
SUDO=""
if [ "$(id -u)" != 0 ]; then
	command -v sudo >/dev/null 2>&1 || {
		echo "install-deps: not root and no sudo; install:$missing" >&2
		exit 1
	}
	SUDO="sudo"
fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq </dev/null
# shellcheck disable=SC2086
$SUDO apt-get install -y -qq --no-install-recommends $missing </dev/null >/dev/null
