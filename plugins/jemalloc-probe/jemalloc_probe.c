// SPDX-License-Identifier: MIT
/*
 * jemalloc-probe: per-thread lifetime allocated/deallocated bytes of
 * jemalloc-linked processes, read from jemalloc's thread-specific data
 * without stopping the target (README.md).
 *
 * The engine calls `process` for a tgid and then `thread` for each of its
 * tids on the same worker. `process` does all the work for the tgid: find
 * jemalloc among the mapped files (cached per file and per process
 * identity), read every thread's counters through libthread_db (or the
 * opt-in ptrace fallback), and keep the answers in the worker's table;
 * `thread` only looks its tid up there.
 *
 * Options:
 *   method: thread_db (default: stop-free only, never ptrace), auto
 *           (libthread_db, and the ptrace fallback, which stops each
 *           thread briefly, when it cannot serve; opt-in), ptrace (always;
 *           for comparison)
 *   ptrace_timeout_ms: 1..10000 (default 100) bound on each stop wait
 */
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/capability.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "jep.h"
#include "statedir.h"
#include "workers.h"
#include "ctprof/plugin-util.h"

#ifndef JEP_PLUGIN_VERSION
#define JEP_PLUGIN_VERSION "0"
#endif

#define MAX_THREADS 65536

enum { F_ALLOC, F_DEALLOC, F_LAYOUT, N_FIELDS };

static const struct ctp_field_desc fields[] = {
	[F_ALLOC] = CTP_FIELD_COUNTER(
		"jemalloc.allocated_bytes", THREAD, BYTES,
		"Bytes this thread allocated through jemalloc "
		"over its lifetime (tsd thread_allocated)"),
	[F_DEALLOC] = CTP_FIELD_COUNTER(
		"jemalloc.deallocated_bytes", THREAD, BYTES,
		"Bytes this thread freed through jemalloc over "
		"its lifetime (tsd thread_deallocated)"),
	[F_LAYOUT] = CTP_FIELD(
		"jemalloc.layout", PROCESS, STRING, NONE, CATEGORICAL, MODE,
		"Where the tsd_s offsets of the process's jemalloc came from: "
		"dwarf, or the name of the layouts table entry"),
};

/* Memory freed by another thread makes one thread's difference negative;
 * over a whole process it estimates the live jemalloc heap. */
static const struct ctp_derived_desc live_heap_desc = {
	.abi = CTP_ABI_MAJOR,
	.size = sizeof(struct ctp_derived_desc),
	.field = CTP_FIELD("jemalloc.live_heap", THREAD, I64, BYTES, GAUGE, MAX,
			   "Allocated minus deallocated jemalloc bytes "
			   "(signed; sum over a process estimates its heap)"),
	.n_terms = 2,
	.terms = {{.field = "jemalloc.allocated_bytes", .coef = 1},
		  {.field = "jemalloc.deallocated_bytes", .coef = -1}},
};

/* ---- Summary counters ------------------------------------------------------
 * Fixed ones, then one per tag ("tag.<name>"). */
enum {
	S_WALKED,
	S_DETECTED,
	S_THREADS_OK,
	S_FAILURES,
	S_METHOD_TDB,
	S_METHOD_PTRACE,
	S_PRIVILEGE,
	S_CACHE_HITS,
	S_OFFSETS_DWARF,
	S_OFFSETS_TABLE,
	S_FILES_KEPT,
	S_MAPS_KEPT,
	N_FIXED
};
#define N_COUNTERS (N_FIXED + CTP_JEP_N_TAGS)
static const char *const counter_names[N_COUNTERS] = {
	[S_WALKED] = "processes_walked",
	[S_DETECTED] = "jemalloc_detected",
	[S_THREADS_OK] = "threads_ok",
	[S_FAILURES] = "failures",
	[S_METHOD_TDB] = "method_thread_db",
	[S_METHOD_PTRACE] = "method_ptrace",
	[S_PRIVILEGE] = "privilege_denied",
	[S_CACHE_HITS] = "cache_hits",
	[S_OFFSETS_DWARF] = "offsets_dwarf",
	[S_OFFSETS_TABLE] = "offsets_table",
	[S_FILES_KEPT] = "files_kept",
	[S_MAPS_KEPT] = "maps_kept",
#define TAG_COUNTER(id, name) [N_FIXED + (id)] = "tag." name,
	CTP_JEP_TAGS(TAG_COUNTER)
#undef TAG_COUNTER
};

/* ---- Caches ----------------------------------------------------------------
 * Files by (dev, inode): what ctp_jep_file_probe found. Processes by the
 * identity of their executable and every executable mapping: which file
 * (if any) holds jemalloc, so a repeat process costs one maps read
 * (procelf.h, shared with appstats, which reads the same bytes: the core
 * reads "maps" once per process for both). */

static const char *const process_files[] = {CTP_PROCELF_MAPS_FILE, NULL};

struct worker {
	int32_t tgid; /* whose table this is; -1: none */
	struct ctp_jep_counters *c;
	size_t n;
	struct ctp_maps maps;
	int32_t *tids;
	size_t tids_cap;
};

struct jep_state {
	struct ctp_ctx *ctx;
	const struct ctp_api *api;
	int fh[N_FIELDS];
	int ch[N_COUNTERS];
	_Atomic uint64_t n[N_COUNTERS];
	bool live;
	bool fallback;	  /* ptrace when libthread_db fails (method: auto) */
	bool ptrace_only; /* method: ptrace */
	bool debuginfod;  /* option debuginfod: build-ids may be sent */
	unsigned timeout_ms;
	pid_t self;
	pthread_mutex_t lock;	     /* the examples of each tag */
	struct ctp_workers workers;  /* struct worker */
	struct ctp_file_cache files; /* struct ctp_jep_file */
	struct ctp_ident_cache idents;
	struct ctp_maps_memo memo; /* the maps of the capture before */
	bool privileged;	   /* CAP_SYS_PTRACE effective at init */
	/* Known tsd_s layouts: the option's files first, then the shipped
	 * one (the first entry for a build wins). */
	struct ctp_jep_layouts layouts;
	/* Per tag: denials and the first processes it hit (under lock). */
	struct ctp_jep_seen seen[CTP_JEP_N_TAGS];
	/* This capture's counters of every process read, for the threads a
	 * split process has walked by other workers. */
	struct ctp_shared shared;
	char hint[1024];
};

static void count(struct jep_state *st, int c, uint64_t d)
{
	atomic_fetch_add_explicit(&st->n[c], d, memory_order_relaxed);
	if (st->ch[c] >= 0)
		st->api->summary_add(st->ctx, st->ch[c], d);
}

/* One outcome with its tag: routine tags are not failures. A failure
 * keeps its process as an example of the tag (the first few per tag). */
static void count_tag(struct jep_state *st, const struct ctp_task *task,
		      enum ctp_jep_tag t, int err)
{
	bool denied = err == -EPERM || err == -EACCES;
	struct ctp_jep_seen *s = &st->seen[t];

	count(st, N_FIXED + (int)t, 1);
	if (ctp_jep_tag_routine(t) || t == CTP_JEP_TLS_DEFERRED)
		return;
	count(st, S_FAILURES, 1);
	if (denied)
		count(st, S_PRIVILEGE, 1);
	pthread_mutex_lock(&st->lock);
	if (denied)
		s->denied++;
	ctp_jep_seen_add(s, task->tgid, task->pcomm);
	pthread_mutex_unlock(&st->lock);
}

/* ---- Which file holds jemalloc ---------------------------------------------
 */

/* fd: the mapped file, checked (procelf.h). */
static void probe_file(void *arg, int fd, const char *path, void *out)
{
	struct jep_state *st = arg;
	struct ctp_jep_file *f = out;

	if (ctp_jep_file_probe_fd(fd, path, &st->layouts, st->debuginfod, f) <
	    0) {
		memset(f, 0, sizeof(*f));
		f->tag = CTP_JEP_ELF;
	}
}

/* A file's verdict: jemalloc found; an unreadable file is not evidence of
 * jemalloc, a stripped jemalloc is (its tag is the process's). */
static int verdict(const void *answer, int *tag)
{
	const struct ctp_jep_file *f = answer;

	if (f->found)
		return 1;
	*tag = (int)f->tag;
	return f->tag != CTP_JEP_NOT_JEMALLOC && f->tag != CTP_JEP_ELF ? -1 : 0;
}

static int ensure_table(struct worker *w, size_t n)
{
	void *nc;

	if (n <= w->n)
		return 0;
	nc = realloc(w->c, n * sizeof(*w->c));
	if (!nc)
		return -ENOMEM;
	w->c = nc;
	w->n = n;
	return 0;
}

/*
 * Which mapped file of the process holds jemalloc, from the identity cache
 * or by detection (procelf.h): the file and where it is in *pf; NULL when
 * none (the outcome is counted).
 */
static const struct ctp_jep_file *find_jemalloc(struct jep_state *st,
						struct worker *w,
						const struct ctp_task *task,
						struct ctp_proc_found *pf)
{
	const struct ctp_proc_scan scan = {.files = &st->files,
					   .idents = &st->idents,
					   .probe = probe_file,
					   .arg = st,
					   .verdict = verdict,
					   .none_tag = CTP_JEP_NOT_JEMALLOC,
					   .api = st->api,
					   .maps_file = 0,
					   .memo = &st->memo};
	int r = ctp_proc_find(&scan, &w->maps, task, pf);

	if (r) {
		count_tag(st, task,
			  r == -ENOENT	? CTP_JEP_NOT_JEMALLOC
			  : r == -ESRCH ? CTP_JEP_EXITED
					: CTP_JEP_MAPS,
			  r);
		return NULL;
	}
	if (pf->cache_hit)
		count(st, S_CACHE_HITS, 1);
	if (pf->maps_kept)
		count(st, S_MAPS_KEPT, 1);
	if (!pf->answer)
		count_tag(st, task, (enum ctp_jep_tag)pf->tag, 0);
	return pf->answer;
}

/* The target process: its jemalloc file, maps, root and load bias (from
 * the file's offset-0 mapping). */
static void target_init(struct ctp_jep_target *t, const struct ctp_task *task,
			const struct worker *w, const struct ctp_jep_file *file,
			const struct ctp_proc_found *pf)
{
	static _Thread_local char root[64];
	const struct ctp_map *m = &w->maps.v[pf->idx];

	t->pid = task->tgid;
	t->file = file;
	t->maps = w->maps.v;
	t->n_maps = w->maps.n;
	snprintf(root, sizeof(root), "/proc/%d/root", (int)task->tgid);
	t->root = root;
	if (ctp_maps_bias(t->maps, t->n_maps, m->dev, m->ino,
			  file->first_load_vaddr, file->is_dyn, &t->bias) == 0)
		t->in_main_exe = m->dev == pf->exe_dev && m->ino == pf->exe_ino;
}

/* Every thread's counters into w->c (sorted by tid, for the thread
 * callbacks), through libthread_db or, where allowed, ptrace (never with a
 * table layout, which only the validated libthread_db path reads). true
 * when read. */
static bool read_counters(struct jep_state *st, struct worker *w,
			  const struct ctp_task *task,
			  const struct ctp_jep_target *t, enum ctp_jep_tag tag)
{
	size_t n = 0, cap;
	int r;

	/* Room for the listed threads and some born since; without a
	 * listing, a generous guess (the walk stops at the cap). */
	if (ctp_task_tids(task->dirfd, &w->tids, &w->tids_cap, &n) || !n)
		n = 4096;
	cap = n + 64 < MAX_THREADS ? n + 64 : MAX_THREADS;
	if (ensure_table(w, cap)) {
		count_tag(st, task, CTP_JEP_THREAD_DB, -ENOMEM);
		return false;
	}
	r = st->ptrace_only ? -ENOTSUP
			    : ctp_jep_read_thread_db(t, w->c, cap, &n, &tag);
	if (st->ptrace_only) /* no static-TLS arithmetic for a DSO */
		tag = t->file->from_table ? CTP_JEP_TABLE_PTRACE
		      : t->in_main_exe	  ? CTP_JEP_EXITED
					  : CTP_JEP_STATIC_TLS;
	if (r == 0) {
		count(st, S_METHOD_TDB, 1);
	} else if ((st->fallback || st->ptrace_only) && t->in_main_exe &&
		   !t->file->from_table &&
		   ctp_task_tids(task->dirfd, &w->tids, &w->tids_cap, &n) ==
			   0 &&
		   n) {
		if (ensure_table(w, n))
			return false;
		ctp_jep_read_ptrace(t, w->tids, n, w->c, st->timeout_ms);
		/* In the listing's order; thread_db's come sorted (jep.h). */
		qsort(w->c, n, sizeof(*w->c), ctp_cmp_tid);
		count(st, S_METHOD_PTRACE, 1);
	} else {
		count_tag(st, task, tag, r);
		return false;
	}
	w->tgid = task->tgid;
	w->n = n;
	/* The core may walk a large process's threads on several workers
	 * (CTP_PLUGIN_SPLITTABLE): they find the counters there. */
	ctp_shared_put(&st->shared, task->tgid, w->c, n, sizeof(*w->c));
	return true;
}

static int jep_process(void *state, const struct ctp_task *task,
		       struct ctp_record *rec)
{
	struct jep_state *st = state;
	const struct ctp_jep_file *file;
	struct ctp_jep_target t = {0};
	struct worker *w;
	struct ctp_proc_found pf;

	if (!st->live || task->dirfd < 0 || task->tgid == st->self)
		return 0;
	w = ctp_workers_get(&st->workers);
	if (!w)
		return 0;
	w->tgid = -1;
	count(st, S_WALKED, 1);
	file = find_jemalloc(st, w, task, &pf);
	if (!file)
		return 0;
	count(st, S_DETECTED, 1);
	target_init(&t, task, w, file, &pf);
	if (!read_counters(st, w, task, &t, (enum ctp_jep_tag)pf.tag))
		return 0;
	/* Which offsets served: a reader tells DWARF from table values. */
	const char *layout = file->from_table ? file->layout : "dwarf";
	count(st, file->from_table ? S_OFFSETS_TABLE : S_OFFSETS_DWARF, 1);
	struct ctp_setter set = CTP_SETTER(st->api, rec);
	return ctp_set_str(&set, st->fh[F_LAYOUT], layout, strlen(layout));
}

static int jep_thread(void *state, const struct ctp_task *task,
		      struct ctp_record *rec)
{
	struct jep_state *st = state;
	struct ctp_jep_counters key = {.tid = task->tid};
	const struct ctp_jep_counters *c;
	struct worker *w;

	if (!st->live || task->tgid == st->self)
		return 0;
	w = ctp_workers_mine(&st->workers);
	if (w && w->tgid == task->tgid)
		c = bsearch(&key, w->c, w->n, sizeof(*w->c), ctp_cmp_tid);
	else /* a chunk of a split process: read on another worker */
		c = ctp_shared_find(&st->shared, task->tgid, task->tid);
	if (!c)
		return 0; /* born after the listing, or nothing read */
	if (c->err) {
		count_tag(st, task, c->tag, c->err);
		return 0;
	}
	count(st, S_THREADS_OK, 1);
	struct ctp_setter set = CTP_SETTER(st->api, rec);
	ctp_set_u64(&set, st->fh[F_ALLOC], c->allocated);
	ctp_set_u64(&set, st->fh[F_DEALLOC], c->deallocated);
	return set.err;
}

static void worker_done(void *block)
{
	struct worker *w = block;

	free(w->c);
	ctp_maps_free(&w->maps);
	free(w->tids);
}

static int jep_finish(void *state, struct ctp_record *host_rec)
{
	struct jep_state *st = state;
	uint64_t tags[CTP_JEP_N_TAGS];
	uint64_t fails = atomic_load(&st->n[S_FAILURES]);
	unsigned flags = 0;
	int dom;

	(void)host_rec;
	count(st, S_FILES_KEPT,
	      ctp_file_cache_capture_end(&st->files, st->api, st->ctx));
	/* What this capture did not use of the maps kept. */
	ctp_maps_memo_sweep(&st->memo);
	for (int i = 0; i < CTP_JEP_N_TAGS; i++)
		tags[i] = atomic_load(&st->n[N_FIXED + i]);
	dom = ctp_jep_dominant(tags);
	st->api->log(
		st->ctx, CTP_LOG_INFO,
		"processes walked %" PRIu64 ", jemalloc %" PRIu64
		", threads read %" PRIu64 ", failures %" PRIu64
		" (dominant: %s), thread_db %" PRIu64 ", ptrace %" PRIu64,
		atomic_load(&st->n[S_WALKED]), atomic_load(&st->n[S_DETECTED]),
		atomic_load(&st->n[S_THREADS_OK]), fails,
		dom >= 0 ? ctp_jep_tag_name((enum ctp_jep_tag)dom) : "none",
		atomic_load(&st->n[S_METHOD_TDB]),
		atomic_load(&st->n[S_METHOD_PTRACE]));
	/* Every failure tag with the processes it hit first (-v). */
	pthread_mutex_lock(&st->lock);
	for (int t = 0; t < CTP_JEP_N_TAGS; t++) {
		char ex[256];

		if (!st->seen[t].n)
			continue;
		ctp_jep_examples(ex, sizeof(ex), &st->seen[t], tags[t]);
		st->api->log(st->ctx, CTP_LOG_INFO,
			     "%s: %" PRIu64 " failures (%" PRIu64
			     " permission denials%s): %s",
			     ctp_jep_tag_name((enum ctp_jep_tag)t), tags[t],
			     st->seen[t].denied,
			     st->seen[t].denied && st->privileged
				     ? ", refused despite CAP_SYS_PTRACE"
				     : "",
			     ex);
	}
	if (st->privileged)
		flags |= CTP_JEP_HINT_PRIVILEGED;
	if (!st->fallback && !st->ptrace_only)
		flags |= CTP_JEP_HINT_FALLBACK_OFF;
	ctp_jep_hint(st->hint, sizeof(st->hint), tags, st->seen, flags);
	/* The tallies are this snapshot's: a recording's next starts at 0. */
	memset(st->seen, 0, sizeof(st->seen));
	ctp_shared_clear(&st->shared);
	ctp_workers_reset(&st->workers);
	for (int i = 0; i < N_COUNTERS; i++)
		atomic_store_explicit(&st->n[i], 0, memory_order_relaxed);
	pthread_mutex_unlock(&st->lock);
	/* Always: an empty hint clears the last capture's in a recording. */
	if (!CTP_HAS(st->api, struct ctp_api, set_hint) || !st->api->set_hint)
		return 0;
	st->api->set_hint(st->ctx, st->hint);
	return 0;
}

static void jep_fini(void *state)
{
	struct jep_state *st = state;

	if (!st)
		return;
	ctp_workers_fini(&st->workers, worker_done);
	ctp_shared_fini(&st->shared);
	ctp_jep_layouts_free(&st->layouts);
	ctp_file_cache_fini(&st->files);
	ctp_ident_cache_fini(&st->idents);
	ctp_maps_memo_fini(&st->memo);
	ctp_jep_cleanup();
	pthread_mutex_destroy(&st->lock);
	free(st);
}

CTP_EXPORT extern const struct ctp_plugin ctp_plugin_v1;

static const char *const methods[] = {"thread_db", "auto", "ptrace", NULL};

/* Each file of a `layouts` list (':'-separated) appended to *out: 0, or a
 * negative errno with "FILE:LINE:COL: reason" (or "FILE: reason") in err
 * (out then holds the files before it). */
static int load_list(const char *list, struct ctp_jep_layouts *out, char *err,
		     size_t errlen)
{
	char path[4096];

	for (const char *p = list; *p;) {
		size_t n = strcspn(p, ":");
		int r;

		if (n >= sizeof(path)) {
			snprintf(err, errlen,
				 "a path longer than %zu bytes: %.40s...",
				 sizeof(path) - 1, p);
			return -ENAMETOOLONG;
		}
		if (n) {
			memcpy(path, p, n);
			path[n] = '\0';
			if ((r = ctp_jep_layouts_load(path, out, err, errlen)) <
			    0)
				return r;
		}
		p += n + (p[n] == ':');
	}
	return 0;
}

/* ctp_option_desc.check of `layouts`: every file reads and parses (what
 * init does with them), so check-config reports the one at fault. */
static int check_layouts(const char *value, char *why, size_t whylen)
{
	struct ctp_jep_layouts l = {0};
	int r = load_list(value, &l, why, whylen);

	ctp_jep_layouts_free(&l);
	return r;
}

static int check_answers_state(const char *value, char *why, size_t whylen)
{
	return ctp_statedir_check("answers_state", value, why, whylen);
}

static const struct ctp_option_desc options[] = {
	{.name = "method",
	 .help = "thread_db reads without stopping targets; auto falls back "
		 "to ptrace-stopping threads; ptrace only stops them",
	 .type = CTP_OPT_STRING,
	 .def = "thread_db",
	 .choices = methods},
	{.name = "layouts",
	 .help = "more tsd_s layouts files, ':'-separated, searched before "
		 "the shipped one (README.md: Layouts without DWARF)",
	 .type = CTP_OPT_STRING,
	 .def = "",
	 .check = check_layouts},
	{.name = "ptrace_timeout_ms",
	 .help = "longest a ptrace stop may wait for a thread",
	 .type = CTP_OPT_U64,
	 .def = "100",
	 .min = 1,
	 .max = 10000},
	{.name = "debuginfod",
	 .help = "ask the debuginfod servers of DEBUGINFOD_URLS for the "
		 "debuginfo of stripped jemalloc builds (sends their "
		 "build-ids)",
	 .type = CTP_OPT_BOOL,
	 .def = "false"},
	{.name = "answers_state",
	 .help = "where answers about files that depend on the file alone "
		 "are kept across runs: auto (/run/ctprof-core, or "
		 "$XDG_RUNTIME_DIR/ctprof-core when not root), off, or a "
		 "directory",
	 .type = CTP_OPT_STRING,
	 .def = "auto",
	 .check = check_answers_state},
};

/* The shipped layouts file: jemalloc-probe/layouts.txt beside this
 * plugin's .so. */
static int shipped_layouts(char *buf, size_t len)
{
	Dl_info info;
	const char *slash;

	if (!dladdr((const void *)&ctp_plugin_v1, &info) || !info.dli_fname ||
	    !(slash = strrchr(info.dli_fname, '/')))
		return -ENOENT;
	int n = snprintf(buf, len, "%.*s/jemalloc-probe/layouts.txt",
			 (int)(slash - info.dli_fname), info.dli_fname);
	return n > 0 && (size_t)n < len ? 0 : -ENAMETOOLONG;
}

/* The option's files, then the shipped one: a file named by the option
 * that cannot be read or parsed fails the plugin (a config error); the
 * shipped one missing is only logged. */
static int load_layouts(struct jep_state *st)
{
	const struct ctp_api *api = st->api;
	const char *list = "";
	char path[4096], err[4400];
	int r = api->opt_str(st->ctx, "layouts", &list);

	if (r < 0 && r != -ENOENT)
		return r;
	if (r == 0 &&
	    (r = load_list(list, &st->layouts, err, sizeof(err))) < 0) {
		api->log(st->ctx, CTP_LOG_ERR, "option 'layouts': %s", err);
		return r;
	}
	size_t mine = st->layouts.n;
	if (shipped_layouts(path, sizeof(path)) < 0)
		snprintf(err, sizeof(err), "beside the plugin: not found");
	else if (ctp_jep_layouts_load(path, &st->layouts, err, sizeof(err)) ==
		 0)
		err[0] = '\0';
	if (err[0])
		api->log(st->ctx, CTP_LOG_WARNING,
			 "no shipped tsd_s layouts (%s): jemalloc without "
			 "debug information is read only with the option's",
			 err);
	api->log(st->ctx, CTP_LOG_DEBUG,
		 "%zu tsd_s layouts known (%zu from the option)", st->layouts.n,
		 mine);
	return 0;
}

static int parse_options(struct jep_state *st)
{
	const struct ctp_api *api = st->api;
	const char *m;
	uint64_t v;
	int r, b;

	/* The default never stops a target: the ptrace fallback is opt-in. */
	st->fallback = false;
	r = api->opt_str(st->ctx, "method", &m);
	if (r == 0) {
		if (!strcmp(m, "auto")) {
			st->fallback = true;
		} else if (!strcmp(m, "ptrace")) {
			st->ptrace_only = true;
		} else if (strcmp(m, "thread_db")) {
			api->log(st->ctx, CTP_LOG_ERR,
				 "option 'method': expected thread_db, auto or "
				 "ptrace");
			return -EINVAL;
		}
	} else if (r != -ENOENT) {
		return r;
	}
	st->timeout_ms = 100;
	r = api->opt_u64(st->ctx, "ptrace_timeout_ms", &v);
	if (r == 0 && (v < 1 || v > 10000)) {
		api->log(st->ctx, CTP_LOG_ERR,
			 "option 'ptrace_timeout_ms': expected 1..10000");
		return -EINVAL;
	}
	if (r == 0)
		st->timeout_ms = (unsigned)v;
	else if (r != -ENOENT)
		return r;
	/* Off unless set: a build-id found in another process's file goes
	 * to a server only when the configuration says so, not whenever
	 * the environment has DEBUGINFOD_URLS. */
	r = api->opt_bool(st->ctx, "debuginfod", &b);
	if (r == 0)
		st->debuginfod = b;
	else if (r != -ENOENT)
		return r;
	return load_layouts(st);
}

/* Only an answer made from the file alone is kept across runs. */
static bool keepable(const void *answer)
{
	return ((const struct ctp_jep_file *)answer)->file_only;
}

static int jep_init(struct ctp_ctx *ctx, const struct ctp_api *api,
		    void **state)
{
	const struct ctp_roots *roots;
	struct jep_state *st = calloc(1, sizeof(*st));
	int r;

	if (!st)
		return -ENOMEM;
	st->ctx = ctx;
	st->api = api;
	st->self = getpid();
	st->privileged = ctp_cap_sys_ptrace();
	pthread_mutex_init(&st->lock, NULL);
	ctp_workers_init(&st->workers, sizeof(struct worker));
	ctp_file_cache_init(&st->files, sizeof(struct ctp_jep_file));
	ctp_ident_cache_init(&st->idents);
	ctp_maps_memo_init(&st->memo);
	ctp_shared_init(&st->shared);
	r = CTP_ATTACH(ctx, api, CTP_API_THROUGH(roots), st->fh, st->ch);
	if (r == 0)
		r = parse_options(st);
	if (r < 0)
		goto out;
	if (CTP_API_HAS(api, derived_register))
		api->derived_register(ctx, &live_heap_desc);
	roots = api->roots(ctx);
	st->live = ctp_proc_is_live(roots ? roots->proc_fd : -1);
	if (!st->live)
		api->log(ctx, CTP_LOG_INFO,
			 "proc root is not this host's live procfs: "
			 "jemalloc counters are not read");
	else
		ctp_file_cache_keep_opt(&st->files, api, ctx,
					"jemalloc-probe-files", keepable,
					(const void *)&ctp_plugin_v1);
	*state = st;
	return 0;
out:
	jep_fini(st);
	return r;
}

/* ctprof-core jemalloc-layout [--name NAME] FILE: the layouts line of a
 * jemalloc build with DWARF (README.md, "Learn a layout"). */
static int cmd_layout(int argc, char **argv)
{
	const char *name = NULL, *file = NULL, *why = NULL;
	struct ctp_jep_layout e;
	char line[512];

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
			printf("Usage: ctprof-core jemalloc-layout [--name "
			       "NAME] FILE\n"
			       "Print the tsd_s layouts line of the jemalloc "
			       "build FILE (a library or executable\n"
			       "with DWARF: a -g build, or with its debug "
			       "package installed), for a layouts\n"
			       "file of jemalloc-probe's `layouts` option. "
			       "NAME names the entry (default\n"
			       "VERSION-ARCH).\n");
			return 0;
		}
		if (!strcmp(argv[i], "--name") && i + 1 < argc)
			name = argv[++i];
		else if (argv[i][0] != '-' && !file)
			file = argv[i];
		else
			file = NULL, i = argc;
	}
	if (!file) {
		fprintf(stderr, "Usage: ctprof-core jemalloc-layout [--name "
				"NAME] FILE\n");
		return 2;
	}
	int r = ctp_jep_layout_learn(file, &e, &why);
	if (r < 0) {
		fprintf(stderr, "ctprof-core: jemalloc-layout: %s: %s\n", file,
			why ? why : strerror(-r));
		return 1;
	}
	if (name && !ctp_jep_layout_name_ok(name)) {
		fprintf(stderr, "ctprof-core: jemalloc-layout: --name: 1 to 47 "
				"bytes of [A-Za-z0-9._-]\n");
		return 2;
	}
	if (name)
		snprintf(e.name, sizeof(e.name), "%s", name);
	ctp_jep_layout_line(&e, line, sizeof(line));
	printf("%s\n", line);
	return 0;
}

static const struct ctp_command commands[] = {
	{.name = "jemalloc-layout",
	 .usage = "[--name NAME] FILE  the tsd_s layouts line of a jemalloc "
		  "build with DWARF",
	 .run = cmd_layout},
};

CTP_EXPORT const struct ctp_plugin ctp_plugin_v1 = {
	CTP_PLUGIN_HEADER,
	.name = "jemalloc-probe",
	.version = JEP_PLUGIN_VERSION,
	.description = "per-thread jemalloc allocated/deallocated bytes, "
		       "read without stopping the target",
	.flags = CTP_PLUGIN_CAPS | CTP_PLUGIN_MT_SAFE | CTP_PLUGIN_SPLITTABLE |
		 CTP_PLUGIN_OPTIONS | CTP_PLUGIN_NO_THREAD_DIR,
	CTP_PLUGIN_FIELDS(fields),
	CTP_PLUGIN_OPTION_TABLE(options),
	.process_files = process_files,
	.init = jep_init,
	.fini = jep_fini,
	.process = jep_process,
	.thread = jep_thread,
	.finish = jep_finish,
	CTP_PLUGIN_COUNTER_TABLE(counter_names),
	CTP_PLUGIN_COMMAND_TABLE(commands),
	.capabilities = CTP_CAP_BIT(CAP_SYS_PTRACE),
};
