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
		if (e->tsd_offset >= e->tls_size ||
		    e->off_alloc + 8 > e->tls_size - e->tsd_offset ||
		    e->off_dealloc + 8 > e->tls_size - e->tsd_offset ||
		    e->off_state >= e->tls_size - e->tsd_offset ||
		    strlen(e->name) >= sizeof(e->name))
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
