#!/usr/bin/env bash
# Run every libFuzzer harness of tests/fuzz/ for a bounded time.
#
#   tools/fuzz.sh [SECONDS] [NAME...]    (default 30 s each, every harness)
#
# Builds build-fuzz/ with clang (-DCTP_FUZZ=ON: ASan + UBSan + coverage),
# then runs each harness over a scratch corpus seeded from
# tests/fuzz/corpus/NAME (the seeds are never modified), with
# tests/fuzz/NAME.dict when there is one. Prints each run's executions and
# coverage. Any finding fails: the input is kept in build-fuzz/findings/NAME/
# and the script says how to turn it into a regression input, which ctest
# replays on every build (fuzz_replay_NAME). Exit 0 clean, 1 a finding, 2
# cannot build.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$here"
secs=${1:-30}
shift || true
jobs=$(nproc 2>/dev/null || echo 2)

bash tools/dev.sh deps
CC=clang cmake -S . -B build-fuzz -DCMAKE_BUILD_TYPE=RelWithDebInfo \
	-DCTP_FUZZ=ON -DCTP_BUILD_TESTS=ON >/dev/null || exit 2
cmake --build build-fuzz -j"$jobs" >/dev/null || exit 2

names=("$@")
if [ ${#names[@]} -eq 0 ]; then
	for f in build-fuzz/fuzz/fuzz_*; do
		names+=("$(basename "$f" | sed 's/^fuzz_//')")
	done
fi

# probe_tls's switches for reproducing by hand (tests/fuzz/README.md): a
# fuzzing run never takes them from the caller's environment.
unset CTP_FUZZ_TLS_RAW CTP_FUZZ_TLS_PRINT
work=$(mktemp -d "${TMPDIR:-/tmp}/ctp-fuzz.XXXXXX")
trap 'rm -rf "$work"' EXIT
failed=0
for n in "${names[@]}"; do
	bin=build-fuzz/fuzz/fuzz_$n
	[ -x "$bin" ] || { echo "fuzz: no harness $n" >&2; exit 2; }
	mkdir -p "$work/$n" "build-fuzz/findings/$n"
	dict=()
	[ -f "tests/fuzz/$n.dict" ] && dict=(-dict="tests/fuzz/$n.dict")
	log=$work/$n.log
	if ASAN_OPTIONS=detect_leaks=1:abort_on_error=0 \
		UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
		"$bin" -max_total_time="$secs" -print_final_stats=1 \
		-artifact_prefix="build-fuzz/findings/$n/" -rss_limit_mb=2048 \
		-timeout=10 "${dict[@]}" "$work/$n" "tests/fuzz/corpus/$n" \
		>"$log" 2>&1; then
		runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
		cov=$(grep -o 'cov: [0-9]*' "$log" | tail -1)
		printf 'fuzz %-16s %9s runs in %ss, %s, %s corpus inputs\n' \
			"$n" "$runs" "$secs" "${cov:-cov: ?}" \
			"$(ls "$work/$n" | wc -l)"
	else
		failed=1
		echo "fuzz $n: FINDING" >&2
		grep -E 'ERROR|SUMMARY|runtime error|Test unit written' "$log" | head -5 >&2
		echo "  turn it into a regression input: cp build-fuzz/findings/$n/<file> tests/fuzz/regressions/$n/" >&2
	fi
done
exit $failed
