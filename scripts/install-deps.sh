#!/bin/sh
# Installs the Debian packages etcompare needs. Idempotent, non-interactive;
# needs root (or sudo) only when something is missing.
#   scripts/install-deps.sh          build, run and plot
#   scripts/install-deps.sh --tests  also what the test suite uses: flatc,
#                                    clang, Chromium (renders the HTML
#                                    report), numpy/pandas/Dask (the Python
#                                    package), PyTorch (test-side generators)
set -eu

pkgs="build-essential cmake pkg-config libpng-dev libzip-dev libopenblas-dev \
zlib1g-dev libjansson-dev gnuplot-nox help2man bash-completion python3 python3-numpy"
if [ "${1:-}" = "--tests" ]; then
	pkgs="$pkgs flatbuffers-compiler clang python3-jsonschema python3-pandas \
python3-dask python3-distributed python3-torch chromium man-db"
fi
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
