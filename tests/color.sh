#!/usr/bin/env bash
# --color=auto|always|never and NO_COLOR (tests/color.cmake): the escapes
# are where they belong (compare's states, the sort column's title and
# values, warnings on a terminal's stderr), the fitted text is the plain
# one with them stripped, and none reaches a pipe, a machine format, or
# a terminal when NO_COLOR or TERM=dumb says no.
#
#   tests/color.sh BIN SRCDIR
set -uo pipefail

bin=$1
rec=$2/tests/fixtures/recording
export HOME=$(mktemp -d "${TMPDIR:-/tmp}/ctp-color.XXXXXX") LC_ALL=C TZ=UTC
trap 'rm -rf "$HOME"' EXIT
unset CTPROF_VIEW_DIR NO_COLOR
fails=0
fail() {
	echo "FAIL: $*"
	fails=$((fails + 1))
}
esc=$'\033'
strip() { sed "s/${esc}\[[0-9;]*m//g"; }
has_esc() { grep -q "$esc" "$1"; }

out=$HOME/out
# 1. Widths: the coloured text, stripped, is the plain one, byte for byte,
# at several widths and for each reader.
for cols in 60 80 132; do
	for cmd in "compare $rec" "compare $rec --view mem" \
		"compare $rec --view all --limit 5" "show $rec/$(ls "$rec" | tail -1)" \
		"views top" "trend $rec --top 8"; do
		# shellcheck disable=SC2086
		COLUMNS=$cols "$bin" $cmd --color=always >"$out.c" 2>/dev/null
		# shellcheck disable=SC2086
		COLUMNS=$cols "$bin" $cmd --color=never >"$out.p" 2>/dev/null
		has_esc "$out.c" || fail "$cmd at $cols: --color=always gave no escape"
		has_esc "$out.p" && fail "$cmd at $cols: --color=never gave escapes"
		strip <"$out.c" | cmp -s - "$out.p" ||
			fail "$cmd at $cols: stripped colour differs from plain"
	done
done

# 2. Where: compare's states in their colours, the sort title bold and
# underlined, its values bold, padding outside the sequences.
COLUMNS=132 "$bin" compare "$rec" --color=always >"$out.c" 2>/dev/null
grep -q "${esc}\[32mnew${esc}\[0m " "$out.c" || fail "no green 'new'"
grep -q "${esc}\[31mexited${esc}\[0m" "$out.c" || fail "no red 'exited'"
grep -q "${esc}\[1;4mCPU%${esc}\[0m${esc}\[1m" "$out.c" ||
	fail "sort title not bold+underlined (then the header's bold again)"
grep -qE "^ *[0-9]+ .* ${esc}\[1m[0-9.]+${esc}\[0m " "$out.c" ||
	fail "sort column values not bold"
grep -q "${esc}\[1m  *[0-9]" "$out.c" && fail "padding inside a sequence"
# Plain words are not coloured: only states, titles, the sort column.
grep -q "${esc}\[[0-9;]*mcc1" "$out.c" && fail "a name was coloured"

# trend: its sort statistic's title, ended tasks red.
COLUMNS=132 "$bin" trend "$rec" --color=always >"$out.c" 2>/dev/null
grep -q "${esc}\[1;4mCHANGE${esc}\[0m" "$out.c" || fail "trend: CHANGE not marked"
grep -q "${esc}\[31mended${esc}\[0m" "$out.c" || fail "trend: no red 'ended'"
COLUMNS=132 "$bin" trend "$rec" --sort rss:max --color=always >"$out.c" 2>/dev/null
grep -q "${esc}\[1;4mMAX${esc}\[0m" "$out.c" || fail "trend: MAX not marked"

# compare --vs: a difference outside the noise in yellow, `~` plain;
# stripped, the plain text.
set -- $(cd "$rec" && ls | head -4)
vsa="$rec/$1 $rec/$2 $rec/$2 $rec/$3 $rec/$1 $rec/$2 $rec/$2 $rec/$3"
vsb="$rec/$3 $rec/$4 $rec/$3 $rec/$4 $rec/$3 $rec/$4 $rec/$3 $rec/$4"
# shellcheck disable=SC2086
COLUMNS=132 "$bin" compare $vsa --vs $vsb --color=always >"$out.c" 2>/dev/null
# shellcheck disable=SC2086
COLUMNS=132 "$bin" compare $vsa --vs $vsb --color=never >"$out.p" 2>/dev/null
grep -q "${esc}\[33m[-+][0-9.]*%${esc}\[0m 0.029" "$out.c" ||
	fail "--vs: no yellow significant difference"
grep -q "${esc}\[[0-9;]*m~" "$out.c" && fail "--vs: a ~ was coloured"
grep -q '\\x1b' "$out.c" && fail "--vs: the sequences were escaped"
strip <"$out.c" | cmp -s - "$out.p" || fail "--vs: stripped colour differs"
# A file name with an escape byte in it is shown escaped with colour on too:
# the program's own sequences are the only raw ones.
odd="$HOME/e$(printf '\033')x"
mkdir -p "$odd" && cp "$rec/$1" "$rec/$2" "$odd/"
COLUMNS=132 "$bin" compare "$odd/$1" "$odd/$2" --vs "$odd/$1" "$odd/$2" \
	--color=always >"$out.c" 2>/dev/null
grep -qF 'e\x1bx/' "$out.c" || fail "--vs: an escape in a path not shown escaped"
grep -q "e${esc}x" "$out.c" && fail "--vs: an escape in a path went out raw"

# 3. No colour: on a pipe (auto), NO_COLOR (auto), machine formats even
# with always.
"$bin" compare "$rec" >"$out.a" 2>&1
has_esc "$out.a" && fail "auto on a pipe gave escapes"
NO_COLOR=1 "$bin" compare "$rec" --color=auto >"$out.a" 2>&1
has_esc "$out.a" && fail "NO_COLOR gave escapes"
NO_COLOR=1 "$bin" compare "$rec" --color=always >"$out.a" 2>/dev/null
has_esc "$out.a" || fail "--color=always lost to NO_COLOR"
for fmt in "compare $rec --format csv" "compare $rec --format json" \
	"show $rec/$(ls "$rec" | tail -1) --format ndjson --fields procfs.utime"; do
	# shellcheck disable=SC2086
	"$bin" $fmt --color=always >"$out.a" 2>/dev/null
	has_esc "$out.a" && fail "$fmt: escapes in a machine format"
done
"$bin" compare "$rec" --color=sometimes >/dev/null 2>"$out.e"
[ $? -eq 2 ] || fail "--color=sometimes is not a usage error"
grep -q "auto, always or never" "$out.e" || fail "--color error unclear"

# 4. auto on a terminal (script(1) gives a pseudo-terminal): colour with a
# real TERM, none with TERM=dumb or NO_COLOR.
if command -v script >/dev/null; then
	tty_run() { # ENV... -- ARGS: stdout and stderr of BIN on a pty
		script -qec "env $* " /dev/null </dev/null | tr -d '\r'
	}
	tty_run TERM=xterm COLUMNS=132 "$bin" compare "$rec" >"$out.t"
	grep -q "${esc}\[32mnew" "$out.t" || fail "auto on a terminal: no colour"
	tty_run TERM=dumb COLUMNS=132 "$bin" compare "$rec" >"$out.t"
	has_esc "$out.t" && fail "auto with TERM=dumb gave escapes"
	tty_run TERM=xterm NO_COLOR=1 COLUMNS=132 "$bin" compare "$rec" >"$out.t"
	has_esc "$out.t" && fail "auto with NO_COLOR on a terminal gave escapes"
	tty_run TERM=xterm NO_COLOR= COLUMNS=132 "$bin" compare "$rec" >"$out.t"
	has_esc "$out.t" || fail "an empty NO_COLOR turned colour off"
	# A warning on stderr: yellow on a terminal...
	f=$rec/$(ls "$rec" | tail -1)
	tty_run TERM=xterm "$bin" compare "$f" "$f" --color=always >"$out.t"
	grep -q ": ${esc}\[33mwarning${esc}\[0m: BASE and CAND" "$out.t" ||
		fail "warning not yellow on a terminal's stderr"
	# ...and plain in a file, even with always.
	"$bin" compare "$f" "$f" --color=always >/dev/null 2>"$out.e"
	grep -q ": warning: BASE and CAND" "$out.e" ||
		fail "warning coloured in a file"
else
	echo "note: no script(1), auto on a terminal not checked"
fi

[ $fails -eq 0 ] || exit 1
echo "color: all checks passed"
