#!/usr/bin/env bash
# Run every libFuzzer harness of tests/fuzz/ for a bounded time, several at
# once.
#
#   tools/fuzz.sh [-j JOBS] [SECONDS] [NAME...]
#                 (default 30 s each, every harness, JOBS = nproc at once)
#
# Builds build-fuzz/ with clang (-DCTP_FUZZ=ON: ASan + UBSan + coverage;
# a no-op when .ci/run's sanitizer step built it already), then runs the
# harnesses JOBS at a time, each for SECONDS over a scratch corpus seeded
# from tests/fuzz/corpus/NAME (the seeds are never modified), with
# tests/fuzz/NAME.dict when there is one. A harness is one process on one
# core: JOBS harnesses at once give each the core it had when they ran one
# after another, in 1/JOBS of the time. Prints each run's executions and
# coverage as it ends. Any finding fails: the input is kept in
# build-fuzz/findings/NAME/ and the script says how to turn it into a
# regression input, which ctest replays on every build (fuzz_replay_NAME).
# Exit 0 clean, 1 a finding, 2 cannot build.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$here"
jobs=$(nproc 2>/dev/null || echo 2)
if [ "${1:-}" = -j ]; then
	jobs=${2:?-j needs a number}
	shift 2
fi
secs=${1:-30}
shift || true

bash tools/dev.sh deps
CC=clang cmake -S . -B build-fuzz -DCMAKE_BUILD_TYPE=RelWithDebInfo \
	-DCTP_FUZZ=ON -DCTP_BUILD_TESTS=ON >/dev/null || exit 2
cmake --build build-fuzz -j"$(nproc 2>/dev/null || echo 2)" >/dev/null || exit 2

names=("$@")
if [ ${#names[@]} -eq 0 ]; then
	for f in build-fuzz/fuzz/fuzz_*; do
		names+=("$(basename "$f" | sed 's/^fuzz_//')")
	done
fi
for n in "${names[@]}"; do
	[ -x "build-fuzz/fuzz/fuzz_$n" ] || { echo "fuzz: no harness $n" >&2; exit 2; }
done

# probe_tls's switches for reproducing by hand (tests/fuzz/README.md): a
# fuzzing run never takes them from the caller's environment.
unset CTP_FUZZ_TLS_RAW CTP_FUZZ_TLS_PRINT
work=$(mktemp -d "${TMPDIR:-/tmp}/ctp-fuzz.XXXXXX")
pids=()
cleanup() {
	local p
	for p in "${pids[@]}"; do
		kill "$p" 2>/dev/null || true
	done
	wait 2>/dev/null || true
	rm -rf "$work"
}
trap cleanup EXIT

# One harness for secs; its exit status is the harness's (0: no finding).
run_one() {
	local n=$1 bin=build-fuzz/fuzz/fuzz_$1 dict=()
	mkdir -p "$work/$n" "build-fuzz/findings/$n"
	[ -f "tests/fuzz/$n.dict" ] && dict=(-dict="tests/fuzz/$n.dict")
	ASAN_OPTIONS=detect_leaks=1:abort_on_error=0 \
		UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
		"$bin" -max_total_time="$secs" -print_final_stats=1 \
		-artifact_prefix="build-fuzz/findings/$n/" -rss_limit_mb=2048 \
		-timeout=10 "${dict[@]}" "$work/$n" "tests/fuzz/corpus/$n" \
		>"$work/$n.log" 2>&1
}

# What a finished harness found, from its log.
report() {
	local n=$1 rc=$2 log=$work/$1.log runs cov
	if [ "$rc" -eq 0 ]; then
		runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
		cov=$(grep -o 'cov: [0-9]*' "$log" | tail -1 || true)
		printf 'fuzz %-16s %9s runs in %ss, %s, %s corpus inputs\n' \
			"$n" "$runs" "$secs" "${cov:-cov: ?}" \
			"$(ls "$work/$n" | wc -l)"
		return 0
	fi
	echo "fuzz $n: FINDING" >&2
	grep -E 'ERROR|SUMMARY|runtime error|Test unit written' "$log" | head -5 >&2
	echo "  turn it into a regression input: cp build-fuzz/findings/$n/<file> tests/fuzz/regressions/$n/" >&2
	return 1
}

failed=0
declare -A name_of=()
next=0
while [ "$next" -lt ${#names[@]} ] || [ ${#name_of[@]} -gt 0 ]; do
	while [ "$next" -lt ${#names[@]} ] && [ ${#name_of[@]} -lt "$jobs" ]; do
		run_one "${names[$next]}" &
		name_of[$!]=${names[$next]}
		pids+=($!)
		next=$((next + 1))
	done
	rc=0
	wait -n -p done_pid "${!name_of[@]}" || rc=$?
	report "${name_of[$done_pid]}" "$rc" || failed=1
	unset "name_of[$done_pid]"
done
pids=()
exit $failed
