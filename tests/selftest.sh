#!/usr/bin/env bash
# ctprof-core selftest (tests/selftest.cmake): every value a per-task source
# gives equals its file's on this kernel (the shipped config, exit 0, each
# compared field listed with -v as "N of N equal", the process row's fields
# among them), and a source that lies
# is caught: the field it feeds is named, with the two values, and the
# command exits 1.
#
#   tests/selftest.sh BIN SRCDIR PLUGINDIR TESTPLUGINDIR
set -uo pipefail

bin=$1 src=$2 plugdir=$3 testplug=$4
if [ "$(id -u)" != 0 ]; then
	echo "selftest: needs root (taskstats, other users' files)" >&2
	exit 77
fi
dir=$(mktemp -d "${TMPDIR:-/tmp}/ctp-selftest.XXXXXX")
trap 'rm -rf "$dir"' EXIT
fails=0
fail() {
	echo "FAIL: $*"
	fails=$((fails + 1))
}

# 1. The shipped config, its plugins from this build.
sed "s|^# plugin_dirs:|plugin_dirs:\n  - $plugdir\n#|" \
	"$src/config/collectors.yaml" >"$dir/shipped.yaml"
"$bin" selftest --config "$dir/shipped.yaml" -v >"$dir/out" 2>"$dir/err"
rc=$?
cat "$dir/out" "$dir/err"
[ "$rc" = 0 ] || fail "shipped config: exit $rc"
grep -q "^  procfs.voluntary_csw  *8 of   8 equal$" "$dir/out" ||
	fail "voluntary_csw not compared on 8 threads"
grep -q " 0 differ;" "$dir/out" || fail "a field differs"
# The process row's fields, which bpf-task's source "process" serves where
# the core takes it: each compared on the child's one process row.
for f in procfs.nr_threads procfs.process.minflt procfs.process.utime \
	procfs.process.stime procfs.children.minflt procfs.children.utime \
	io.process.rchar io.process.wchar io.process.syscr; do
	grep -q "^  $f  *1 of   1 equal$" "$dir/out" ||
		fail "$f not compared on the process"
done

# 2. A lying source: procfs-stat takes its context switches from it.
cat >"$dir/liar.yaml" <<YAML
plugin_dirs:
  - $plugdir
  - $testplug
plugins:
  abi-liar: {}
  procfs-stat: {}
YAML
"$bin" selftest --config "$dir/liar.yaml" >"$dir/out" 2>"$dir/err"
rc=$?
cat "$dir/out" "$dir/err"
[ "$rc" = 1 ] || fail "lying source: exit $rc, not 1"
grep -q "^  procfs.voluntary_csw  *0 of   8 equal$" "$dir/out" ||
	fail "the lie about voluntary_csw is not named"
grep -q "^      tid [0-9]*: 10[0-9]* with the sources, [0-9]* from files$" \
	"$dir/out" || fail "the differing values are not shown"
grep -q " 0 differ;" "$dir/out" && fail "nothing said to differ"
# Without a source there is nothing to compare: said, and not a pass.
cat >"$dir/none.yaml" <<YAML
plugin_dirs:
  - $plugdir
plugins:
  procfs-stat: {}
YAML
"$bin" selftest --config "$dir/none.yaml" >"$dir/out" 2>"$dir/err"
rc=$?
[ "$rc" = 1 ] || fail "no source: exit $rc, not 1"
grep -q "no loaded plugin offers a per-task source" "$dir/err" ||
	fail "no source: not said"

[ "$fails" = 0 ] && echo "selftest: all checks pass"
exit $((fails > 0))
