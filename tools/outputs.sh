#!/usr/bin/env bash
# Every verb's printed output over fixed inputs: each view, format, width
# and the options that change what is printed, one file per command.
#
#   tools/outputs.sh BIN OUTDIR      write the outputs of binary BIN
#   tools/outputs.sh --check BIN     compare them with tests/golden/outputs/
#   tools/outputs.sh --update BIN    rewrite tests/golden/outputs/
#
# The inputs are a four-file recording of this repository
# (tests/fixtures/recording: a busy host with a build running, threads
# burning, tasks exiting) and the version-1 sample snapshot. A refactoring
# of the reporting code shows here as a diff of exactly what a user would
# see change. Each output file holds the command, its stdout, its stderr
# and its exit status. The environment is fixed (no user views, no colour,
# UTC, C locale); widths are given by COLUMNS, as on a terminal.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
mode=write
case "${1:-}" in
--check) mode=check; shift ;;
--update) mode=update; shift ;;
esac
[ $# -ge 1 ] || { sed -n '2,8p' "$0" >&2; exit 2; }
bin=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
[ -x "$bin" ] || { echo "outputs: $1: not an executable" >&2; exit 2; }
golden=$here/tests/golden/outputs
case $mode in
write) [ $# -eq 2 ] || { echo "outputs: give OUTDIR" >&2; exit 2; }
	out=$2 ;;
*) out=$(mktemp -d "${TMPDIR:-/tmp}/ctp-outputs.XXXXXX")
	trap 'rm -rf "$out"' EXIT ;;
esac
mkdir -p "$out"
out=$(cd "$out" && pwd)

home=$(mktemp -d "${TMPDIR:-/tmp}/ctp-outputs-home.XXXXXX")
trap 'rm -rf "$home"; [ "$mode" = write ] || rm -rf "$out"' EXIT
export HOME=$home LC_ALL=C TZ=UTC NO_COLOR=1
unset CTPROF_VIEW_DIR

# Relative paths, so the outputs do not depend on where the tree is.
cd "$here/tests/fixtures"
rec=recording
mapfile -t files < <(ls "$rec"/*.ctprof.zst)
f0=${files[0]} f1=${files[1]} f2=${files[2]} f3=${files[3]}
v1=snapshots/sample-v1.ctprof
cfg=../../config/collectors.yaml

n=0
# run WIDTH ARGS...: one output file for `BIN ARGS` at terminal width WIDTH.
run() {
	local width=$1; shift
	n=$((n + 1))
	local slug
	slug=$(printf '%s_' "$@" | tr -c 'A-Za-z0-9._,=-' '_' | cut -c1-80)
	local file
	file=$(printf '%s/%03d-w%s-%s.out' "$out" "$n" "$width" "$slug")
	{
		printf '$ COLUMNS=%s ctprof-core' "$width"
		printf ' %q' "$@"
		printf '\n'
		local rc=0
		COLUMNS=$width "$bin" "$@" 2>"$out/.stderr" >"$out/.stdout" ||
			rc=$?
		# Only `views` prints where the source tree is (the shipped view
		# files); a snapshot's own paths are data and stay as they are.
		local from=$here
		[ "$1" = views ] || from='<src>'
		sed "s|$from|<src>|g" "$out/.stdout"
		printf -- '--- stderr\n'
		sed "s|$from|<src>|g" "$out/.stderr"
		printf -- '--- exit %d\n' "$rc"
	} >"$file"
}

views=(top cpu sched mem io delay cgroup jemalloc)

# views: the list and each view's columns.
run 80 views
for v in "${views[@]}" all; do run 80 views "$v"; done

# show: every view at three widths, on a busy snapshot and the v1 sample.
for w in 80 120 200; do
	for v in "${views[@]}"; do run "$w" show "$f2" --view "$v"; done
	run "$w" show "$f2"
	run "$w" show "$v1"
done
run 80 show "$f2" --view top --wide
run 80 show "$f2" --view top --top 5 --sort RSS --asc
run 80 show "$f2" --view cpu --group-by comm
run 80 show "$f2" --view mem --group-by cgroup
run 80 show "$f2" --view io --fields 'io.*'
for s in "$f2" "$v1"; do
	run 120 show "$s" --view all --limit 10
	run 120 show "$s" --summary
done
run 120 show "$f2" --threads --limit 5 --sort procfs.utime
run 120 show "$f2" --processes --limit 5 --no-host
run 120 show "$f2" --group-by pcomm --limit 8
run 120 show "$f2" --group-by cgroup,comm --limit 8 --no-normalize
run 120 show "$f2" --group-by tid --limit 5 --fields 'procfs.*'
run 120 show "$f2" --group-by none --fields 'procfs.*,io.*'
run 120 show "$f2" --flatten '/system.slice/*' --group-by cgroup --limit 6
for fmt in csv json ndjson; do
	for t in threads processes cgroups host exited; do
		if [ "$fmt" = csv ]; then
			run 80 show "$f2" --format "$fmt" --table "$t"
		else
			run 80 show "$f2" --format "$fmt" --table "$t" \
				--fields 'procfs.*,io.*,cgroup.*,taskstats.exited.*'
		fi
	done
	run 80 show "$v1" --format "$fmt"
	run 80 show "$f2" --format "$fmt" --group-by pcomm --fields 'procfs.*'
	run 80 show "$f2" --format "$fmt" --group-by cgroup --fields 'procfs.*,io.*'
	run 80 show "$f2" --format "$fmt" --view top
	run 80 show "$f2" --format "$fmt" --view mem --table processes
done

# compare: every view at three widths, the full comparison in each mode and
# format, and a recording's directory with --from/--to.
for w in 80 120 200; do
	for v in "${views[@]}"; do run "$w" compare "$f1" "$f3" --view "$v"; done
	run "$w" compare "$f0" "$f3"
	run "$w" compare "$f1" "$f3" --view all --top 4
done
run 80 compare "$f1" "$f3" --view top --wide
run 80 compare "$f1" "$f3" --view top --top 5 --sort RUNQ% --asc
run 80 compare "$f1" "$f3" --view cpu --group-by comm
for cells in full delta percent arrow; do
	run 120 compare "$f1" "$f3" --mode "$cells" --top 8
done
run 120 compare "$f0" "$f3" --group-by comm --sort rel --top 8
run 120 compare "$f0" "$f3" --group-by cgroup --sort rate:procfs.utime
run 120 compare "$f0" "$f3" --group-by tid --top 5 --fields 'procfs.*'
run 120 compare "$f0" "$f3" --sections host,psi,plugins
run 120 compare "$f0" "$f3" --sections threads --sort taskstats.hiwater_rss --asc --top 5
run 120 compare "$f0" "$f3" --no-rename --group-by cgroup
for fmt in json csv; do
	run 80 compare "$f1" "$f3" --format "$fmt" --top 5
	run 80 compare "$f0" "$f3" --format "$fmt" --group-by comm --fields 'procfs.*' --top 10
	run 80 compare "$f0" "$f3" --format "$fmt" --sections host,psi
done
run 120 compare "$rec"
run 120 compare "$rec" --from 2026-11-27T06:28:07 --to 2026-11-27T06:28:10
run 120 compare "$rec" --from 2026-11-27T06:28:09
run 120 compare "$v1" "$f3" --view top

# dump: the whole snapshot.
run 80 dump "$f2"
run 80 dump "$v1"

# export: each format and table, views and cuts, and a recording's directory.
for fmt in openmetrics prometheus; do
	run 80 export "$f2" --format "$fmt"
	run 80 export "$f2" --format "$fmt" --view top --top 5
	run 80 export "$f2" --format "$fmt" --group-by comm --fields 'procfs.*' --top 10
	run 80 export "$v1" --format "$fmt"
done
for fmt in csv ndjson; do
	for t in threads processes cgroups host exited; do
		run 80 export "$f2" --format "$fmt" --table "$t" \
			--fields 'procfs.*,io.*,cgroup.*,taskstats.exited.*'
	done
	run 80 export "$f2" --format "$fmt" --group-by pcomm --fields 'procfs.*'
	run 80 export "$f2" --format "$fmt" --view io
done
run 80 export "$rec" --format openmetrics --top 3

# check-config on the shipped config: the effective plugin set.
run 80 check-config "$cfg" --as-host some-host

# export of a whole recording (after the rest, so their numbers stay): one
# header, rows of every file in capture order; --from/--to pick files as
# compare does.
run 80 export "$rec" --format csv --table processes --fields 'smaps.rss,procfs.process.utime'
run 80 export "$rec" --format ndjson --table host --fields 'host.mem.total,host.self.*' \
	--from 2026-11-27T06:28:08 --to 2026-11-27T06:28:10

# compare --vs (after the rest, so their numbers stay): run against run,
# one and two runs a side, every format.
run 80 compare "$f0" "$f1" --vs "$f2" "$f3"
run 120 compare "$f0" "$f1" "$f1" "$f2" --vs "$f2" "$f3" "$f0" "$f1" --view sched --top 4
run 80 compare "$f0" "$f1" --vs "$f2" "$f3" --format csv --top 3
run 80 compare "$f0" "$f1" --vs "$f2" "$f3" --format json --top 3

# trend: per task over the whole recording (growth, a counter's increase
# and peak rate, shrink first, other groupings, csv and json).
run 80 trend "$rec"
run 120 trend "$rec" --view top
run 80 trend "$rec" --sort rss --asc --top 5
run 80 trend "$rec" --view io --group-by pcomm --top 8
run 120 trend "$rec" --view cpu --group-by tid --sort cpu:peak --top 8
run 80 trend "$rec" --format csv --top 10
run 80 trend "$rec" --format json --view top --top 5 --from 2026-11-27T06:28:09
rm -f "$out/.stderr" "$out/.stdout"

case $mode in
write) echo "outputs: $n commands into $out" ;;
update) rm -rf "$golden"; mkdir -p "$golden"; cp "$out"/*.out "$golden"/
	echo "outputs: $n commands into $golden" ;;
check)
	if diff -r "$golden" "$out" >"$home/diff" 2>&1; then
		echo "outputs: $n commands, all as in tests/golden/outputs"
	else
		echo "outputs: differences from tests/golden/outputs:" >&2
		head -200 "$home/diff" >&2
		exit 1
	fi ;;
esac
