#!/bin/sh
# Installs the build into a scratch prefix, then checks what a packager and a
# user get: a client compiled against the library through pkg-config and
# through find_package(etcompare) (CMake package, target
# etcompare::etcompare) builds and runs; the man page renders with `man -l`;
# the bash completion loads and completes options, values and files.
# Args: BUILD_DIR PREFIX
set -eu
build=$1 prefix=$2
passed=0 failed=0
ok() { passed=$((passed + 1)); echo "ok   $1"; }
fail() { failed=$((failed + 1)); echo "FAIL $1"; }
check() { # check NAME COMMAND...: the command's success is the check
	name=$1
	shift
	if "$@"; then ok "$name"; else fail "$name"; fi
}

rm -rf "$prefix"
cmake --install "$build" --prefix "$prefix" >/dev/null
libdir=$(find "$prefix" -name etcompare.pc -printf '%h\n' | head -1)
check "etcompare.pc installed" test -n "$libdir"
check "bin/etcompare installed" test -x "$prefix/bin/etcompare"
cmakedir=$(find "$prefix" -name etcompareConfig.cmake -printf '%h\n' | head -1)
check "etcompareConfig.cmake and its version file installed" \
	test -n "$cmakedir" -a -f "$cmakedir/etcompareConfigVersion.cmake"

mkdir -p "$prefix/client"
cat > "$prefix/client/client.c" <<'C'
#include <etcompare/etcompare.h>
#include <etcompare/reference.h>
#include <etcompare/etrecord.h>
#include <stdio.h>
#include <string.h>
int main(void)
{
	etc_error err;
	etc_etdump *d;
	etc_error_clear(&err);
	/* the op library links its dependencies (OpenBLAS) */
	if (!etc_reference_op_supported("aten.relu.default") || etc_reference_op_count() < 2)
		return 1;
	if (etc_etdump_wrap(&d, "tiny", 4, "tiny", &err) == 0)
		return 1; /* must be rejected */
	/* the ETRecord reader links libzip, jansson and zlib */
	etc_etrecord *rec;
	etc_error zerr;
	etc_error_clear(&zerr);
	if (etc_etrecord_open(&rec, "/nonexistent.etrecord", &zerr) == 0)
		return 1;
	printf("%s|%s\n", etc_version(), err.message);
	return strstr(err.message, "too short") ? 0 : 1;
}
C
# pkg-config
export PKG_CONFIG_PATH="$libdir"
check "pkg-config client builds" cc -std=c11 -Wall -Werror $(pkg-config --cflags etcompare) \
	"$prefix/client/client.c" -o "$prefix/client/client-pc" $(pkg-config --libs etcompare)
# (pkg-config gives no run path: a shared library is found through LD_LIBRARY_PATH)
check "pkg-config client runs" env LD_LIBRARY_PATH="$(dirname "$libdir")" "$prefix/client/client-pc"

# find_package
cat > "$prefix/client/CMakeLists.txt" <<'CM'
cmake_minimum_required(VERSION 3.18)
project(client C)
find_package(etcompare 0.1 REQUIRED)
add_executable(client client.c)
target_link_libraries(client PRIVATE etcompare::etcompare)
CM
unset PKG_CONFIG_PATH
check "find_package(etcompare) client configures" cmake -S "$prefix/client" -B "$prefix/client/b" \
	-DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_BUILD_TYPE=Release
check "find_package(etcompare) client builds" cmake --build "$prefix/client/b"
check "find_package(etcompare) client runs" "$prefix/client/b/client"
sed -i 's/find_package(etcompare 0.1 REQUIRED)/find_package(etcompare 9.0 REQUIRED)/' \
	"$prefix/client/CMakeLists.txt"
if cmake -S "$prefix/client" -B "$prefix/client/b9" -DCMAKE_PREFIX_PATH="$prefix" >/dev/null 2>&1; then
	fail "find_package(etcompare 9.0) is refused"
else
	ok "find_package(etcompare 9.0) is refused"
fi
check "the installed etcompare runs" "$prefix/bin/etcompare" --version

# man page
man1="$prefix/share/man/man1/etcompare.1"
if [ "${ETC_HAVE_HELP2MAN:-1}" = 0 ]; then
	echo "skip man page: help2man was not found when configuring"
elif ! command -v man >/dev/null 2>&1; then
	check "man page installed" test -s "$man1"
	echo "skip man -l: man is not installed (Debian package man-db)"
else
	page=$(MANWIDTH=80 man -l "$man1" 2>&1 || true)
	check "man -l renders the page (NAME, --etdump, --reference-outputs)" sh -c '
		printf "%s" "$1" | grep -q "^NAME" &&
		printf "%s" "$1" | grep -q -- "--etdump FILE" &&
		printf "%s" "$1" | grep -q -- "--reference-outputs FILE"' sh "$page"
	# every option of --help is an entry of its own in the page (.TP, then
	# the option in bold), not folded into the text of the one before
	opts=$("$prefix/bin/etcompare" --help | sed -n 's/^  \(-[a-zA-Z], \)\{0,1\}\(--[a-z0-9_-]*\).*/\2/p')
	entries=$(awk 'tp { print; tp = 0 } /^\.TP/ { tp = 1 }' "$man1" |
		sed 's/\\f[BRI]//g; s/\\-/-/g' |
		sed -n 's/^\(-[a-zA-Z], \)\{0,1\}\(--[a-z0-9_-]*\).*/\2/p')
	missing=$(printf '%s\n' "$opts" | while read -r o; do
		printf '%s\n' "$entries" | grep -qx -- "$o" || echo "$o"; done)
	[ -z "$missing" ] || echo "options folded into text in the man page: $missing"
	check "man page: each of the $(printf '%s\n' "$opts" | wc -l) options of --help is an entry" \
		test -z "$missing" -a -n "$opts"
fi

# bash completion: sourced by a bash with bash-completion loaded (as the
# completion loader would), then asked what it offers.
comp="$prefix/share/bash-completion/completions/etcompare"
check "bash completion installed" test -s "$comp"
mkdir -p "$prefix/files" && : > "$prefix/files/model.etdp" && mkdir -p "$prefix/files/plots"
offers() { # offers WORD... : what the completion offers for the last word
	(cd "$prefix/files" && bash -c '
		[ -f /usr/share/bash-completion/bash_completion ] &&
			. /usr/share/bash-completion/bash_completion
		. "$0"
		COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1))
		COMP_LINE="$*"; COMP_POINT=${#COMP_LINE}
		_etcompare etcompare "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD-1]}"
		printf "%s\n" "${COMPREPLY[@]}" | sort' "$comp" etcompare "$@")
}
got=$(offers --reference-out)
check "completes --reference-out to --reference-outputs (got: $got)" test "$got" = "--reference-outputs"
got=$(offers --etdump mod)
check "completes a file after --etdump (got: $got)" test "$got" = "model.etdp"
got=$(offers --target_time_scale m)
check "completes a time unit (got: $got)" test "$got" = "ms"
got=$(offers --plot pl)
check "completes a directory after --plot (got: $got)" test "$got" = "plots"
# the '-' spellings of options --help writes with '_' take the same values
got=$(offers --source-time-scale m)
check "completes a time unit after --source-time-scale (got: $got)" test "$got" = "ms"
got=$(offers --target-time-scale c)
check "completes a time unit after --target-time-scale (got: $got)" test "$got" = "cycles"
got=$(offers --debug-buffer mod)
check "completes a file after --debug-buffer (got: $got)" test "$got" = "model.etdp"
missing=""
for o in --source-time-scale --target-time-scale --debug-buffer --etdump-path --tsv-path \
	--include-delegate-debug-data; do
	printf "%s\n" "$(offers "${o%???}")" | grep -qx -- "$o" || missing="$missing $o"
done
check "offers the '-' spelling of the options --help writes with '_'${missing:+ (missing:$missing)}" \
	test -z "$missing"
# --opt=value: bash splits the word at '=' (COMP_WORDBREAKS), or not
got=$(offers --pair-by = c)
check "completes --pair-by=c to content (got: $got)" test "$got" = "content"
got=$(offers --pair_by =)
check "offers the values after --pair_by= (got: $(echo $got))" \
	test "$(echo $got)" = "all content index order"
got=$(offers --target-time-scale = u)
check "completes --target-time-scale=u to us (got: $got)" test "$got" = "us"
got=$(offers --etdump = mod)
check "completes a file after --etdump= (got: $got)" test "$got" = "model.etdp"
got=$(offers --pair-by=c)
check "completes the single word --pair-by=c (got: $got)" test "$got" = "--pair-by=content"
got=$(offers --pair-by = c --tables)
check "completes options after an --opt=value (got: $got)" test "$got" = "--tables"
# every option --help names is offered (the completion is generated from it)
missing=""
for o in $("$prefix/bin/etcompare" --help | grep -o -- '--[A-Za-z][A-Za-z0-9_-]*' | sort -u); do
	printf "%s\n" "$(offers "$o")" | grep -qx -- "$o" || missing="$missing $o"
done
check "every option of --help completes${missing:+ (missing:$missing)}" test -z "$missing"

echo "$passed passed, $failed failed"
[ "$failed" = 0 ] && [ "$passed" -gt 0 ]
