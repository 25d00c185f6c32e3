#!/bin/sh
# Every C file git tracks is formatted as .clang-format says. Skips (77)
# without clang-format or outside a git checkout (a source tarball).
src=$1
command -v clang-format >/dev/null 2>&1 || { echo "clang-format not installed"; exit 77; }
command -v git >/dev/null 2>&1 || { echo "git not installed"; exit 77; }
cd "$src" || exit 1
files=$(git ls-files '*.c' '*.h' 2>/dev/null) || { echo "not a git checkout"; exit 77; }
[ -n "$files" ] || { echo "not a git checkout"; exit 77; }
# One run over all files (quick); on failure, name each file to fix.
clang-format --dry-run -Werror $files >/dev/null 2>&1 && exit 0
for f in $files; do
	clang-format --dry-run -Werror "$f" >/dev/null 2>&1 ||
		echo "not formatted: $f (clang-format -i $f)"
done
exit 1
