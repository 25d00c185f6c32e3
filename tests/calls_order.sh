#!/bin/bash
# Calls between the files of one library run one way: given its files
# bottom up, each object may use what the ones before it define, never what
# the ones after it do (core/capture: api.c, then loader.c, then engine.c,
# which calls both; the logger and clocks are util's).
#
# Usage: calls_order.sh NM FILE,FILE,... OBJECT... (the library's objects;
# FILE is an object's source name without ".c")
nm=$1
IFS=, read -ra order <<<"$2"
shift 2
declare -A obj
for o; do
	base=${o##*/}
	base=${base%.o}
	base=${base%.obj}
	obj[${base%.c}]=$o
done
for f in "${order[@]}"; do
	[ -n "${obj[$f]}" ] || { echo "FAIL: no object for $f.c"; exit 1; }
done

fail=0
for ((i = 0; i < ${#order[@]}; i++)); do
	uses=$("$nm" "${obj[${order[i]}]}" | awk '$1 == "U" { print $2 }' | sort -u)
	for ((j = i + 1; j < ${#order[@]}; j++)); do
		defs=$("$nm" --defined-only "${obj[${order[j]}]}" |
			awk 'NF == 3 && $2 ~ /^[A-Z]$/ { print $3 }' | sort -u)
		up=$(comm -12 <(echo "$uses") <(echo "$defs"))
		if [ -n "$up" ]; then
			echo "FAIL: ${order[i]}.c calls ${order[j]}.c, which is above it: ${up//$'\n'/ }"
			fail=1
		fi
	done
done
[ $fail = 0 ] && echo "calls run one way: ${order[*]}"
exit $fail
