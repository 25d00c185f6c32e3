/* SPDX-License-Identifier: MIT */
/*
 * The capture engine: the roots, the plugins loaded into it (loader.h),
 * the API table handed to them (api.h) and the walk over the proc root
 * that calls them (engine.c). What the walk keeps between and during
 * captures (its workers, the tgid list, cgroups, the split queue) is its
 * own, behind `walk`. Private to the core.
 */
#ifndef CTP_CORE_ENGINE_H
#define CTP_CORE_ENGINE_H

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>

#include "config.h"
#include "bind.h"
#include "ctprof/plugin.h"
#include "model.h"

struct ctp_cgroups;

/* Consecutive failures after which a callback is disabled for the rest of
 * the snapshot. */
#define CTP_CB_MAX_CONSECUTIVE_ERRORS 32

/* The most the engine reads of one per-task or root file; a longer file is
 * a read failure (-EFBIG). Per-task files of procfs are a few KiB. */
#define CTP_FILE_READ_MAX (4u << 20)

/* A per-task file some enabled plugin needs. */
struct ctp_filedef {
	char *name;
	bool thread;	/* under task/<tid>/ (else under <tgid>/) */
	bool lazy;	/* read only when a plugin calls file_get */
	bool many;	/* of many records ("+name"): always read to its end */
	uint32_t tally; /* index into cap->rf.file */
};

/* A per-task source a plugin offers (ctp_api.source_add). */
struct ctp_source {
	char name[CTP_SOURCE_NAME_MAX + 1];
	uint32_t plugin;
	/* Whose rows it serves: CTP_SCOPE_THREAD or CTP_SCOPE_PROCESS (then
	 * no walk, no bindings). */
	uint32_t scope;
	ctp_source_fill_fn fill;
	/* A walk source's list (struct ctp_source_desc.walk), else NULL. */
	int (*walk)(void *state, const struct ctp_walk_task **tasks, size_t *n);
	/* walk() says whether its list is complete
	 * (CTP_SOURCE_WALK_SAYS_COMPLETE). */
	bool says_complete;
	/* walk() says how many tasks its list lacks
	 * (CTP_SOURCE_WALK_SAYS_MISSING). */
	bool says_missing;
	/* A value source's layout (n_values 0: not one). */
	struct ctp_valsrc vals;
};

struct ctp_walk;

struct ctp_engine {
	const struct ctp_config *cfg;
	struct ctp_capture *cap;
	struct ctp_api api;
	struct ctp_roots roots;
	const volatile sig_atomic_t *stop;
	/* A long-lived recorder (ctp_api.recording): set before the plugins
	 * are loaded, false for a one-shot capture. */
	bool recording;
	/* Every per-task source hidden (ctp_api.source_get: -ENOENT, no walk
	 * from a source): each plugin takes its values from its files, as on
	 * a host where no provider loaded (`selftest` compares the two). */
	bool sources_off;
	/* Some plugin's bindings are served this capture (binds_resolve). */
	bool any_binds;
	bool progress; /* print a progress line on stderr */
	bool strict;   /* --strict: any plugin failure is a required one's */

	/* What the loaded plugins declared (the loader fills them, the walk
	 * reads them): the per-task files, mapped from each plugin's own
	 * list (ctp_plugin_rt), and the per-task sources, fixed after init. */
	struct ctp_filedef thread_files[CTP_MAX_FILES];
	uint32_t n_thread_files;
	struct ctp_filedef process_files[CTP_MAX_FILES];
	uint32_t n_process_files;
	struct ctp_source sources[CTP_MAX_SOURCES];
	uint32_t n_sources;

	/* The walk's own state (engine.c), made by ctp_engine_init. */
	struct ctp_walk *walk;
};

/* Open the roots the config names and ready the walk for cap. 0, -ENOMEM,
 * or the proc root's open error (logged); ctp_engine_done either way. */
int ctp_engine_init(struct ctp_engine *eng, const struct ctp_config *cfg,
		    struct ctp_capture *cap, const volatile sig_atomic_t *stop);
/* End the walk's worker threads, then unload every plugin
 * (ctp_plugins_unload): no worker outlives the plugins it called. */
void ctp_engine_unload(struct ctp_engine *eng);
/* ctp_engine_unload, the roots closed, the walk freed. */
void ctp_engine_done(struct ctp_engine *eng);
/* After a capture (and its file), ready the engine and its capture for
 * the next with the same plugins loaded (ctp_capture_reset; walk state,
 * cgroup rows, split queue; disabled callbacks enabled again). 0 or
 * -ENOMEM. */
int ctp_engine_rearm(struct ctp_engine *eng);
/* Walk the proc root once and fill cap. Returns 0, -EINTR when stopped. */
int ctp_engine_capture(struct ctp_engine *eng);

/* What the last capture decided: the workers had their own descriptor
 * tables (every loaded plugin is CTP_PLUGIN_FD_LOCAL); each thread's
 * directory was opened (some thread callback uses task->dirfd). */
bool ctp_engine_private_fds(const struct ctp_engine *eng);
bool ctp_engine_thread_dirs(const struct ctp_engine *eng);
/* The capture's cgroups (cgroups.h): which plugin referenced which row. */
struct ctp_cgroups *ctp_engine_cgroups(const struct ctp_engine *eng);

#endif
