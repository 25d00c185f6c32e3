#!/usr/bin/env bash
# The systemd units `cmake --install` ships (packaging/systemd): installed
# into a temporary prefix, they name that prefix's binary and config,
# `systemd-analyze verify` takes them without a word, they carry the
# hardening docs/RELIABILITY.md "Running as a service" describes, their
# capability sets are the union of what the installed plugins declare
# (`ctprof-core plugins`), and `systemd-analyze security --offline` scores
# their exposure at most the recorded value.
#
#   tests/units.sh BUILD_DIR
#
# Exit 0 pass, 1 fail, 77 skip (systemd-analyze missing).
set -euo pipefail

build=$(cd "${1:?build dir}" && pwd)
if ! command -v systemd-analyze >/dev/null; then
	echo "SKIP: systemd-analyze not found (Debian package systemd)" >&2
	exit 77
fi

fail() {
	echo "FAIL: $*" >&2
	exit 1
}

umask 022
tmp=$(realpath "$(mktemp -d "${TMPDIR:-/tmp}/ctp-units.XXXXXX")")
trap 'rm -rf "$tmp"' EXIT
prefix=$tmp/prefix
cmake --install "$build" --prefix "$prefix" >"$tmp/install.log" ||
	fail "cmake --install: $(cat "$tmp/install.log")"
unitdir=$prefix/lib/systemd/system
[ -f "$prefix/lib/sysusers.d/ctprof.conf" ] || fail "no sysusers.d/ctprof.conf"
grep -q '^u ctprof ' "$prefix/lib/sysusers.d/ctprof.conf" ||
	fail "sysusers.d/ctprof.conf makes no user ctprof"

# The capabilities the installed plugins need together, as systemd spells
# a set: sorted, space-separated.
"$prefix/bin/ctprof-core" plugins >"$tmp/plugins.txt" 2>&1 ||
	fail "ctprof-core plugins: $(cat "$tmp/plugins.txt")"
want_caps=$(sed -n 's/^  capabilities: \([A-Z_,]*\).*/\1/p' "$tmp/plugins.txt" |
	tr ',' '\n' | grep -v '^none$' | grep . | sort -u | tr '\n' ' ' |
	sed 's/ $//')
[ -n "$want_caps" ] || fail "no plugin declares a capability: $(cat "$tmp/plugins.txt")"

# Exposure of each unit, as recorded in docs/RELIABILITY.md: a change that
# loosens the hardening fails here until the page says so.
declare -A max_exposure=([ctprof-serve.service]=2.5 [ctprof-record.service]=2.2)

for unit in ctprof-serve.service ctprof-record.service; do
	f=$unitdir/$unit
	[ -f "$f" ] || fail "$unit not installed in $unitdir"
	verb=${unit#ctprof-}
	verb=${verb%.service}
	grep -qx "ExecStart=$prefix/bin/ctprof-core $verb --config $prefix/etc/ctprof/collectors.yaml .* --user ctprof" "$f" ||
		fail "$unit: ExecStart does not run $prefix/bin/ctprof-core $verb with the installed config and --user ctprof: $(grep ^ExecStart "$f")"
	for line in Restart=on-failure ProtectSystem=strict PrivateTmp=yes \
		NoNewPrivileges=yes StateDirectory=ctprof StateDirectoryMode=0750 \
		RuntimeDirectory=ctprof RuntimeDirectoryMode=0700 \
		RuntimeDirectoryPreserve=yes "Environment=XDG_RUNTIME_DIR=%t/ctprof" \
		User=ctprof "CapabilityBoundingSet=$want_caps" \
		"AmbientCapabilities=$want_caps"; do
		grep -qx -- "$line" "$f" || fail "$unit: no line '$line'"
	done
	if ! systemd-analyze verify "$f" >"$tmp/verify.log" 2>&1 ||
		[ -s "$tmp/verify.log" ]; then
		fail "systemd-analyze verify $unit: $(cat "$tmp/verify.log")"
	fi
	systemd-analyze security --offline=true "$f" >"$tmp/security.log" 2>&1 ||
		fail "systemd-analyze security $unit: $(cat "$tmp/security.log")"
	score=$(sed -n "s/.*Overall exposure level for $unit: \([0-9.]*\).*/\1/p" "$tmp/security.log")
	[ -n "$score" ] || fail "no exposure score for $unit: $(tail -3 "$tmp/security.log")"
	echo "$unit: exposure $score"
	awk -v s="$score" -v m="${max_exposure[$unit]}" 'BEGIN { exit !(s <= m) }' ||
		fail "$unit: exposure $score is over the recorded ${max_exposure[$unit]}"
done
echo "PASS"
