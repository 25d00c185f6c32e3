#!/bin/sh
# Derive the shipped tsd_s layouts (plugins/jemalloc-probe/layouts.txt) by
# building jemalloc with -g and asking `ctprof-core jemalloc-layout` for
# each build's line. Not run by the tests: its output is committed.
#
# Usage: tools/jemalloc-layouts.sh CTPROF_CORE WORKDIR [UPSTREAM_GIT_DIR]
#   CTPROF_CORE       a built ctprof-core (its plugin directory has
#                     jemalloc-probe)
#   WORKDIR           where sources are unpacked and built
#   UPSTREAM_GIT_DIR  a clone (or bare mirror) of github.com/jemalloc/jemalloc
#                     with the tags 5.2.1 and 5.3.0, for the default builds;
#                     without it only Debian's build is derived
#
# Builds, each only its library, -g -O2:
#   debian12-amd64   Debian bookworm's libjemalloc2 5.3.0-1: `apt-get source
#                    jemalloc` and the configure options of its debian/rules
#                    on amd64 (--with-lg-page=12 --with-lg-hugepage=21
#                    --enable-prof --with-version=VERSION)
#   debian12-arm64   the same on arm64 (--with-lg-page=16
#                    --with-lg-hugepage=21), cross-compiled as below
#   <version>-x86_64, <version>-aarch64 for 5.2.1 and 5.3.0: upstream's
#                    tag with default options; aarch64 cross-compiled with
#                    gcc-aarch64-linux-gnu, whose configure cannot run its
#                    probes, so the page size (12, 4 KiB) and virtual
#                    address bits (48) are given as a native default build
#                    on a 4 KiB-page host finds them, and without the C++
#                    operators (no aarch64 g++ needed; they are not in
#                    tsd_s)
# Needs: apt packages dpkg-dev autoconf make gcc, gcc-aarch64-linux-gnu and
# libc6-dev-arm64-cross for the aarch64 builds.
set -eu
ctprof=$(realpath "$1")
work=$(realpath -m "$2")
git_dir=${3:-}
mkdir -p "$work"
cd "$work"

# build NAME SRC_DIR CONFIGURE_ARGS... : the library of SRC_DIR configured
# in $work/NAME, and its layouts line.
build() {
	name=$1 src=$2
	shift 2
	lib=$work/$name/lib/libjemalloc.so.2
	if [ -f "$lib" ]; then # built by an earlier run
		"$ctprof" jemalloc-layout --name "$name" "$lib"
		return
	fi
	rm -rf "$work/$name"
	mkdir -p "$work/$name"
	(cd "$src" && [ -x configure ] || autoconf >/dev/null)
	(cd "$work/$name" &&
		CFLAGS="-g -O2" "$src/configure" "$@" >configure.log 2>&1 &&
		make -j"$(nproc)" build_lib_shared >make.log 2>&1) || {
		echo "jemalloc-layouts: $name: build failed, see $work/$name" >&2
		return 1
	}
	"$ctprof" jemalloc-layout --name "$name" "$work/$name/lib/libjemalloc.so.2"
}

# Debian bookworm's package.
if [ ! -d "$work/deb" ]; then
	mkdir -p "$work/deb"
	(cd "$work/deb" && apt-get source --download-only -qq jemalloc >/dev/null &&
		dpkg-source -x --no-check jemalloc_*.dsc >/dev/null)
fi
deb_src=$(ls -d "$work"/deb/jemalloc-[0-9]*/ | head -n1)
build debian12-amd64 "$deb_src" --with-version="$(cat "$deb_src/VERSION")" \
	--with-lg-page=12 --with-lg-hugepage=21 --enable-prof
# arm64: 64 KiB pages at most, no profiling (debian/rules); cross-compiled.
build debian12-arm64 "$deb_src" --with-version="$(cat "$deb_src/VERSION")" \
	--host=aarch64-linux-gnu --with-lg-page=16 --with-lg-hugepage=21 \
	--with-lg-vaddr=48 --disable-cxx

[ -n "$git_dir" ] || exit 0
for tag in 5.2.1 5.3.0; do
	src=$work/src-$tag
	if [ ! -d "$src" ]; then
		mkdir -p "$src"
		git -C "$git_dir" archive --format=tar "$tag" | tar -x -C "$src"
		# What a release tarball's VERSION holds: git describe --long.
		echo "$tag-0-g$(git -C "$git_dir" rev-parse "$tag^{commit}")" >"$src/VERSION"
	fi
	build "$tag-x86_64" "$src"
	build "$tag-aarch64" "$src" --host=aarch64-linux-gnu \
		--with-lg-page=12 --with-lg-vaddr=48 --disable-cxx
done
