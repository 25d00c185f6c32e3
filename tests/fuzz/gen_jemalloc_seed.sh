#!/usr/bin/env bash
# Regenerate corpus/probe_jemalloc/tsd-dwarf: the smallest ELF the probe
# finds something in, a TLS symbol named as jemalloc's (je_tsd_tls) of a
# struct tsd_s whose DWARF has the two members the probe reads.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cat >"$tmp/tsd.c" <<'C'
#define M(x) cant_access_tsd_items_directly_use_a_getter_or_setter_##x
struct tsd_s {
	unsigned long pad;
	unsigned long M(thread_allocated);
	unsigned long M(thread_deallocated);
};
__thread struct tsd_s je_tsd_tls;
int main(void)
{
	return (int)je_tsd_tls.M(thread_allocated);
}
C
cc -g -O0 -fPIE -pie -o "$tmp/tsd" "$tmp/tsd.c"
mkdir -p "$here/corpus/probe_jemalloc"
cp "$tmp/tsd" "$here/corpus/probe_jemalloc/tsd-dwarf"
