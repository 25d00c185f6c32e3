#!/bin/bash
# Every plugin in DIR exports exactly one dynamic symbol, ctp_plugin_v1
# (docs/STYLE: -fvisibility=hidden plus one CTP_EXPORT descriptor).
# Usage: plugin_exports.sh DIR
set -u
dir=${1:?usage: plugin_exports.sh DIR}
shopt -s nullglob
sos=("$dir"/*.so)
if [ ${#sos[@]} -eq 0 ]; then
	echo "no plugins in $dir" >&2
	exit 1
fi
status=0
for so in "${sos[@]}"; do
	if ! syms=$(readelf --dyn-syms -W "$so"); then
		echo "FAIL $so: readelf failed" >&2
		status=1
		continue
	fi
	# Defined symbols that bind: a LOCAL one in the dynamic table (the
	# linker's __start___sancov_* bounds of a coverage build, CTP_FUZZ)
	# binds nothing. AddressSanitizer adds an ODR indicator per global
	# (CTP_SANITIZE); it is instrumentation, not API.
	names=$(printf '%s\n' "$syms" |
		awk '$1 ~ /^[0-9]+:$/ && $5 != "LOCAL" && $7 != "UND" && $8 != "" { print $8 }' |
		grep -v '^__odr_asan\.' | sort)
	if [ "$names" != "ctp_plugin_v1" ]; then
		echo "FAIL $so exports:" >&2
		printf '%s\n' "$syms" >&2
		status=1
	else
		echo "ok   $so"
	fi
done
exit $status
