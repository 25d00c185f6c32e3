#!/usr/bin/env bash
# Install a build into a temporary prefix and use it the way a plugin author
# would: build docs/examples/hello-plugin with nothing but
# `pkg-config --cflags --libs ctprof-plugin` from that prefix, then run the
# INSTALLED ctprof-core with the example and the installed plugins, and find
# the example's fields in the snapshot.
#
#   tests/install_example.sh BUILD_DIR SOURCE_DIR
#
# Exit 0 pass, 1 fail, 77 skip (a tool this needs is missing).
set -euo pipefail

build=$(cd "${1:?build dir}" && pwd)
src=$(cd "${2:?source dir}" && pwd)
python=/usr/bin/python3

for tool in cmake make cc pkg-config nm readelf "$python"; do
	if ! command -v "$tool" >/dev/null; then
		echo "SKIP: $tool not found" >&2
		exit 77
	fi
done

fail() {
	echo "FAIL: $*" >&2
	exit 1
}

# The loader refuses group-writable plugins when run as root.
umask 022
tmp=$(realpath "$(mktemp -d "${TMPDIR:-/tmp}/ctp-install.XXXXXX")")
if [ -z "${CTP_TEST_KEEP:-}" ]; then
	trap 'rm -rf "$tmp"' EXIT
else
	echo "keeping $tmp" >&2
fi
prefix=$tmp/prefix

cmake --install "$build" --prefix "$prefix" >"$tmp/install.log" ||
	fail "cmake --install: $(cat "$tmp/install.log")"

bin=$prefix/bin/ctprof-core
header=$prefix/include/ctprof/plugin.h
[ -x "$bin" ] || fail "no $bin after install"
# --help names the config file the installed binary really uses.
etc_config=$(find "$prefix" -name collectors.yaml -path '*/etc/ctprof/*' | head -n1)
[ -n "$etc_config" ] || fail "no etc/ctprof/collectors.yaml installed under $prefix"
"$bin" --help | grep -qF "(default: $etc_config)" ||
	fail "--help does not name $etc_config as the default config:
$("$bin" --help | grep -F -- '--config')"
[ -f "$header" ] || fail "no $header after install"
# The man pages, where man(1) looks under the prefix.
for m in man1/ctprof-core.1 man5/collectors.yaml.5; do
	[ -f "$prefix/share/man/$m" ] || fail "no share/man/$m after install"
done
[ -f "$prefix/share/bash-completion/completions/ctprof-core" ] ||
	fail "no share/bash-completion/completions/ctprof-core after install"
pc=$(find "$prefix" -name ctprof-plugin.pc -path '*/pkgconfig/*' | head -n1)
[ -n "$pc" ] || fail "no ctprof-plugin.pc installed under $prefix"
export PKG_CONFIG_PATH
PKG_CONFIG_PATH=$(dirname "$pc")

# The .pc must describe the prefix it was installed to, not the one the
# build was configured with (it may say so relative to its own directory).
includedir=$(realpath -m "$(pkg-config --variable=includedir ctprof-plugin)")
plugindir=$(realpath -m "$(pkg-config --variable=plugindir ctprof-plugin)")
case "$includedir" in
"$prefix"/*) ;;
*) fail "ctprof-plugin.pc: includedir=$includedir does not follow --prefix $prefix
$(cat "$pc")" ;;
esac
case "$plugindir" in
"$prefix"/*) ;;
*) fail "ctprof-plugin.pc: plugindir=$plugindir does not follow --prefix $prefix" ;;
esac
[ -d "$plugindir" ] || fail "plugindir $plugindir from the .pc does not exist"
incs=""
for flag in $(pkg-config --cflags ctprof-plugin); do
	case "$flag" in -I*) incs="$incs $(realpath -m "${flag#-I}")" ;; esac
done
[ "$incs" = " $prefix/include" ] ||
	fail "pkg-config --cflags ctprof-plugin gives include dirs '$incs', not $prefix/include"

# Build the example in a copy (the source tree stays clean), recording which
# header the compiler really used.
cp -R "$src/docs/examples/hello-plugin" "$tmp/hello"
# A sanitizer build installs an instrumented toolkit library: a plugin
# linking it must be built with the same sanitizers (as it must to be
# loaded into that core at all).
# With the same compiler, too: gcc's and clang's runtimes do not mix, and
# clang's must be the shared one for a shared object.
san=""
cc=$(sed -n 's/^CMAKE_C_COMPILER:[A-Z]*=//p' "$build/CMakeCache.txt")
if grep -q '^CTP_SANITIZE:BOOL=ON' "$build/CMakeCache.txt" 2>/dev/null; then
	san="-fsanitize=address,undefined"
	case "$("${cc:-cc}" --version 2>/dev/null)" in
	*clang*) san="$san -shared-libsan" ;;
	esac
fi
make -C "$tmp/hello" CC="${cc:-cc}" CFLAGS="-O2 -Wall -Wextra -Werror -MD $san" \
	LDFLAGS="$san" >"$tmp/make.log" 2>&1 ||
	fail "building the example: $(cat "$tmp/make.log")"
so=$tmp/hello/hello.so
[ -f "$so" ] || fail "make produced no hello.so"
for h in plugin.h plugin-util.h; do
	used=$(tr ' \\' '\n\n' <"$tmp/hello/hello.d" | grep "ctprof/$h" || true)
	[ -n "$used" ] && [ "$(realpath "$used")" = "$(realpath "$prefix/include/ctprof/$h")" ] ||
		fail "the example compiled against '$used', not the installed $h"
done
# jemalloc-probe's shipped tsd_s layouts beside it, and its command found
# by the installed binary through the installed plugin directory.
[ -f "$plugindir/jemalloc-probe/layouts.txt" ] ||
	fail "no jemalloc-probe/layouts.txt in $plugindir"
"$bin" jemalloc-layout --help | grep -q '^Usage: ctprof-core jemalloc-layout' ||
	fail "the installed ctprof-core does not run jemalloc-layout"
# The per-task source layouts a third-party plugin may read or offer.
[ -f "$prefix/include/ctprof/source-taskstats.h" ] ||
	fail "source-taskstats.h is not installed"
# The appstats example, built against the installed header alone, runs
# through the capture below: its threads' values must be in the snapshot.
[ -f "$prefix/include/ctprof/appstats.h" ] || fail "appstats.h is not installed"
cp -R "$src/docs/examples/appstats" "$tmp/appstats"
# A program of its own, never loaded into the core: built without the
# sanitizers (clang's shared runtime is not on its library path).
make -C "$tmp/appstats" CC="${cc:-cc}" CFLAGS="-O2 -Wall -Wextra -Werror -MD" \
	>>"$tmp/make.log" 2>&1 ||
	fail "building the appstats example: $(cat "$tmp/make.log")"
used=$(tr ' \\' '\n\n' <"$tmp/appstats/publisher.d" | grep "ctprof/appstats.h" || true)
[ -n "$used" ] && [ "$(realpath "$used")" = "$(realpath "$prefix/include/ctprof/appstats.h")" ] ||
	fail "the appstats example compiled against '$used', not the installed header"
"$tmp/appstats/publisher" 3 >"$tmp/publisher.out" &
publisher=$!
trap 'kill $publisher 2>/dev/null; [ -n "${CTP_TEST_KEEP:-}" ] || rm -rf "$tmp"' EXIT
for _ in $(seq 50); do
	grep -q publishing "$tmp/publisher.out" && break
	sleep 0.1
done
grep -q publishing "$tmp/publisher.out" || fail "the appstats example did not start"

# The toolkit is linked in (from the installed static library) and stays
# local to the plugin.
nm "$so" | grep -q ' t ctp_attach$' ||
	fail "hello.so has no local ctp_attach: $(nm "$so" | grep ctp_ || true)"
[ -f "$(pkg-config --variable=libdir ctprof-plugin)/libctprof-plugin-util.a" ] ||
	fail "no libctprof-plugin-util.a in the .pc's libdir"

# `make install` goes to the .pc's plugindir (staged with DESTDIR).
make -C "$tmp/hello" install DESTDIR="$tmp/stage" >>"$tmp/make.log" 2>&1 ||
	fail "make install: $(cat "$tmp/make.log")"
[ -f "$tmp/stage$plugindir/hello.so" ] ||
	fail "make install did not place hello.so in DESTDIR$plugindir"

# Every plugin exports exactly one symbol, the descriptor: the defined
# dynamic symbols that bind (a coverage build, CTP_FUZZ, lists the linker's
# __start___sancov_* bounds LOCAL; AddressSanitizer builds add an
# __odr_asan.* marker per global, which is not the plugin's).
for p in "$so" "$plugindir"/*.so; do
	syms=$(readelf --dyn-syms -W "$p" |
		awk '$1 ~ /^[0-9]+:$/ && $5 != "LOCAL" && $7 != "UND" && $8 != "" { print $8 }' |
		grep -v '^__odr_asan' | sort | tr '\n' ' ')
	[ "$syms" = "ctp_plugin_v1 " ] ||
		fail "$p exports '$syms', expected only ctp_plugin_v1"
done

# Capture this host with the installed binary, the example and every
# installed plugin.
plugins=""
for p in "$plugindir"/*.so; do
	plugins="$plugins  $(basename "$p" .so): {}"$'\n'
done
cat >"$tmp/collectors.yaml" <<EOF
plugin_dirs:
  - "$tmp/hello"
  - "$plugindir"
workers: 2
plugins:
$plugins  hello:
    required: true
    options: {greeting: "hi from the install test"}
EOF
snap=$tmp/snap.ctprof.zst
"$bin" --config "$tmp/collectors.yaml" -o "$snap" 2>"$tmp/capture.err" ||
	fail "installed ctprof-core failed (exit $?): $(cat "$tmp/capture.err")"
"$bin" dump "$snap" >"$tmp/snap.json" || fail "installed ctprof-core dump failed"

"$python" - "$tmp/snap.json" "$so" "$publisher" <<'EOF' || fail "snapshot check (see above)"
import json, sys

doc = json.load(open(sys.argv[1]))
errors = []
plugins = {p["name"]: p for p in doc["plugins"]}
hello = plugins.get("hello")
if hello is None:
    errors.append("plugin hello not in the snapshot")
else:
    if hello["status"] != "loaded":
        errors.append("hello: status %s (%s)" % (hello["status"], hello["reason"]))
    if hello["path"] != sys.argv[2]:
        errors.append("hello: path %s, expected %s" % (hello["path"], sys.argv[2]))
    if hello["errors"]:
        errors.append("hello: %d callback errors" % hello["errors"])
for name, p in plugins.items():
    if p["status"] != "loaded":
        errors.append("installed plugin %s: %s (%s)" % (name, p["status"], p["reason"]))
fields = {f["name"]: f for f in doc["fields"]}
for name in ("hello.comm_len", "hello.voluntary_ctxt_switches", "hello.greeting"):
    f = fields.get(name)
    if f is None or f["plugin"] != "hello":
        errors.append("field %s missing or not hello's" % name)
if doc["host"].get("hello.greeting") != "hi from the install test":
    errors.append("host hello.greeting = %r" % doc["host"].get("hello.greeting"))
threads = doc["threads"]
for name in ("hello.comm_len", "hello.voluntary_ctxt_switches"):
    col = threads["columns"].get(name, [])
    got = sum(v is not None for v in col)
    if threads["rows"] == 0 or got == 0:
        errors.append("%s: %d values in %d thread rows" % (name, got, threads["rows"]))
comm = threads["comm"]
lens = threads["columns"].get("hello.comm_len", [])
for i, v in enumerate(lens):
    if v is None or comm[i] is None or not comm[i].isascii():
        continue
    if v != len(comm[i]):
        errors.append("row %d: comm_len %d for comm %r" % (i, v, comm[i]))
        break
# The appstats example: 3 threads, each with its requests and arena.
pub = int(sys.argv[3])
got = [i for i, t in enumerate(threads["tgid"]) if t == pub and
       (threads["columns"].get("app.requests") or [None] * (i + 1))[i]]
if len(got) != 3:
    errors.append("appstats example (pid %d): %d threads with app.requests, want 3"
                  % (pub, len(got)))
for e in errors:
    print("FAIL:", e, file=sys.stderr)
sys.exit(1 if errors else 0)
EOF
echo "install_example: ok ($(grep -c . "$tmp/capture.err") stderr lines)"
