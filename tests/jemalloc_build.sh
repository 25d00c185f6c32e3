#!/bin/sh
# Build jemalloc with DWARF (-g) from Debian's source package into a cache
# outside the clone, once. Debian's libjemalloc2 is stripped of debuginfo, so
# the jemalloc-probe tests cannot find tsd_s offsets in it.
#
# Usage: jemalloc_build.sh [CACHE_DIR]   (default /var/cache/ctprof-test/jemalloc)
# On success prints the install prefix (contains lib/libjemalloc.{a,so},
# include/jemalloc/jemalloc.h) and exits 0. Exits 77 with a reason on stderr
# when the source package cannot be fetched or built here.
# Idempotent: a finished build (marker file) is reused without network use.
set -eu
cache=${1:-/var/cache/ctprof-test/jemalloc}
prefix=$cache/prefix
marker=$prefix/.ctprof-built
if [ -f "$marker" ]; then
	echo "$prefix"
	exit 0
fi
skip() {
	echo "jemalloc_build: $*" >&2
	exit 77
}
mkdir -p "$cache" || skip "cannot create $cache"
# One builder at a time (ctest may start several tests that need it).
exec 9>"$cache/.lock"
flock 9 || true
if [ -f "$marker" ]; then
	echo "$prefix"
	exit 0
fi
src=$(ls -d "$cache"/jemalloc-[0-9]*/ 2>/dev/null | head -n1 || true)
if [ -z "$src" ]; then
	command -v apt-get >/dev/null || skip "no apt-get to fetch the jemalloc source package"
	list=/etc/apt/sources.list.d/ctprof-deb-src.sources
	# Same mirrors and suites as the binary lines, as deb-src, for this
	# one download only: removed again on exit.
	made=0
	if [ ! -f "$list" ]; then
		made=1
		trap 'rm -f "$list" "${list%.sources}.list"' EXIT
		trap 'exit 130' INT TERM HUP
		for f in /etc/apt/sources.list.d/*.sources; do
			[ -f "$f" ] || continue
			grep -q 'deb.debian.org' "$f" || continue
			sed -n '/^Types:.*deb/,/^$/p' "$f"
		done | sed 's/^Types:.*/Types: deb-src/' >"$list.tmp" 2>/dev/null ||
			skip "cannot write $list"
		if [ ! -s "$list.tmp" ] && [ -f /etc/apt/sources.list ]; then
			sed -n 's/^deb \(.*debian.*\)$/deb-src \1/p' /etc/apt/sources.list >"${list%.sources}.list"
		fi
		if [ -s "$list.tmp" ]; then mv "$list.tmp" "$list"; else rm -f "$list.tmp"; fi
	fi
	apt-get update -qq >/dev/null 2>&1 || true
	fetched=0
	(cd "$cache" && apt-get source --download-only -qq jemalloc >/dev/null 2>&1) &&
		fetched=1
	[ "$made" = 1 ] && rm -f "$list" "${list%.sources}.list"
	[ "$fetched" = 1 ] || skip "apt-get source jemalloc failed (no deb-src reachable)"
	command -v dpkg-source >/dev/null || skip "dpkg-source (dpkg-dev) not installed"
	(cd "$cache" && dpkg-source -x --no-check jemalloc_*.dsc >/dev/null 2>&1) ||
		skip "dpkg-source -x failed"
	src=$(ls -d "$cache"/jemalloc-[0-9]*/ 2>/dev/null | head -n1 || true)
	[ -n "$src" ] || skip "no unpacked jemalloc source in $cache"
fi
build=$cache/build
rm -rf "$build"
mkdir -p "$build"
cd "$build"
if [ ! -x "$src/configure" ]; then
	(cd "$src" && autoconf >/dev/null 2>&1) || skip "autoconf failed (autoconf not installed?)"
fi
# No prefix: symbols keep their plain names (tsd_tls stays je_tsd_tls
# internally, the public API is malloc/free). -O1 -g keeps DWARF complete.
CFLAGS="-g -O1" "$src/configure" --prefix="$prefix" --with-jemalloc-prefix= \
	--disable-cxx >configure.log 2>&1 || skip "configure failed, see $build/configure.log"
make -j"$(nproc)" build_lib >make.log 2>&1 || skip "make failed, see $build/make.log"
make install_lib install_include >>make.log 2>&1 || skip "make install failed"
touch "$marker"
echo "$prefix"
