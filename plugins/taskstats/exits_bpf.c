/* SPDX-License-Identifier: MIT */
/* BPF exit records as taskstats exits; cgroup ids as paths (exits_bpf.h). */
#include "exits_bpf.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static void set(struct ctp_taskstats *ts, unsigned m, uint64_t v)
{
	ts->v[m] = v;
	ts->present[m / 64] |= 1ull << (m % 64);
}

/* The values a record and a total share (same member names). */
#define COMMON(ts, r)                                                          \
	do {                                                                   \
		uint64_t ut = (r)->utime / 1000, st = (r)->stime / 1000;       \
		ctp_ts_cputime_adjust((r)->sum_exec_runtime, &ut, &st);        \
		set(ts, CTP_TS_UTIME, ut);                                     \
		set(ts, CTP_TS_STIME, st);                                     \
		set(ts, CTP_TS_MINFLT, (r)->minflt);                           \
		set(ts, CTP_TS_MAJFLT, (r)->majflt);                           \
		set(ts, CTP_TS_NVCSW, (r)->nvcsw);                             \
		set(ts, CTP_TS_NIVCSW, (r)->nivcsw);                           \
		if ((r)->present & CTP_BPFEXIT_HAS_IO_XACCT) {                 \
			set(ts, CTP_TS_READ_CHAR, (r)->rchar);                 \
			set(ts, CTP_TS_WRITE_CHAR, (r)->wchar);                \
			set(ts, CTP_TS_READ_SYSCALLS, (r)->syscr);             \
			set(ts, CTP_TS_WRITE_SYSCALLS, (r)->syscw);            \
		}                                                              \
		if ((r)->present & CTP_BPFEXIT_HAS_IO_BYTES) {                 \
			set(ts, CTP_TS_READ_BYTES, (r)->read_bytes);           \
			set(ts, CTP_TS_WRITE_BYTES, (r)->write_bytes);         \
			set(ts, CTP_TS_CANCELLED_WRITE_BYTES,                  \
			    (r)->cancelled_write_bytes);                       \
		}                                                              \
		set(ts, CTP_TS_PPID, (uint32_t)(r)->ppid);                     \
		for (unsigned f = 0; f < CTP_BPFEXIT_N_FAMILIES; f++)          \
			if ((r)->present & CTP_BPFEXIT_HAS_DELAY(f)) {         \
				set(ts, CTP_TS_DELAY(f, CTP_TS_COUNT),         \
				    (r)->delay[f][0]);                         \
				set(ts, CTP_TS_DELAY(f, CTP_TS_TOTAL),         \
				    (r)->delay[f][1]);                         \
			}                                                      \
		memcpy(ts->comm, (r)->comm, sizeof((r)->comm));                \
		ts->comm[sizeof((r)->comm)] = '\0';                            \
		set(ts, CTP_TS_COMM, 0);                                       \
	} while (0)

_Static_assert(CTP_BPFEXIT_N_FAMILIES == CTP_TS_N_FAMILIES &&
		       CTP_BPFEXIT_N_PARTS == CTP_TS_N_PARTS,
	       "the record's delay families are the reply's");

void ctp_ts_exit_from_bpf(const struct ctp_bpfexit_rec *r,
			  struct ctp_ts_exit *e)
{
	struct ctp_taskstats *ts = &e->ts;

	memset(e, 0, sizeof(*e));
	ts->pid = (uint32_t)r->pid;
	COMMON(ts, r);
	set(ts, CTP_TS_PID, (uint32_t)r->pid);
	set(ts, CTP_TS_TGID, (uint32_t)r->tgid);
	set(ts, CTP_TS_EXITCODE, (uint32_t)r->exit_code);
	if (r->exit_boottime >= r->start_boottime)
		set(ts, CTP_TS_ETIME,
		    (r->exit_boottime - r->start_boottime) / 1000);
	for (unsigned f = 0; f < CTP_BPFEXIT_N_FAMILIES; f++)
		if (r->present & CTP_BPFEXIT_HAS_MAXMIN(f)) {
			set(ts, CTP_TS_DELAY(f, CTP_TS_MAX), r->delay[f][2]);
			set(ts, CTP_TS_DELAY(f, CTP_TS_MIN), r->delay[f][3]);
		}
}

void ctp_ts_exit_from_bpfsum(uint32_t tgid, const struct ctp_bpfexit_sum *s,
			     struct ctp_ts_exit *e)
{
	struct ctp_taskstats *ts = &e->ts;
	struct {
		uint32_t present;
		int32_t ppid;
		uint64_t utime, stime, sum_exec_runtime, minflt, majflt, nvcsw,
			nivcsw, rchar, wchar, syscr, syscw, read_bytes,
			write_bytes, cancelled_write_bytes;
		uint64_t delay[CTP_BPFEXIT_N_FAMILIES][2];
		char comm[16];
	} r = {s->present,
	       s->ppid,
	       s->utime,
	       s->stime,
	       s->sum_exec_runtime,
	       s->minflt,
	       s->majflt,
	       s->nvcsw,
	       s->nivcsw,
	       s->rchar,
	       s->wchar,
	       s->syscr,
	       s->syscw,
	       s->read_bytes,
	       s->write_bytes,
	       s->cancelled_write_bytes};

	memcpy(r.delay, s->delay, sizeof(r.delay));
	memcpy(r.comm, s->comm, sizeof(r.comm));
	r.comm[sizeof(r.comm) - 1] = '\0';
	memset(e, 0, sizeof(*e));
	COMMON(ts, &r);
	set(ts, CTP_TS_TGID, tgid);
}

/* ---- cgroup ids -------------------------------------------------------- */

static int by_id(const void *a, const void *b)
{
	const struct ctp_ts_cgid *x = a, *y = b;

	return (x->id > y->id) - (x->id < y->id);
}

static void drop(struct ctp_ts_cgid *v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(v[i].path);
	free(v);
}

struct walk {
	dev_t dev; /* the mount's: no other file system is walked */
	struct ctp_ts_cgid *v;
	size_t n, cap;
	char path[4096];
};

static int add(struct walk *w, uint64_t id, size_t len)
{
	if (w->n == w->cap) {
		size_t cap = w->cap ? w->cap * 2 : 256;
		struct ctp_ts_cgid *v = realloc(w->v, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		w->v = v;
		w->cap = cap;
	}
	w->v[w->n].path = strndup(len ? w->path : "/", len ? len : 1);
	if (!w->v[w->n].path)
		return -ENOMEM;
	w->v[w->n++].id = id;
	return 0;
}

/* Directory dfd (taken: closed here), its path w->path[0..len). */
static int walk_dir(struct walk *w, int dfd, size_t len, int depth)
{
	DIR *d = fdopendir(dfd);
	struct dirent *de;
	int r = 0;

	if (!d) {
		close(dfd);
		return 0; /* gone or unreadable: counted as unknown ids */
	}
	while (r == 0 && w->n < CTP_TS_CGIDS_MAX && (de = readdir(d))) {
		size_t nl = strlen(de->d_name);
		struct stat st;
		int cfd;

		if (de->d_type != DT_DIR || de->d_name[0] == '.' ||
		    len + 1 + nl >= sizeof(w->path))
			continue;
		cfd = openat(dirfd(d), de->d_name,
			     O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
		if (cfd < 0)
			continue;
		if (fstat(cfd, &st) < 0 || st.st_dev != w->dev) {
			close(cfd);
			continue;
		}
		w->path[len] = '/';
		memcpy(w->path + len + 1, de->d_name, nl);
		r = add(w, (uint64_t)st.st_ino, len + 1 + nl);
		if (r == 0 && depth + 1 < CTP_TS_CGIDS_DEPTH)
			r = walk_dir(w, cfd, len + 1 + nl, depth + 1);
		else
			close(cfd);
	}
	closedir(d);
	return r;
}

int ctp_ts_cgids_build(struct ctp_ts_cgids *m, int dirfd)
{
	struct walk w = {0};
	struct stat st;
	int dfd, r;

	if (dirfd < 0)
		return -EBADF;
	dfd = openat(dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0)
		return -errno;
	if (fstat(dfd, &st) < 0) {
		r = -errno;
		close(dfd);
		return r;
	}
	w.dev = st.st_dev;
	r = add(&w, (uint64_t)st.st_ino, 0);
	if (r == 0)
		r = walk_dir(&w, dfd, 0, 0);
	else
		close(dfd);
	if (r < 0) {
		drop(w.v, w.n);
		return r;
	}
	qsort(w.v, w.n, sizeof(*w.v), by_id);
	drop(m->v, m->n);
	m->v = w.v;
	m->n = w.n;
	m->cap = w.cap;
	m->builds++;
	return (int)w.n;
}

const char *ctp_ts_cgids_find(const struct ctp_ts_cgids *m, uint64_t id)
{
	struct ctp_ts_cgid key = {.id = id};
	const struct ctp_ts_cgid *c =
		m->n ? bsearch(&key, m->v, m->n, sizeof(*m->v), by_id) : NULL;

	return c ? c->path : NULL;
}

void ctp_ts_cgids_free(struct ctp_ts_cgids *m)
{
	drop(m->v, m->n);
	*m = (struct ctp_ts_cgids){0};
}
