// SPDX-License-Identifier: MIT
/*
 * appstats: per-thread values applications publish in their own memory
 * (include/ctprof/appstats.h, docs/APPSTATS.md), read with
 * process_vm_readv only: no ptrace, no stop, nothing written.
 *
 * `process` finds the registry symbol among the process's executable
 * mappings (procelf: cached per file and per process identity, so a
 * process without it costs its exe stat and the parse of the maps the core
 * read for it), copies the
 * registry three times, checks it (aps_parse.c), registers each declared
 * field as `app.<name>` and keeps each stable slot's values by tid;
 * `thread` looks its tid up. A registry that fails a check is tagged in
 * appstats.status and nothing of it is recorded.
 *
 * What one publisher may cost the others is capped: a name belongs to its
 * first declaration in the collector run (a process declaring it with
 * another unit, kind or rule loses that field alone), a process owns at
 * most max_names names, a registry over max_registry_bytes is not read,
 * and the registry reads of a capture stop at time_budget_ms (budget.h),
 * the processes left out being read first in the next capture.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <linux/capability.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include "aps.h"
#include "budget.h"
#include "statedir.h"
#include "procelf.h"
#include "workers.h"
#include "ctprof/plugin-util.h"

#ifndef APS_PLUGIN_VERSION
#define APS_PLUGIN_VERSION "0"
#endif

enum { F_STATUS, F_DROPPED, N_FIELDS };

/* The maps, read by the core once per process for every plugin that
 * declares them (jemalloc-probe too), fetched only for a live process. */
static const char *const process_files[] = {CTP_PROCELF_MAPS_FILE, NULL};

static const struct ctp_field_desc fields[] = {
	[F_STATUS] = CTP_FIELD(
		"appstats.status", PROCESS, STRING, NONE, CATEGORICAL, MODE,
		"The process's appstats registry: ok, unset (nothing "
		"declared yet), or why it was refused (nothing recorded)"),
	[F_DROPPED] = CTP_FIELD_COUNTER(
		"appstats.dropped", PROCESS, COUNT,
		"Updates the application dropped because every slot of its "
		"registry was taken"),
};

enum {
	S_WALKED,
	S_PUBLISHERS,
	S_THREADS_OK,
	S_TORN,
	S_FOREIGN,
	S_DUP,
	S_FIELDS_REFUSED,
	S_CACHE_HITS,
	S_SHARED,
	S_READ_US,
	S_FILES_KEPT,
	S_MAPS_KEPT,
	N_FIXED
};
#define N_COUNTERS (N_FIXED + CTP_APS_N_TAGS)
static const char *const counter_names[N_COUNTERS] = {
	[S_WALKED] = "processes_walked",
	[S_PUBLISHERS] = "publishers",
	[S_THREADS_OK] = "threads_ok",
	[S_TORN] = "slots_torn",
	[S_FOREIGN] = "slots_not_a_thread",
	[S_DUP] = "slots_duplicate_tid",
	[S_FIELDS_REFUSED] = "fields_refused",
	[S_CACHE_HITS] = "cache_hits",
	[S_SHARED] = "threads_from_other_workers",
	[S_READ_US] = "read_us",
	[S_FILES_KEPT] = "files_kept",
	[S_MAPS_KEPT] = "maps_kept",
#define TAG_COUNTER(id, name) [N_FIXED + (id)] = "tag." name,
	CTP_APS_TAGS(TAG_COUNTER)
#undef TAG_COUNTER
};

/* What one ELF file says: whether it defines the registry, where. */
struct file_answer {
	bool found;
	uint64_t value, size; /* st_value, st_size */
	uint64_t first_load_vaddr;
	bool is_dyn;
};

/* One thread's values: (handle, value) pairs of the fields registered. */
struct kv {
	int32_t h;
	uint32_t pad;
	uint64_t v;
};
struct rec {
	int32_t tid;
	uint32_t n;
	struct kv kv[];
};

struct worker {
	int32_t tgid; /* whose records these are; -1: none */
	struct ctp_maps maps;
	unsigned char *a, *v, *b; /* three copies of a registry, in order */
	size_t img_cap;
	int32_t *tids; /* the process's threads, sorted */
	size_t n_tids, tids_cap;
	int32_t *nsmap; /* pairs (namespace tid, tid), sorted */
	size_t n_nsmap, nsmap_cap;
	unsigned char *recs;
	size_t rec_size, n_recs, recs_cap;
	int handles[CTP_APS_MAX_FIELDS];
	uint32_t n_handles;
	struct ctp_aps_slot_stats slot_stats;
	uint32_t foreign;
	char why[256]; /* this process's refusal, when it is not a constant */
};

/* The names asked of the core, each with its owner and the core's answer.
 * At most APS_MAX_APP_FIELDS in a collector run: what applications
 * declare cannot fill the core's table of fields. */
#define APS_MAX_APP_FIELDS 1024

/* Options' defaults (README.md, docs/APPSTATS.md). */
#define DEFAULT_MAX_BYTES (1u << 20)
#define DEFAULT_MAX_NAMES 64
#define DEFAULT_BUDGET_MS 50

struct aps_state {
	struct ctp_ctx *ctx;
	const struct ctp_api *api;
	int fh[N_FIELDS];
	int ch[N_COUNTERS];
	bool live;
	pid_t self;
	uint64_t self_pidns;
	bool privileged;	 /* CAP_SYS_PTRACE effective at init */
	_Atomic uint64_t denied; /* maps refused this capture */
	pthread_mutex_t lock;	 /* examples, names */
	struct ctp_aps_name names[APS_MAX_APP_FIELDS];
	size_t n_names;
	uint32_t max_names;
	uint64_t max_bytes;
	/* The registry reads of a capture. Processes below rot_pid (read in
	 * the last capture, while some above were not) may only spend the
	 * budget down to rot_reserve_ns, what those left out last time are
	 * expected to cost: the walk goes by pid, and the same processes
	 * would otherwise always be the ones left out. */
	struct ctp_budget budget;
	int32_t rot_pid;
	uint64_t rot_reserve_ns;
	_Atomic int32_t skip_min_hi, skip_min; /* INT32_MAX: none */
	_Atomic uint64_t n_skipped, n_read, read_ns;
	struct ctp_workers workers;  /* struct worker */
	struct ctp_file_cache files; /* struct file_answer */
	struct ctp_ident_cache idents;
	struct ctp_maps_memo memo; /* the maps of the capture before */
	struct ctp_shared shared;
	/* The first process each refusal hit, for the hint. */
	int32_t ex_pid[CTP_APS_N_TAGS];
	char ex_comm[CTP_APS_N_TAGS][16];
	char ex_why[CTP_APS_N_TAGS][256];
	char hint[1024];
};

static void count(struct aps_state *st, int c, uint64_t d)
{
	if (d && st->ch[c] >= 0)
		st->api->summary_add(st->ctx, st->ch[c], d);
}

/* ---- Finding the registry ---------------------------------------------------
 */

static bool sym_match(void *arg, const char *name, const GElf_Sym *sym)
{
	struct file_answer *a = arg;

	if (strcmp(name, CTP_APS_SYMBOL) ||
	    GELF_ST_TYPE(sym->st_info) == STT_FUNC ||
	    GELF_ST_TYPE(sym->st_info) == STT_TLS)
		return true;
	a->found = true;
	a->value = sym->st_value;
	a->size = sym->st_size;
	return false;
}

/* fd: the mapped file, checked (procelf.h); path only names it. */
static void probe_file(void *arg, int fd, const char *path, void *out)
{
	struct file_answer *a = out;
	struct ctp_elf_info info;
	Elf *elf;

	(void)arg;
	(void)path;
	elf_version(EV_CURRENT);
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (elf) {
		ctp_elf_info(elf, &info);
		a->first_load_vaddr = info.first_load_vaddr;
		a->is_dyn = info.is_dyn;
		ctp_elf_each_symbol(elf, sym_match, a);
		elf_end(elf);
	}
}

static int verdict(const void *answer, int *tag)
{
	(void)tag;
	return ((const struct file_answer *)answer)->found;
}

/* ---- Reading it
 * ---------------------------------------------------------------
 */

static bool denied(int err)
{
	return err == -EACCES || err == -EPERM;
}

static int read_mem(pid_t pid, uint64_t addr, void *buf, size_t len)
{
	struct iovec l = {.iov_base = buf, .iov_len = len};
	struct iovec r = {.iov_base = (void *)(uintptr_t)addr, .iov_len = len};
	ssize_t n = process_vm_readv(pid, &l, 1, &r, 1, 0);

	if (n < 0)
		return -errno;
	return (size_t)n == len ? 0 : -EFAULT;
}

static int grow(void **p, size_t *cap, size_t need, size_t elem)
{
	void *np;

	if (need <= *cap)
		return 0;
	if (need < *cap * 2)
		need = *cap * 2;
	np = realloc(*p, need * elem);
	if (!np)
		return -ENOMEM;
	*p = np;
	*cap = need;
	return 0;
}

/* Both copies of the registry at addr: the header's numbers from the
 * first, the shape unchanged in the second. */
static enum ctp_aps_tag copy_registry(struct worker *w, pid_t pid,
				      uint64_t addr, uint64_t bound,
				      uint64_t max_bytes, struct ctp_aps_hdr *h,
				      const char **why)
{
	unsigned char hdr[CTP_APS_HDR_SIZE];
	struct ctp_aps_hdr h2;
	enum ctp_aps_tag t;
	size_t cap = w->img_cap;
	int r = read_mem(pid, addr, hdr, sizeof(hdr));

	if (r) {
		*why = denied(r) ? "permission denied" : "";
		return ctp_err_vanished(r) ? CTP_APS_EXITED : CTP_APS_READ;
	}
	t = ctp_aps_header(hdr, sizeof(hdr), bound, h, why);
	if (t != CTP_APS_OK)
		return t;
	/* Read three times: what one process may make a capture copy. */
	if (h->size > max_bytes) {
		snprintf(w->why, sizeof(w->why),
			 "%" PRIu32 " bytes, max_registry_bytes %" PRIu64,
			 h->size, max_bytes);
		*why = w->why;
		return CTP_APS_TOO_LARGE;
	}
	size_t cap2 = w->img_cap;
	if (grow((void **)&w->a, &cap, h->size, 1) ||
	    grow((void **)&w->v, &cap2, h->size, 1) ||
	    grow((void **)&w->b, &w->img_cap, h->size, 1))
		return CTP_APS_READ;
	r = read_mem(pid, addr, w->a, h->size);
	if (!r)
		r = read_mem(pid, addr, w->v, h->size);
	if (!r)
		r = read_mem(pid, addr, w->b, h->size);
	if (r)
		return ctp_err_vanished(r) ? CTP_APS_EXITED : CTP_APS_READ;
	/* The numbers that place things must be those the first read saw. */
	t = ctp_aps_header(w->a, h->size, bound, &h2, why);
	if (t != CTP_APS_OK)
		return t;
	if (memcmp(hdr, w->a, 40) || h2.n_fields < h->n_fields) {
		*why = "the header changed while it was read";
		return CTP_APS_CHANGED;
	}
	if (!ctp_aps_same_shape(w->a, w->b, h->size, h)) {
		*why = "the layout or a declared field changed while read";
		return CTP_APS_CHANGED;
	}
	return CTP_APS_OK;
}

/* ---- Threads of the process
 * ---------------------------------------------------- A slot holds the tid as
 * the application sees it, in its pid namespace. For a process in another
 * namespace than ours, each thread's NSpid line gives the pair; tids are then
 * translated before they are matched. */

static uint64_t pidns_of(int dirfd, const char *path)
{
	struct stat sb;

	return fstatat(dirfd, path, &sb, 0) ? 0 : (uint64_t)sb.st_ino;
}

/* The last number of the NSpid line of a status text: the tid in the
 * task's own namespace. 0 and *out, or -ENOENT. */
static int nspid_last(const char *s, int32_t *out)
{
	const char *p = strstr(s, "\nNSpid:");
	uint32_t v = 0;
	bool any = false;

	if (!p)
		return -ENOENT;
	for (p += 7; *p && *p != '\n'; p++) {
		if (*p >= '0' && *p <= '9') {
			if (!any)
				v = 0;
			any = true;
			if (v > (uint32_t)INT32_MAX / 10)
				return -ENOENT;
			v = v * 10 + (uint32_t)(*p - '0');
		} else if (any) {
			*out = (int32_t)v;
			any = false;
		}
	}
	if (any)
		*out = (int32_t)v;
	return v ? 0 : -ENOENT;
}

static int cmp_i32(const void *a, const void *b)
{
	int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;

	return (x > y) - (x < y);
}

static void build_nsmap(struct worker *w, int dirfd)
{
	w->n_nsmap = 0;
	if (grow((void **)&w->nsmap, &w->nsmap_cap, 2 * w->n_tids + 2,
		 sizeof(int32_t)))
		return;
	for (size_t i = 0; i < w->n_tids; i++) {
		char path[48], buf[8192]; /* NSpid after a long Groups: */
		int32_t ns;
		ssize_t n;
		int fd;

		snprintf(path, sizeof(path), "task/%d/status", (int)w->tids[i]);
		fd = openat(dirfd, path, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			continue;
		n = read(fd, buf, sizeof(buf) - 1);
		close(fd);
		if (n <= 0)
			continue;
		buf[n] = '\0';
		if (nspid_last(buf, &ns))
			continue;
		w->nsmap[2 * w->n_nsmap] = ns;
		w->nsmap[2 * w->n_nsmap + 1] = w->tids[i];
		w->n_nsmap++;
	}
	qsort(w->nsmap, w->n_nsmap, 2 * sizeof(int32_t), cmp_i32);
}

/* The process's threads: w->tids sorted, and the namespace map when the
 * process is in another pid namespace (w->n_nsmap, else 0). */
static int list_threads(struct aps_state *st, struct worker *w, int dirfd)
{
	uint64_t ns;
	int r = ctp_task_tids(dirfd, &w->tids, &w->tids_cap, &w->n_tids);

	if (r)
		return r;
	qsort(w->tids, w->n_tids, sizeof(*w->tids), cmp_i32);
	w->n_nsmap = 0;
	ns = pidns_of(dirfd, "ns/pid");
	if (ns && st->self_pidns && ns != st->self_pidns)
		build_nsmap(w, dirfd);
	return 0;
}

/* A slot's tid as a thread of the process here, or 0. */
static int32_t host_tid(const struct worker *w, int32_t tid)
{
	const int32_t *p;

	if (w->n_nsmap) {
		p = bsearch(&tid, w->nsmap, w->n_nsmap, 2 * sizeof(int32_t),
			    cmp_i32);
		return p ? p[1] : 0;
	}
	p = bsearch(&tid, w->tids, w->n_tids, sizeof(*w->tids), cmp_i32);
	return p ? tid : 0;
}

/* ---- Fields and records
 * ----------------------------------------------------------
 */

/* app.<name> for a declared field, with the declared unit, kind and rule,
 * through the plugin's own table of the names asked before: the core logs
 * every refusal, and would be asked at every capture. A name is its first
 * declaration's; another process's declaration of it with another unit,
 * kind or rule is left out (CTP_APS_CONFLICT), as are the names a process
 * asks past max_names (CTP_APS_MAX_NAMES) or past the table
 * (CTP_APS_NAMES_FULL): the handle, or -1 with *tag and w->why. */
static int field_handle(struct aps_state *st, struct worker *w,
			const struct ctp_task *task,
			const struct ctp_aps_field *f, enum ctp_aps_tag *tag)
{
	char name[8 + CTP_APS_NAME_MAX], mine[40], theirs[40];
	struct ctp_field_desc d = {.name = name,
				   .help = "published by the application "
					   "(appstats)",
				   .scope = CTP_SCOPE_THREAD,
				   .type = CTP_TYPE_U64,
				   .unit = f->unit,
				   .kind = f->kind,
				   .rule = f->rule,
				   .flags = CTP_FIELD_META,
				   .section = "app"};
	struct ctp_aps_name *k;
	size_t i = 0;
	int h = -1;

	pthread_mutex_lock(&st->lock);
	switch (ctp_aps_name_claim(st->names, st->n_names, APS_MAX_APP_FIELDS,
				   f, task->tgid, st->max_names, &i)) {
	case CTP_APS_CLAIM_KNOWN:
		h = st->names[i].h;
		break;
	case CTP_APS_CLAIM_NEW:
		/* Under the lock: two workers asking for one new name at once
		 * must both see one owner. New names are rare. */
		snprintf(name, sizeof(name), "app.%.47s", f->name);
		k = &st->names[st->n_names++];
		k->f = *f;
		k->owner = task->tgid;
		snprintf(k->owner_comm, sizeof(k->owner_comm), "%s",
			 task->pcomm ? task->pcomm : "?");
		h = k->h = st->api->field_register(st->ctx, &d);
		break;
	case CTP_APS_CLAIM_CONFLICT:
		k = &st->names[i];
		ctp_aps_desc(f, mine, sizeof(mine));
		ctp_aps_desc(&k->f, theirs, sizeof(theirs));
		snprintf(w->why, sizeof(w->why),
			 "declares app.%.47s as %.39s; app.%.47s is %.39s (pid "
			 "%d, %.15s)",
			 f->name, mine, f->name, theirs, (int)k->owner,
			 k->owner_comm);
		*tag = CTP_APS_CONFLICT;
		break;
	case CTP_APS_CLAIM_MAX_NAMES:
		snprintf(w->why, sizeof(w->why),
			 "app.%.47s past max_names %" PRIu32, f->name,
			 st->max_names);
		*tag = CTP_APS_MAX_NAMES;
		break;
	case CTP_APS_CLAIM_FULL:
		snprintf(w->why, sizeof(w->why),
			 "app.%.47s past the run's %d names", f->name,
			 APS_MAX_APP_FIELDS);
		*tag = CTP_APS_NAMES_FULL;
		break;
	}
	pthread_mutex_unlock(&st->lock);
	return h;
}

/* The handles of a registry's fields; CTP_APS_OK, or the tag of the first
 * field left out (its reason in w->why), the others kept. */
static enum ctp_aps_tag register_fields(struct aps_state *st, struct worker *w,
					const struct ctp_task *task,
					const struct ctp_aps_field *f,
					uint32_t n)
{
	enum ctp_aps_tag first = CTP_APS_OK, t;
	char why[sizeof(w->why)] = "";

	for (uint32_t i = 0; i < n; i++) {
		t = CTP_APS_OK;
		w->handles[i] = field_handle(st, w, task, &f[i], &t);
		if (w->handles[i] < 0)
			count(st, S_FIELDS_REFUSED, 1);
		if (t != CTP_APS_OK && first == CTP_APS_OK) {
			first = t;
			memcpy(why, w->why, sizeof(why));
		}
	}
	w->n_handles = n;
	memcpy(w->why, why, sizeof(why));
	return first;
}

static void keep_slot(void *arg, int32_t tid, const uint64_t *values)
{
	struct worker *w = arg;
	int32_t t = host_tid(w, tid);
	struct rec *r;

	if (!t) {
		w->foreign++;
		return;
	}
	if (grow((void **)&w->recs, &w->recs_cap, (w->n_recs + 1) * w->rec_size,
		 1))
		return;
	r = (struct rec *)(w->recs + w->n_recs * w->rec_size);
	r->tid = t;
	r->n = 0;
	for (uint32_t i = 0; i < w->n_handles; i++)
		if (w->handles[i] >= 0)
			r->kv[r->n++] =
				(struct kv){.h = w->handles[i], .v = values[i]};
	w->n_recs++;
}

/* ---- Callbacks
 * -------------------------------------------------------------------
 */

/* A process's outcome: counted, and kept as the example of a refusal. */
static void outcome(struct aps_state *st, const struct ctp_task *task,
		    enum ctp_aps_tag t, const char *why)
{
	count(st, N_FIXED + (int)t, 1);
	if (!ctp_aps_tag_corrupt(t) && !ctp_aps_tag_partial(t) &&
	    t != CTP_APS_READ && t != CTP_APS_MAPS && t != CTP_APS_TOO_LARGE &&
	    t != CTP_APS_BUDGET)
		return;
	/* A process whose maps cannot be read is counted and logged, and
	 * named in the hint only as a count of denials without the privilege
	 * that would lift them: nothing says it publishes. */
	if (t == CTP_APS_MAPS && why && *why)
		atomic_fetch_add(&st->denied, 1);
	/* Budget skips are counted and named once in the hint, not logged:
	 * a busy host has them at every capture. */
	if (t != CTP_APS_BUDGET)
		st->api->log(st->ctx, CTP_LOG_INFO, "%s (pid %d): %s: %s%s%s",
			     task->pcomm ? task->pcomm : "?", (int)task->tgid,
			     ctp_aps_tag_partial(t) ? "fields left out"
			     : t == CTP_APS_READ || t == CTP_APS_MAPS
				     ? "cannot look"
				     : "registry refused",
			     ctp_aps_tag_name(t), why && *why ? ": " : "",
			     why ? why : "");
	pthread_mutex_lock(&st->lock);
	if (!st->ex_pid[t] && t != CTP_APS_MAPS) {
		st->ex_pid[t] = task->tgid;
		snprintf(st->ex_comm[t], sizeof(st->ex_comm[t]), "%s",
			 task->pcomm ? task->pcomm : "?");
		snprintf(st->ex_why[t], sizeof(st->ex_why[t]), "%s",
			 why ? why : "");
	}
	pthread_mutex_unlock(&st->lock);
}

static void set_status(struct aps_state *st, struct ctp_setter *set,
		       enum ctp_aps_tag t)
{
	const char *s = ctp_aps_tag_name(t);

	ctp_set_str(set, st->fh[F_STATUS], s, strlen(s));
}

/* Of the files of the process that define the symbol (pf: the first, in
 * address order), the one whose registry is set up: the dynamic linker
 * binds one definition, and the others stay zero. Libraries load top-down,
 * so address order is not load order; each candidate's magic is read (8
 * bytes). None set: pf stays the first (its registry reads "unset"). */
static void pick_registry(struct aps_state *st, struct worker *w, pid_t pid,
			  struct ctp_proc_found *pf)
{
	for (size_t i = pf->idx; i < w->maps.n; i++) {
		const struct ctp_map *m = &w->maps.v[i];
		const struct file_answer *a;
		uint64_t bias, magic = 0;

		if (!m->exec ||
		    ctp_maps_find_exec(w->maps.v, i, m->dev, m->ino) >= 0)
			continue;
		a = ctp_file_cache_get(&st->files, pid, m, probe_file, NULL);
		if (!a || !a->found ||
		    ctp_maps_bias(w->maps.v, w->maps.n, m->dev, m->ino,
				  a->first_load_vaddr, a->is_dyn, &bias) ||
		    read_mem(pid, bias + a->value, &magic, sizeof(magic)) ||
		    !magic)
			continue;
		pf->answer = a;
		pf->idx = i;
		return;
	}
}

/* The registry of a process known to define it: checked, its fields
 * registered, its stable slots kept in w->recs by tid. */
static enum ctp_aps_tag read_registry(struct aps_state *st, struct worker *w,
				      const struct ctp_task *task,
				      const struct file_answer *fa,
				      const struct ctp_map *m,
				      struct ctp_aps_hdr *h, const char **why)
{
	struct ctp_aps_field f[CTP_APS_MAX_FIELDS];
	enum ctp_aps_tag t;
	uint64_t bias;
	uint32_t bad;

	*why = "";
	if (ctp_maps_bias(w->maps.v, w->maps.n, m->dev, m->ino,
			  fa->first_load_vaddr, fa->is_dyn, &bias))
		return CTP_APS_MAPS;
	t = copy_registry(w, task->tgid, bias + fa->value, fa->size,
			  st->max_bytes, h, why);
	if (t != CTP_APS_OK)
		return t;
	t = ctp_aps_fields(w->a, h->size, h, f, &bad, why);
	if (t != CTP_APS_OK)
		return t;
	if (list_threads(st, w, task->dirfd))
		return CTP_APS_EXITED;
	t = register_fields(st, w, task, f, h->n_fields);
	if (t != CTP_APS_OK)
		*why = w->why;
	w->rec_size = sizeof(struct rec) + w->n_handles * sizeof(struct kv);
	w->n_recs = 0;
	w->foreign = 0;
	ctp_aps_slots(w->a, w->v, w->b, h->size, h, keep_slot, w,
		      &w->slot_stats);
	count(st, S_TORN, w->slot_stats.torn);
	count(st, S_DUP, w->slot_stats.dup);
	count(st, S_FOREIGN, w->foreign);
	qsort(w->recs, w->n_recs, w->rec_size, ctp_cmp_tid);
	return t;
}

static void atomic_min_i32(_Atomic int32_t *a, int32_t v)
{
	int32_t cur = atomic_load(a);

	while (v < cur && !atomic_compare_exchange_weak(a, &cur, v))
		;
}

/* Whether this capture's budget leaves the registry of tgid to be read;
 * the processes left out are noted for the next capture's rotation. */
static bool budget_admits(struct aps_state *st, int32_t tgid)
{
	bool low = tgid < st->rot_pid;

	if (ctp_budget_left(&st->budget, low ? st->rot_reserve_ns : 0))
		return true;
	if (!low)
		atomic_min_i32(&st->skip_min_hi, tgid);
	atomic_min_i32(&st->skip_min, tgid);
	atomic_fetch_add(&st->n_skipped, 1);
	return false;
}

/* After a capture: where the next one starts its rotation (the first
 * process left out past this capture's start, else the first left out),
 * and what those left out may keep of the budget (their number at the
 * mean cost of a read this capture, at most all of it). */
static void budget_rotate(struct aps_state *st)
{
	int32_t hi = atomic_exchange(&st->skip_min_hi, INT32_MAX);
	int32_t lo = atomic_exchange(&st->skip_min, INT32_MAX);
	uint64_t skipped = atomic_exchange(&st->n_skipped, 0);
	uint64_t n = atomic_exchange(&st->n_read, 0);
	uint64_t ns = atomic_exchange(&st->read_ns, 0);
	uint64_t mean = n ? ns / n : st->budget.limit_ns;

	st->rot_pid = hi != INT32_MAX ? hi : lo != INT32_MAX ? lo : 0;
	st->rot_reserve_ns = !skipped ? 0
			     : mean >= st->budget.limit_ns / skipped
				     ? st->budget.limit_ns
				     : mean * skipped;
}

static int aps_process(void *state, const struct ctp_task *task,
		       struct ctp_record *rec)
{
	struct aps_state *st = state;
	struct ctp_setter set = CTP_SETTER(st->api, rec);
	const struct ctp_proc_scan scan = {.files = &st->files,
					   .idents = &st->idents,
					   .probe = probe_file,
					   .verdict = verdict,
					   .none_tag = CTP_APS_NONE,
					   .api = st->api,
					   .maps_file = 0,
					   .memo = &st->memo};
	struct ctp_proc_found pf;
	struct ctp_aps_hdr h;
	enum ctp_aps_tag t;
	const char *why = "";
	struct worker *w;
	int r;

	if (!st->live || task->dirfd < 0 || task->tgid == st->self)
		return 0;
	w = ctp_workers_get(&st->workers);
	if (!w)
		return 0;
	w->tgid = -1;
	count(st, S_WALKED, 1);
	r = ctp_proc_find(&scan, &w->maps, task, &pf);
	if (r) {
		outcome(st, task,
			r == -ENOENT  ? CTP_APS_NONE
			: r == -ESRCH ? CTP_APS_EXITED
				      : CTP_APS_MAPS,
			denied(r) ? "permission denied" : "");
		return 0;
	}
	if (pf.cache_hit)
		count(st, S_CACHE_HITS, 1);
	if (pf.maps_kept)
		count(st, S_MAPS_KEPT, 1);
	if (!pf.answer) {
		outcome(st, task, CTP_APS_NONE, "");
		return 0;
	}
	pick_registry(st, w, task->tgid, &pf);
	if (!budget_admits(st, task->tgid)) {
		outcome(st, task, CTP_APS_BUDGET,
			"the capture's time_budget_ms was spent");
		set_status(st, &set, CTP_APS_BUDGET);
		return set.err;
	}
	struct ctp_budget_mark m;
	uint64_t cpu_ns;
	ctp_budget_begin(&m);
	t = read_registry(st, w, task, pf.answer, &w->maps.v[pf.idx], &h, &why);
	ctp_budget_end(&st->budget, &m, &cpu_ns, NULL);
	atomic_fetch_add(&st->n_read, 1);
	atomic_fetch_add(&st->read_ns, cpu_ns);
	count(st, S_READ_US, cpu_ns / 1000);
	outcome(st, task, t, why);
	if (t == CTP_APS_EXITED)
		return 0;
	set_status(st, &set, t);
	if (t != CTP_APS_OK && !ctp_aps_tag_partial(t))
		return set.err;
	count(st, S_PUBLISHERS, 1);
	ctp_set_u64(&set, st->fh[F_DROPPED], h.dropped);
	w->tgid = task->tgid;
	/* The core may walk a large process's threads on several workers
	 * (CTP_PLUGIN_SPLITTABLE): they find the records there. */
	ctp_shared_put(&st->shared, task->tgid, w->recs, w->n_recs,
		       w->rec_size);
	return set.err;
}

static int aps_thread(void *state, const struct ctp_task *task,
		      struct ctp_record *rec)
{
	struct aps_state *st = state;
	struct ctp_setter set = CTP_SETTER(st->api, rec);
	const struct rec *r;
	struct worker *w;

	if (!st->live || task->tgid == st->self)
		return 0;
	w = ctp_workers_mine(&st->workers);
	if (w && w->tgid == task->tgid)
		r = bsearch(&task->tid, w->recs, w->n_recs, w->rec_size,
			    ctp_cmp_tid);
	else { /* a chunk of a split process, read on another worker */
		r = ctp_shared_find(&st->shared, task->tgid, task->tid);
		if (r)
			count(st, S_SHARED, 1);
	}
	if (!r)
		return 0; /* publishes nothing, or born after the copy */
	count(st, S_THREADS_OK, 1);
	for (uint32_t i = 0; i < r->n; i++)
		ctp_set_u64(&set, r->kv[i].h, r->kv[i].v);
	return set.err;
}

static void worker_done(void *block)
{
	struct worker *w = block;

	ctp_maps_free(&w->maps);
	free(w->a);
	free(w->v);
	free(w->b);
	free(w->tids);
	free(w->nsmap);
	free(w->recs);
}

static int aps_finish(void *state, struct ctp_record *host_rec)
{
	struct aps_state *st = state;
	size_t used = 0;

	(void)host_rec;
	count(st, S_FILES_KEPT,
	      ctp_file_cache_capture_end(&st->files, st->api, st->ctx));
	pthread_mutex_lock(&st->lock);
	st->hint[0] = '\0';
	uint64_t denied = atomic_exchange(&st->denied, 0);
	if (denied && !st->privileged) {
		int n = snprintf(st->hint, sizeof(st->hint),
				 "%" PRIu64 " processes not looked at "
				 "(permission denied): reading other users' "
				 "registries needs CAP_SYS_PTRACE",
				 denied);
		if (n > 0 && (size_t)n < sizeof(st->hint))
			used = (size_t)n;
	}
	for (int t = 0; t < CTP_APS_N_TAGS; t++) {
		int n;

		if (!st->ex_pid[t])
			continue;
		n = snprintf(st->hint + used, sizeof(st->hint) - used,
			     "%s%s: %s (pid %d)%s%s", used ? "; " : "",
			     ctp_aps_tag_name((enum ctp_aps_tag)t),
			     st->ex_comm[t], (int)st->ex_pid[t],
			     *st->ex_why[t] ? ": " : "", st->ex_why[t]);
		if (n > 0 && (size_t)n < sizeof(st->hint) - used)
			used += (size_t)n;
	}
	/* This snapshot's: a recording's next capture starts afresh. */
	memset(st->ex_pid, 0, sizeof(st->ex_pid));
	budget_rotate(st);
	ctp_shared_clear(&st->shared);
	pthread_mutex_unlock(&st->lock);
	ctp_workers_reset(&st->workers);
	/* Always: an empty hint clears the last capture's in a recording. */
	if (CTP_API_HAS(st->api, set_hint))
		st->api->set_hint(st->ctx, st->hint);
	return 0;
}

/* Once per capture, before the walk: a fresh budget. */
static int aps_host(void *state, struct ctp_record *rec)
{
	struct aps_state *st = state;

	(void)rec;
	ctp_budget_reset(&st->budget);
	/* What the capture before did not use of the maps kept. */
	ctp_maps_memo_sweep(&st->memo);
	return 0;
}

static void aps_fini(void *state)
{
	struct aps_state *st = state;

	if (!st)
		return;
	ctp_workers_fini(&st->workers, worker_done);
	ctp_shared_fini(&st->shared);
	ctp_file_cache_fini(&st->files);
	ctp_ident_cache_fini(&st->idents);
	ctp_maps_memo_fini(&st->memo);
	pthread_mutex_destroy(&st->lock);
	free(st);
}

static int check_answers_state(const char *value, char *why, size_t whylen)
{
	return ctp_statedir_check("answers_state", value, why, whylen);
}

static const struct ctp_option_desc options[] = {
	{.name = "max_registry_bytes",
	 .help = "a larger registry is not read (tagged too-large); each is "
		 "read three times per capture: bytes",
	 .type = CTP_OPT_U64,
	 .def = "1048576",
	 .min = CTP_APS_HDR_SIZE,
	 .max = CTP_APS_MAX_BYTES},
	{.name = "max_names",
	 .help = "app.* names one process may add to the collector run's "
		 "1024 (more are left out, tagged max-names)",
	 .type = CTP_OPT_U64,
	 .def = "64",
	 .min = 1,
	 .max = APS_MAX_APP_FIELDS},
	{.name = "time_budget_ms",
	 .help = "CPU time per capture for reading registries, all workers "
		 "(wall time at 10 times it); the rest tagged time-budget",
	 .type = CTP_OPT_U64,
	 .def = "50",
	 .max = UINT64_MAX / 1000000},
	{.name = "answers_state",
	 .help = "where what each ELF file says of the registry is kept "
		 "across runs: auto (/run/ctprof-core, or "
		 "$XDG_RUNTIME_DIR/ctprof-core when not root), off, or a "
		 "directory",
	 .type = CTP_OPT_STRING,
	 .def = "auto",
	 .check = check_answers_state},
};

/* The option's value, the default when it is not set. */
static int option(struct aps_state *st, const char *key, uint64_t dflt,
		  uint64_t *out)
{
	int r = st->api->opt_u64(st->ctx, key, out);

	if (r == -ENOENT) {
		*out = dflt;
		return 0;
	}
	if (r < 0)
		st->api->log(st->ctx, CTP_LOG_ERR, "option '%s': %s", key,
			     strerror(-r));
	return r;
}

static int parse_options(struct aps_state *st)
{
	uint64_t names, ms;
	int r = option(st, "max_registry_bytes", DEFAULT_MAX_BYTES,
		       &st->max_bytes);

	if (!r)
		r = option(st, "max_names", DEFAULT_MAX_NAMES, &names);
	if (!r)
		r = option(st, "time_budget_ms", DEFAULT_BUDGET_MS, &ms);
	if (r)
		return r;
	st->max_names = (uint32_t)names;
	ctp_budget_init(&st->budget, ms * 1000000);
	return 0;
}

/* An answer says what the file's own symbols and headers say: always the
 * file's alone. */
static bool keepable(const void *answer)
{
	(void)answer;
	return true;
}

static int aps_init(struct ctp_ctx *ctx, const struct ctp_api *api,
		    void **state)
{
	const struct ctp_roots *roots;
	struct aps_state *st = calloc(1, sizeof(*st));
	int r;

	if (!st)
		return -ENOMEM;
	st->ctx = ctx;
	st->api = api;
	st->self = getpid();
	st->privileged = ctp_cap_sys_ptrace();
	st->self_pidns = pidns_of(AT_FDCWD, "/proc/self/ns/pid");
	pthread_mutex_init(&st->lock, NULL);
	ctp_workers_init(&st->workers, sizeof(struct worker));
	ctp_file_cache_init(&st->files, sizeof(struct file_answer));
	ctp_ident_cache_init(&st->idents);
	ctp_maps_memo_init(&st->memo);
	ctp_shared_init(&st->shared);
	atomic_init(&st->skip_min_hi, INT32_MAX);
	atomic_init(&st->skip_min, INT32_MAX);
	r = CTP_ATTACH(ctx, api, CTP_API_THROUGH(roots), st->fh, st->ch);
	if (r == 0)
		r = parse_options(st);
	if (r < 0) {
		aps_fini(st);
		return r;
	}
	roots = api->roots(ctx);
	st->live = ctp_proc_is_live(roots ? roots->proc_fd : -1);
	if (!st->live)
		api->log(ctx, CTP_LOG_INFO,
			 "not a live proc tree: no registry to read");
	else
		ctp_file_cache_keep_opt(&st->files, api, ctx, "appstats-files",
					keepable, (const void *)&ctp_plugin_v1);
	*state = st;
	return 0;
}

CTP_EXPORT const struct ctp_plugin ctp_plugin_v1 = {
	CTP_PLUGIN_HEADER,
	.name = "appstats",
	.version = APS_PLUGIN_VERSION,
	.description = "per-thread values applications publish "
		       "(ctprof/appstats.h), read without stopping them",
	.flags = CTP_PLUGIN_CAPS | CTP_PLUGIN_MT_SAFE | CTP_PLUGIN_SPLITTABLE |
		 CTP_PLUGIN_NO_THREAD_DIR | CTP_PLUGIN_OPTIONS,
	CTP_PLUGIN_OPTION_TABLE(options),
	CTP_PLUGIN_FIELDS(fields),
	.process_files = process_files,
	.init = aps_init,
	.fini = aps_fini,
	.host = aps_host,
	.process = aps_process,
	.thread = aps_thread,
	.finish = aps_finish,
	CTP_PLUGIN_COUNTER_TABLE(counter_names),
	.capabilities = CTP_CAP_BIT(CAP_SYS_PTRACE),
};
