#!/usr/bin/env bash
# The man pages (docs/man/, tests/man.cmake): groff has nothing to warn of,
# and they cannot go stale silently: every command `ctprof-core --help`
# lists (the plugins' too) is in ctprof-core(1) with --color, every key the
# configuration parser knows is in collectors.yaml(5), and its example is a
# configuration check-config takes.
#
#   tests/man_pages.sh BIN SRCDIR
set -uo pipefail

bin=$1
man_dir=$2/docs/man
command -v man >/dev/null && command -v groff >/dev/null ||
	{ echo "SKIP: man or groff not installed (apt-get install man-db groff)"; exit 77; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/ctp-man.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
export LC_ALL=C.UTF-8 MANWIDTH=400
fails=0
fail() {
	echo "FAIL: $*"
	fails=$((fails + 1))
}

for page in "$man_dir"/ctprof-core.1 "$man_dir"/collectors.yaml.5; do
	man --warnings -l "$page" >/dev/null 2>"$tmp/warn" || fail "$page: man failed"
	[ -s "$tmp/warn" ] && fail "$page: groff warns: $(cat "$tmp/warn")"
done
man -l "$man_dir/ctprof-core.1" 2>/dev/null | col -b >"$tmp/1"
man -l "$man_dir/collectors.yaml.5" 2>/dev/null | col -b >"$tmp/5"

# Every command of the usage: the lines under "Take a per-thread..." up to
# the blank line, and under "Commands of plugins:"; each a tag of COMMANDS
# (a line at the tag indent that starts with it).
"$bin" --help >"$tmp/usage"
verbs=$(awk '/^Take a per-thread/ {on = 1; next}
	/^Commands of plugins:/ {on = 1; next}
	on && /^$/ {on = 0}
	on && /^  [a-z]/ {print $1}' "$tmp/usage")
[ "$(echo "$verbs" | wc -w)" -ge 10 ] || fail "too few commands read from the usage: $verbs"
for v in $verbs capture; do
	grep -qE "^       $v( |\$)" "$tmp/1" || fail "ctprof-core(1) has no command '$v'"
done
# The verbs and options named for everyone (issue 32), even before their
# engineers' usage lines land.
for v in top replay trend; do
	grep -qE "^       $v( |\$)" "$tmp/1" || fail "ctprof-core(1) has no command '$v'"
done
for o in --color=WHEN --vs --replay --interval NO_COLOR; do
	grep -q -- "$o" "$tmp/1" || fail "ctprof-core(1) does not mention $o"
done
# Each exit status the usage names.
for s in 0 1 2 3 130; do
	grep -qE "^       $s +[A-Z]" "$tmp/1" || fail "ctprof-core(1) lacks exit status $s"
done

# Every key the parser knows, read from its own "expected one of" lists.
keys=""
for y in 'workes: 1' 'record: {intervl: 1s}' 'roots: {prc: /proc}' \
	'service: {x: 1}' $'plugins:\n  io: {enabeld: true}' \
	$'hosts:\n  - mach: {hostname: x}' \
	$'plugins: {io: {}}\nhosts:\n  - match: {hostnme: x}\n    plugins: {io: {}}'; do
	printf '%s\n' "$y" >"$tmp/k.yaml"
	{ "$bin" check-config "$tmp/k.yaml" 2>&1 || true; } |
		grep -o 'expected one of: [^)]*' >"$tmp/exp" ||
		fail "no key list for: $y"
	keys="$keys $(sed 's/expected one of: //; s/,//g' "$tmp/exp")"
done
[ "$(echo "$keys" | wc -w)" -ge 25 ] || fail "too few config keys read: $keys"
for k in $keys; do
	grep -qw -- "$k" "$tmp/5" || fail "collectors.yaml(5) does not mention key '$k'"
done

# The example of collectors.yaml(5) is a valid configuration.
awk '/^\.SH EXAMPLES/ {ex = 1} ex && /^\.EX/ {on = 1; next} on && /^\.EE/ {exit}
	on {print}' "$man_dir/collectors.yaml.5" | sed 's/\\-/-/g' >"$tmp/ex.yaml"
[ -s "$tmp/ex.yaml" ] || fail "collectors.yaml(5) has no example"
"$bin" check-config "$tmp/ex.yaml" --as-host db-3 >/dev/null 2>"$tmp/err" ||
	fail "the example of collectors.yaml(5) does not check: $(cat "$tmp/err")"

[ $fails -eq 0 ] || exit 1
echo "man pages: all checks passed"
