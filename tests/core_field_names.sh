#!/usr/bin/env bash
# The core knows no plugin's field by name (issue 12): no string literal in
# core/ that starts with a shipped plugin's field prefix. Readers group
# fields by the section and dimensions plugins declare (docs/PLUGINS.md).
#
#   tests/core_field_names.sh SOURCE_DIR
set -u
src=${1:?source dir}
# cgroup's fields are cgroup.v1.* and cgroup.v2.*; "cgroup.procs" and the
# other control files are the kernel's names, not fields.
hits=$(grep -rnE '"((psi|procfs|schedstat|io|smaps|taskstats|jemalloc|host|sched_ext|scx)\.[a-z]|cgroup\.v[0-9])' \
	"$src/core" --include='*.c' --include='*.h')
if [ -n "$hits" ]; then
	echo "FAIL: core/ names plugin fields:" >&2
	echo "$hits" >&2
	exit 1
fi
echo "core/ names no plugin field"
