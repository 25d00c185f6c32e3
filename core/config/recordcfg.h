/* SPDX-License-Identifier: MIT */
/*
 * `record:` settings (recordcfg.c): the top level's and each host rule's,
 * and the effective ones after the matching rules (config.h). Private to
 * the core.
 */
#ifndef CTP_CORE_RECORDCFG_H
#define CTP_CORE_RECORDCFG_H

#include <stdint.h>
#include <stdio.h>

#define CTP_RECORD_MIN_INTERVAL_NS 100000000ull	     /* 100 ms */
#define CTP_RECORD_MAX_INTERVAL_NS 86400000000000ull /* 1 day */

/* Each member 0 (or NULL) when not set. */
struct ctp_record_cfg {
	uint64_t interval_ns;
	uint64_t keep;	    /* files kept in the directory */
	uint64_t max_bytes; /* bytes of files kept in the directory */
	char *dir;	    /* owned: as written in this place */
	/* The effective directory: `dir` of this place or of what was laid
	 * over it (not owned). */
	const char *dir_ref;
};

struct ctp_yctx;
struct ctp_ynode;

/* `path` (e.g. "record", "hosts[2].record") into *rc; 0 or -EINVAL after
 * a FILE:LINE:COL message. */
int ctp_record_cfg_conv(struct ctp_yctx *c, const char *path,
			const struct ctp_ynode *v, struct ctp_record_cfg *rc);
/* The members src sets, over dst (a host rule over the top level). */
void ctp_record_cfg_overlay(struct ctp_record_cfg *dst,
			    const struct ctp_record_cfg *src);
/* The effective settings as YAML (check-config); nothing when none. */
void ctp_record_cfg_print(FILE *out, const struct ctp_record_cfg *rc);
void ctp_record_cfg_free(struct ctp_record_cfg *rc);

#endif
