#!/usr/bin/env bash
# The bash completion (packaging/bash-completion/ctprof-core,
# tests/completion.cmake): bash-completion loaded as an interactive shell
# has it, the file sourced, COMP_WORDS/COMP_CWORD/COMP_LINE/COMP_POINT set
# for a command line, _ctprof_core called, COMPREPLY checked: commands,
# options, view names, a view's columns, plugin names, snapshot files and
# directories, the values of --color, --format and --group-by. Everything
# the binary knows is asked of the binary under test. 77 without
# bash-completion.
#
#   tests/completion.sh BIN SRCDIR
set -uo pipefail

bin=$(realpath "$1")
src=$2
bc=/usr/share/bash-completion/bash_completion
[ -r "$bc" ] || { echo "SKIP: no $bc (apt-get install bash-completion)"; exit 77; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/ctp-completion.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
export HOME=$tmp LC_ALL=C
unset CTPROF_VIEW_DIR

# shellcheck disable=SC1090
source "$bc"
# shellcheck disable=SC1091
source "$src/packaging/bash-completion/ctprof-core"
complete -p ctprof-core >/dev/null || { echo "FAIL: no completion for ctprof-core"; exit 1; }

fails=0
fail() {
	echo "FAIL: $*"
	fails=$((fails + 1))
}

# complete LINE: COMPREPLY for the cursor at LINE's end (a trailing space
# starts a new word), one per line, sorted.
complete_line() {
	local line=$1
	read -ra COMP_WORDS <<<"$line"
	COMP_WORDS[0]=$bin
	[[ $line == *" " ]] && COMP_WORDS+=("")
	COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
	COMP_LINE="$bin ${line#* }"
	COMP_POINT=${#COMP_LINE}
	COMPREPLY=()
	_ctprof_core ctprof-core "${COMP_WORDS[COMP_CWORD]}" \
		"${COMP_WORDS[COMP_CWORD - 1]}" 2>/dev/null
	printf '%s\n' "${COMPREPLY[@]}" | sort
}

# expect LINE WORD...: each WORD is offered. reject LINE WORD...: none is.
expect() {
	local line=$1 got
	shift
	got=$(complete_line "$line")
	for w in "$@"; do
		grep -qxF -- "$w" <<<"$got" ||
			fail "'$line': '$w' not offered (got: $(echo $got))"
	done
}
reject() {
	local line=$1 got
	shift
	got=$(complete_line "$line")
	for w in "$@"; do
		grep -qxF -- "$w" <<<"$got" && fail "'$line': '$w' offered"
	done
}
# same LINE LIST: exactly the words of LIST (one a line).
same() {
	local got
	got=$(complete_line "$1")
	[ "$got" = "$(sort -u <<<"$2")" ] ||
		fail "'$1': got '$(echo $got)', want '$(echo $2)'"
}

cd "$tmp" || exit 1
mkdir -p rec sub
: >a.ctprof.zst
: >b.ctprof
: >c.txt
: >my.yaml

# The machine-readable lists the completion asks for: views --names is
# the listing's first column, plugins --names the plugins it would list;
# plugins NAME lists that one, an unknown NAME is a usage error.
[ "$("$bin" views --names)" = "$("$bin" views | awk '{print $1}')" ] ||
	fail "views --names is not the views listing's names"
[ "$("$bin" plugins --names)" = "$("$bin" plugins | awk '/^  path: / {
	n = split($2, p, "/"); sub(/\.so$/, "", p[n]); print p[n]}')" ] ||
	fail "plugins --names is not the names of the plugins listed"
"$bin" plugins io | head -n1 | grep -q '^io ' || fail "plugins io does not list io"
[ "$("$bin" plugins io | grep -c '^  path: ')" = 1 ] || fail "plugins io lists more than io"
"$bin" plugins no-such-plugin >/dev/null 2>&1
[ $? -eq 2 ] || fail "plugins no-such-plugin is not a usage error"

# Commands after "ctprof-core ": every one --help lists, and capture.
verbs=$("$bin" --help | awk '/^Take a per-thread/ || /^Commands of plugins:/ {on = 1; next}
	on && /^$/ {on = 0} on && /^  [a-z]/ {print $1}')
# shellcheck disable=SC2086
expect "ctprof-core " $verbs capture
reject "ctprof-core " --help
expect "ctprof-core sh" show
reject "ctprof-core sh" compare
# The capture's options before any command.
expect "ctprof-core --" --config --output --workers --strict --no-supervise
reject "ctprof-core --" --view

# A command's options, from its --help.
expect "ctprof-core show --" --view --top --sort --format --color --group-by --wide
reject "ctprof-core show --" --names --sections
expect "ctprof-core compare --" --from --to --view --mode --sections --color
expect "ctprof-core views --" --names --color
expect "ctprof-core plugins --" --names --config
expect "ctprof-core show --col" --color=

# View names after --view, as `views --names` lists them (all among them), each once.
same "ctprof-core show --view " "$("$bin" views --names)"
expect "ctprof-core show --view=m" mem
# shellcheck disable=SC2046
expect "ctprof-core views " $("$bin" views --names) my.yaml
reject "ctprof-core views " c.txt a.ctprof.zst
# A view's columns after --sort.
expect "ctprof-core show --sort " cpu rss pid
expect "ctprof-core show --view mem --sort " pss
reject "ctprof-core show --view mem --sort " runq

# Plugin names where a plugin is asked for.
same "ctprof-core plugins " "$("$bin" plugins --names)"
expect "ctprof-core plugins pro" procfs-stat

# Snapshots and recordings after compare, show, dump: *.ctprof*, dirs.
same "ctprof-core compare " "$(printf '%s\n' a.ctprof.zst b.ctprof rec sub -)"
expect "ctprof-core compare a.ctprof.zst " b.ctprof rec
expect "ctprof-core show --view mem " a.ctprof.zst rec
reject "ctprof-core show " c.txt my.yaml
expect "ctprof-core record " rec sub
reject "ctprof-core record " a.ctprof.zst
expect "ctprof-core check-config " my.yaml
reject "ctprof-core check-config " c.txt
expect "ctprof-core show --config " my.yaml

# Values.
same "ctprof-core show --color " "$(printf '%s\n' auto always never)"
same "ctprof-core show --color=" "$(printf '%s\n' auto always never)"
same "ctprof-core show --format " "$(printf '%s\n' csv json ndjson)"
same "ctprof-core compare --format " "$(printf '%s\n' table json csv)"
expect "ctprof-core compare --group-by pcomm,c" pcomm,comm pcomm,cgroup
expect "ctprof-core show --group-by " pcomm tid none
expect "ctprof-core show --table " threads exited

[ $fails -eq 0 ] || exit 1
echo "completion: all checks passed"
