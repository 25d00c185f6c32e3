/* SPDX-License-Identifier: MIT */
/* See readopts.h. */
#include "readopts.h"

#include <fnmatch.h>

bool ctp_readopts_selected(const struct ctp_readopts *r, const char *name)
{
	if (!r->n_globs)
		return true;
	for (size_t i = 0; i < r->n_globs; i++)
		if (fnmatch(r->globs[i], name, 0) == 0)
			return true;
	return false;
}
