/* SPDX-License-Identifier: MIT */
/*
 * The plugin API (struct ctp_api, include/ctprof/plugin.h): the table a
 * plugin's init is handed and calls through its context for options,
 * fields, values, summary counters, logging and the exited table. The
 * engine sets the walk's own services (file_get, source_register,
 * source_get, cgroup_ref, summary_add) after ctp_api_fill. Private to the
 * core.
 */
#ifndef CTP_CORE_API_H
#define CTP_CORE_API_H

#include <stdint.h>

#include "ctprof/plugin.h"
#include "model.h"

struct ctp_engine;
struct ctp_plugin_rt;

/* A plugin's context handle (struct ctp_ctx is opaque to plugins). */
struct ctp_ctx {
	struct ctp_engine *eng;
	uint32_t plugin; /* index into cap->plugins */
};

/* A row being filled by one plugin call. */
struct ctp_record {
	struct ctp_capture *cap;
	struct ctp_table *table;
	uint32_t row;
	uint8_t scope;
	uint32_t ident; /* identity columns before the field columns */
	uint32_t plugin;
};

/* Fill api with the core's services, the walk's left NULL. */
void ctp_api_fill(struct ctp_api *api);
/* Close rt's open exited record, if any (the end of a host or finish
 * callback). */
void ctp_api_exited_close(struct ctp_plugin_rt *rt);

#endif
