/* SPDX-License-Identifier: MIT */
/*
 * abi-walk: a test collector offering a walk source (struct
 * ctp_source_desc.walk), "abi-walk", made by listing the core's proc root
 * in its host callback: every numeric <tgid>, every tid of <tgid>/task,
 * sorted by tgid then tid. Options:
 *   mode   ok (default), fail (walk() returns -EPERM), unsorted (the list
 *          reversed), zero (the first task's tid 0), empty (no task)
 *   comm   task (default): the name from <tgid>/task/<tid>/comm, or, when
 *          that cannot be read or does not fit comm[16], none and
 *          CTP_WALK_COMM_FILE; live: from /proc/<tid>/comm (never a path
 *          under task/<tid>/ of the proc root); file: always
 *          CTP_WALK_COMM_FILE
 *   fetch  true (default): the thread callback fetches its declared
 *          thread files (stat, status, io) and records a hash of each;
 *          false: it fetches none
 *   tgid   0 (default): every process; else only that one's tasks are
 *          listed (a walk of what a live test controls)
 *   ghost  0 (default), else a process of one thread with this id is
 *          listed too, named "ghost" (one the proc root does not have)
 *   omit   0 (default), else this process's tasks are left out of the
 *          list (one the proc root has and the pass did not see)
 *   complete  none (default): the source says nothing of its list's
 *          completeness; yes: it says so (CTP_SOURCE_WALK_SAYS_COMPLETE)
 *          and walk() calls each list complete (CTP_WALK_COMPLETE); no:
 *          it says so and walk() calls none complete (0); counted: it
 *          says only how many its list lacks
 *          (CTP_SOURCE_WALK_SAYS_MISSING), none (CTP_WALK_MISSING(0))
 *   missing  0 (default); else the source also says how many tasks its
 *          list lacks (CTP_SOURCE_WALK_SAYS_MISSING) and walk() returns
 *          CTP_WALK_MISSING(missing) for each list
 * It declares the processes' stat too (read by the core for every
 * process, whatever the walk). Its thread callback also records the tid
 * of task->walked (0 when the
 * core listed the proc root) and fails (-EPROTO) when that entry is not
 * the task's, and whether it got a thread directory (task->dirfd). It
 * needs none (CTP_PLUGIN_NO_THREAD_DIR), unless built as abi-walk-dir.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <ctprof/plugin.h>

/* Built a second time as abi-walk-dir (ABI_WALK_DIR): without
 * CTP_PLUGIN_NO_THREAD_DIR, so the core opens each thread's directory;
 * a third as abi-walk-lazy (ABI_WALK_LAZY): the processes' stat declared
 * lazy, so, with a process source loaded, the core reads none and names
 * each process from the list. */
#ifdef ABI_WALK_DIR
#define ABI_WALK_NAME  "abi-walk-dir"
#define ABI_WALK_NODIR 0
#elif defined(ABI_WALK_LAZY)
#define ABI_WALK_NAME  "abi-walk-lazy"
#define ABI_WALK_NODIR CTP_PLUGIN_NO_THREAD_DIR
#else
#define ABI_WALK_NAME  "abi-walk"
#define ABI_WALK_NODIR CTP_PLUGIN_NO_THREAD_DIR
#endif
#define N(field) ABI_WALK_NAME "." field

enum { F_STAT, F_STATUS, F_IO, F_WALKED, F_DIR, F_N };

static const struct ctp_field_desc fields[] = {
	{.name = N("stat_hash"),
	 .help = "FNV-1a of the thread's stat as the core handed it",
	 .scope = CTP_SCOPE_THREAD,
	 .type = CTP_TYPE_U64,
	 .kind = CTP_KIND_CATEGORICAL,
	 .rule = CTP_RULE_MODE},
	{.name = N("status_hash"),
	 .help = "FNV-1a of the thread's status as the core handed it",
	 .scope = CTP_SCOPE_THREAD,
	 .type = CTP_TYPE_U64,
	 .kind = CTP_KIND_CATEGORICAL,
	 .rule = CTP_RULE_MODE},
	{.name = N("io_hash"),
	 .help = "FNV-1a of the thread's io as the core handed it",
	 .scope = CTP_SCOPE_THREAD,
	 .type = CTP_TYPE_U64,
	 .kind = CTP_KIND_CATEGORICAL,
	 .rule = CTP_RULE_MODE},
	{.name = N("walked_tid"),
	 .help = "the tid of task->walked, 0 when the proc root was listed",
	 .scope = CTP_SCOPE_THREAD,
	 .type = CTP_TYPE_U64,
	 .kind = CTP_KIND_CATEGORICAL,
	 .rule = CTP_RULE_MODE},
	{.name = N("thread_dir"),
	 .help = "the thread callback got a directory (task->dirfd)",
	 .scope = CTP_SCOPE_THREAD,
	 .type = CTP_TYPE_BOOL,
	 .kind = CTP_KIND_CATEGORICAL,
	 .rule = CTP_RULE_MODE},
};

static const char *const thread_files[] = {"stat", "status", "io", NULL};
#ifdef ABI_WALK_LAZY
static const char *const process_files[] = {"?stat", NULL};
#else
/* Read for every process: the core tells a live leader by it. */
static const char *const process_files[] = {"stat", NULL};
#endif

static const char *const modes[] = {"ok",   "fail",  "unsorted",
				    "zero", "empty", NULL};
static const char *const comms[] = {"task", "live", "file", NULL};
static const char *const completes[] = {"none", "yes", "no", "counted", NULL};

static const struct ctp_option_desc options[] = {
	{.name = "mode",
	 .help = "what walk() returns",
	 .type = CTP_OPT_STRING,
	 .def = "ok",
	 .choices = modes},
	{.name = "comm",
	 .help = "where the list's names come from",
	 .type = CTP_OPT_STRING,
	 .def = "task",
	 .choices = comms},
	{.name = "fetch",
	 .help = "fetch the declared thread files",
	 .type = CTP_OPT_BOOL,
	 .def = "true"},
	{.name = "tgid",
	 .help = "list only this process's tasks (0: every process's)",
	 .type = CTP_OPT_U64,
	 .def = "0",
	 .max = INT32_MAX},
	{.name = "ghost",
	 .help = "list a process of this id too (0: none)",
	 .type = CTP_OPT_U64,
	 .def = "0",
	 .max = INT32_MAX},
	{.name = "omit",
	 .help = "leave this process's tasks out of the list (0: none)",
	 .type = CTP_OPT_U64,
	 .def = "0",
	 .max = INT32_MAX},
	{.name = "missing",
	 .help = "the tasks walk() says its list lacks (0: says nothing)",
	 .type = CTP_OPT_U64,
	 .def = "0",
	 .max = 1000000},
	{.name = "complete",
	 .help = "what walk() says of its list's completeness",
	 .type = CTP_OPT_STRING,
	 .def = "none",
	 .choices = completes},
};

struct state {
	const struct ctp_api *api;
	struct ctp_ctx *ctx;
	int h[F_N];
	char mode[16], comm[16], complete[8];
	bool fetch;
	uint64_t tgid, ghost, omit, missing;
	struct ctp_walk_task *list;
	size_t n, cap;
};

static struct state the_state;

static int add(struct state *st, int32_t tgid, int32_t tid)
{
	if (st->n == st->cap) {
		size_t nc = st->cap ? 2 * st->cap : 256;
		struct ctp_walk_task *nl = realloc(st->list, nc * sizeof(*nl));
		if (!nl)
			return -ENOMEM;
		st->list = nl;
		st->cap = nc;
	}
	st->list[st->n++] = (struct ctp_walk_task){.tgid = tgid, .tid = tid};
	return 0;
}

/* The numeric entries of dirfd/rel as tasks of tgid (0: each its own). */
static int list_dir(struct state *st, int dirfd, const char *rel, int32_t tgid)
{
	int fd = openat(dirfd, rel, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	DIR *d = fdopendir(fd);
	if (!d) {
		close(fd);
		return -errno;
	}
	int r = 0;
	struct dirent *e;
	while (r == 0 && (e = readdir(d)) != NULL) {
		char *end;
		long id = strtol(e->d_name, &end, 10);
		if (*end || id <= 0 || e->d_name[0] < '0' || e->d_name[0] > '9')
			continue;
		r = add(st, tgid ? tgid : (int32_t)id, (int32_t)id);
	}
	closedir(d);
	return r;
}

static int cmp_task(const void *a, const void *b)
{
	const struct ctp_walk_task *x = a, *y = b;
	if (x->tgid != y->tgid)
		return x->tgid < y->tgid ? -1 : 1;
	return (x->tid > y->tid) - (x->tid < y->tid);
}

/* The task's name into t->comm, or CTP_WALK_COMM_FILE. */
static void name_task(struct state *st, int proc_fd, struct ctp_walk_task *t)
{
	char path[64], buf[64];
	int fd = -1;
	if (strcmp(st->comm, "task") == 0) {
		snprintf(path, sizeof(path), "%d/task/%d/comm", t->tgid,
			 t->tid);
		fd = openat(proc_fd, path, O_RDONLY | O_CLOEXEC);
	} else if (strcmp(st->comm, "live") == 0) {
		snprintf(path, sizeof(path), "/proc/%d/comm", t->tid);
		fd = open(path, O_RDONLY | O_CLOEXEC);
	}
	ssize_t n = fd >= 0 ? read(fd, buf, sizeof(buf) - 1) : -1;
	if (fd >= 0)
		close(fd);
	if (n > 0 && buf[n - 1] == '\n')
		n--;
	if (n < 0 || (size_t)n >= sizeof(t->comm) ||
	    memchr(buf, 0, (size_t)n)) {
		t->flags = CTP_WALK_COMM_FILE;
		return;
	}
	memcpy(t->comm, buf, (size_t)n);
	t->comm[n] = '\0';
}

/* The pass: the whole list, made again each capture. */
static int walk_host(void *state, struct ctp_record *rec)
{
	struct state *st = state;
	(void)rec;
	int proc_fd = st->api->roots(st->ctx)->proc_fd;
	st->n = 0;
	int r = st->tgid ? add(st, (int32_t)st->tgid, (int32_t)st->tgid)
			 : list_dir(st, proc_fd, ".", 0);
	if (r < 0)
		return r;
	size_t ntg = st->n;
	for (size_t i = 0; i < ntg && r >= 0; i++) {
		char rel[32];
		snprintf(rel, sizeof(rel), "%d/task", st->list[i].tgid);
		r = list_dir(st, proc_fd, rel, st->list[i].tgid);
		if (r == -ENOENT)
			r = 0; /* gone, or no task/: a vanished process */
	}
	if (r < 0)
		return r;
	/* The tgid entries were placeholders: the tasks follow them. */
	memmove(st->list, st->list + ntg, (st->n - ntg) * sizeof(*st->list));
	st->n -= ntg;
	for (size_t i = 0; i < st->n; i++)
		name_task(st, proc_fd, &st->list[i]);
	if (st->ghost) {
		if ((r = add(st, (int32_t)st->ghost, (int32_t)st->ghost)) < 0)
			return r;
		memcpy(st->list[st->n - 1].comm, "ghost", 6);
	}
	if (st->omit) {
		size_t k = 0;
		for (size_t i = 0; i < st->n; i++)
			if ((uint64_t)st->list[i].tgid != st->omit)
				st->list[k++] = st->list[i];
		st->n = k;
	}
	qsort(st->list, st->n, sizeof(*st->list), cmp_task);
	if (strcmp(st->mode, "unsorted") == 0) {
		for (size_t i = 0; i < st->n / 2; i++) {
			struct ctp_walk_task t = st->list[i];
			st->list[i] = st->list[st->n - 1 - i];
			st->list[st->n - 1 - i] = t;
		}
	} else if (strcmp(st->mode, "zero") == 0 && st->n) {
		st->list[0].tid = 0;
	} else if (strcmp(st->mode, "empty") == 0) {
		st->n = 0;
	}
	return 0;
}

static int walk_list(void *state, const struct ctp_walk_task **tasks, size_t *n)
{
	struct state *st = state;
	if (strcmp(st->mode, "fail") == 0)
		return -EPERM;
	*tasks = st->list;
	*n = st->n;
	if (st->missing || strcmp(st->complete, "counted") == 0)
		return CTP_WALK_MISSING((int)st->missing);
	return strcmp(st->complete, "yes") == 0 ? CTP_WALK_COMPLETE : 0;
}

static int walk_fill(void *state, const struct ctp_task *task, void *buf,
		     size_t cap, size_t *len)
{
	(void)state;
	if (cap < sizeof(task->tid))
		return -ENOSPC;
	memcpy(buf, &task->tid, sizeof(task->tid));
	*len = sizeof(task->tid);
	return 0;
}

static int walk_init(struct ctp_ctx *ctx, const struct ctp_api *api,
		     void **statep)
{
	struct state *st = &the_state;
	const char *v;
	st->api = api;
	st->ctx = ctx;
	for (int i = 0; i < F_N; i++)
		st->h[i] = api->field_handle(ctx, (uint32_t)i);
	snprintf(st->mode, sizeof(st->mode), "%s",
		 api->opt_str(ctx, "mode", &v) == 0 ? v : "ok");
	snprintf(st->comm, sizeof(st->comm), "%s",
		 api->opt_str(ctx, "comm", &v) == 0 ? v : "task");
	st->fetch = !(api->opt_str(ctx, "fetch", &v) == 0 &&
		      (strcmp(v, "false") == 0 || strcmp(v, "no") == 0 ||
		       strcmp(v, "off") == 0 || strcmp(v, "0") == 0));
	if (api->opt_u64(ctx, "tgid", &st->tgid) < 0)
		st->tgid = 0;
	if (api->opt_u64(ctx, "ghost", &st->ghost) < 0)
		st->ghost = 0;
	if (api->opt_u64(ctx, "omit", &st->omit) < 0)
		st->omit = 0;
	snprintf(st->complete, sizeof(st->complete), "%s",
		 api->opt_str(ctx, "complete", &v) == 0 ? v : "none");
	if (api->opt_u64(ctx, "missing", &st->missing) < 0)
		st->missing = 0;
	struct ctp_source_desc d = {
		.abi = CTP_ABI_MAJOR,
		.size = sizeof(d),
		.name = ABI_WALK_NAME,
		.fill = walk_fill,
		.walk = walk_list,
		.flags = (strcmp(st->complete, "none") == 0 ||
					  strcmp(st->complete, "counted") == 0
				  ? 0
				  : CTP_SOURCE_WALK_SAYS_COMPLETE) |
			 (st->missing || strcmp(st->complete, "counted") == 0
				  ? CTP_SOURCE_WALK_SAYS_MISSING
				  : 0),
	};
	/* A flag the core does not know, or walk's flag without a walk:
	 * refused. */
	struct ctp_source_desc bad = d;
	bad.flags = 1u << 31;
	if (api->source_add(ctx, &bad) != -EINVAL)
		return -EPROTO;
	bad.flags = CTP_SOURCE_WALK_SAYS_COMPLETE;
	bad.walk = NULL;
	if (api->source_add(ctx, &bad) != -EINVAL)
		return -EPROTO;
	int r = api->source_add(ctx, &d);
	if (r < 0)
		return r;
	*statep = st;
	return 0;
}

static void walk_fini(void *state)
{
	struct state *st = state;
	free(st->list);
	st->list = NULL;
	st->n = st->cap = 0;
}

static uint64_t fnv1a(const char *p, size_t n)
{
	uint64_t h = 0xcbf29ce484222325ull;
	for (size_t i = 0; i < n; i++)
		h = (h ^ (unsigned char)p[i]) * 0x100000001b3ull;
	return h;
}

static int walk_thread(void *state, const struct ctp_task *task,
		       struct ctp_record *rec)
{
	struct state *st = state;
	int ret = 0;
	if (task->walked && (task->walked->tid != task->tid ||
			     task->walked->tgid != task->tgid))
		return -EPROTO;
	st->api->set_u64(rec, st->h[F_WALKED],
			 task->walked ? (uint64_t)task->walked->tid : 0);
	st->api->set_bool(rec, st->h[F_DIR], task->dirfd >= 0);
	for (uint32_t i = 0; st->fetch && i < F_WALKED; i++) {
		const struct ctp_file *f = &task->files[i];
		int r = f->err;
		if (r == -ENODATA)
			r = st->api->file_get(task, i, &f);
		if (r == 0 && f->data)
			st->api->set_u64(rec, st->h[i], fnv1a(f->data, f->len));
		else if (r == -ENOENT || r == -ESRCH)
			ret = r;
	}
	return ret;
}

CTP_EXPORT const struct ctp_plugin ctp_plugin_v1 = {
	CTP_PLUGIN_HEADER,
	.name = ABI_WALK_NAME,
	.version = "0",
	.description = "a walk source listed from the proc root",
	.flags = CTP_PLUGIN_MT_SAFE | CTP_PLUGIN_FD_LOCAL |
		 CTP_PLUGIN_SPLITTABLE | ABI_WALK_NODIR | CTP_PLUGIN_OPTIONS,
	CTP_PLUGIN_FIELDS(fields),
	CTP_PLUGIN_OPTION_TABLE(options),
	.thread_files = thread_files,
	.process_files = process_files,
	.init = walk_init,
	.fini = walk_fini,
	.host = walk_host,
	.thread = walk_thread,
};
