/* SPDX-License-Identifier: MIT */
/*
 * What a reader is asked for (show, compare, later export): the
 * decompression cap, the grouping, which fields, how many rows, sorted by
 * what. Filled from the command line by core/cli/readcli.c; read by the
 * analysis. Private to the core.
 */
#ifndef CTP_CORE_READOPTS_H
#define CTP_CORE_READOPTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "group.h"

/*
 * The options show and compare (and later readers) share, parsed by one
 * parser: the decompression cap, grouping, field selection, row limit and
 * sort. A command embeds this as its first member and adds its own.
 */
struct ctp_readopts {
	const char *config, *cap_arg; /* --config, --max-decompressed */
	uint64_t cap;		      /* after ctp_readopts_finish */
	const char *group_by;	      /* --group-by as given, or a default */
	struct ctp_group_spec spec;   /* parsed from group_by (and
					 --no-normalize, --flatten) */
	const char **flatten;	      /* --flatten, repeatable */
	size_t n_flatten;
	char **globs; /* --fields GLOB,GLOB..., repeatable */
	size_t n_globs;
	uint64_t limit;	  /* --limit N, 0 = all */
	const char *sort; /* --sort FIELD */
	uint32_t given;	  /* which shared options the command line gave
			     (cli/readcli.h ctp_readopts_given) */
	/* What the members above point into, freed by ctp_readopts_done;
	 * capacities of the arrays. */
	char **copies;
	size_t n_copies;
	char *axes;
	size_t copies_cap, globs_cap, flatten_cap;
};

/* Is field `name` one --fields selects (all when none was given)? */
bool ctp_readopts_selected(const struct ctp_readopts *r, const char *name);

#endif
