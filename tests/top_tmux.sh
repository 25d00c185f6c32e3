#!/bin/bash
# `ctprof-core top` and `replay` in a real terminal (issue 32): a detached
# tmux session of 80x24 on a private socket, a shell in it that runs top;
# keys sent with send-keys, the screen read back with capture-pane after
# each. Checks: a burning test process (its own name) is on the first
# screens; `v` changes the header's view; `>` the sort column (the header's
# and the section title's "by X"); `/NAME` leaves only rows of NAME; as
# nobody the header says "no exits" and "(not root)"; q,
# SIGTERM and SIGSEGV each leave the alternate screen and `stty -a` in the
# same pane shows icanon and echo, the private directory removed; replay
# over tests/fixtures/recording steps forwards and back (the capture time
# in the header changes) and `+` widens the interval. A plugin that crashes
# (abi-chaos, crash_every: 3) does not end top: the header goes on to newer
# captures and says the plugin failed, the status line that it crashed;
# the recording process top starts (and its own child) is gone after q,
# SIGTERM, SIGSEGV and SIGKILL of top.
# Every wait is a bounded poll; nothing is timed. Exits 77 without tmux,
# timeout(1) or the terminal types.
# Usage: top_tmux.sh CTPROF_CORE RECORDING_DIR TOP_BURNER PLUGIN_DIR
#        ABI_PLUGIN_DIR
set -u
bin=$(readlink -f "$1")
rec=$(readlink -f "$2")
burner_bin=$(readlink -f "$3")
plugin_dir=$(readlink -f "$4")
abi_dir=$(readlink -f "$5")

for t in tmux timeout infocmp; do
	if ! command -v "$t" >/dev/null; then
		echo "skipped: no $t in PATH (tools/dev.sh deps installs it)"
		exit 77
	fi
done
for term in xterm-256color screen; do
	if ! infocmp "$term" >/dev/null 2>&1; then
		echo "skipped: no terminfo entry for $term"
		exit 77
	fi
done

tmp=$(mktemp -d "${TMPDIR:-/tmp}/ctp-top-test.XXXXXX")
sock=$tmp/tmux.sock
burn=ctptop$$
burn=${burn:0:15}
burner=
fails=0

tm() { timeout 30 tmux -S "$sock" -f /dev/null "$@"; }
cleanup() {
	[ -n "$burner" ] && kill "$burner" 2>/dev/null
	tm kill-server >/dev/null 2>&1
	rm -rf "$tmp"
}
trap cleanup EXIT

fail() {
	echo "FAIL: $*"
	echo "---- screen ----"
	tm capture-pane -p -t top 2>/dev/null
	echo "----------------"
	fails=$((fails + 1))
}
screen() { tm capture-pane -p -t top; }
# Poll the screen until it matches the extended regex (grep -E), at most
# $2 seconds (generous: a busy host slows captures, never fails them).
wait_for() {
	local re=$1 limit=${2:-60} i
	for ((i = 0; i < limit * 4; i++)); do
		screen | grep -Eq -- "$re" && return 0
		sleep 0.25
	done
	return 1
}
wait_gone() {
	local re=$1 limit=${2:-60} i
	for ((i = 0; i < limit * 4; i++)); do
		screen | grep -Eq -- "$re" || return 0
		sleep 0.25
	done
	return 1
}
line2() { screen | sed -n 2p; }
alt_on() { tm display-message -p -t top '#{alternate_on}'; }

# The pane: a plain shell, no core files from the SIGSEGV run.
start_pane() {
	local i
	tm kill-server >/dev/null 2>&1
	# A server just killed may still hold the socket: try again a while.
	for ((i = 0; i < 40; i++)); do
		tm new-session -d -s top -x 80 -y 24 \
			"env TERM=$1 TMPDIR=$tmp/run PS1='$ ' bash --norc --noprofile" \
			2>"$tmp/tmux.err" && break
		sleep 0.25
	done
	[ "$i" -lt 40 ] ||
		{ echo "FAIL: tmux new-session: $(cat "$tmp/tmux.err")"; exit 1; }
	tm send-keys -t top "ulimit -c 0; cd $tmp" Enter
}
# Run ctprof-core ARGS in the pane through run.sh, a non-interactive
# shell: an interactive bash puts back its own terminal modes after a job
# killed by a signal, which would hide a terminal top left raw; run.sh
# reads them (stty -a) right after top ends, in the same pane.
run_top() {
	rm -f "$tmp/pid" "$tmp/stty.now"
	tm send-keys -t top "clear; bash $tmp/run.sh $*" Enter
}
# After top ended: the status, the normal screen, a sane line discipline
# (stty -a in the same pane), the private directory gone.
check_sane() {
	local what=$1 status=$2
	if ! wait_for "^TOP-EXIT=$status\$" 60; then
		fail "$what: no TOP-EXIT=$status"
		return
	fi
	[ "$(alt_on)" = 0 ] || fail "$what: still in the alternate screen"
	grep -Eq '(^| )icanon( |$)' "$tmp/stty.now" ||
		fail "$what: top left no icanon: $(cat "$tmp/stty.now")"
	grep -Eq '(^| )echo( |$)' "$tmp/stty.now" ||
		fail "$what: top left no echo: $(cat "$tmp/stty.now")"
	tm send-keys -t top "stty -a > $tmp/stty.out; echo STTY-DONE" Enter
	wait_for '^STTY-DONE' 30 || fail "$what: stty did not run"
	grep -Eq '(^| )icanon( |$)' "$tmp/stty.out" ||
		fail "$what: stty -a shows no icanon: $(cat "$tmp/stty.out")"
	grep -Eq '(^| )echo( |$)' "$tmp/stty.out" ||
		fail "$what: stty -a shows no echo: $(cat "$tmp/stty.out")"
	local left
	left=$(ls -A "$tmp/run" 2>/dev/null)
	[ -z "$left" ] || fail "$what: left in TMPDIR: $left"
}

# The processes top started (its recording, and the recording's child):
# read while top runs, from /proc/PID/task/*/children.
descendants() {
	local p
	for p in $(cat /proc/"$1"/task/*/children 2>/dev/null); do
		echo "$p"
		descendants "$p"
	done
}
# The live processes (not zombies) of process group $1.
group_left() {
	local f line rest
	for f in /proc/[0-9]*/stat; do
		read -r line <"$f" 2>/dev/null || continue
		rest=${line##*) }
		set -- "$1" $rest
		[ "$4" = "$1" ] && [ "$2" != Z ] && echo "${f//[^0-9]/}"
	done
}
# Wait (bounded) until none of the pids, nor any process of the first
# one's group (the recording's: a child it started later too), is left (a
# zombie counts as gone: it runs nothing); fail with those left.
check_gone() {
	local what=$1 i p left
	shift
	for ((i = 0; i < 120; i++)); do
		left=$(group_left "$1")
		for p in "$@"; do
			[ -e "/proc/$p" ] &&
				! grep -q '^State:.*Z' "/proc/$p/status" 2>/dev/null &&
				left="$left $p"
		done
		[ -z "$left" ] && return 0
		sleep 0.25
	done
	fail "$what: left running: $left"
}
# Top's recording process and its child, once both run.
record_pids() {
	local i pids
	for ((i = 0; i < 240; i++)); do
		pids=$(descendants "$1")
		[ "$(wc -w <<<"$pids")" -ge 2 ] && break
		sleep 0.25
	done
	echo $pids
}

mkdir -p "$tmp/run"
cat >"$tmp/run.sh" <<EOF
# RUNAS (a command prefix, e.g. runuser) in the environment, else none.
sh -c 'echo \$\$ > "\$0"; exec \$RUNAS "\$@"' "$tmp/pid" "$bin" "\$@"
rc=\$?
stty -a > "$tmp/stty.now"
echo "TOP-EXIT=\$rc"
EOF
# Two threads: its process outranks any one-thread compiler beside it.
"$burner_bin" "$burn" 2 &
burner=$!

# ---- live: the burner, view, sort, filter, q ----------------------------
start_pane xterm-256color
run_top top --interval 1s
# The burner on one of the first two screens with an interval (the
# header says "over N s"; a new screen, a new CAND time in it).
if ! wait_for '^ctprof-core top .* over [0-9.]+s' 120; then
	fail "top: no interval"
	exit 1
fi
seen=0 prev= found=0
for ((i = 0; i < 240 && seen <= 2; i++)); do
	s=$(screen)
	hdr=$(head -1 <<<"$s")
	if grep -Eq '^ctprof-core top .* over ' <<<"$hdr"; then
		at=$(grep -Eo '[0-9]{2}:[0-9]{2}:[0-9]{2}' <<<"$hdr" | head -1)
		[ "$at" != "$prev" ] && seen=$((seen + 1)) && prev=$at
		if [ "$seen" -le 2 ] && grep -q "$burn" <<<"$s"; then
			found=1
			break
		fi
	fi
	sleep 0.25
done
[ "$found" = 1 ] || fail "top: $burn not on the first two screens"
[ "$(alt_on)" = 1 ] || fail "top: not in the alternate screen"
# Characters, not bytes (an arrow is three): grep in a UTF-8 locale.
if screen | LC_ALL=C.UTF-8 grep -Eq '^.{81,}'; then
	fail "top: a line wider than 80 columns"
fi

view0=$(line2 | awk '{print $2}')
tm send-keys -t top v
wait_for "^view [^ ]+ " 30
wait_gone "^view $view0 " 30 || fail "v: the view stayed $view0"
view1=$(line2 | awk '{print $2}')
[ -n "$view1" ] && [ "$view1" != "$view0" ] || fail "v: no new view name"
# Back to the first view (top): number key 1 is the first in the list;
# cycle until the header says it again.
for ((i = 0; i < 20; i++)); do
	[ "$(line2 | awk '{print $2}')" = "$view0" ] && break
	tm send-keys -t top v
	sleep 0.3
	wait_for "^view " 10
done
[ "$(line2 | awk '{print $2}')" = "$view0" ] || fail "v: never back to $view0"

sort0=$(line2 | sed -n 's/.*  sort \([^ ]*\).*/\1/p')
tm send-keys -t top '>'
wait_gone "  sort $sort0( |\$)" 30 || fail ">: the sort column stayed $sort0"
sort1=$(line2 | sed -n 's/.*  sort \([^ ]*\).*/\1/p')
[ -n "$sort1" ] && [ "$sort1" != "$sort0" ] || fail ">: no new sort column"
wait_for " by $sort1( |\$)" 30 || fail ">: no section sorted by $sort1"
tm send-keys -t top '<'
wait_for "  sort $sort0( |\$)" 30 || fail "<: not back to $sort0"

tm send-keys -t top r
wait_for "  sort $sort0 \(asc\)" 30 || fail "r: not ascending"
tm send-keys -t top r
wait_gone "\(asc\)" 30 || fail "r again: still ascending"

tm send-keys -t top / "$burn" Enter
wait_for "filter '$burn'" 30 || fail "/: the header shows no filter"
wait_for "^ *[0-9]+ .*$burn" 30 || fail "/: no row of $burn"
rows=$(screen | grep -E '^ *[0-9]+ ')
[ -n "$rows" ] || fail "/: no rows"
if grep -qv "$burn" <<<"$rows"; then
	fail "/: rows not of $burn: $(grep -v "$burn" <<<"$rows")"
fi
tm send-keys -t top Escape
wait_gone "filter '" 30 || fail "Esc: the filter stayed"

# A resize (SIGWINCH, KEY_RESIZE): redrawn to the new width.
tm resize-window -t top -x 100 -y 30
wait_for "^ctprof-core top .{20,}" 30
for ((i = 0; i < 120; i++)); do
	[ "$(tm display-message -p -t top '#{pane_width}')" = 100 ] && break
	sleep 0.25
done
wait_for "^view " 30 || fail "resize: no header"
if screen | LC_ALL=C.UTF-8 grep -Eq '^.{101,}'; then
	fail "resize: a line wider than 100 columns"
fi
# The column line at 100 columns is wider than the one at 80.
wait_for '^ *PID .{81,}' 30 || fail "resize: not redrawn at 100 columns"
tm resize-window -t top -x 80 -y 24

tm send-keys -t top p
wait_for "PAUSED" 30 || fail "p: no PAUSED"
tm send-keys -t top h
wait_for "keys \(any key returns\)" 30 || fail "h: no help"
tm send-keys -t top x
wait_for "^view " 30 || fail "help: no return"

tm send-keys -t top q
check_sane q 0

# ---- SIGTERM (TERM=screen, as under tmux/screen) ------------------------
start_pane screen
run_top top --interval 1s
wait_for '^ctprof-core top ' 120 || fail "SIGTERM run: no screen"
wait_for '^view ' 60
[ "$(alt_on)" = 1 ] || fail "SIGTERM run: not in the alternate screen"
# With the filter prompt open: top waits for a key there too.
tm send-keys -t top /
wait_for '^filter:' 30 || fail "SIGTERM run: no filter prompt"
kill -TERM "$(cat "$tmp/pid")"
check_sane SIGTERM 0

# ---- SIGSEGV --------------------------------------------------------------
start_pane xterm-256color
run_top top --interval 1s
wait_for '^ctprof-core top ' 120 || fail "SIGSEGV run: no screen"
wait_for '^view ' 60
kids=$(record_pids "$(cat "$tmp/pid")")
[ -n "$kids" ] || fail "SIGSEGV run: no recording process"
kill -SEGV "$(cat "$tmp/pid")"
check_sane SIGSEGV 139
check_gone "SIGSEGV: its recording" $kids

# ---- a plugin that crashes: top goes on ------------------------------------
cat >"$tmp/chaos.yaml" <<EOF
plugin_dirs: ["$plugin_dir", "$abi_dir"]
plugins:
  procfs-stat: {}
  abi-chaos: {options: {counter: $tmp/chaos.count, crash_every: 3}}
EOF
chaos_run() {
	rm -f "$tmp/chaos.count"
	start_pane xterm-256color
	run_top top --interval 500ms --config "$tmp/chaos.yaml"
	wait_for '^ctprof-core top ' 120 || fail "chaos $1: no screen"
	kids=$(record_pids "$(cat "$tmp/pid")")
	[ "$(wc -w <<<"$kids")" -ge 2 ] ||
		fail "chaos $1: no recording process and child: '$kids'"
}
chaos_run q
# The third capture crashes; the captures after it say the plugin failed.
if ! wait_for '^view .*  failed abi-chaos' 120; then
	fail "chaos: the header never says abi-chaos failed"
else
	wait_for 'plugin abi-chaos crashed: SIGSEGV' 30 ||
		fail "chaos: the status line does not say abi-chaos crashed"
	t0=$(screen | head -1 | grep -Eo '[0-9]{2}:[0-9]{2}:[0-9]{2}')
	wait_gone "^ctprof-core top  [^ ]+  $t0 " 60 ||
		fail "chaos: no capture after $t0, past the crash"
	wait_for '^ctprof-core top .* over [0-9.]+s' 30 ||
		fail "chaos: no interval past the crash"
fi
# Keys still answer.
tm send-keys -t top p
wait_for "PAUSED" 30 || fail "chaos p: no PAUSED"
tm send-keys -t top q
check_sane "chaos q" 0
check_gone "chaos q: its recording" $kids

chaos_run SIGTERM
kill -TERM "$(cat "$tmp/pid")"
check_sane "chaos SIGTERM" 0
check_gone "chaos SIGTERM: its recording" $kids

# SIGKILL: no handler runs (the terminal and the directory are left); the
# recording dies with top all the same (PR_SET_PDEATHSIG).
chaos_run SIGKILL
kill -KILL "$(cat "$tmp/pid")"
wait_for 'TOP-EXIT=137' 60 || fail "chaos SIGKILL: no TOP-EXIT=137"
check_gone "chaos SIGKILL: its recording" $kids
rm -rf "$tmp/run"/ctprof-top-*

# ---- not root: what a user may read, said in the header -------------------
# As nobody (when the test runs as root): no exit listener, reads of other
# users' files refused; top says so and shows what it read, the burner
# (its stat is anyone's to read).
if [ "$(id -u)" = 0 ] && command -v runuser >/dev/null &&
	runuser -u nobody -- test -x "$bin"; then
	chmod 755 "$tmp"
	mkdir -m 1777 "$tmp/nobody"
	start_pane xterm-256color
	tm send-keys -t top "export RUNAS='runuser -u nobody -- env TMPDIR=$tmp/nobody'" Enter
	run_top top --interval 1s
	if ! wait_for '^ctprof-core top .* over ' 120; then
		fail "nobody: no interval"
	else
		wait_for '^view .*\(not root\)' 30 ||
			fail "nobody: the header says nothing of not root"
		wait_for '^view .*  no exits' 30 ||
			fail "nobody: the header does not say no exits"
		wait_for "$burn" 30 || fail "nobody: no $burn"
	fi
	tm send-keys -t top q
	check_sane "nobody q" 0
	left=$(ls -A "$tmp/nobody")
	[ -z "$left" ] || fail "nobody: left in TMPDIR: $left"
else
	echo "# not as root: the nobody run is left out"
fi

# ---- replay ----------------------------------------------------------------
start_pane xterm-256color
run_top replay "$rec"
if ! wait_for '^ctprof-core replay .* capture 2/' 60; then
	fail "replay: no first interval"
else
	t0=$(screen | head -1 | grep -Eo '[0-9-]{10} [0-9:]{8}')
	tm send-keys -t top ']'
	wait_for 'capture 3/' 30 || fail "]: not one capture forward"
	t1=$(screen | head -1 | grep -Eo '[0-9-]{10} [0-9:]{8}')
	[ "$t1" != "$t0" ] || fail "]: the capture time stayed $t0"
	tm send-keys -t top Left
	wait_for 'capture 2/' 30 || fail "Left: not one capture back"
	t2=$(screen | head -1 | grep -Eo '[0-9-]{10} [0-9:]{8}')
	[ "$t2" = "$t0" ] || fail "Left: the time is $t2, not $t0"
	tm send-keys -t top ']' '+'
	wait_for 'capture 3/[0-9]+, 2 back' 30 || fail "+: not 2 back"
	tm send-keys -t top t latest Enter
	wait_for 'capture ([0-9]+)/\1,' 30 || fail "t latest: not the last"
	tm send-keys -t top / cc1 Enter
	wait_for "filter 'cc1'" 30 || fail "replay /: no filter"
fi
tm send-keys -t top q
check_sane "replay q" 0

if [ "$fails" -ne 0 ]; then
	echo "$fails failure(s)"
	exit 1
fi
echo "ok"
