#!/bin/sh
# Installs the build into a scratch prefix and compiles, links and runs a
# client found only through pkg-config. Args: BUILD_DIR PREFIX
set -eu
build=$1 prefix=$2
rm -rf "$prefix"
cmake --install "$build" --prefix "$prefix" >/dev/null
libdir=$(find "$prefix" -name etcompare.pc -printf '%h\n' | head -1)
[ -n "$libdir" ] || { echo "FAIL: etcompare.pc not installed"; exit 1; }
[ -x "$prefix/bin/etcompare" ] || { echo "FAIL: etcompare not installed"; exit 1; }
export PKG_CONFIG_PATH="$libdir"
cat > "$prefix/client.c" <<'C'
#include <etcompare/etcompare.h>
#include <stdio.h>
#include <string.h>
int main(void)
{
	etc_error err;
	etc_etdump *d;
	etc_error_clear(&err);
	if (etc_etdump_wrap(&d, "tiny", 4, "tiny", &err) == 0)
		return 1; /* must be rejected */
	printf("%s|%s\n", etc_version(), err.message);
	return strstr(err.message, "too short") ? 0 : 1;
}
C
cc -std=c11 -Wall -Werror $(pkg-config --cflags etcompare) "$prefix/client.c" \
	-o "$prefix/client" $(pkg-config --libs --static etcompare)
out=$("$prefix/client")
echo "client: $out"
"$prefix/bin/etcompare" --version
echo "1 passed, 0 failed"
