#!/usr/bin/env bash
# The public headers compile without a warning, in C and in C++, at every
# optimization level (issue 28 point 16): tests/public_headers.c built
# -Wall -Wextra -Werror at -O0, -O1, -O2, -O3 and -Os with gcc and g++
# (and clang and clang++ when installed), each run; the C and C++ builds
# must print the same registry layout.
#
#   tests/public_headers.sh SOURCE_DIR WORK_DIR
#
# Exit 0 pass, 1 fail, 77 skip (no gcc or g++).
set -uo pipefail

src=$(cd "${1:?source dir}" && pwd)
work=${2:?work dir}
mkdir -p "$work" || exit 1

for tool in gcc g++; do
	command -v "$tool" >/dev/null || {
		echo "SKIP: $tool not found" >&2
		exit 77
	}
done
compilers="gcc g++"
for tool in clang clang++; do
	command -v "$tool" >/dev/null && compilers="$compilers $tool"
done

fail=0
layout=
for cc in $compilers; do
	lang=()
	case $cc in *++) lang=(-x c++) ;; esac
	for opt in -O0 -O1 -O2 -O3 -Os; do
		bin="$work/ph-$cc$opt"
		if ! "$cc" "${lang[@]}" "$opt" -Wall -Wextra -Werror \
			-I"$src/include" "$src/tests/public_headers.c" \
			-o "$bin" -pthread >"$bin.log" 2>&1; then
			echo "FAIL: $cc $opt:" >&2
			cat "$bin.log" >&2
			fail=1
			continue
		fi
		if ! out=$("$bin"); then
			echo "FAIL: $cc $opt: the program exited non-zero" >&2
			fail=1
		fi
		if [ -z "$layout" ]; then
			layout=$out
		elif [ "$out" != "$layout" ]; then
			echo "FAIL: $cc $opt: layout '$out', not '$layout'" >&2
			fail=1
		fi
	done
done
[ "$fail" = 0 ] && echo "$compilers x -O0 -O1 -O2 -O3 -Os: no warning; $layout"
exit "$fail"
