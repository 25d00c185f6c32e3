/* SPDX-License-Identifier: MIT */
/*
 * The identity of the cgroups a capture meets: one row of cap->cgroups per
 * distinct path (v2 paths from the walk, "<ns>:<rest>" keys plugins add
 * with ctp_api.cgroup_ref), which plugin referenced which key row, and
 * whether a v2 cgroup holds whole processes (so a process's threads need
 * not read their own cgroup file). All functions are safe from concurrent
 * workers. Private to the capture.
 */
#ifndef CTP_CORE_CGROUPS_H
#define CTP_CORE_CGROUPS_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ctprof/plugin-util.h"
#include "model.h"

struct ctp_cgroups {
	pthread_mutex_t lock;
	/* Blob id of the path -> row in cap->cgroups, -1 none yet. */
	int64_t *row;
	size_t row_cap;
	/* Per path (blob id): 1 when all threads of a process in it share
	 * it, 0 when they may not, -1 not known yet. */
	int8_t *whole;
	size_t whole_cap;
	/* Per plugin, a bitmap over the rows it referenced with cgroup_ref
	 * (NULL until its first). Only those plugins are called for such a
	 * row. */
	uint64_t **refs;
	size_t *refs_words;
	uint32_t refs_n; /* plugins the two arrays cover */
};

void ctp_cgroups_init(struct ctp_cgroups *cg);
void ctp_cgroups_done(struct ctp_cgroups *cg);

/* The row of cgroup `path` in cap->cgroups, added the first time: >= 0,
 * or a negative errno. */
int64_t ctp_cgroups_row(struct ctp_cgroups *cg, struct ctp_capture *cap,
			const char *path, size_t len);

/* A key of ctp_api.cgroup_ref: "<ns>:<rest>", <ns> of [a-z0-9_], no NUL,
 * at most 4096 bytes. Never a v2 path, which begins with '/', so the two
 * kinds of rows never meet. */
bool ctp_cgroup_key_ok(const char *key, size_t len);

/* ctp_api.cgroup_ref for plugin `plugin` of `n_plugins`: the key's row
 * (>= 0), -EINVAL, -ENOMEM. */
int ctp_cgroups_ref(struct ctp_cgroups *cg, struct ctp_capture *cap,
		    uint32_t plugin, const char *key, size_t len);

/* Did plugin p reference row `row` with cgroup_ref? */
bool ctp_cgroups_referenced(struct ctp_cgroups *cg, uint32_t p, uint32_t row);

/*
 * Does every thread of a process in v2 cgroup `path` (blob id `key`)
 * belong to it too? Decided once per path from <cgroup_fd>/<path>/
 * cgroup.type; when in doubt (no cgroup root, unreadable type), no.
 */
bool ctp_cgroups_whole(struct ctp_cgroups *cg, int cgroup_fd, int64_t key,
		       const char *path, size_t len);

/* The kernel's answer, uncached: does every thread of a process in v2
 * cgroup `path` (under the mount cgfd) belong to it too? From
 * <path>/cgroup.type, the root's from its children's; no when in doubt. */
bool ctp_cgroup_holds_whole(int cgfd, const char *path, size_t len);

/* The longest v2 path (with its NUL) a process's threads take from the
 * process; a process in a cgroup with a longer path has each thread read
 * its own cgroup file. */
#define CTP_CGROUP_PATH_MAX 1024

/* The cgroup2 mount point from <proc>/self/mountinfo (malloc'd), or NULL
 * when there is none or it cannot be read. */
char *ctp_cgroup2_mount(int proc_fd);

/* The v2 path: the "0::" line of /proc/<pid>/task/<tid>/cgroup. 0 or
 * -ENOENT. */
int ctp_cgroup_v2_path(const char *buf, size_t len, const char **path,
		       size_t *plen);

/*
 * Every process's v2 cgroup from the cgroups' own listings: the tree under
 * the cgroup2 mount walked once per capture, each cgroup's cgroup.procs
 * read (a threaded cgroup's processes are listed by its threaded domain;
 * a process is listed where its leader is), and each threaded cgroup's
 * cgroup.threads (the threads in it, which need not be where their
 * process is listed). Read-only during the walk.
 */
struct ctp_cg_path {
	uint32_t off, len; /* in arena */
};

struct ctp_cg_procs {
	/* tgid -> index into path, or CTP_ID_AMBIGUOUS (listed in two
	 * cgroups: moved while listed). */
	struct ctp_id_pair *ent;
	size_t n, cap;
	/* tid -> index into path, the same, for threaded cgroups only. */
	struct ctp_id_pair *tent;
	size_t tn, tcap;
	struct ctp_cg_path *path;
	size_t n_path, path_cap;
	char *arena;
	size_t arena_len, arena_cap;
	struct ctp_id_list ids;
	bool ok; /* built this capture */
};

/* Build the listing for this capture, under the cgroup2 mount cgroup_fd,
 * when proc_fd is this process's live procfs (the listings print ids of
 * our pid namespace) and the listing names this process's own cgroup as
 * its cgroup file does (a mount of another cgroup namespace's tree would
 * not). 0, or a negative errno (-EBADF, -EXDEV, a read's): then every
 * lookup misses. Memory is kept for the next build. */
int ctp_cg_procs_build(struct ctp_cg_procs *p, int cgroup_fd, int proc_fd);
/* The v2 path of process tgid (len bytes, NUL-terminated), or NULL when
 * it was not listed once. */
const char *ctp_cg_procs_find(const struct ctp_cg_procs *p, uint32_t tgid,
			      size_t *len);
/* The v2 path of thread tid when a threaded cgroup listed it once (len
 * bytes, NUL-terminated), or NULL. */
const char *ctp_cg_threads_find(const struct ctp_cg_procs *p, uint32_t tid,
				size_t *len);
void ctp_cg_procs_free(struct ctp_cg_procs *p);

#endif
