/* SPDX-License-Identifier: MIT */
/*
 * The walk: every tgid under the proc root, every tid under its task/
 * (or every task of a walk source's list, struct ctp_source_desc.walk),
 * each needed file read once relative to the task's directory fd, and the
 * bytes handed to every plugin that declared the file. Workers claim tgids
 * in ascending order; spans let the writer emit rows in (tgid, tid) order
 * whatever worker recorded them.
 */
#include <dirent.h>
#include <errno.h>
#include <sched.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/vfs.h>
#include <unistd.h>

#include <linux/magic.h>

#include "api.h"
#include "cgroups.h"
#include "clock.h"
#include "ctprof/plugin-util.h"
#include "engine.h"
#include "loader.h"
#include "log.h"
#include "splitq.h"
#include "supervise.h"
#include "taskid.h"

#define FILE_BUF_INIT 4096
#define SHORT_END     2048
#define DENTS_BUF     32768

/*
 * What the walk keeps (struct ctp_engine.walk): made by ctp_engine_init,
 * reset by ctp_engine_rearm, freed by ctp_engine_done.
 */
struct ctp_walk {
	/* The index of `stat` in each table when some plugin reads it up
	 * front (a process's: or declares it lazy while no process source
	 * is live, ctp_engine_capture), else -1: the walk takes task names
	 * from it (taskid.h). */
	int stat_thread, stat_process;
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

	/* The processes the proc root's last listing found beside a walk
	 * source's list (ascending; kept across captures): while they still
	 * have as many tasks as the source says its list lacks
	 * (CTP_SOURCE_WALK_SAYS_MISSING), the proc root is not listed again
	 * (source_list). */
	uint32_t *hidden;
	size_t n_hidden;

	/* Processes by v2 cgroup, listed at the start of each capture on the
	 * live procfs; how many processes it placed. */
	struct ctp_cg_procs procs;
	_Atomic uint64_t procs_hits;
	_Atomic uint64_t threads_hits; /* threads placed by cgroup.threads */

	/* Distinct cgroups and the plugins' cgroup_ref rows (cgroups.h). */
	struct ctp_cgroups cgroups;

	/* The walk's worker threads, with several workers: made by the
	 * first capture, parked between captures, each handed its `struct
	 * worker` for a walk (one round), ended by ctp_engine_unload before
	 * any plugin's fini. A thread takes its supervision slot, signal
	 * mask and (private_fds) descriptor table once, when it starts, and
	 * inherits the capturing thread's state of then: a host confines
	 * itself (capabilities, seccomp, credentials) before its first
	 * capture, and what it has open then stays open in a private table
	 * until the engine ends. The engine is used in the process that made
	 * it (a child forked after the first capture has none of these
	 * threads). */
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
	/* Walking from a walk source (NULL: from the proc root): its list
	 * of this capture, sorted by tgid then tid; the tasks of tgids[i]
	 * are list[first[i] .. first[i + 1]); list_ns is CLOCK_BOOTTIME as
	 * the source's pass was taken (every process's read time). */
	const struct ctp_walk_task *list;
	size_t *first;
	uint64_t list_ns;
	/* Captures that fell back to the proc root, and the last reason
	 * logged (a reason is logged once, when it changes). */
	uint64_t fallbacks;
	char fallback_logged[160];
	_Atomic size_t next_tgid;
	_Atomic unsigned workers_done;
	pthread_mutex_t done_lock;
	pthread_cond_t done_cond;
};

struct callstat {
	uint64_t time_ns, calls, errors, vanished, resource;
	/* The plugin's summary counters added during the walk on this
	 * worker (ctp_api.summary_add, and thread_skip_bound's counter):
	 * plain adds, merged after it. */
	uint64_t summary[CTP_MAX_SUMMARY];
};

/* The declared files of one scope for the task at hand: one growable
 * buffer per file, grown rarely, never freed during the walk. */
struct fileset {
	char *buf[CTP_MAX_FILES];
	size_t cap[CTP_MAX_FILES];
	struct ctp_file file[CTP_MAX_FILES];
	/* Read for the current task (lazy files only when fetched). */
	bool loaded[CTP_MAX_FILES];
};

/*
 * A run: up to RUN_MAX threads of one process, each plugin's thread
 * callback called for all of them before the next plugin's (plugin-major),
 * so that one clock reading ends a plugin's calls for the whole run and
 * starts the next plugin's. Each thread of the run has its slot: what the
 * plugin API (files, sources) reaches through ctp_task.core while its
 * callbacks are called. The process has one too, for its own callbacks.
 */
#define RUN_MAX 16

/* A slot's per-plugin flags (slot.pflags[plugin]). */
enum {
	SLOT_SKIP = 1,	/* every binding served, and the plugin asked
			 * not to be called then (thread_skip_bound) */
	SLOT_BOUND = 2, /* every binding served */
};

struct worker;

/* What ctp_api.file_get and source_get need to find the bytes behind a
 * task: its slot, and whose callback asks. */
struct task_priv {
	struct worker *w;
	struct slot *s;
	bool thread;
	uint32_t plugin;
};

struct slot {
	struct ctp_task task;
	struct ctp_record rec;
	struct task_priv tp;
	/* The task's declared files: its own (a thread's) or the worker's
	 * pset (the process's). */
	struct fileset *fs;
	struct fileset own;
	/* Where the task's files are: its own directory (tdir, tpre_len 0),
	 * or the process's with "task/<tid>/" before every name (tpre), when
	 * no plugin needs the thread's directory. */
	int tdir;
	char tpre[24];
	size_t tpre_len;
	char rel[32];	 /* "task/<tid>" */
	bool lazy_gone;	 /* a lazy read found the task gone */
	bool maybe_gone; /* a read or a callback said it may be gone */
	char comm[64];
	char *cgbuf; /* its cgroup file */
	size_t cgcap;
	uint8_t *pflags; /* SLOT_* by plugin (threads only) */
	/* The task's sources (ctp_api.source_get; a thread's or a
	 * process's, by the source's scope): filled on the first ask, shared
	 * by later askers. */
	struct {
		_Alignas(8) char buf[CTP_SOURCE_MAX_BYTES];
		size_t len;
		int err;
		bool loaded;
	} src[CTP_MAX_SOURCES];
};

struct worker {
	struct ctp_engine *eng;
	uint16_t id;
	struct ctp_table *threads, *procs;
	/* The worker's own tables, handed to cap->threads/procs after the
	 * walk: kept here, apart from the other workers', so appending rows
	 * never writes a cache line another worker uses. */
	struct ctp_table threads_tab, procs_tab;

	/* The current process's declared files, its slot, and the current
	 * run's threads' slots (RUN_MAX, allocated with the worker). */
	struct fileset pset;
	struct slot pslot;
	struct slot *slots;
	uint32_t *bound; /* the plugins a run's bindings serve (bind_run) */
	struct ctp_file view[CTP_MAX_FILES];
	/* The time the current plugin's calls spent in other plugins'
	 * fills, charged to the providers. */
	uint64_t lent_ns;

	uint32_t *tids;
	size_t tid_cap;
	_Alignas(8) char dents[DENTS_BUF]; /* struct dirent64 records */
	char pcomm[64];
	char last_comm[64];
	int64_t last_comm_id;
	char last_cg[512];
	size_t last_cglen;
	int64_t last_cgrow;
	/* The current process's v2 cgroup, when the kernel guarantees every
	 * thread of it is in that same cgroup (then no per-thread read). */
	bool proc_cg_whole;
	int64_t proc_cgrow;
	size_t proc_cglen;
	char proc_cg[CTP_CGROUP_PATH_MAX];

	/* Tally, merged after the walk. */
	uint64_t tids_walked, tids_recorded, tids_vanished;
	uint64_t tgids_walked, tgids_vanished;
	uint64_t tids_unread_resource, tgids_unread_resource;
	uint64_t fail[CTP_MAX_FILES];
	uint64_t missing[CTP_MAX_FILES];
	uint64_t denied[CTP_MAX_FILES];
	uint64_t resource[CTP_MAX_FILES];
	int resource_err; /* the worker's first resource errno, 0 none */
	int result;
	/* Per-plugin call accounting, merged after the walk so workers do
	 * not bounce shared counters between CPUs on every call. */
	struct callstat *stats;
	/* Threads recorded so far, read by the progress line. */
	_Atomic uint64_t progress;
	/* Runs of thread rows this worker walked for split processes. */
	struct ctp_span *xspans;
	size_t n_xspans, xspans_cap;
};

/*
 * The walk's per-task open, read and close. Once the process has worker
 * threads, glibc's openat(), read() and close() are cancellation points
 * and wrap each system call in cancellation bookkeeping (about 1 % of a
 * two-worker walk's CPU in the profile); nothing in the walk is ever
 * cancelled, so these go through syscall(2): the same system calls with
 * the same results and errno.
 */
static inline int sys_openat(int dirfd, const char *name, int flags)
{
	return (int)syscall(SYS_openat, dirfd, name, flags, 0);
}

static inline ssize_t sys_read(int fd, void *buf, size_t n)
{
	return syscall(SYS_read, fd, buf, n);
}

static inline int sys_close(int fd)
{
	return (int)syscall(SYS_close, fd);
}

static bool vanished_err(int err)
{
	return err == -ENOENT || err == -ESRCH;
}

/* A task that could not be read (its directory, name or cgroup): for lack
 * of resources (EMFILE, ENFILE, ENOMEM, ENOBUFS), unread and counted
 * apart, the first such errno kept; otherwise it vanished under us. */
static void task_unread(struct worker *w, bool thread, int err)
{
	if (ctp_err_resource(err)) {
		if (thread)
			w->tids_unread_resource++;
		else
			w->tgids_unread_resource++;
		if (!w->resource_err)
			w->resource_err = err;
	} else if (thread) {
		w->tids_vanished++;
	} else {
		w->tgids_vanished++;
	}
}

/*
 * Open a file to read under a root. O_NONBLOCK: a FIFO or device planted
 * in a fake root must never block the walk (procfs ignores the flag). With
 * `check` (any root but a real procfs, where every file is the kernel's),
 * anything but a regular file is refused: -EISDIR for a directory,
 * -EINVAL for a FIFO, device or socket.
 */
static int open_file_at(int dirfd, const char *name, bool check)
{
	int fd = sys_openat(dirfd, name,
			    O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0)
		return -errno;
	struct stat st = {0};
	if (check && (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode))) {
		sys_close(fd);
		return S_ISDIR(st.st_mode) ? -EISDIR : -EINVAL;
	}
	return fd;
}

/* Read a whole file relative to dirfd into a growable buffer, at most
 * CTP_FILE_READ_MAX bytes (-EFBIG beyond). many: a file of many records
 * (a declared "+name"), never taken whole from a short first read. */
static int read_at(int dirfd, const char *name, bool check, bool many,
		   char **buf, size_t *cap, size_t *len)
{
	int fd = open_file_at(dirfd, name, check);
	if (fd < 0)
		return fd;
	size_t off = 0;
	int ret = 0;
	for (;;) {
		if (off >= CTP_FILE_READ_MAX) {
			ret = -EFBIG;
			break;
		}
		if (!*buf || off + 1 >= *cap) {
			size_t ncap = *cap ? *cap * 2 : FILE_BUF_INIT;
			char *nb = realloc(*buf, ncap);
			if (!nb) {
				ret = -ENOMEM;
				break;
			}
			*buf = nb;
			*cap = ncap;
		}
		size_t room = *cap - off - 1;
		if (room > CTP_FILE_READ_MAX - off)
			room = CTP_FILE_READ_MAX - off +
			       1; /* one more: too long */
		ssize_t n = sys_read(fd, *buf + off, room);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			ret = -errno;
			break;
		}
		if (n == 0)
			break;
		off += (size_t)n;
		/* A small first read that left room is the whole file, and
		 * the read that would return 0 is saved. A seq_file hands
		 * out at most one buffer (a page) per read, records that fit
		 * in it, so a longer file's first read is nearly a page; the
		 * single-record ones (stat, io, status, schedstat, statm,
		 * smaps_rollup, cgroup) return everything at once. A file
		 * could be cut only when a record of more than SHORT_END
		 * bytes follows a small first part (a mapping of `maps`
		 * whose path is that long): a plugin declares such a file
		 * with '+' (ctp_plugin.process_files) and it is read to its
		 * end. A regular file (a copied tree) returns less only at
		 * its end; a FIFO or device is refused before. */
		if (off == (size_t)n && (size_t)n < room && off < SHORT_END &&
		    !many)
			break;
	}
	sys_close(fd);
	if (ret < 0)
		return ret;
	(*buf)[off] = '\0';
	*len = off;
	return 0;
}

/*
 * Read a short one-line file (comm, cgroup.type) into a fixed buffer. Only
 * the one newline the kernel appends is dropped: a comm may itself hold a
 * newline (prctl(PR_SET_NAME) takes any bytes but NUL), kept byte for byte.
 */
static int read_line_at(int dirfd, const char *name, bool check, char *out,
			size_t outlen)
{
	int fd = open_file_at(dirfd, name, check);
	if (fd < 0)
		return fd;
	ssize_t n;
	do
		n = sys_read(fd, out, outlen - 1);
	while (n < 0 && errno == EINTR);
	int err = n < 0 ? -errno : 0;
	sys_close(fd);
	if (err)
		return err;
	if (n > 0 && out[n - 1] == '\n')
		n--;
	out[n] = '\0';
	return 0;
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	return (x > y) - (x < y);
}

/* Room for any one more directory record (a 255-byte name). */
#define DIRENT_MAX 288

/*
 * List numeric entries of a directory, sorted. Reuses *ids. With procfs
 * (a directory of the live proc root), a getdents64 that left room for
 * another record was the last: procfs fills the buffer until the next
 * entry does not fit, so the call that would return 0 is skipped.
 */
static int list_numeric(int dirfd, bool procfs, char *dents, size_t dentslen,
			uint32_t **ids, size_t *cap, size_t *n)
{
	*n = 0;
	for (bool last = false; !last;) {
		long nread = syscall(SYS_getdents64, dirfd, dents, dentslen);
		if (nread < 0)
			return -errno;
		if (nread == 0)
			break;
		last = procfs && (size_t)nread + DIRENT_MAX <= dentslen;
		for (long off = 0; off < nread;) {
			struct dirent64 *d = (struct dirent64 *)(dents + off);
			off += d->d_reclen;
			uint32_t id;
			if (ctp_parse_pid(d->d_name, &id) < 0)
				continue;
			if (*n == *cap) {
				size_t nc = *cap ? *cap * 2 : 256;
				uint32_t *ni = realloc(*ids, nc * sizeof(*ni));
				if (!ni)
					return -ENOMEM;
				*ids = ni;
				*cap = nc;
			}
			(*ids)[(*n)++] = id;
		}
	}
	if (*n > 1)
		qsort(*ids, *n, sizeof(**ids), cmp_u32);
	return 0;
}

/* name under a task: at its own directory (plen 0), or pre ("task/<tid>/",
 * plen bytes) + name from its process's directory, composed in buf. */
static const char *under(const char *pre, size_t plen, const char *name,
			 char *buf, size_t buflen)
{
	size_t n = strlen(name);
	if (!plen || plen + n + 1 > buflen)
		return name;
	memcpy(buf, pre, plen);
	memcpy(buf + plen, name, n + 1);
	return buf;
}

#define UNDER_MAX (24 + 65 + 1)

static int api_file_get(const struct ctp_task *task, uint32_t i,
			const struct ctp_file **out)
{
	const struct task_priv *tp = task ? task->core : NULL;
	if (!tp || !out || i >= task->n_files)
		return -EINVAL;
	struct worker *w = tp->w;
	struct slot *s = tp->s;
	struct ctp_engine *eng = w->eng;
	const struct ctp_plugin_rt *rt = eng->cap->plugins[tp->plugin].rt;
	uint8_t f = tp->thread ? rt->thread_files[i] : rt->process_files[i];
	struct ctp_file *src = &s->fs->file[f];
	if (!s->fs->loaded[f]) {
		const struct ctp_filedef *def =
			tp->thread ? &eng->thread_files[f]
				   : &eng->process_files[f];
		char **buf = &s->fs->buf[f];
		size_t *cap = &s->fs->cap[f];
		size_t len = 0;
		char path[UNDER_MAX];
		int err =
			tp->thread
				? read_at(s->tdir,
					  under(s->tpre, s->tpre_len, def->name,
						path, sizeof(path)),
					  eng->walk->check_files, def->many,
					  buf, cap, &len)
				: read_at(task->dirfd, def->name,
					  eng->walk->check_files, def->many,
					  buf, cap, &len);
		src->err = err;
		src->data = err ? NULL : *buf;
		src->len = err ? 0 : len;
		s->fs->loaded[f] = true;
		s->lazy_gone |= vanished_err(err);
	}
	w->view[i] = *src;
	*out = &w->view[i];
	return src->err;
}

static int api_source_add(struct ctp_ctx *ctx,
			  const struct ctp_source_desc *desc)
{
	if (!ctx || !desc || desc->abi != CTP_ABI_MAJOR ||
	    desc->size <
		    offsetof(struct ctp_source_desc, fill) + sizeof(desc->fill))
		return -EINVAL;
	const char *name = desc->name;
	if (!name || !desc->fill)
		return -EINVAL;
	uint32_t scope =
		CTP_HAS(desc, struct ctp_source_desc, scope) ? desc->scope : 0;
	if (scope != 0 && scope != CTP_SCOPE_THREAD &&
	    scope != CTP_SCOPE_PROCESS)
		return -EINVAL;
	bool process = scope == CTP_SCOPE_PROCESS;
	int (*walk)(void *, const struct ctp_walk_task **, size_t *) =
		CTP_HAS(desc, struct ctp_source_desc, walk) ? desc->walk : NULL;
	/* A process source lists no tasks. */
	if (process && walk)
		return -EINVAL;
	uint32_t flags =
		CTP_HAS(desc, struct ctp_source_desc, flags) ? desc->flags : 0;
	const uint32_t walk_flags =
		CTP_SOURCE_WALK_SAYS_COMPLETE | CTP_SOURCE_WALK_SAYS_MISSING;
	if ((flags & ~walk_flags) || ((flags & walk_flags) && !walk))
		return -EINVAL;
	struct ctp_engine *eng = ctx->eng;
	size_t n = strlen(name);
	if (n > CTP_SOURCE_NAME_MAX || !ctp_name_ok(name))
		return -EINVAL;
	/* Only from init, on the main thread: the walk reads the table
	 * without a lock. */
	if (eng->cap->plugins[ctx->plugin].rt->initialized)
		return -EBUSY;
	for (uint32_t i = 0; i < eng->n_sources; i++)
		if (strcmp(eng->sources[i].name, name) == 0)
			return -EEXIST;
	if (eng->n_sources == CTP_MAX_SOURCES)
		return -ENOSPC;
	struct ctp_source *src = &eng->sources[eng->n_sources++];
	memcpy(src->name, name, n + 1);
	src->plugin = ctx->plugin;
	src->scope = process ? CTP_SCOPE_PROCESS : CTP_SCOPE_THREAD;
	src->fill = desc->fill;
	src->walk = walk;
	src->says_complete = (flags & CTP_SOURCE_WALK_SAYS_COMPLETE) != 0;
	src->says_missing = (flags & CTP_SOURCE_WALK_SAYS_MISSING) != 0;
	src->vals = (struct ctp_valsrc){0};
	if (CTP_HAS(desc, struct ctp_source_desc, valid_words) &&
	    desc->n_values) {
		/* A layout that cannot fit the fill's buffer is refused. */
		size_t need =
			8 + 8 * ((size_t)desc->valid_words + desc->n_values);
		if (desc->n_values > CTP_BIND_MAX_VALUE ||
		    desc->valid_words < (desc->n_values + 63) / 64 ||
		    need > CTP_SOURCE_MAX_BYTES) {
			eng->n_sources--;
			return -EINVAL;
		}
		src->vals.n_values = desc->n_values;
		src->vals.valid_words = desc->valid_words;
	}
	return 0;
}

static int api_field_bind(struct ctp_ctx *ctx, int field, const char *source,
			  uint32_t value)
{
	if (!ctx)
		return -EINVAL;
	struct ctp_capture *cap = ctx->eng->cap;
	struct ctp_plugin_rt *rt = cap->plugins[ctx->plugin].rt;
	if (rt->initialized)
		return -EBUSY;
	if (field < 0 || (uint32_t)field >= ctp_registry_count(&cap->reg))
		return -EINVAL;
	const struct ctp_field *f =
		ctp_registry_get(&cap->reg, (uint32_t)field);
	if (ctp_field_settable(&cap->reg, field, CTP_SCOPE_THREAD, f->type,
			       ctx->plugin) < 0)
		return -EINVAL;
	return ctp_binds_add(&rt->binds, f->col, f->type, source, value);
}

static int api_thread_skip_bound(struct ctp_ctx *ctx, int on, int counter)
{
	if (!ctx)
		return -EINVAL;
	struct ctp_plugin_info *info = &ctx->eng->cap->plugins[ctx->plugin];
	struct ctp_plugin_rt *rt = info->rt;
	if (rt->initialized && !rt->in_host_cb)
		return -EBUSY;
	if (on && counter != -1 &&
	    (counter < 0 || (uint32_t)counter >= info->n_summary))
		return -EINVAL;
	rt->binds.skip = on != 0;
	rt->binds.skip_counter = on ? counter : -1;
	return 0;
}

static int api_source_prefill(struct ctp_ctx *ctx, const char *source, int on)
{
	if (!ctx || !source)
		return -EINVAL;
	struct ctp_plugin_rt *rt = ctx->eng->cap->plugins[ctx->plugin].rt;
	size_t len = strlen(source);
	uint32_t i = 0;
	if (rt->initialized && !rt->in_host_cb)
		return -EBUSY;
	if (len > CTP_SOURCE_NAME_MAX || !ctp_name_ok(source))
		return -EINVAL;
	while (i < rt->n_prefill && strcmp(rt->prefill[i], source) != 0)
		i++;
	if (!on) {
		/* The last name takes the place of the one dropped. */
		if (i < rt->n_prefill) {
			rt->n_prefill--;
			memcpy(rt->prefill[i], rt->prefill[rt->n_prefill],
			       sizeof(rt->prefill[i]));
		}
		return 0;
	}
	if (i < rt->n_prefill)
		return 0;
	if (rt->n_prefill == CTP_MAX_SOURCES)
		return -ENOSPC;
	memcpy(rt->prefill[rt->n_prefill++], source, len + 1);
	return 0;
}

/* The worker walking on this thread, NULL outside a walk. */
static _Thread_local struct worker *walking;

/*
 * A summary counter added to: during a walk, on the walking worker's own
 * copy (merged after the walk, as the call counts are), so that a plugin
 * counting a few things for every thread costs a plain add each, not a
 * locked one on a line every worker writes; elsewhere (the host, cgroup
 * and finish callbacks, a plugin's own threads) on the plugin's counter.
 */
static void api_summary_add(struct ctp_ctx *ctx, int counter, uint64_t delta)
{
	struct ctp_plugin_info *info = &ctx->eng->cap->plugins[ctx->plugin];
	struct worker *w = walking;
	if (counter < 0 || (uint32_t)counter >= info->n_summary)
		return;
	if (w && w->eng == ctx->eng) {
		w->stats[ctx->plugin].summary[counter] += delta;
		return;
	}
	atomic_fetch_add_explicit(&info->summary[counter], delta,
				  memory_order_relaxed);
}

/* Which source each plugin's bindings read in this capture: none while
 * every source is hidden (eng->sources_off). */
static void binds_resolve(struct ctp_engine *eng)
{
	const char *names[CTP_MAX_SOURCES];
	struct ctp_valsrc vs[CTP_MAX_SOURCES];
	struct ctp_capture *cap = eng->cap;
	uint32_t n = eng->sources_off ? 0 : eng->n_sources;

	/* A process source serves no binding (bindings are a thread's):
	 * one naming it resolves to none. */
	for (uint32_t i = 0; i < n; i++) {
		names[i] = eng->sources[i].name;
		vs[i] = eng->sources[i].scope == CTP_SCOPE_THREAD
				? eng->sources[i].vals
				: (struct ctp_valsrc){0};
	}
	eng->any_binds = false;
	for (uint32_t p = 0; p < cap->n_plugins; p++) {
		struct ctp_plugin_rt *rt = cap->plugins[p].rt;
		if (!rt || cap->plugins[p].status != CTP_PST_LOADED)
			continue;
		ctp_binds_resolve(&rt->binds, names, vs, n);
		eng->any_binds |= rt->binds.src >= 0;
		/* Prefilled: other plugins' thread sources only (a plugin
		 * fills its own when it asks, under its own call). */
		rt->prefill_srcs = 0;
		for (uint32_t k = 0; k < rt->n_prefill; k++)
			for (uint32_t i = 0; i < n; i++)
				if (eng->sources[i].scope == CTP_SCOPE_THREAD &&
				    eng->sources[i].plugin != p &&
				    strcmp(names[i], rt->prefill[k]) == 0)
					rt->prefill_srcs |= 1u << i;
	}
}

static int api_source_register(struct ctp_ctx *ctx, const char *name,
			       ctp_source_fill_fn fill)
{
	struct ctp_source_desc d = {
		.abi = CTP_ABI_MAJOR,
		.size = offsetof(struct ctp_source_desc, walk),
		.name = name,
		.fill = fill,
	};
	return api_source_add(ctx, &d);
}

static bool cb_usable(const struct ctp_plugin_info *info, int cb);
static void lock_if(struct ctp_plugin_rt *rt);
static void unlock_if(struct ctp_plugin_rt *rt);

/*
 * Fill source i for the task of slot s (a thread source for a thread's, a
 * process source for the process's), unless it was: the provider's fill
 * runs at most once per task, under the provider's lock when it is not
 * MT-safe (never its own: a plugin asking for its own source already holds
 * it), and only while the provider's callback of that scope is usable.
 * The supervisor's slot names the provider while it runs. asker: the
 * plugin that asked, or -1 for the core (bound values); the slot then goes
 * back to no plugin. The caller times it (the provider's time).
 */
static int source_fill(struct worker *w, struct slot *s, uint32_t i, int asker)
{
	struct ctp_engine *eng = w->eng;
	const struct ctp_source *src = &eng->sources[i];
	struct ctp_plugin_info *info = &eng->cap->plugins[src->plugin];
	if (s->src[i].loaded)
		return s->src[i].err;
	struct ctp_plugin_rt *rt = info->rt;
	int err = -ENODATA;
	bool own = asker >= 0 && src->plugin == (uint32_t)asker;
	bool thread = src->scope == CTP_SCOPE_THREAD;
	int kind = thread ? CTP_SV_THREAD : CTP_SV_PROCESS;
	s->src[i].len = 0;
	if (cb_usable(info, thread ? CB_THREAD : CB_PROCESS)) {
		if (!own)
			lock_if(rt);
		ctp_sv_enter(src->plugin, kind, s->task.tid);
		err = src->fill(rt->state, &s->task, s->src[i].buf,
				sizeof(s->src[i].buf), &s->src[i].len);
		if (asker >= 0)
			ctp_sv_enter((uint32_t)asker, kind, s->task.tid);
		else
			ctp_sv_leave();
		if (!own)
			unlock_if(rt);
		if (err > 0 || s->src[i].len > sizeof(s->src[i].buf))
			err = -EPROTO;
	}
	s->src[i].err = err < 0 ? err : 0;
	s->src[i].loaded = true;
	return s->src[i].err;
}

/* Source src of slot s filled ahead of the calls, asked by no plugin
 * (bind_run, prefill_run): its provider's files only. */
static inline void fill_ahead(struct worker *w, struct slot *s, uint32_t src)
{
	s->task.files = NULL;
	s->task.n_files = 0;
	s->tp.plugin = w->eng->sources[src].plugin;
	source_fill(w, s, src, -1);
}

static int api_source_get(const struct ctp_task *task, const char *name,
			  const void **data, size_t *len)
{
	const struct task_priv *tp = task ? task->core : NULL;
	if (!tp || !name || !data || !len)
		return -EINVAL;
	struct worker *w = tp->w;
	struct slot *s = tp->s;
	struct ctp_engine *eng = w->eng;
	uint32_t scope = tp->thread ? CTP_SCOPE_THREAD : CTP_SCOPE_PROCESS;
	uint32_t i = 0;
	if (eng->sources_off)
		return -ENOENT;
	while (i < eng->n_sources && strcmp(eng->sources[i].name, name) != 0)
		i++;
	/* A source of the other scope is, to this caller, no source. */
	if (i == eng->n_sources || eng->sources[i].scope != scope)
		return -ENOENT;
	int err;
	if (!s->src[i].loaded && eng->sources[i].plugin != tp->plugin) {
		/* Another plugin's fill, inside the asker's call: its time
		 * is the provider's, taken out of the asker's. */
		uint64_t t0 = ctp_now_ns();
		err = source_fill(w, s, i, (int)tp->plugin);
		uint64_t dt = ctp_now_ns() - t0;
		w->stats[eng->sources[i].plugin].time_ns += dt;
		w->lent_ns += dt;
	} else {
		err = source_fill(w, s, i, (int)tp->plugin);
	}
	if (err)
		return err;
	*data = s->src[i].buf;
	*len = s->src[i].len;
	return 0;
}

static bool after_call(struct ctp_plugin_info *info, struct callstat *st,
		       int cb, int ret, uint64_t dt);

/* after_call for a worker's thread or process call: the usual case (a
 * success, its counters clean) inline, without a call a plugin a task. */
static inline bool after_task_call(struct ctp_plugin_info *info,
				   struct callstat *st, int cb, int ret)
{
	if (ret >= 0 && !atomic_load_explicit(&info->rt->consecutive_errors[cb],
					      memory_order_relaxed)) {
		st->calls++;
		return false;
	}
	return after_call(info, st, cb, ret, 0);
}

/* Account one plugin call into `st` (a worker's own counters) or, from the
 * main thread, straight into the plugin's; returns true when the call
 * reported a vanished task. */
static bool after_call(struct ctp_plugin_info *info, struct callstat *st,
		       int cb, int ret, uint64_t dt)
{
	struct ctp_plugin_rt *rt = info->rt;
	if (st) {
		st->time_ns += dt;
		st->calls++;
	} else {
		atomic_fetch_add_explicit(&info->time_ns, dt,
					  memory_order_relaxed);
		atomic_fetch_add_explicit(&info->calls, 1,
					  memory_order_relaxed);
	}
	if (ret >= 0) {
		/* Read first: an unconditional store would dirty a shared
		 * cache line on every call. */
		if (atomic_load_explicit(&rt->consecutive_errors[cb],
					 memory_order_relaxed))
			atomic_store_explicit(&rt->consecutive_errors[cb], 0,
					      memory_order_relaxed);
		return false;
	}
	if (ret == -ENOMEM)
		ctp_sv_note_oom(rt->ctx.plugin);
	if (ctp_err_resource(ret)) {
		/* The collector's shortage, not the plugin's failure: no
		 * error, and no step toward disabling the callback (which
		 * would log every capture while the shortage lasts). */
		int none = 0;
		if (st)
			st->resource++;
		else
			atomic_fetch_add_explicit(&info->resource, 1,
						  memory_order_relaxed);
		atomic_compare_exchange_strong(&info->resource_err, &none, ret);
		return false;
	}
	if (vanished_err(ret)) {
		if (st)
			st->vanished++;
		else
			atomic_fetch_add_explicit(&info->vanished, 1,
						  memory_order_relaxed);
		return true;
	}
	if (st)
		st->errors++;
	else
		atomic_fetch_add_explicit(&info->errors, 1,
					  memory_order_relaxed);
	uint32_t n = atomic_fetch_add(&rt->consecutive_errors[cb], 1) + 1;
	if (n == CTP_CB_MAX_CONSECUTIVE_ERRORS) {
		static const char *const names[] = {"host", "process", "thread",
						    "cgroup", "finish"};
		atomic_store(&rt->cb_disabled[cb], true);
		ctp_log(CTP_LOG_WARNING,
			"plugin %s: %s callback failed %d times in a row "
			"(last: %s); disabled for the rest of this snapshot",
			info->name, names[cb], n, strerror(-ret));
	}
	return false;
}

static bool cb_usable(const struct ctp_plugin_info *info, int cb)
{
	return info->status == CTP_PST_LOADED &&
	       !atomic_load_explicit(&info->rt->cb_disabled[cb],
				     memory_order_relaxed);
}

static void lock_if(struct ctp_plugin_rt *rt)
{
	if (!rt->mt_safe)
		pthread_mutex_lock(&rt->call_lock);
}

static void unlock_if(struct ctp_plugin_rt *rt)
{
	if (!rt->mt_safe)
		pthread_mutex_unlock(&rt->call_lock);
}

/*
 * The bound values of every plugin for the threads of the run (bind.h):
 * each bound source filled for every thread of the run, one source after
 * the other, so that one clock reading ends one source's fills and starts
 * the next's (all of them the provider's time); then each thread's cells
 * set. Marks (SLOT_SKIP) a plugin whose bindings were all served for a
 * thread and that asked not to be called then (ctp_api.thread_skip_bound);
 * returns whether any was.
 */
static bool bind_run(struct worker *w, struct slot *slots, uint32_t n)
{
	struct ctp_engine *eng = w->eng;
	struct ctp_capture *cap = eng->cap;
	bool any = false;
	uint32_t filled = 0; /* sources filled, a bit each */
	uint32_t nb = 0;     /* the plugins the run's bindings serve */
	uint64_t t0 = 0;
	for (uint32_t i = 0; i < cap->n_plugins; i++) {
		if (!cb_usable(&cap->plugins[i], CB_THREAD))
			continue;
		const struct ctp_binds *b = &cap->plugins[i].rt->binds;
		if (b->src < 0)
			continue;
		/* Found once for all of the run's threads (w->bound). */
		w->bound[nb++] = i;
		if (filled & 1u << b->src)
			continue;
		uint32_t src = (uint32_t)b->src;
		if (!filled)
			t0 = ctp_now_ns();
		filled |= 1u << src;
		for (uint32_t k = 0; k < n; k++)
			fill_ahead(w, &slots[k], src);
		uint64_t t1 = ctp_now_ns();
		w->stats[eng->sources[src].plugin].time_ns += t1 - t0;
		t0 = t1;
	}
	for (uint32_t k = 0; k < n; k++) {
		struct slot *s = &slots[k];
		memset(s->pflags, 0, cap->n_plugins);
		for (uint32_t j = 0; j < nb; j++) {
			uint32_t i = w->bound[j];
			const struct ctp_binds *b = &cap->plugins[i].rt->binds;
			uint32_t src = (uint32_t)b->src;
			if (s->src[src].err < 0)
				continue;
			bool all = ctp_binds_apply(
				b, s->src[src].buf, s->src[src].len,
				eng->sources[src].vals.valid_words,
				s->rec.table, s->rec.row, s->rec.ident);
			if (!all)
				continue;
			s->pflags[i] = SLOT_BOUND;
			if (b->skip) {
				s->pflags[i] |= SLOT_SKIP;
				/* Checked against n_summary when set. */
				if (b->skip_counter >= 0)
					w->stats[i].summary[b->skip_counter]++;
				any = true;
			}
		}
	}
	return any;
}

/*
 * The sources plugin i asks for every thread (ctp_api.source_prefill),
 * filled for the threads of the run it is to be called on, one source
 * after the other, before its calls: the time from *t0 is the providers'
 * (one clock reading a source), and *t0 moves past it.
 */
static void prefill_run(struct worker *w, struct slot *slots, uint32_t n,
			uint32_t i, bool skipping, uint64_t *t0)
{
	struct ctp_engine *eng = w->eng;
	uint32_t srcs = eng->cap->plugins[i].rt->prefill_srcs;
	while (srcs) {
		uint32_t src = (uint32_t)__builtin_ctz(srcs);
		bool any = false;
		srcs &= srcs - 1;
		for (uint32_t k = 0; k < n; k++) {
			struct slot *s = &slots[k];
			if (s->src[src].loaded ||
			    (skipping && (s->pflags[i] & SLOT_SKIP)))
				continue;
			fill_ahead(w, s, src);
			any = true;
		}
		if (!any)
			continue;
		uint64_t t1 = ctp_now_ns();
		w->stats[eng->sources[src].plugin].time_ns += t1 - *t0;
		*t0 = t1;
	}
}

/*
 * Call every plugin's thread callback for the n threads of a run (slots),
 * or its process callback for the process (one slot): plugin-major, each
 * plugin for every task in the slots' order before the next plugin, so
 * every plugin sees the tasks in the walk's order. One clock reading ends
 * a plugin's calls of the run and starts the next's: a plugin's time is
 * the measured time of its calls (less other plugins' fills inside them,
 * lent_ns), the core's few steps between them (the task's file view, the
 * supervisor's slot) included, as they were with a reading per call.
 */
static void call_run(struct worker *w, bool thread, struct slot *slots,
		     uint32_t n)
{
	struct ctp_capture *cap = w->eng->cap;
	int cb = thread ? CB_THREAD : CB_PROCESS;
	bool binds = thread && w->eng->any_binds;
	bool skipping = binds && bind_run(w, slots, n);
	uint64_t t0 = ctp_now_ns();
	for (uint32_t i = 0; i < cap->n_plugins; i++) {
		struct ctp_plugin_info *info = &cap->plugins[i];
		if (!cb_usable(info, cb))
			continue;
		struct ctp_plugin_rt *rt = info->rt;
		int (*fn)(void *, const struct ctp_task *,
			  struct ctp_record *) =
			thread ? rt->desc->thread : rt->desc->process;
		if (!fn)
			continue;
		const uint8_t *map =
			thread ? rt->thread_files : rt->process_files;
		uint32_t nmap =
			thread ? rt->n_thread_files : rt->n_process_files;
		bool called = false;
		w->lent_ns = 0;
		if (thread && rt->prefill_srcs)
			prefill_run(w, slots, n, i, skipping, &t0);
		for (uint32_t k = 0; k < n; k++) {
			struct slot *s = &slots[k];
			/* A callback disabled by this run's errors stays
			 * uncalled for the rest of it. */
			if (!cb_usable(info, cb) ||
			    (skipping && (s->pflags[i] & SLOT_SKIP)))
				continue;
			for (uint32_t f = 0; f < nmap; f++)
				w->view[f] = s->fs->file[map[f]];
			s->task.files = w->view;
			s->task.n_files = nmap;
			s->task.bound = binds && (s->pflags[i] & SLOT_BOUND);
			s->tp.plugin = i;
			s->rec.plugin = i;
			lock_if(rt);
			ctp_sv_enter(i, thread ? CTP_SV_THREAD : CTP_SV_PROCESS,
				     s->task.tid);
			int ret = fn(rt->state, &s->task, &s->rec);
			ctp_sv_leave();
			unlock_if(rt);
			s->maybe_gone |=
				after_task_call(info, &w->stats[i], cb, ret);
			called = true;
		}
		if (!called)
			continue;
		uint64_t t1 = ctp_now_ns();
		w->stats[i].time_ns += t1 - t0 - w->lent_ns;
		t0 = t1;
	}
}

static int api_cgroup_ref(struct ctp_ctx *ctx, const char *key, size_t len)
{
	if (!ctx)
		return -EINVAL;
	return ctp_cgroups_ref(&ctx->eng->walk->cgroups, ctx->eng->cap,
			       ctx->plugin, key, len);
}

static bool task_exists(int pdir, const char *rel)
{
	return faccessat(pdir, rel, F_OK, 0) == 0;
}

/*
 * Read the up-front files of one scope (thread or process) of the task at
 * dirfd into fs; lazy files (every one with all_lazy) get -ENODATA until
 * fetched, but file `eager` (-1: none), which the core reads up front for
 * itself. Returns whether a read said the task may be gone (ENOENT, ESRCH).
 */
static bool read_files(const struct ctp_engine *eng, int dirfd, const char *pre,
		       size_t plen, const struct ctp_filedef *defs, uint32_t n,
		       bool all_lazy, int eager, struct fileset *fs)
{
	bool maybe_gone = false;
	char path[UNDER_MAX];
	for (uint32_t f = 0; f < n; f++) {
		size_t len = 0;
		fs->loaded[f] = (!defs[f].lazy && !all_lazy) || (int)f == eager;
		if (!fs->loaded[f]) {
			fs->file[f] = (struct ctp_file){.err = -ENODATA};
			continue;
		}
		int err = read_at(
			dirfd,
			under(pre, plen, defs[f].name, path, sizeof(path)),
			eng->walk->check_files, defs[f].many, &fs->buf[f],
			&fs->cap[f], &len);
		fs->file[f].err = err;
		fs->file[f].data = err ? NULL : fs->buf[f];
		fs->file[f].len = err ? 0 : len;
		maybe_gone |= vanished_err(err);
	}
	return maybe_gone;
}

/* Count the failed reads of a task that stayed: per file, and how many of
 * them were ENOENT (missing), EACCES/EPERM (denied) and resource errors. */
static void tally_files(struct worker *w, const struct ctp_filedef *defs,
			uint32_t n, const struct fileset *fs)
{
	for (uint32_t f = 0; f < n; f++) {
		int err = fs->file[f].err;
		if (!fs->loaded[f] || !err)
			continue;
		uint32_t slot = defs[f].tally;
		w->fail[slot]++;
		w->missing[slot] += err == -ENOENT;
		w->denied[slot] += err == -EACCES || err == -EPERM;
		if (ctp_err_resource(err)) {
			w->resource[slot]++;
			if (!w->resource_err)
				w->resource_err = err;
		}
	}
}

/* "task/<tid>" into rel (32 bytes), without stdio in the hot path. */
static void task_rel(char *rel, uint32_t tid)
{
	char dig[12];
	size_t nd = 0, rl = 5;
	do {
		dig[nd++] = (char)('0' + tid % 10);
		tid /= 10;
	} while (tid);
	memcpy(rel, "task/", 5);
	while (nd)
		rel[rl++] = dig[--nd];
	rel[rl] = '\0';
}

/*
 * The task's name, from the stat a plugin declared (file `stat`, -1 when
 * none is read up front) when it was read, else from `comm`. A failure
 * means the task is gone (or unreadable, which is counted the same).
 */
static int task_name(const struct ctp_engine *eng, int dirfd, const char *pre,
		     size_t plen, int stat, const struct fileset *fs, char *out,
		     size_t outlen)
{
	char path[UNDER_MAX];
	if (stat >= 0 && fs->file[stat].err == 0 &&
	    ctp_stat_comm(fs->file[stat].data, fs->file[stat].len, out,
			  outlen) == 0)
		return 0;
	if (stat >= 0 && vanished_err(fs->file[stat].err))
		return fs->file[stat].err;
	return read_line_at(dirfd, under(pre, plen, "comm", path, sizeof(path)),
			    eng->walk->check_files, out, outlen);
}

/*
 * The cgroup row of the thread at tdir, or -1 when unknown; *path is its
 * v2 path, NUL-terminated ("" when unknown); *err the read's error when
 * it failed for lack of resources (else 0). A process found whole
 * (do_process) gives its path to every thread, which then reads no file
 * of its own; the row is added by the first thread that gets this far,
 * so a process whose threads all vanish adds no cgroup. Otherwise the
 * thread's own cgroup file is read; a worker remembers the last path's
 * row.
 */
static int64_t thread_cgroup(struct worker *w, struct slot *s, uint32_t tid,
			     const char **path, int *err)
{
	struct ctp_engine *eng = w->eng;
	struct ctp_walk *wk = eng->walk;
	size_t cglen = 0, plen = 0;
	const char *p = "";
	int64_t row = -1;
	int r;

	*path = "";
	*err = 0;
	if (w->proc_cg_whole) {
		if (w->proc_cgrow < 0)
			w->proc_cgrow =
				ctp_cgroups_row(&wk->cgroups, eng->cap,
						w->proc_cg, w->proc_cglen);
		if (w->proc_cgrow >= 0)
			*path = w->proc_cg;
		return w->proc_cgrow;
	}
	/* A thread of a threaded cgroup, from that cgroup's listing; any
	 * other from its own file. */
	char cgname[UNDER_MAX];
	const char *listed = ctp_cg_threads_find(&wk->procs, tid, &plen);
	if (listed) {
		p = listed;
		atomic_fetch_add_explicit(&wk->threads_hits, 1,
					  memory_order_relaxed);
	} else if ((r = read_at(s->tdir,
				under(s->tpre, s->tpre_len, "cgroup", cgname,
				      sizeof(cgname)),
				wk->check_files, false, &s->cgbuf, &s->cgcap,
				&cglen)) < 0 ||
		   ctp_cgroup_v2_path(s->cgbuf, cglen, &p, &plen) < 0) {
		*err = ctp_err_resource(r) ? r : 0;
		return -1;
	}
	if (w->last_cgrow >= 0 && plen == w->last_cglen &&
	    memcmp(p, w->last_cg, plen) == 0) {
		row = w->last_cgrow;
	} else {
		row = ctp_cgroups_row(&wk->cgroups, eng->cap, p, plen);
		if (row >= 0 && plen < sizeof(w->last_cg)) {
			memcpy(w->last_cg, p, plen);
			w->last_cglen = plen;
			w->last_cgrow = row;
		}
	}
	if (row >= 0) {
		if (!listed)
			s->cgbuf[p - s->cgbuf + plen] = '\0';
		*path = p;
	}
	return row;
}

/* A thread row with its identity (tid, tgid, comm, cgroup row); the
 * worker remembers the last comm's blob. Returns the row or a negative
 * errno. */
static int64_t thread_row(struct worker *w, uint32_t tgid, uint32_t tid,
			  const char *comm, int64_t cgrow)
{
	struct ctp_table *t = w->threads;
	int64_t row = ctp_table_add_row(t);
	if (row < 0)
		return row;
	int64_t comm_id;
	if (w->last_comm_id >= 0 && strcmp(comm, w->last_comm) == 0) {
		comm_id = w->last_comm_id;
	} else {
		size_t n = strlen(comm);
		comm_id = ctp_blobpool_intern(w->eng->cap->blobs, comm, n);
		memcpy(w->last_comm, comm, n + 1);
		w->last_comm_id = comm_id;
	}
	ctp_table_set(t, (uint32_t)row, CTP_TCOL_TID, tid);
	ctp_table_set(t, (uint32_t)row, CTP_TCOL_TGID, tgid);
	if (comm_id >= 0)
		ctp_table_set(t, (uint32_t)row, CTP_TCOL_COMM,
			      (uint64_t)comm_id);
	if (cgrow >= 0)
		ctp_table_set(t, (uint32_t)row, CTP_TCOL_CGROUP,
			      (uint64_t)cgrow);
	return row;
}

/*
 * The name of a thread a walk source listed (`walked`): the list's, or,
 * when the source says it is not the whole name (CTP_WALK_COMM_FILE), the
 * thread's comm file. A failure means the thread is gone (or unreadable).
 */
static int listed_name(struct worker *w, struct slot *s,
		       const struct ctp_walk_task *walked)
{
	char path[UNDER_MAX];
	if (walked->flags & CTP_WALK_COMM_FILE)
		return read_line_at(
			s->tdir,
			under(s->tpre, s->tpre_len, "comm", path, sizeof(path)),
			w->eng->walk->check_files, s->comm, sizeof(s->comm));
	size_t n = strnlen(walked->comm, sizeof(walked->comm));
	memcpy(s->comm, walked->comm, n);
	s->comm[n] = '\0';
	return 0;
}

/*
 * Open the thread walk[0] of process tgid into slot s, up to its callbacks:
 * its files, name, cgroup and row. walk[1 .. n) are the tids this worker
 * walks after it (ctp_task.walk_tids). `walked` is its entry in the walk
 * source's list, NULL when the proc root was listed: then none of its
 * files is read before a plugin fetches it, and its name is the list's.
 * Returns false when the thread was not read (counted) or got no row
 * (w->result).
 */
static bool thread_open(struct worker *w, struct slot *s, int pdir,
			uint32_t tgid, const uint32_t *walk, size_t n,
			const struct ctp_walk_task *walked)
{
	struct ctp_engine *eng = w->eng;
	uint32_t tid = walk[0];
	task_rel(s->rel, tid);
	w->tids_walked++;

	/* Its own directory only when a plugin wants it: otherwise its
	 * files are read by path from the process's, without the open and
	 * close of a directory per thread. */
	s->tdir = pdir;
	s->tpre_len = 0;
	if (eng->walk->thread_dirs) {
		s->tdir = sys_openat(pdir, s->rel,
				     O_PATH | O_DIRECTORY | O_CLOEXEC);
		if (s->tdir < 0) {
			task_unread(w, true, -errno);
			return false;
		}
	} else {
		size_t rl = strlen(s->rel);
		memcpy(s->tpre, s->rel, rl);
		s->tpre[rl] = '/';
		s->tpre_len = rl + 1;
	}
	s->lazy_gone = false;
	for (uint32_t i = 0; i < eng->n_sources; i++)
		s->src[i].loaded = false;
	s->maybe_gone = read_files(eng, s->tdir, s->tpre, s->tpre_len,
				   eng->thread_files, eng->n_thread_files,
				   walked != NULL, -1, s->fs);
	int err = walked ? listed_name(w, s, walked)
			 : task_name(eng, s->tdir, s->tpre, s->tpre_len,
				     eng->walk->stat_thread, s->fs, s->comm,
				     sizeof(s->comm));
	const char *cgpath = "";
	int64_t cgrow = err < 0 ? -1 : thread_cgroup(w, s, tid, &cgpath, &err);
	int64_t row = err < 0 ? err : thread_row(w, tgid, tid, s->comm, cgrow);
	if (row < 0) {
		if (err < 0)
			task_unread(w, true, err);
		else
			w->result = (int)row;
		if (s->tdir != pdir)
			sys_close(s->tdir);
		return false;
	}
	s->task = (struct ctp_task){
		.abi = CTP_ABI_MAJOR,
		.size = sizeof(s->task),
		.tgid = (int32_t)tgid,
		.tid = (int32_t)tid,
		.dirfd = s->tdir != pdir ? s->tdir : -1,
		.proc_fd = eng->roots.proc_fd,
		.pcomm = w->pcomm,
		.comm = s->comm,
		.cgroup = cgrow >= 0 ? cgpath : "",
		.walk_tids = walk,
		.n_walk_tids = n > UINT32_MAX ? UINT32_MAX : (uint32_t)n,
		.walked = walked,
		.core = &s->tp,
	};
	s->tp = (struct task_priv){.w = w, .s = s, .thread = true};
	s->rec = (struct ctp_record){
		.cap = eng->cap,
		.table = w->threads,
		.row = (uint32_t)row,
		.scope = CTP_SCOPE_THREAD,
		.ident = CTP_THREAD_IDENT,
	};
	return true;
}

/* After the run's callbacks: whether the thread of slot s stays. A failure
 * caused by the thread exiting mid-read is churn, not a read failure: its
 * row goes (the caller drops it) and it stays out of the tally. */
static bool thread_close(struct worker *w, struct slot *s, int pdir)
{
	struct ctp_engine *eng = w->eng;
	if (s->tdir != pdir)
		sys_close(s->tdir);
	if ((s->maybe_gone || s->lazy_gone) && !task_exists(pdir, s->rel)) {
		w->tids_vanished++;
		return false;
	}
	tally_files(w, eng->thread_files, eng->n_thread_files, s->fs);
	w->tids_recorded++;
	atomic_store_explicit(&w->progress, w->tids_recorded,
			      memory_order_relaxed);
	return true;
}

static const struct ctp_walk_task *walked_at(const struct ctp_walk *wk,
					     size_t idx, size_t i);

/*
 * Walk threads tids[0 .. n) of process tgid (the process at span idx; tids[i]
 * is its off + i-th in the walk source's list) in runs of up to RUN_MAX:
 * each run's threads opened, every plugin's callbacks called for them
 * (call_run), then each closed, the rows of those that vanished dropped
 * and the others' kept in the walk's order. Adds the threads recorded to
 * *recorded.
 */
static void walk_threads(struct worker *w, int pdir, uint32_t tgid,
			 const uint32_t *tids, size_t n, size_t idx, size_t off,
			 uint32_t *recorded)
{
	struct ctp_table *t = w->threads;
	size_t i = 0;
	while (i < n && w->result == 0) {
		uint32_t k = 0;
		for (; i < n && k < RUN_MAX && w->result == 0; i++)
			if (thread_open(w, &w->slots[k], pdir, tgid, tids + i,
					n - i,
					walked_at(w->eng->walk, idx, off + i)))
				k++;
		if (!k)
			continue;
		call_run(w, true, w->slots, k);
		uint32_t to = w->slots[0].rec.row;
		for (uint32_t j = 0; j < k; j++) {
			if (!thread_close(w, &w->slots[j], pdir))
				continue;
			uint32_t from = w->slots[j].rec.row;
			int r = from == to ? 0
					   : ctp_table_move_row(t, from, to);
			if (r < 0 && w->result == 0)
				w->result = r;
			to++;
			(*recorded)++;
		}
		ctp_table_truncate(t, to);
	}
}

/* Publish tids[from, n) of the process at span idx for any worker to
 * walk: the split (the queue's, until after the walk), or NULL when short
 * of memory (the owner then walks them all). */
static struct ctp_split *split_publish(struct worker *w, size_t idx,
				       uint32_t tgid, size_t from, size_t n)
{
	struct ctp_split *sp = ctp_split_new(w->tids + from, n - from);

	if (!sp)
		return NULL;
	sp->tgid = tgid;
	sp->span = idx;
	snprintf(sp->pcomm, sizeof(sp->pcomm), "%s", w->pcomm);
	sp->cg_whole = w->proc_cg_whole;
	if (sp->cg_whole) {
		memcpy(sp->cg, w->proc_cg, w->proc_cglen + 1);
		sp->cglen = w->proc_cglen;
	}
	return ctp_splitq_push(&w->eng->walk->splits, sp) == 0 ? sp : NULL;
}

/* Whether the tasks of the process at span idx come from the walk
 * source's list: a tgid the list names has at least one entry there; one
 * only the proc root has (born after the pass, or out of the source's
 * sight) has none and is walked from its files as without a source. */
static bool listed(const struct ctp_walk *wk, size_t idx)
{
	return wk->list && wk->first[idx] != wk->first[idx + 1];
}

/* The entry of the i-th tid of the process at span idx in the walk
 * source's list, NULL when the proc root was listed. */
static const struct ctp_walk_task *walked_at(const struct ctp_walk *wk,
					     size_t idx, size_t i)
{
	return listed(wk, idx) ? wk->list + wk->first[idx] + i : NULL;
}

/* Walk tids [lo, hi) of a split process: rows in this worker's table,
 * listed as one extra span. */
static void do_chunk(struct worker *w, struct ctp_split *sp, size_t lo,
		     size_t hi)
{
	struct ctp_engine *eng = w->eng;
	char name[16];
	snprintf(name, sizeof(name), "%" PRIu32, sp->tgid);
	int pdir = sys_openat(eng->roots.proc_fd, name,
			      O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (pdir < 0) {
		/* The process is gone, and its threads with it; or, short
		 * of resources, none of them is read. */
		int err = -errno;
		w->tids_walked += hi - lo;
		for (size_t i = lo; i < hi; i++)
			task_unread(w, true, err);
		if (ctp_err_resource(err))
			atomic_fetch_add(&sp->unread, (uint32_t)(hi - lo));
		return;
	}
	snprintf(w->pcomm, sizeof(w->pcomm), "%s", sp->pcomm);
	w->proc_cg_whole = sp->cg_whole;
	if (sp->cg_whole) {
		memcpy(w->proc_cg, sp->cg, sp->cglen + 1);
		w->proc_cglen = sp->cglen;
		w->proc_cgrow = -1;
	}
	uint32_t first = w->threads->nrows, recorded = 0;
	uint64_t unread = w->tids_unread_resource;
	/* sp->tids are the process's from the split's start on
	 * (split_publish), its tids[splits.chunk ..). */
	walk_threads(w, pdir, sp->tgid, sp->tids + lo, hi - lo, sp->span,
		     eng->walk->splits.chunk + lo, &recorded);
	sys_close(pdir);
	atomic_fetch_add(&sp->unread,
			 (uint32_t)(w->tids_unread_resource - unread));
	if (!recorded)
		return;
	atomic_fetch_add(&sp->recorded, recorded);
	if (w->n_xspans == w->xspans_cap) {
		size_t ncap = w->xspans_cap ? 2 * w->xspans_cap : 16;
		struct ctp_span *nx =
			realloc(w->xspans, ncap * sizeof(*w->xspans));
		if (!nx) {
			w->result = -ENOMEM;
			return;
		}
		w->xspans = nx;
		w->xspans_cap = ncap;
	}
	w->xspans[w->n_xspans++] = (struct ctp_span){
		.tgid = sp->tgid,
		.worker = w->id,
		.proc_row = UINT32_MAX,
		.thread_row = first,
		.nthreads = recorded,
	};
}

/* Whether the process's leader is alive (a zombie leader stays behind when
 * its process is migrated): by its <tgid>/stat read up front, else, when
 * the core read none (a process source serves its values), by its exe
 * link on the live procfs: a leader that exited has released its memory,
 * and the link says ENOENT. A link the collector may not read counts as a
 * leader not alive (a thread's own cgroup file is read, as for a zombie).
 */
static bool leader_alive(const struct ctp_engine *eng, int pdir,
			 const struct fileset *ps)
{
	int f = eng->walk->stat_process;
	char state, c;
	if (f < 0)
		return !eng->walk->check_files &&
		       readlinkat(pdir, "exe", &c, 1) > 0;
	return ps->file[f].err == 0 &&
	       ctp_stat_state(ps->file[f].data, ps->file[f].len, &state) == 0 &&
	       state != 'Z' && state != 'X';
}

/*
 * The process's v2 cgroup: when every thread must share it (a whole
 * cgroup, cgroup_whole), its threads take it from the worker instead of
 * reading their own cgroup file. It is read from a thread other than the
 * leader when there is one: a leader that already exited (zombie,
 * PF_EXITING) is skipped when the process is migrated, so <tgid>/cgroup
 * can show a cgroup its live threads have left.
 */
/* The v2 path in a probe thread's own cgroup file (the first tid that is
 * not the leader), or NULL. */
static const char *probe_cgroup(struct worker *w, int pdir, uint32_t tgid,
				size_t ntids, size_t *plen)
{
	uint32_t probe = tgid;
	for (size_t i = 0; i < ntids; i++) {
		if (w->tids[i] != tgid) {
			probe = w->tids[i];
			break;
		}
	}
	char rel[40];
	snprintf(rel, sizeof(rel), "task/%" PRIu32 "/cgroup", probe);
	size_t len = 0;
	const char *path;
	if (read_at(pdir, rel, w->eng->walk->check_files, false,
		    &w->pslot.cgbuf, &w->pslot.cgcap, &len) < 0 ||
	    ctp_cgroup_v2_path(w->pslot.cgbuf, len, &path, plen) < 0)
		return NULL;
	return path;
}

static void process_cgroup(struct worker *w, int pdir, uint32_t tgid,
			   size_t ntids)
{
	struct ctp_engine *eng = w->eng;
	struct ctp_walk *wk = eng->walk;
	struct ctp_capture *cap = eng->cap;

	w->proc_cg_whole = false;
	const char *cgpath = NULL;
	size_t cgplen = 0;
	if (ntids == 0)
		return;
	/* From the listings when they place the process, and its leader,
	 * which they place, is where its threads are: the only thread, or
	 * not a zombie (its stat, or its exe link, says). */
	if ((ntids == 1 || leader_alive(eng, pdir, &w->pset)) &&
	    (cgpath = ctp_cg_procs_find(&wk->procs, tgid, &cgplen)) != NULL)
		atomic_fetch_add_explicit(&wk->procs_hits, 1,
					  memory_order_relaxed);
	else if (eng->roots.cgroup_fd >= 0)
		cgpath = probe_cgroup(w, pdir, tgid, ntids, &cgplen);
	if (cgpath && cgplen < sizeof(w->proc_cg)) {
		int64_t id =
			ctp_blobpool_intern_cached(cap->blobs, cgpath, cgplen);
		if (id >= 0 &&
		    ctp_cgroups_whole(&wk->cgroups, eng->roots.cgroup_fd, id,
				      cgpath, cgplen)) {
			memcpy(w->proc_cg, cgpath, cgplen);
			w->proc_cg[cgplen] = '\0';
			w->proc_cglen = cgplen;
			w->proc_cgrow =
				-1; /* added by thread_cgroup when used */
			w->proc_cg_whole = true;
		}
	}
}

/* The tids of the process at span idx in the walk source's list into
 * w->tids: 0 or -ENOMEM. */
static int listed_tids(struct worker *w, size_t idx, size_t *ntids)
{
	const struct ctp_walk *wk = w->eng->walk;
	size_t n = wk->first[idx + 1] - wk->first[idx];
	if (n > w->tid_cap) {
		uint32_t *ni = realloc(w->tids, n * sizeof(*ni));
		if (!ni)
			return -ENOMEM;
		w->tids = ni;
		w->tid_cap = n;
	}
	const struct ctp_walk_task *t = wk->list + wk->first[idx];
	for (size_t i = 0; i < n; i++)
		w->tids[i] = (uint32_t)t[i].tid;
	*ntids = n;
	return 0;
}

/* The process's name from the walk source's list into w->pcomm when it
 * lists the leader (tid = tgid) by its whole name: the name its stat and
 * comm show. Returns whether it did. */
static bool listed_pcomm(struct worker *w, size_t idx)
{
	const struct ctp_walk *wk = w->eng->walk;
	if (!listed(wk, idx))
		return false;
	uint32_t tgid = wk->tgids[idx];
	for (size_t i = wk->first[idx]; i < wk->first[idx + 1]; i++) {
		const struct ctp_walk_task *t = &wk->list[i];
		if ((uint32_t)t->tid != tgid)
			continue;
		if (t->flags & CTP_WALK_COMM_FILE)
			return false;
		size_t n = strnlen(t->comm, sizeof(t->comm));
		memcpy(w->pcomm, t->comm, n);
		w->pcomm[n] = '\0';
		return true;
	}
	return false;
}

/* The process's files (w->pset), name (w->pcomm) and tids (w->tids,
 * sorted: its task/ listed, or the walk source's list for span idx).
 * Returns 0, or a negative errno when the process is gone. */
static int process_tids(struct worker *w, int pdir, size_t idx, size_t *ntids)
{
	struct ctp_engine *eng = w->eng;
	read_files(eng, pdir, NULL, 0, eng->process_files, eng->n_process_files,
		   false, eng->walk->stat_process, &w->pset);
	int r = eng->walk->stat_process < 0 && listed_pcomm(w, idx)
			? 0
			: task_name(eng, pdir, NULL, 0, eng->walk->stat_process,
				    &w->pset, w->pcomm, sizeof(w->pcomm));
	if (r < 0)
		return r;
	if (listed(eng->walk, idx))
		return listed_tids(w, idx, ntids);
	int taskfd =
		sys_openat(pdir, "task", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (taskfd < 0)
		return -errno;
	r = list_numeric(taskfd, !w->eng->walk->check_files, w->dents,
			 sizeof(w->dents), &w->tids, &w->tid_cap, ntids);
	sys_close(taskfd);
	return r < 0 ? r : 0;
}

/* A process row with its identity (tgid, comm). Returns the row or a
 * negative errno. */
static int64_t process_row(struct worker *w, uint32_t tgid)
{
	int64_t row = ctp_table_add_row(w->procs);
	if (row < 0)
		return row;
	int64_t comm_id = ctp_blobpool_intern(w->eng->cap->blobs, w->pcomm,
					      strlen(w->pcomm));
	ctp_table_set(w->procs, (uint32_t)row, CTP_PCOL_TGID, tgid);
	if (comm_id >= 0)
		ctp_table_set(w->procs, (uint32_t)row, CTP_PCOL_COMM,
			      (uint64_t)comm_id);
	return row;
}

/* Open the directory of tgid (span idx) and list its tids into w->tids;
 * the directory, or -1 when the process is gone or unread (counted). */
static int process_open(struct worker *w, uint32_t tgid, size_t idx,
			size_t *ntids)
{
	char name[16];
	int pdir;

	snprintf(name, sizeof(name), "%" PRIu32, tgid);
	w->tgids_walked++;
	pdir = sys_openat(w->eng->roots.proc_fd, name,
			  O_PATH | O_DIRECTORY | O_CLOEXEC);
	int err = pdir < 0 ? -errno : 0;
	if (pdir >= 0 && (err = process_tids(w, pdir, idx, ntids)) < 0) {
		sys_close(pdir);
		pdir = -1;
	}
	if (pdir < 0)
		task_unread(w, false, err);
	return pdir;
}

/* The process callbacks on row prow. */
static void process_calls(struct worker *w, int pdir, uint32_t tgid,
			  int64_t prow)
{
	struct slot *s = &w->pslot;
	for (uint32_t i = 0; i < w->eng->n_sources; i++)
		s->src[i].loaded = false;
	s->fs = &w->pset;
	s->tp = (struct task_priv){.w = w, .s = s};
	s->task = (struct ctp_task){
		.abi = CTP_ABI_MAJOR,
		.size = sizeof(s->task),
		.tgid = (int32_t)tgid,
		.tid = (int32_t)tgid,
		.dirfd = pdir,
		.proc_fd = w->eng->roots.proc_fd,
		.pcomm = w->pcomm,
		.comm = w->pcomm,
		.cgroup = "",
		.core = &s->tp,
	};
	s->rec = (struct ctp_record){
		.cap = w->eng->cap,
		.table = w->procs,
		.row = (uint32_t)prow,
		.scope = CTP_SCOPE_PROCESS,
		.ident = CTP_PROCESS_IDENT,
	};
	call_run(w, false, s, 1);
}

/*
 * After the process's own threads: a process with none recorded exited
 * under us (its directory may linger while the last threads are reaped),
 * or, when some were unread for lack of resources (`starved`), is unread
 * too; its row, describing nothing, goes. A split one is decided after
 * the walk, when its chunks are counted. Otherwise the span points at its
 * rows.
 */
static void process_done(struct worker *w, struct ctp_span *span, int64_t prow,
			 uint32_t first, uint32_t recorded, bool split,
			 bool starved)
{
	struct ctp_engine *eng = w->eng;

	if (recorded == 0 && w->result == 0 && !split) {
		ctp_table_truncate(w->procs, (uint32_t)prow);
		if (starved)
			w->tgids_unread_resource++;
		else
			w->tgids_vanished++;
		return;
	}
	tally_files(w, eng->process_files, eng->n_process_files, &w->pset);
	/* A split process's count is completed after the walk. */
	ctp_table_set(w->procs, (uint32_t)prow, CTP_PCOL_NTHREADS, recorded);
	span->worker = w->id;
	span->proc_row = (uint32_t)prow;
	span->thread_row = first;
	span->nthreads = recorded;
}

static void do_process(struct worker *w, size_t idx)
{
	struct ctp_engine *eng = w->eng;
	struct ctp_walk *wk = eng->walk;
	struct ctp_span *span = &eng->cap->spans[idx];
	uint32_t tgid = wk->tgids[idx], first, recorded = 0;
	size_t ntids = 0, own;
	bool split = false;
	int64_t prow;
	int pdir;

	span->tgid = tgid;
	span->nthreads = 0;
	span->proc_row = UINT32_MAX;
	pdir = process_open(w, tgid, idx, &ntids);
	if (pdir < 0)
		return;
	process_cgroup(w, pdir, tgid, ntids);
	prow = process_row(w, tgid);
	if (prow < 0) {
		w->result = (int)prow;
		sys_close(pdir);
		return;
	}
	process_calls(w, pdir, tgid, prow);
	/* When it was read, for each task's own interval between two
	 * snapshots (a capture can take seconds): as its threads' walk
	 * begins, right after its own files, since most counters that make
	 * rates are its threads'; walking from a source, when the source's
	 * pass, which holds its threads' counters, was taken. */
	uint64_t read_ns = wk->list ? wk->list_ns : ctp_boottime_ns();
	if (read_ns)
		ctp_table_set(w->procs, (uint32_t)prow, CTP_PCOL_READ_NS,
			      read_ns);
	/* A large process: the tids past the first chunk go to whichever
	 * worker is free (including this one, once back in walk()), once
	 * the process callbacks are done, so a thread callback on any
	 * worker finds what they left (CTP_PLUGIN_SPLITTABLE). */
	own = ntids;
	struct ctp_split *sp = NULL;
	if (wk->splits.chunk && ntids > wk->splits.chunk &&
	    (sp = split_publish(w, idx, tgid, wk->splits.chunk, ntids))) {
		own = wk->splits.chunk;
		split = true;
	}
	first = w->threads->nrows;
	uint64_t unread = w->tids_unread_resource;
	walk_threads(w, pdir, tgid, w->tids, own, idx, 0, &recorded);
	process_done(w, span, prow, first, recorded, split,
		     w->tids_unread_resource > unread);
	if (sp)
		atomic_fetch_add(&sp->unread,
				 (uint32_t)(w->tids_unread_resource - unread));
	sys_close(pdir);
}

static void progress_line(struct ctp_engine *eng, const struct worker *ws,
			  uint32_t nw, uint64_t t0, bool final);

/* Claim tgids until none is left. With `progress` (the single-worker walk
 * on the main thread), also redraw the progress line now and then. */
static void walk(struct worker *w, bool progress, uint64_t t0, bool *shown)
{
	struct ctp_engine *eng = w->eng;
	struct ctp_walk *wk = eng->walk;
	uint64_t next_draw = t0 + 1000000000ull;
	walking = w;
	for (;;) {
		if (eng->stop && *eng->stop) {
			w->result = -EINTR;
			break;
		}
		if (w->result < 0)
			break;
		/* Chunks of split processes first: their owner is busy. */
		struct ctp_split *sp;
		size_t lo, hi;
		if (ctp_splitq_claim(&wk->splits, &sp, &lo, &hi)) {
			do_chunk(w, sp, lo, hi);
			continue;
		}
		size_t idx = atomic_fetch_add(&wk->next_tgid, 1);
		if (idx >= wk->n_tgids) {
			/* Nothing left to claim, but a worker still in a
			 * process may yet split it. */
			if (!wk->splits.chunk ||
			    atomic_load(&wk->in_process) == 0)
				break;
			struct timespec ts = {.tv_nsec = 200000};
			nanosleep(&ts, NULL);
			continue;
		}
		atomic_fetch_add(&wk->in_process, 1);
		do_process(w, idx);
		atomic_fetch_sub(&wk->in_process, 1);
		if (progress && ctp_now_ns() >= next_draw) {
			progress_line(eng, w, 1, t0, false);
			*shown = true;
			next_draw = ctp_now_ns() + 250000000ull;
		}
	}
	walking = NULL;
}

/* One of the engine's worker threads (struct ctp_walk.pool). */
struct ctp_pool_thread {
	struct ctp_engine *eng;
	uint32_t id;
	uint64_t seen; /* the last round it looked at */
	pthread_t thread;
};

/* A walk by a pool thread, then word to the capturing thread that it is done:
 * after that it touches nothing of the capture's. */
static void pool_walk(struct ctp_engine *eng, struct worker *w)
{
	struct ctp_walk *wk = eng->walk;
	bool unused = false;
	walk(w, false, 0, &unused);
	pthread_mutex_lock(&wk->done_lock);
	atomic_fetch_add(&wk->workers_done, 1);
	pthread_cond_signal(&wk->done_cond);
	pthread_mutex_unlock(&wk->done_lock);
}

/*
 * A worker thread, from the first capture to the engine's end: it walks
 * with the worker each round hands it and waits for the next. Whatever a
 * thread has of its own is taken once, here: its supervision slot and
 * signal stack, its signal mask (set by whoever started it), and, when
 * every plugin allows it, its own descriptor table (a copy made now, with
 * the roots and the plugins' init descriptors in it), which takes this
 * worker's opens and closes off the table lock the other workers use and
 * lets the kernel skip the reference it takes on every read's file while
 * a table is shared. Without it the walk is the same, only slower.
 */
static void *pool_main(void *arg)
{
	struct ctp_pool_thread *t = arg;
	struct ctp_engine *eng = t->eng;
	struct ctp_pool *pool = &eng->walk->pool;
	ctp_sv_thread_begin(t->id + 1u);
	if (eng->walk->private_fds && unshare(CLONE_FILES) < 0)
		ctp_log(CTP_LOG_DEBUG,
			"worker %u: no private descriptor "
			"table: %s",
			t->id, strerror(errno));
	pthread_mutex_lock(&pool->lock);
	for (;;) {
		while (!pool->quit && pool->round == t->seen)
			pthread_cond_wait(&pool->go, &pool->lock);
		if (pool->quit)
			break;
		t->seen = pool->round;
		if (t->id >= pool->nw)
			continue;
		struct worker *w = (struct worker *)pool->ws + t->id;
		pthread_mutex_unlock(&pool->lock);
		pool_walk(eng, w);
		pthread_mutex_lock(&pool->lock);
	}
	pthread_mutex_unlock(&pool->lock);
	ctp_sv_thread_end();
	return NULL;
}

/* Threads up to nw in the pool, each started with every signal but the
 * fatal ones blocked (ctp_sv_worker_mask); the rest of what they inherit
 * is the calling thread's. Returns how many there are, at most nw. */
static uint32_t pool_grow(struct ctp_engine *eng, uint32_t nw)
{
	struct ctp_pool *pool = &eng->walk->pool;
	if (pool->n >= nw)
		return nw;
	struct ctp_pool_thread **t = realloc(pool->t, nw * sizeof(*t));
	if (!t)
		return pool->n;
	pool->t = t;
	sigset_t mask, old;
	ctp_sv_worker_mask(&mask);
	pthread_sigmask(SIG_SETMASK, &mask, &old);
	while (pool->n < nw) {
		struct ctp_pool_thread *th = calloc(1, sizeof(*th));
		if (!th)
			break;
		th->eng = eng;
		th->id = pool->n;
		th->seen = pool->round;
		if (pthread_create(&th->thread, NULL, pool_main, th) != 0) {
			free(th);
			break;
		}
		pool->t[pool->n++] = th;
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return pool->n < nw ? pool->n : nw;
}

/* A round: threads t[0 .. nw) each walk with ws[id]. */
static void pool_round(struct ctp_engine *eng, struct worker *ws, uint32_t nw)
{
	struct ctp_pool *pool = &eng->walk->pool;
	pthread_mutex_lock(&pool->lock);
	pool->ws = ws;
	pool->nw = nw;
	pool->round++;
	pthread_cond_broadcast(&pool->go);
	pthread_mutex_unlock(&pool->lock);
}

/*
 * The pool for nw workers, started by the first capture (a thread that
 * could not start is tried again by the next): first whether its threads
 * get private descriptor tables, which needs every loaded plugin's
 * consent (CTP_PLUGIN_FD_LOCAL; one that withholds it costs every
 * worker, so it is named, -v). Returns how many threads there are, at
 * most nw.
 */
static uint32_t pool_start(struct ctp_engine *eng, uint32_t nw)
{
	struct ctp_walk *wk = eng->walk;
	const struct ctp_capture *cap = eng->cap;
	if (wk->pool.n)
		return pool_grow(eng, nw);
	wk->private_fds = true;
	for (uint32_t p = 0; p < cap->n_plugins && wk->private_fds; p++) {
		const struct ctp_plugin_info *info = &cap->plugins[p];
		if (info->status != CTP_PST_LOADED || info->rt->fd_local)
			continue;
		wk->private_fds = false;
		ctp_log(CTP_LOG_INFO,
			"plugin %s is not CTP_PLUGIN_FD_LOCAL: the workers "
			"share one descriptor table",
			info->name);
	}
	return pool_grow(eng, nw);
}

static void workers_end(struct ctp_engine *eng)
{
	if (!eng->walk)
		return;
	struct ctp_pool *pool = &eng->walk->pool;
	if (!pool->n)
		return;
	pthread_mutex_lock(&pool->lock);
	pool->quit = true;
	pthread_cond_broadcast(&pool->go);
	pthread_mutex_unlock(&pool->lock);
	for (uint32_t i = 0; i < pool->n; i++) {
		pthread_join(pool->t[i]->thread, NULL);
		free(pool->t[i]);
	}
	free(pool->t);
	pool->t = NULL;
	pool->n = 0;
	pool->quit = false;
}

static void worker_free(struct worker *w)
{
	for (uint32_t f = 0; f < CTP_MAX_FILES; f++)
		free(w->pset.buf[f]);
	for (uint32_t k = 0; w->slots && k < RUN_MAX; k++) {
		struct slot *s = &w->slots[k];
		for (uint32_t f = 0; f < CTP_MAX_FILES; f++)
			free(s->own.buf[f]);
		free(s->cgbuf);
	}
	free(w->pslot.cgbuf);
	if (w->slots)
		free(w->slots[0].pflags);
	free(w->slots);
	free(w->bound);
	free(w->tids);
	free(w->stats);
	free(w->xspans);
}

/* The worker's slots for a run of threads, with their plugin flags. */
static int slots_new(struct worker *w, uint32_t n_plugins)
{
	uint32_t np = n_plugins ? n_plugins : 1;
	w->slots = calloc(RUN_MAX, sizeof(*w->slots));
	w->bound = calloc(np, sizeof(*w->bound));
	uint8_t *flags = calloc(RUN_MAX, np);
	if (!w->slots || !w->bound || !flags) {
		free(flags);
		free(w->slots);
		free(w->bound);
		w->slots = NULL;
		w->bound = NULL;
		return -ENOMEM;
	}
	for (uint32_t k = 0; k < RUN_MAX; k++) {
		w->slots[k].fs = &w->slots[k].own;
		w->slots[k].pflags = flags + (size_t)k * np;
	}
	return 0;
}

static void host_calls(struct ctp_engine *eng, bool finish)
{
	struct ctp_capture *cap = eng->cap;
	struct ctp_record rec = {
		.cap = cap,
		.table = &cap->host,
		.row = 0,
		.scope = CTP_SCOPE_HOST,
		.ident = CTP_HOST_IDENT,
	};
	int cb = finish ? CB_FINISH : CB_HOST;
	for (uint32_t i = 0; i < cap->n_plugins; i++) {
		struct ctp_plugin_info *info = &cap->plugins[i];
		if (!cb_usable(info, cb))
			continue;
		struct ctp_plugin_rt *rt = info->rt;
		int (*fn)(void *, struct ctp_record *) =
			finish ? rt->desc->finish : rt->desc->host;
		if (!fn)
			continue;
		rec.plugin = i;
		uint64_t t0 = ctp_now_ns();
		ctp_sv_enter(i, finish ? CTP_SV_FINISH : CTP_SV_HOST, 0);
		rt->in_host_cb = true;
		int ret = fn(rt->state, &rec);
		rt->in_host_cb = false;
		ctp_api_exited_close(rt);
		ctp_sv_leave();
		after_call(info, NULL, cb, ret, ctp_now_ns() - t0);
	}
}

/* The cgroup callbacks of every plugin on cgroup row `row`. A row a plugin
 * added with cgroup_ref is that plugin's to resolve: no directory, and
 * only its referrers are called. */
static void cgroup_row_calls(struct ctp_engine *eng, uint32_t row,
			     const char *path, size_t plen)
{
	struct ctp_capture *cap = eng->cap;
	bool foreign = ctp_cgroup_key_ok(path, plen);
	/* A path with ".." components lies outside our cgroup namespace
	 * (e.g. "/../x"): it has no directory under the mount, and looking
	 * it up would escape it. */
	bool outside = strstr(path, "/..") != NULL;
	int dirfd = -1;

	if (!foreign && !outside && eng->roots.cgroup_fd >= 0) {
		const char *rel = path;
		while (*rel == '/')
			rel++;
		dirfd = openat(eng->roots.cgroup_fd, *rel ? rel : ".",
			       O_PATH | O_DIRECTORY | O_CLOEXEC);
		/* Short of descriptors, the row's callbacks could read
		 * nothing: none is called, and the row is counted. */
		if (dirfd < 0 && ctp_err_resource(-errno)) {
			cap->rf.cgroups_unread_resource++;
			if (!cap->rf.resource_err)
				cap->rf.resource_err = -errno;
			return;
		}
	}
	struct ctp_cgroup cg = {
		.abi = CTP_ABI_MAJOR,
		.size = sizeof(cg),
		.path = path,
		.dirfd = dirfd,
		.v2_root_fd = eng->roots.cgroup_fd,
	};
	struct ctp_record rec = {
		.cap = cap,
		.table = &cap->cgroups,
		.row = row,
		.scope = CTP_SCOPE_CGROUP,
		.ident = CTP_CGROUP_IDENT,
	};
	for (uint32_t i = 0; i < cap->n_plugins; i++) {
		struct ctp_plugin_info *info = &cap->plugins[i];
		if (!cb_usable(info, CB_CGROUP) || !info->rt->desc->cgroup)
			continue;
		if (foreign &&
		    !ctp_cgroups_referenced(&eng->walk->cgroups, i, row))
			continue;
		rec.plugin = i;
		uint64_t t0 = ctp_now_ns();
		ctp_sv_enter_cgroup(i, path);
		int ret = info->rt->desc->cgroup(info->rt->state, &cg, &rec);
		ctp_sv_leave();
		after_call(info, NULL, CB_CGROUP, ret, ctp_now_ns() - t0);
	}
	if (dirfd >= 0)
		close(dirfd);
}

/* The cgroups pass: every distinct cgroup row, once, after the walk. */
static void cgroup_calls(struct ctp_engine *eng)
{
	struct ctp_capture *cap = eng->cap;
	bool any = false;
	for (uint32_t i = 0; i < cap->n_plugins; i++)
		any |= cb_usable(&cap->plugins[i], CB_CGROUP) &&
		       cap->plugins[i].rt->desc->cgroup;
	for (uint32_t row = 0; any && row < cap->cgroups.nrows; row++) {
		if (eng->stop && *eng->stop)
			return;
		uint64_t blob;
		if (!ctp_table_get(&cap->cgroups, row, CTP_CCOL_PATH, &blob))
			continue;
		size_t plen = 0;
		const char *path = ctp_blobpool_get(cap->blobs, blob, &plen);
		cgroup_row_calls(eng, row, path, plen);
	}
}

int ctp_engine_init(struct ctp_engine *eng, const struct ctp_config *cfg,
		    struct ctp_capture *cap, const volatile sig_atomic_t *stop)
{
	memset(eng, 0, sizeof(*eng));
	eng->cfg = cfg;
	eng->cap = cap;
	eng->stop = stop;
	eng->roots.abi = CTP_ABI_MAJOR;
	eng->roots.size = sizeof(eng->roots);
	eng->roots.proc_fd = eng->roots.sys_fd = eng->roots.cgroup_fd = -1;
	ctp_api_fill(&eng->api);
	/* The services of the walk's own. */
	eng->api.file_get = api_file_get;
	eng->api.source_register = api_source_register;
	eng->api.source_get = api_source_get;
	eng->api.source_add = api_source_add;
	eng->api.field_bind = api_field_bind;
	eng->api.thread_skip_bound = api_thread_skip_bound;
	eng->api.summary_add = api_summary_add;
	eng->api.source_prefill = api_source_prefill;
	eng->api.cgroup_ref = api_cgroup_ref;

	struct ctp_walk *wk = calloc(1, sizeof(*wk));
	if (!wk)
		return -ENOMEM;
	eng->walk = wk;
	ctp_cgroups_init(&wk->cgroups);
	ctp_splitq_init(&wk->splits);
	pthread_mutex_init(&wk->done_lock, NULL);
	pthread_cond_init(&wk->done_cond, NULL);
	pthread_mutex_init(&wk->pool.lock, NULL);
	pthread_cond_init(&wk->pool.go, NULL);

	cap->proc_root = strdup(cfg->proc_root ? cfg->proc_root : "/proc");
	cap->sys_root = strdup(cfg->sys_root ? cfg->sys_root : "/sys");
	if (!cap->proc_root || !cap->sys_root)
		return -ENOMEM;
	eng->roots.proc = cap->proc_root;
	eng->roots.sys = cap->sys_root;
	eng->roots.proc_fd =
		open(cap->proc_root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (eng->roots.proc_fd < 0) {
		int err = -errno;
		ctp_log(CTP_LOG_ERR, "cannot open proc root %s: %s",
			cap->proc_root, strerror(errno));
		return err;
	}
	/* Files under a real procfs are the kernel's; under any other root
	 * (a fixture, a copy) each is checked to be a regular file. */
	struct statfs sfs;
	eng->walk->check_files = fstatfs(eng->roots.proc_fd, &sfs) < 0 ||
				 sfs.f_type != PROC_SUPER_MAGIC;
	eng->roots.sys_fd =
		open(cap->sys_root, O_PATH | O_DIRECTORY | O_CLOEXEC);

	const char *cg = cfg->cgroup_root ? cfg->cgroup_root : "auto";
	if (strcmp(cg, "auto") == 0)
		cap->cgroup_root = ctp_cgroup2_mount(eng->roots.proc_fd);
	else
		cap->cgroup_root = strdup(cg);
	if (cap->cgroup_root) {
		eng->roots.cgroup = cap->cgroup_root;
		eng->roots.cgroup_fd = open(cap->cgroup_root,
					    O_PATH | O_DIRECTORY | O_CLOEXEC);
		if (eng->roots.cgroup_fd < 0)
			ctp_log(CTP_LOG_WARNING,
				"cannot open cgroup root %s: %s",
				cap->cgroup_root, strerror(errno));
	}
	return 0;
}

int ctp_engine_rearm(struct ctp_engine *eng)
{
	struct ctp_walk *wk = eng->walk;
	int r = ctp_capture_reset(eng->cap);
	if (r < 0)
		return r;
	free(wk->tgids);
	wk->tgids = NULL;
	wk->n_tgids = 0;
	free(wk->first);
	wk->first = NULL;
	wk->list = NULL;
	atomic_store(&wk->next_tgid, 0);
	atomic_store(&wk->workers_done, 0);
	atomic_store(&wk->in_process, 0);
	ctp_cgroups_done(&wk->cgroups);
	ctp_cgroups_init(&wk->cgroups);
	ctp_splitq_done(&wk->splits);
	ctp_splitq_init(&wk->splits);
	/* A callback disabled after repeated failures gets another chance:
	 * the condition may have passed. */
	for (uint32_t i = 0; i < eng->cap->n_plugins; i++) {
		struct ctp_plugin_rt *rt = eng->cap->plugins[i].rt;
		for (int cb = 0; rt && cb < CB_COUNT; cb++) {
			atomic_store(&rt->consecutive_errors[cb], 0);
			atomic_store(&rt->cb_disabled[cb], false);
		}
	}
	return 0;
}

void ctp_engine_unload(struct ctp_engine *eng)
{
	/* No worker thread outlives the plugins it called. */
	workers_end(eng);
	ctp_plugins_unload(eng);
}

void ctp_engine_done(struct ctp_engine *eng)
{
	ctp_engine_unload(eng);
	if (eng->roots.proc_fd >= 0)
		close(eng->roots.proc_fd);
	if (eng->roots.sys_fd >= 0)
		close(eng->roots.sys_fd);
	if (eng->roots.cgroup_fd >= 0)
		close(eng->roots.cgroup_fd);
	struct ctp_walk *wk = eng->walk;
	if (!wk)
		return;
	free(wk->tgids);
	free(wk->first);
	free(wk->hidden);
	ctp_cgroups_done(&wk->cgroups);
	ctp_cg_procs_free(&wk->procs);
	ctp_splitq_done(&wk->splits);
	workers_end(eng);
	pthread_mutex_destroy(&wk->pool.lock);
	pthread_cond_destroy(&wk->pool.go);
	pthread_mutex_destroy(&wk->done_lock);
	pthread_cond_destroy(&wk->done_cond);
	free(wk);
	eng->walk = NULL;
}

bool ctp_engine_private_fds(const struct ctp_engine *eng)
{
	return eng->walk && eng->walk->private_fds;
}

bool ctp_engine_thread_dirs(const struct ctp_engine *eng)
{
	return eng->walk && eng->walk->thread_dirs;
}

struct ctp_cgroups *ctp_engine_cgroups(const struct ctp_engine *eng)
{
	return eng->walk ? &eng->walk->cgroups : NULL;
}

static void progress_line(struct ctp_engine *eng, const struct worker *ws,
			  uint32_t nw, uint64_t t0, bool final)
{
	struct ctp_walk *wk = eng->walk;
	if (final) {
		fputs("\r\033[K", stderr);
		return;
	}
	size_t done = atomic_load(&wk->next_tgid);
	if (done > wk->n_tgids)
		done = wk->n_tgids;
	uint64_t threads = 0;
	for (uint32_t i = 0; i < nw; i++)
		threads += atomic_load_explicit(&ws[i].progress,
						memory_order_relaxed);
	fprintf(stderr,
		"\r\033[Kctprof-core: %zu/%zu processes, %" PRIu64
		" threads, %.1fs",
		done, wk->n_tgids, threads, (double)(ctp_now_ns() - t0) / 1e9);
	fflush(stderr);
}

/*
 * Split processes need every loaded plugin's consent
 * (CTP_PLUGIN_SPLITTABLE; private descriptor tables are pool_start's). A
 * plugin that withholds it costs every worker, so it is named (-v): the
 * first one found.
 */
static void choose_sharing(struct ctp_engine *eng, uint32_t nw)
{
	struct ctp_walk *wk = eng->walk;
	const struct ctp_capture *cap = eng->cap;
	bool splittable = nw > 1 && eng->cfg->split_threads > 0;
	wk->thread_dirs = false;
	for (uint32_t p = 0; p < cap->n_plugins; p++) {
		const struct ctp_plugin_info *info = &cap->plugins[p];
		if (info->status != CTP_PST_LOADED)
			continue;
		wk->thread_dirs |= info->rt->thread_dir;
		if (splittable && !info->rt->splittable) {
			splittable = false;
			ctp_log(CTP_LOG_INFO,
				"plugin %s is not CTP_PLUGIN_SPLITTABLE: large "
				"processes are not split among workers",
				info->name);
		}
	}
	wk->splits.chunk = splittable ? eng->cfg->split_threads : 0;
}

/* The walk source of this capture: the first loaded plugin's, in the
 * config's plugin order, that offers one; NULL when none does or every
 * source is hidden (sources_off). */
static const struct ctp_source *walk_source(const struct ctp_engine *eng)
{
	const struct ctp_source *best = NULL;
	if (eng->sources_off)
		return NULL;
	for (uint32_t i = 0; i < eng->n_sources; i++) {
		const struct ctp_source *src = &eng->sources[i];
		if (src->walk &&
		    eng->cap->plugins[src->plugin].status == CTP_PST_LOADED &&
		    (!best || src->plugin < best->plugin))
			best = src;
	}
	return best;
}

/* Why a walk source's list cannot be walked into why (n bytes), or
 * false when it can: every id above 0, sorted by tgid then tid, no task
 * twice. */
static bool list_unusable(const struct ctp_walk_task *t, size_t n, char *why,
			  size_t wn)
{
	if (!t || !n) {
		snprintf(why, wn, "its list is empty");
		return true;
	}
	for (size_t i = 0; i < n; i++) {
		if (t[i].tgid <= 0 || t[i].tid <= 0) {
			snprintf(why, wn,
				 "its list names task %zu as tgid %" PRId32
				 " tid %" PRId32,
				 i, t[i].tgid, t[i].tid);
			return true;
		}
		if (i &&
		    (t[i].tgid < t[i - 1].tgid || (t[i].tgid == t[i - 1].tgid &&
						   t[i].tid <= t[i - 1].tid))) {
			snprintf(why, wn,
				 "its list is not sorted by tgid then tid "
				 "(tgid %" PRId32 " tid %" PRId32
				 " after tgid %" PRId32 " tid %" PRId32 ")",
				 t[i].tgid, t[i].tid, t[i - 1].tgid,
				 t[i - 1].tid);
			return true;
		}
	}
	return false;
}

/* The capture walks the proc root although a walk source is loaded:
 * said in the snapshot, counted, logged once per reason. */
static void walk_fallback(struct ctp_engine *eng, const char *why)
{
	struct ctp_walk *wk = eng->walk;
	struct ctp_capture *cap = eng->cap;
	snprintf(cap->walk_fallback, sizeof(cap->walk_fallback), "%s", why);
	cap->walk_fallbacks = ++wk->fallbacks;
	bool told = strcmp(wk->fallback_logged, cap->walk_fallback) == 0;
	ctp_log(told ? CTP_LOG_DEBUG : CTP_LOG_WARNING,
		"%s: the tasks are listed from %s instead", cap->walk_fallback,
		cap->proc_root);
	memcpy(wk->fallback_logged, cap->walk_fallback,
	       sizeof(wk->fallback_logged));
}

static int list_root(struct ctp_engine *eng, uint32_t **tgids, size_t *capn,
		     size_t *n);

/*
 * Whether the m tasks a walk source's list (t, n tasks, sorted by tgid)
 * lacks are exactly the tasks, now, of the processes the proc root's last
 * listing found beside it (wk->hidden): every one still there, in no list
 * entry, their task directories listing m tasks in all, and pid 1, which
 * the proc root's namespace always has, in the list or among them. Then
 * the list and they are every process there is, as a listing would find
 * (one born after the pass aside), and the proc root need not be listed.
 */
static bool hidden_account(struct ctp_engine *eng,
			   const struct ctp_walk_task *t, size_t n, size_t m)
{
	struct ctp_walk *wk = eng->walk;
	bool init = n && t[0].tgid == 1;
	size_t sum = 0;
	if (!wk->n_hidden)
		return false;
	char *dents = malloc(DENTS_BUF);
	uint32_t *ids = NULL;
	size_t cap = 0, k;
	bool ok = dents != NULL;
	for (size_t h = 0; ok && h < wk->n_hidden; h++) {
		uint32_t u = wk->hidden[h];
		size_t lo = 0, hi = n;
		while (lo < hi) { /* the first entry of tgid >= u */
			size_t mid = lo + (hi - lo) / 2;
			if ((uint32_t)t[mid].tgid < u)
				lo = mid + 1;
			else
				hi = mid;
		}
		char path[32];
		snprintf(path, sizeof(path), "%" PRIu32 "/task", u);
		int fd = (lo < n && (uint32_t)t[lo].tgid == u)
				 ? -1
				 : openat(eng->roots.proc_fd, path,
					  O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		ok = fd >= 0 &&
		     list_numeric(fd, !wk->check_files, dents, DENTS_BUF, &ids,
				  &cap, &k) == 0 &&
		     k > 0;
		if (fd >= 0)
			close(fd);
		sum += ok ? k : 0;
		init |= u == 1;
	}
	free(ids);
	free(dents);
	return ok && init && sum == m;
}

/* Where the tgids beside a walk source's list come from (extra_tgids). */
enum extra_from { EXTRA_NONE, EXTRA_KEPT, EXTRA_LISTED };

/*
 * The tgids to walk from their files beside a walk source's list (t, n)
 * that walk() returned r for, ascending, in *proc (*nproc of them; wk's
 * own when kept, else the caller's to free) and where they come from. The
 * proc root's tgids (one listing, not one per process): a process the pass
 * could not see, or born after it, is walked from its files rather than
 * left out. Not when the source says its list is complete
 * (CTP_SOURCE_WALK_SAYS_COMPLETE): the listing visits every pid, threads
 * included, which is most of its cost at many threads a process, to find
 * nothing the list lacks but processes born after the pass; such a process
 * is then not in the snapshot, exactly as one born after the proc root's
 * listing is not in a capture that lists it. Nor when it lacks only the
 * processes the last listing found beside it, whole
 * (CTP_SOURCE_WALK_SAYS_MISSING, hidden_account): those are walked from
 * their files, as that listing would have them. 0, or a negative errno.
 */
static int extra_tgids(struct ctp_engine *eng, const struct ctp_source *src,
		       int r, const struct ctp_walk_task *t, size_t n,
		       uint32_t **proc, size_t *nproc, enum extra_from *from)
{
	struct ctp_walk *wk = eng->walk;
	size_t capn = 0;
	*proc = NULL;
	*nproc = 0;
	*from = EXTRA_NONE;
	if ((src->says_complete || src->says_missing) && r == CTP_WALK_COMPLETE)
		return 0;
	if (src->says_missing && r > CTP_WALK_COMPLETE &&
	    hidden_account(eng, t, n, (size_t)(r - CTP_WALK_COMPLETE))) {
		*proc = wk->hidden;
		*nproc = wk->n_hidden;
		*from = EXTRA_KEPT;
		return 0;
	}
	*from = EXTRA_LISTED;
	return list_root(eng, proc, &capn, nproc);
}

/*
 * Pass "list" from the walk source, when one is loaded: its walk() on
 * this thread (under its plugin's lock, supervised as its host callback,
 * its time the plugin's), the pass's time taken just before; its tgids
 * (wk->tgids) and where each one's tasks start (wk->first), with the proc
 * root's tgids the list lacks unless it is complete. Returns 1
 * when the capture walks from the list, 0 when it lists the proc root
 * (no walk source, or it failed: walk_fallback), -ENOMEM.
 */
static int source_list(struct ctp_engine *eng)
{
	struct ctp_walk *wk = eng->walk;
	struct ctp_capture *cap = eng->cap;
	const struct ctp_source *src = walk_source(eng);
	char why[sizeof(cap->walk_fallback)];
	if (!src)
		return 0;
	struct ctp_plugin_info *info = &cap->plugins[src->plugin];
	struct ctp_plugin_rt *rt = info->rt;
	const struct ctp_walk_task *t = NULL;
	size_t n = 0;
	wk->list_ns = ctp_boottime_ns();
	uint64_t t0 = ctp_now_ns();
	lock_if(rt);
	ctp_sv_enter(src->plugin, CTP_SV_HOST, 0);
	int r = src->walk(rt->state, &t, &n);
	ctp_sv_leave();
	unlock_if(rt);
	atomic_fetch_add_explicit(&info->time_ns, ctp_now_ns() - t0,
				  memory_order_relaxed);
	if (r < 0) {
		snprintf(why, sizeof(why), "walk source %s: walk() failed: %s",
			 src->name, strerror(-r));
		walk_fallback(eng, why);
		return 0;
	}
	char what[sizeof(why) - 48];
	if (list_unusable(t, n, what, sizeof(what))) {
		snprintf(why, sizeof(why), "walk source %s: %s", src->name,
			 what);
		walk_fallback(eng, why);
		return 0;
	}
	uint32_t *proc;
	size_t nproc;
	enum extra_from from;
	int er = extra_tgids(eng, src, r, t, n, &proc, &nproc, &from);
	if (er < 0)
		return er;
	size_t ntg = 1;
	for (size_t i = 1; i < n; i++)
		ntg += t[i].tgid != t[i - 1].tgid;
	ntg += nproc; /* at most */
	wk->tgids = malloc(ntg * sizeof(*wk->tgids));
	wk->first = malloc((ntg + 1) * sizeof(*wk->first));
	if (!wk->tgids || !wk->first) {
		if (from == EXTRA_LISTED)
			free(proc);
		return -ENOMEM;
	}
	size_t k = 0, p = 0, unlisted = 0;
	for (size_t i = 0; i <= n; i++) {
		if (i && i < n && t[i].tgid == t[i - 1].tgid)
			continue;
		uint32_t next = i < n ? (uint32_t)t[i].tgid : UINT32_MAX;
		for (; p < nproc && proc[p] <= next; p++) {
			if (proc[p] == next)
				continue;
			wk->tgids[k] = proc[p];
			wk->first[k++] = i;
			/* A listing's finds, kept in place (unlisted <= p). */
			proc[unlisted++] = proc[p];
		}
		if (i == n)
			break;
		wk->tgids[k] = next;
		wk->first[k++] = i;
	}
	if (from == EXTRA_LISTED) {
		free(wk->hidden);
		wk->hidden = proc;
		wk->n_hidden = unlisted;
	}
	wk->first[k] = n;
	wk->n_tgids = k;
	wk->list = t;
	cap->walk_unlisted = unlisted;
	if (from == EXTRA_KEPT)
		ctp_log(CTP_LOG_DEBUG,
			"walk source %s listed %zu tasks in %zu processes and "
			"lacks %d, the %zu processes the last listing found "
			"beside it: %s not listed",
			src->name, n, k - unlisted, r - CTP_WALK_COMPLETE,
			unlisted, cap->proc_root);
	else if (from == EXTRA_NONE)
		ctp_log(CTP_LOG_DEBUG,
			"walk source %s listed %zu tasks in %zu processes, "
			"all of them: %s not listed",
			src->name, n, k, cap->proc_root);
	else
		ctp_log(CTP_LOG_DEBUG,
			"walk source %s listed %zu tasks in %zu processes%s; "
			"%zu more processes under %s",
			src->name, n, k - unlisted,
			src->says_complete ? " (not all, it says)" : "",
			unlisted, cap->proc_root);
	snprintf(cap->walk_source, sizeof(cap->walk_source), "%s", src->name);
	return 1;
}

/* The tgids under the proc root, ascending, into *tgids (capacity *capn,
 * grown) and *n. 0, or a negative errno (logged). */
static int list_root(struct ctp_engine *eng, uint32_t **tgids, size_t *capn,
		     size_t *n)
{
	char *dents = malloc(DENTS_BUF);
	if (!dents)
		return -ENOMEM;
	int pfd = openat(eng->roots.proc_fd, ".",
			 O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	int ret = pfd < 0 ? -errno
			  : list_numeric(pfd, !eng->walk->check_files, dents,
					 DENTS_BUF, tgids, capn, n);
	if (pfd >= 0)
		close(pfd);
	free(dents);
	if (ret < 0)
		ctp_log(CTP_LOG_ERR, "cannot list %s: %s", eng->cap->proc_root,
			strerror(-ret));
	return ret < 0 ? ret : 0;
}

/* A span per tgid listed (none recorded yet). */
static int spans_new(struct ctp_engine *eng)
{
	struct ctp_walk *wk = eng->walk;
	struct ctp_capture *cap = eng->cap;
	cap->spans = calloc(wk->n_tgids ? wk->n_tgids : 1, sizeof(*cap->spans));
	if (!cap->spans)
		return -ENOMEM;
	for (size_t i = 0; i < wk->n_tgids; i++)
		cap->spans[i].proc_row = UINT32_MAX;
	return 0;
}

/* Pass "list": the tasks of the walk source (`listed`, source_list's
 * return), else the tgids under the proc root, ascending; and a span per
 * tgid. */
static int list_pass(struct ctp_engine *eng, int listed)
{
	struct ctp_walk *wk = eng->walk;
	if (listed < 0)
		return listed;
	if (listed > 0)
		return spans_new(eng);
	size_t capn = 0;
	int ret = list_root(eng, &wk->tgids, &capn, &wk->n_tgids);
	return ret < 0 ? ret : spans_new(eng);
}

/* nw workers with their per-plugin call counters; NULL when short of
 * memory. */
static struct worker *workers_new(struct ctp_engine *eng, uint32_t nw)
{
	struct worker *ws = calloc(nw, sizeof(*ws));
	for (uint32_t i = 0; ws && i < nw; i++) {
		ws[i].stats =
			calloc(eng->cap->n_plugins ? eng->cap->n_plugins : 1,
			       sizeof(*ws[i].stats));
		if (!ws[i].stats ||
		    slots_new(&ws[i], eng->cap->n_plugins) < 0) {
			for (uint32_t k = 0; k <= i; k++)
				worker_free(&ws[k]);
			free(ws);
			return NULL;
		}
		ws[i].eng = eng;
		ws[i].last_comm_id = -1;
		ws[i].last_cgrow = -1;
		ws[i].id = (uint16_t)i;
		ctp_table_init(&ws[i].threads_tab);
		ctp_table_init(&ws[i].procs_tab);
		ws[i].threads = &ws[i].threads_tab;
		ws[i].procs = &ws[i].procs_tab;
	}
	return ws;
}

/*
 * Pass "walk": every tgid, by nw workers. One worker walks on the calling
 * thread: no thread to wake, and libc keeps its single-threaded fast
 * paths (no cancellation bookkeeping around every read and open); more
 * are the pool's threads (started by the first capture, kept from capture
 * to capture), which the calling thread waits for, showing progress
 * when it takes a while. Returns how many workers ran, or sets *ret when one
 * could not start.
 */
static uint32_t walk_pass(struct ctp_engine *eng, struct worker *ws,
			  uint32_t nw, int *ret)
{
	struct ctp_walk *wk = eng->walk;
	uint64_t t0 = ctp_now_ns();
	uint32_t started = 0;
	bool shown = false;
	if (nw == 1) {
		walk(&ws[0], eng->progress, t0, &shown);
		started = 1;
	} else {
		started = pool_start(eng, nw);
		if (started < nw)
			*ret = -EAGAIN;
		if (started)
			pool_round(eng, ws, started);
	}
	pthread_mutex_lock(&wk->done_lock);
	while (nw > 1 && atomic_load(&wk->workers_done) < started) {
		struct timespec ts;
		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_nsec += 250000000;
		if (ts.tv_nsec >= 1000000000) {
			ts.tv_sec++;
			ts.tv_nsec -= 1000000000;
		}
		pthread_cond_timedwait(&wk->done_cond, &wk->done_lock, &ts);
		if (eng->progress && ctp_now_ns() - t0 > 1000000000ull) {
			progress_line(eng, ws, started, t0, false);
			shown = true;
		}
	}
	pthread_mutex_unlock(&wk->done_lock);
	if (shown)
		progress_line(eng, ws, started, t0, true);
	return started;
}

/* One worker's result into the capture: its tables, tallies and plugin
 * call counters. Returns the worker's error, else 0. */
static int merge_worker(struct ctp_capture *cap, uint32_t i, struct worker *w)
{
	struct ctp_readfail *rf = &cap->rf;
	rf->tids_walked += w->tids_walked;
	rf->tids_recorded += w->tids_recorded;
	rf->tids_vanished += w->tids_vanished;
	rf->tgids_walked += w->tgids_walked;
	rf->tgids_vanished += w->tgids_vanished;
	rf->tids_unread_resource += w->tids_unread_resource;
	rf->tgids_unread_resource += w->tgids_unread_resource;
	if (!rf->resource_err)
		rf->resource_err = w->resource_err;
	for (uint32_t f = 0; f < CTP_MAX_FILES; f++) {
		rf->failures[f] += w->fail[f];
		rf->missing[f] += w->missing[f];
		rf->denied[f] += w->denied[f];
		rf->resource[f] += w->resource[f];
	}
	for (uint32_t p = 0; p < cap->n_plugins; p++) {
		struct ctp_plugin_info *info = &cap->plugins[p];
		const struct callstat *st = &w->stats[p];
		atomic_fetch_add(&info->time_ns, st->time_ns);
		atomic_fetch_add(&info->calls, st->calls);
		atomic_fetch_add(&info->errors, st->errors);
		atomic_fetch_add(&info->vanished, st->vanished);
		atomic_fetch_add(&info->resource, st->resource);
		for (uint32_t k = 0; k < info->n_summary; k++)
			if (st->summary[k])
				atomic_fetch_add(&info->summary[k],
						 st->summary[k]);
	}
	if (cap->xspans && w->n_xspans) {
		memcpy(cap->xspans + cap->n_xspans, w->xspans,
		       w->n_xspans * sizeof(*w->xspans));
		cap->n_xspans += w->n_xspans;
	}
	ctp_table_done(&cap->threads[i]);
	ctp_table_done(&cap->procs[i]);
	cap->threads[i] = w->threads_tab;
	cap->procs[i] = w->procs_tab;
	return w->result < 0 ? w->result : 0;
}

/* Pass "merge": every worker's result into the capture, the workers
 * freed. Returns the first worker error, else `ret`. */
static int merge_pass(struct ctp_capture *cap, struct worker *ws, uint32_t nw,
		      uint32_t started, int ret)
{
	size_t nx = 0;
	for (uint32_t i = 0; i < started; i++)
		nx += ws[i].n_xspans;
	if (nx) {
		cap->xspans = malloc(nx * sizeof(*cap->xspans));
		if (!cap->xspans && ret == 0)
			ret = -ENOMEM;
	}
	for (uint32_t i = 0; i < started; i++) {
		int r = merge_worker(cap, i, &ws[i]);
		if (r < 0 && ret == 0)
			ret = r;
	}
	for (uint32_t i = 0; i < nw; i++)
		worker_free(&ws[i]);
	free(ws);
	return ret;
}

/* Split processes: the thread count of the process row is the owner's
 * threads plus its chunks'; none at all, and the process exited under us
 * like any other, or is unread when threads of it were. */
static void complete_splits(struct ctp_engine *eng)
{
	struct ctp_walk *wk = eng->walk;
	struct ctp_capture *cap = eng->cap;
	for (size_t i = 0; i < wk->splits.n; i++) {
		struct ctp_split *sp = wk->splits.v[i];
		struct ctp_span *span = &cap->spans[sp->span];
		uint32_t total = span->nthreads + atomic_load(&sp->recorded);
		if (span->proc_row != UINT32_MAX && total == 0) {
			span->proc_row = UINT32_MAX;
			if (atomic_load(&sp->unread))
				cap->rf.tgids_unread_resource++;
			else
				cap->rf.tgids_vanished++;
		} else if (span->proc_row != UINT32_MAX) {
			ctp_table_set(&cap->procs[span->worker], span->proc_row,
				      CTP_PCOL_NTHREADS, total);
		}
	}
	ctp_splitq_clear(&wk->splits);
}

/* Keep only processes that were recorded, in tgid order. */
static void keep_recorded(struct ctp_engine *eng)
{
	struct ctp_capture *cap = eng->cap;
	size_t n = 0;
	for (size_t i = 0; i < eng->walk->n_tgids; i++)
		if (cap->spans[i].proc_row != UINT32_MAX)
			cap->spans[n++] = cap->spans[i];
	cap->n_spans = n;
}

/* Processes by v2 cgroup from the cgroups' listings (cgroups.h), so that
 * a process needs no cgroup file of its own read; not on a copied tree. */
static void list_processes(struct ctp_engine *eng)
{
	struct ctp_walk *wk = eng->walk;
	atomic_store(&wk->procs_hits, 0);
	atomic_store(&wk->threads_hits, 0);
	wk->procs.ok = false;
	if (!wk->check_files &&
	    ctp_cg_procs_build(&wk->procs, eng->roots.cgroup_fd,
			       eng->roots.proc_fd) == -EXDEV)
		ctp_log(CTP_LOG_DEBUG,
			"cgroup listings do not name this process as its "
			"cgroup file does: each process reads its own");
}

/* The index of `stat` among files read up front (or declared lazy too,
 * with lazy_ok), or -1. */
static int stat_file(const struct ctp_filedef *defs, uint32_t n, bool lazy_ok)
{
	int lazy = -1;
	for (uint32_t i = 0; i < n; i++) {
		if (strcmp(defs[i].name, "stat") != 0)
			continue;
		if (!defs[i].lazy)
			return (int)i;
		lazy = (int)i;
	}
	return lazy_ok ? lazy : -1;
}

/* Whether a process source may serve this capture's process rows (a
 * loaded provider, sources not hidden). */
static bool process_source_live(const struct ctp_engine *eng)
{
	if (eng->sources_off)
		return false;
	for (uint32_t i = 0; i < eng->n_sources; i++)
		if (eng->sources[i].scope == CTP_SCOPE_PROCESS &&
		    eng->cap->plugins[eng->sources[i].plugin].status ==
			    CTP_PST_LOADED)
			return true;
	return false;
}

int ctp_engine_capture(struct ctp_engine *eng)
{
	struct ctp_walk *wk = eng->walk;
	struct ctp_capture *cap = eng->cap;
	uint32_t nw = cap->n_workers;
	int ret = 0;

	int64_t hrow = ctp_table_add_row(&cap->host);
	if (hrow < 0)
		return (int)hrow;
	struct rlimit nofile;
	cap->rf.nofile_limit = getrlimit(RLIMIT_NOFILE, &nofile) == 0 &&
					       nofile.rlim_cur != RLIM_INFINITY
				       ? nofile.rlim_cur
				       : 0;
	host_calls(eng, false);
	binds_resolve(eng);
	wk->stat_thread =
		stat_file(eng->thread_files, eng->n_thread_files, false);
	/* The process is named from its stat (and its leader's state read
	 * there): a lazy <tgid>/stat too is read up front, as its reader
	 * would fetch it anyway, unless a process source may serve its
	 * values (then the name comes from the walk source's list or comm). */
	wk->stat_process = stat_file(eng->process_files, eng->n_process_files,
				     !process_source_live(eng));
	/* The walk source's list first: the pass its provider took in its
	 * host callback, as close to it as can be (every process's read
	 * time), then the cgroups' listings. */
	int listed = source_list(eng);
	list_processes(eng);
	if ((ret = list_pass(eng, listed)) < 0)
		return ret;
	struct worker *ws = workers_new(eng, nw);
	if (!ws)
		return -ENOMEM;
	choose_sharing(eng, nw);
	uint32_t started = walk_pass(eng, ws, nw, &ret);
	if (wk->procs.ok)
		ctp_log(CTP_LOG_DEBUG,
			"cgroup listings placed %" PRIu64
			" processes and %" PRIu64
			" threads of threaded cgroups",
			atomic_load(&wk->procs_hits),
			atomic_load(&wk->threads_hits));
	ret = merge_pass(cap, ws, nw, started, ret);
	complete_splits(eng);
	if (ret < 0)
		return ret;
	keep_recorded(eng);
	cap->cgroups_boottime_ns = ctp_boottime_ns();
	cgroup_calls(eng);
	host_calls(eng, true);
	for (uint32_t i = 0; !cap->rf.resource_err && i < cap->n_plugins; i++)
		cap->rf.resource_err =
			atomic_load(&cap->plugins[i].resource_err);
	if (eng->stop && *eng->stop)
		return -EINTR;
	return 0;
}
