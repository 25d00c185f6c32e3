/* SPDX-License-Identifier: MIT */
/*
 * jemalloc-probe's layouts table (jep_layout.c): the file's parser, the
 * version string scanner over the same bytes, and a lookup and print of
 * every entry the parser accepted (each must satisfy the checks the parser
 * promises).
 */
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "jep.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct ctp_jep_layouts l = {0};
	size_t line, col;
	const char *why;
	char version[80], text[256];

	ctp_jep_layouts_parse((const char *)data, size, &l, &line, &col, &why);
	for (size_t i = 0; i < l.n; i++) {
		const struct ctp_jep_layout *e = &l.v[i];
		uint64_t room = e->tls_size - e->tsd_offset;
		uint64_t s0 = e->off_state, s1 = s0 + 1 + e->state_pad;
		if (e->tsd_offset >= e->tls_size || e->state_pad > 7 ||
		    e->off_alloc + 8 > room || e->off_dealloc + 8 > room ||
		    s1 > room || e->off_alloc == e->off_dealloc ||
		    (s0 < e->off_alloc + 8 && e->off_alloc < s1) ||
		    (s0 < e->off_dealloc + 8 && e->off_dealloc < s1) ||
		    !ctp_jep_layout_name_ok(e->name))
			abort();
		if (ctp_jep_layout_find(&l, e->version, e->arch, e->tls_size) ==
		    NULL)
			abort();
		ctp_jep_layout_line(e, text, sizeof(text));
	}
	if (ctp_jep_find_version((const char *)data, size, version,
				 sizeof(version)) == 0 &&
	    strlen(version) < 46)
		abort();
	ctp_jep_layouts_free(&l);
	return 0;
}
