#!/bin/bash
# The core's layers (core/CMakeLists.txt): a file of core/PART sees the
# headers of its own folder and of the folders below it, and no other.
# Every header of every part is included in a file preprocessed with each
# part's include path (the library's own, from CMake): it must be found
# when its part is that part or below it, and must not be when above (an
# upward include fails the build; a name the system also has, like
# paths.h, must not resolve to the core's). And no core file reaches around the
# include path with a path in its include ("../x.h", "analysis/x.h").
#
# Usage: core_layers.sh CC CORE_DIR PART=DIR:DIR... (the parts bottom up)
cc=$1 core=$2
shift 2
parts=() paths=()
for arg; do
	parts+=("${arg%%=*}")
	paths+=("${arg#*=}")
done
[ ${#parts[@]} -ge 2 ] || { echo "usage: $0 CC CORE_DIR PART=DIRS..."; exit 1; }

tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
# One file per part including each of its headers.
for p in "${parts[@]}"; do
	for h in "$core/$p"/*.h; do
		printf '#include "%s"\n' "${h##*/}"
	done >"$tmp/$p.c"
done

# The headers the preprocessor resolves to (-M), with part a's include
# path; with -MG a header it cannot find is no error (listed by its bare
# name), so every header of an upper part is looked up, not just the first.
fail=0 found=0 refused=0
for ((a = 0; a < ${#parts[@]}; a++)); do
	flags=()
	IFS=: read -ra dirs <<<"${paths[a]}"
	for d in "${dirs[@]}"; do
		[ -n "$d" ] && flags+=("-I$d")
	done
	for ((b = 0; b < ${#parts[@]}; b++)); do
		up=$((b > a))
		mg=()
		((up)) && mg=(-MG)
		if ! deps=$("$cc" -M "${mg[@]}" "${flags[@]}" \
			"$tmp/${parts[b]}.c" 2>&1); then
			echo "FAIL: ${parts[a]} cannot include the headers of ${parts[b]}:"
			echo "$deps" | head -3
			fail=1
			continue
		fi
		for h in "$core/${parts[b]}"/*.h; do
			if ! grep -qF "$h" <<<"$deps"; then
				((up)) && refused=$((refused + 1)) && continue
				echo "FAIL: ${parts[a]} does not reach ${parts[b]}/${h##*/} (below or its own)"
				fail=1
			elif ((up)); then
				echo "FAIL: ${parts[a]} includes ${parts[b]}/${h##*/}, a part above it"
				fail=1
			else
				found=$((found + 1))
			fi
		done
	done
done

# A path in a quoted include would reach a header the include path hides.
while IFS= read -r hit; do
	echo "FAIL: an include with a path: $hit"
	fail=1
done < <(grep -Hn '^[[:space:]]*#[[:space:]]*include[[:space:]]*"[^"]*/' \
	"$core"/*/*.[ch] | grep -v '#[[:space:]]*include[[:space:]]*"ctprof/')

echo "$found includes found (own part or below), $refused refused (above)"
((found > 0 && refused > 0)) || { echo "FAIL: nothing checked"; exit 1; }
exit $fail
