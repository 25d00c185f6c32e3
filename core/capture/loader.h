/* SPDX-License-Identifier: MIT */
/*
 * Plugin loading (loader.c): the plugin search path, a plugin file found,
 * checked and opened, every configured plugin loaded into an engine and
 * unloaded again, and what a loaded plugin is to the core (struct
 * ctp_plugin_rt, the runtime behind cap->plugins[i].rt). Private to the
 * core.
 */
#ifndef CTP_CORE_LOADER_H
#define CTP_CORE_LOADER_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "api.h"
#include "bind.h"
#include "config.h"
#include "ctprof/plugin.h"

struct ctp_engine;

/* Callback slots, for per-callback error accounting. */
enum { CB_HOST, CB_PROCESS, CB_THREAD, CB_CGROUP, CB_FINISH, CB_COUNT };

/* A loaded plugin, as the core runs it (cap->plugins[i].rt): made by
 * ctp_engine_load, called by the walk, reached by the API through ctx. */
struct ctp_plugin_rt {
	void *handle;
	const struct ctp_plugin *desc;
	void *state;
	bool initialized;
	struct ctp_ctx ctx;
	const struct ctp_plugin_cfg *cfg;
	int *static_ids; /* registry id of each static-table entry */
	uint32_t n_static;
	/* Declared files mapped to the engine's file table. */
	uint8_t thread_files[CTP_MAX_FILES];
	uint32_t n_thread_files;
	uint8_t process_files[CTP_MAX_FILES];
	uint32_t n_process_files;
	bool mt_safe;
	bool fd_local;	 /* CTP_PLUGIN_FD_LOCAL, or no task callback */
	bool splittable; /* CTP_PLUGIN_SPLITTABLE, or no thread callback */
	bool thread_dir; /* a thread callback without NO_THREAD_DIR */
	pthread_mutex_t call_lock; /* serializes calls when !mt_safe */
	_Atomic uint32_t consecutive_errors[CB_COUNT];
	_Atomic bool cb_disabled[CB_COUNT];
	/* Inside this plugin's host or finish callback (main thread): the
	 * only place ctp_api.exited_begin works. exited_rec is the row it
	 * handed out, open until exited_end (scope 0 when closed). */
	bool in_host_cb;
	struct ctp_record exited_rec;
	/* Log rate limiting. */
	pthread_mutex_t log_lock;
	uint64_t log_window_start_ns;
	uint32_t log_in_window;
	uint64_t log_suppressed;
	/* Values the core copies for it (ctp_api.field_bind). */
	struct ctp_binds binds;
	/* Thread sources its thread callback asks for every thread
	 * (ctp_api.source_prefill), by name; the engine's source indices
	 * of them this capture, a bit each. */
	char prefill[CTP_MAX_SOURCES][CTP_SOURCE_NAME_MAX + 1];
	uint32_t n_prefill;
	uint32_t prefill_srcs;
};

/* Resolve the plugin search path: config dirs, else the build tree when
 * this binary runs from it, else the install dir. */
int ctp_plugin_dirs(const struct ctp_config *cfg, char ***ret, size_t *n);
/* Load, check and init every plugin the config lists. Fills cap->plugins.
 * Returns 0, or -ECANCELED when a required plugin failed, or any plugin
 * with eng->strict (message logged). */
int ctp_engine_load(struct ctp_engine *eng);
/* Every plugin's fini and dlclose, its runtime freed, the file tables
 * emptied. The engine's workers must have ended: ctp_engine_unload. */
void ctp_plugins_unload(struct ctp_engine *eng);
/* ctprof-core's own commands, NULL-terminated: a plugin's may not take
 * these names. */
extern const char *const ctp_core_commands[];
/* How many commands a validated descriptor declares (0 when its size
 * stops before the table). */
uint32_t ctp_plugin_n_commands(const struct ctp_plugin *d);
/* Command i of a validated descriptor (its own stride), or NULL. */
const struct ctp_command *ctp_plugin_command(const struct ctp_plugin *d,
					     uint32_t i);
/* The capabilities a validated descriptor needs: its declaration
 * (CTP_PLUGIN_CAPS), else CTP_CAPS_UNDECLARED; *declared (may be NULL)
 * tells which. */
uint64_t ctp_plugin_caps(const struct ctp_plugin *d, bool *declared);
/* The union of ctp_plugin_caps over the plugins loaded and initialized:
 * what a capture process keeps (ctp_priv_keep_caps). */
uint64_t ctp_engine_caps(const struct ctp_engine *eng);
/* Open and validate one plugin file without init (for `plugins`). */
int ctp_plugin_open(const char *path, bool allow_insecure, void **handle,
		    const struct ctp_plugin **desc, char *why, size_t whylen);
/*
 * Find the plugin a config names in `dirs` (first `<name>.so` wins), open
 * and validate it (ctp_plugin_open) and check its descriptor carries that
 * name. Returns 0 with *path (caller frees), *handle and *desc set, or a
 * negative errno (-ENOENT not found, -EINVAL misnamed, else as
 * ctp_plugin_open) with the reason in why, ending in "did you mean 'X'?"
 * when a plugin file of a close name is in the directories. *path is set
 * on failure too when the file was found (else NULL).
 */
int ctp_plugin_resolve(char *const *dirs, size_t ndirs, const char *name,
		       bool allow_insecure, char **path, void **handle,
		       const struct ctp_plugin **desc, char *why,
		       size_t whylen);

#endif
