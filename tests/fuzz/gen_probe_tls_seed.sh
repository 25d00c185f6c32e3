#!/usr/bin/env bash
# Regenerate corpus/probe_tls/: each seed is the memory libthread_db and
# jemalloc-probe read from a live jemalloc worker (tests/jemalloc_worker.c,
# four threads), recorded by probe_tls_record through the ctp_jep_mem seam,
# for jemalloc in the executable, in a shared library, and in a fully
# static binary. Each seed is then replayed through the harness, which must
# read every thread's counters as the recording did.
#
#   tests/fuzz/gen_probe_tls_seed.sh [BUILD_DIR]   (default build/, built
#                                                   with the jemalloc tests)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build=$(cd "${1:-$here/../../build}" && pwd)
out=$here/corpus/probe_tls
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$out"
for w in static shared fullstatic; do
	worker=$build/tests/jemalloc_worker_$w
	[ -x "$worker" ] || { echo "no $worker (jemalloc tests not built)" >&2; exit 1; }
	"$build/tests/probe_tls_record" "$out/$w" "$worker" threads 3 \
		| grep '^tid' | sort >"$tmp/rec"
	CTP_FUZZ_TLS_PRINT=1 "$build/tests/fuzz_replay_probe_tls" "$out/$w" \
		| grep '^tid' | sort >"$tmp/replay"
	if ! grep -q 'err 0 allocated [1-9]' "$tmp/rec" ||
		! cmp -s "$tmp/rec" "$tmp/replay"; then
		echo "$w: the replay does not read what the recording read" >&2
		diff "$tmp/rec" "$tmp/replay" >&2 || true
		exit 1
	fi
	echo "$w: $(wc -l <"$tmp/rec") threads' counters, $(stat -c %s "$out/$w") bytes"
done
