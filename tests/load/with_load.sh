#!/usr/bin/env bash
# with_load.sh LOADGEN THREADS PER_PROCESS CMD...: run CMD beside THREADS
# sleeping threads, PER_PROCESS to a process (tools/bench/loadgen.c), and
# exit with its status. The load is up before CMD starts and gone when this
# ends: the generator holds it until its stdin (a pipe from here) closes.
set -u
[ $# -ge 4 ] || { echo "usage: $0 LOADGEN THREADS PER_PROCESS CMD..." >&2; exit 2; }
loadgen=$1 threads=$2 per=$3
shift 3
coproc LOAD { exec "$loadgen" -n "$threads" -t "$per"; }
gen=$LOAD_PID
if ! read -r -t 120 ready rest <&"${LOAD[0]}" || [ "$ready" != ready ]; then
	echo "with_load: the load of $threads threads did not start" >&2
	kill "$gen" 2>/dev/null
	wait "$gen" 2>/dev/null
	exit 1
fi
echo "with_load: $threads sleeping threads beside: $*" >&2
"$@"
rc=$?
exec {LOAD[1]}>&-
wait "$gen" 2>/dev/null
exit "$rc"
