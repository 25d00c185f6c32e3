/* SPDX-License-Identifier: MIT */
/*
 * The capture engine: loads plugins (loader.c), implements the plugin API
 * (api.c) and walks the proc root dispatching to plugins (engine.c).
 * Private to the core.
 */
#ifndef CTP_CORE_ENGINE_H
#define CTP_CORE_ENGINE_H

#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>

#include "cgroups.h"
#include "config.h"
#include "ctprof/plugin.h"
#include "model.h"
#include "splitq.h"

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

/* Callback slots, for per-callback error accounting. */
enum { CB_HOST, CB_PROCESS, CB_THREAD, CB_CGROUP, CB_FINISH, CB_COUNT };

/* Consecutive failures after which a callback is disabled for the rest of
 * the snapshot. */
#define CTP_CB_MAX_CONSECUTIVE_ERRORS 32

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
};

/* The most the engine reads of one per-task or root file; a longer file is
 * a read failure (-EFBIG). Per-task files of procfs are a few KiB. */
#define CTP_FILE_READ_MAX (4u << 20)

/* A per-task file some enabled plugin needs. */
struct ctp_filedef {
	char *name;
	bool thread;	/* under task/<tid>/ (else under <tgid>/) */
	bool lazy;	/* read only when a plugin calls file_get */
	uint32_t tally; /* index into cap->rf.file */
};

struct ctp_engine {
	const struct ctp_config *cfg;
	struct ctp_capture *cap;
	struct ctp_api api;
	struct ctp_roots roots;

	struct ctp_filedef thread_files[CTP_MAX_FILES];
	uint32_t n_thread_files;
	struct ctp_filedef process_files[CTP_MAX_FILES];
	uint32_t n_process_files;
	/* The index of `stat` in each table when some plugin reads it up
	 * front, else -1: the walk takes task names from it (taskid.h). */
	int stat_thread, stat_process;

	const volatile sig_atomic_t *stop;
	/* A long-lived recorder (ctp_api.recording): set before the plugins
	 * are loaded, false for a one-shot capture. */
	bool recording;
	bool progress; /* print a progress line on stderr */
	bool strict;   /* --strict: any plugin failure is a required one's */
	/* The proc root is not a real procfs: every file read under it is
	 * checked to be a regular file first. */
	bool check_files;
	/* Every loaded plugin is CTP_PLUGIN_FD_LOCAL: worker threads get
	 * their own descriptor tables (set when they start). */
	bool private_fds;
	/* Some loaded plugin's thread callback uses task->dirfd: each
	 * thread's directory is opened (else its files are read by path
	 * from the process's). */
	bool thread_dirs;

	/* Large processes split among workers (config split_threads;
	 * splitq.h); in_process counts workers inside do_process. */
	struct ctp_splitq splits;
	_Atomic unsigned in_process;

	/* Per-task sources the plugins offer (ctp_api.source_register),
	 * fixed after init. */
	struct ctp_source {
		char name[CTP_SOURCE_NAME_MAX + 1];
		uint32_t plugin;
		ctp_source_fill_fn fill;
	} sources[CTP_MAX_SOURCES];
	uint32_t n_sources;

	/* Processes by v2 cgroup, listed at the start of each capture on the
	 * live procfs; how many processes it placed. */
	struct ctp_cg_procs procs;
	_Atomic uint64_t procs_hits;
	_Atomic uint64_t threads_hits; /* threads placed by cgroup.threads */

	/* Distinct cgroups and the plugins' cgroup_ref rows (cgroups.h). */
	struct ctp_cgroups cgroups;

	/* The walk's worker threads, with several workers (engine.c): made
	 * by the first capture, parked between captures, each handed its
	 * `struct worker` for a walk (one round), ended by
	 * ctp_engine_unload before any plugin's fini. A thread takes its
	 * supervision slot, signal mask and (private_fds) descriptor table
	 * once, when it starts, and inherits the capturing thread's state of
	 * then: a host confines itself (capabilities, seccomp, credentials)
	 * before its first capture, and what it has open then stays open in
	 * a private table until the engine ends. The engine is used in the
	 * process that made it (a child forked after the first capture has
	 * none of these threads). */
	struct ctp_pool {
		pthread_mutex_t lock;
		pthread_cond_t go; /* a round starts, or quit */
		struct ctp_pool_thread **t;
		uint32_t n;	/* threads running: t[0 .. n) */
		uint64_t round; /* rounds started */
		uint32_t nw;	/* threads t[0 .. nw) walk this round */
		void *ws;	/* this round's struct worker array */
		bool quit;
	} pool;

	/* Walk state shared by workers. */
	uint32_t *tgids;
	size_t n_tgids;
	_Atomic size_t next_tgid;
	_Atomic unsigned workers_done;
	pthread_mutex_t done_lock;
	pthread_cond_t done_cond;
};

/* api.c */
void ctp_api_fill(struct ctp_api *api);
/* Close rt's open exited record, if any (the end of a host or finish
 * callback). */
void ctp_api_exited_close(struct ctp_plugin_rt *rt);

/* loader.c */
/* Resolve the plugin search path: config dirs, else the build tree when
 * this binary runs from it, else the install dir. */
int ctp_plugin_dirs(const struct ctp_config *cfg, char ***ret, size_t *n);
/* Load, check and init every plugin the config lists. Fills cap->plugins.
 * Returns 0, or -ECANCELED when a required plugin failed, or any plugin
 * with eng->strict (message logged). */
int ctp_engine_load(struct ctp_engine *eng);
void ctp_engine_unload(struct ctp_engine *eng);
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

/* engine.c */
/* ctp_api.file_get. */
int ctp_engine_file_get(const struct ctp_task *task, uint32_t i,
			const struct ctp_file **out);
/* ctp_api.source_register and source_get. */
int ctp_engine_source_register(struct ctp_ctx *ctx, const char *name,
			       ctp_source_fill_fn fill);
int ctp_engine_source_get(const struct ctp_task *task, const char *name,
			  const void **data, size_t *len);
/* ctp_api.cgroup_ref. */
int ctp_engine_cgroup_ref(struct ctp_ctx *ctx, const char *key, size_t len);
int ctp_engine_init(struct ctp_engine *eng, const struct ctp_config *cfg,
		    struct ctp_capture *cap, const volatile sig_atomic_t *stop);
void ctp_engine_done(struct ctp_engine *eng);
/* End the worker threads (ctp_engine_unload does, before the plugins'
 * fini). */
void ctp_engine_workers_end(struct ctp_engine *eng);
/* After a capture (and its file), ready the engine and its capture for
 * the next with the same plugins loaded (ctp_capture_reset; walk state,
 * cgroup rows, split queue; disabled callbacks enabled again). 0 or
 * -ENOMEM. */
int ctp_engine_rearm(struct ctp_engine *eng);
/* Walk the proc root once and fill cap. Returns 0, -EINTR when stopped. */
int ctp_engine_capture(struct ctp_engine *eng);

#endif
