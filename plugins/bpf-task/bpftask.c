/* The iter/task program's user side (bpftask.h): a light skeleton of the
 * program with bpf_rdonly_cast, one of the program without, libbpf's
 * skeleton where both fail. */
#include "bpftask.h"

#include "bpfload.h"
#include "bpftask_walk.h"

/* The light skeleton's header uses errno and syscall() without including
 * their headers. */
#include <errno.h>
#include <fcntl.h>
#include <unistd.h>

#ifndef CTP_BPFTASK_NO_LSKEL
#include "task_iter.lskel.h"
#include "task_iter_cast.lskel.h"
#include "task_iter_walk.lskel.h"
#endif
#include "task_iter.skel.h"

#include <ctprof/plugin-util.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <sched.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#if defined(__x86_64__)
#include <emmintrin.h>
#endif

struct ctp_bpftask {
	/* One of the four loaded the program. */
	struct task_iter_walk_lskel *walk;
	struct task_iter_cast_lskel *cast;
	struct task_iter_lskel *light;
	struct task_iter_bpf *skel;
	int prog_fd, link_fd; /* the program, its link over every task */
	int *skip_delays;     /* ctp_skip_delays in its mmapped .bss */
	char loader[320];
	/* The raw stream of the last pass: an anonymous mapping of cap
	 * bytes (NULL: none yet), first sized for `expect` tasks. */
	unsigned char *buf;
	size_t cap, expect;
	bool reused; /* by many passes: huge pages (ctp_bpftask_buf_reused) */
	/* The css_sets of the last pass (ctp_bpftask_cg_sets): the map
	 * cgsets (cg_fd, cg_max entries) and the pass number in the .bss. */
	bool cg_on;
	int cg_fd;
	size_t cg_max;
	__u64 *cg_gen_var;
	__u64 cg_gen;
	__u64 *cg_keys;
	struct ctp_bpfcg_set *cg_vals;
	struct ctp_bpfcg_entry *cg;
	size_t cg_cap;
	/* The open-coded pass (walk loaded it): its program, its two arrays
	 * mapped (walk_pids, walk_recs), whether passes take it, its
	 * records' limit a run, why not where it is not loaded, and what
	 * the last pass did. */
	int walk_fd;
	__u64 *w_pids;
	const struct ctp_bpftask_rec *w_recs;
	bool walk_on;
	unsigned walk_k, walk_procs;
	char walk_why[200];
	struct ctp_bpftask_walk_stats ws;
	/* The tgids' sort (ctp_bpftask_sort): keys and room. */
	struct ctp_bpftask_key *w_keys;
	size_t w_keys_cap;
};

/* What the iterator needs of a kernel, said when it refuses the program. */
static const char needs[] = "the task iterator needs 5.8+, "
			    "CONFIG_DEBUG_INFO_BTF and CONFIG_BPF_SYSCALL";

#ifdef CTP_BPFTASK_NO_LSKEL
/* Not built (CMakeLists.txt says why): libbpf's skeleton alone. */
#define NO_LIGHT(skel)                                                         \
	static int open_##skel(struct ctp_bpftask *b, char *why,               \
			       size_t whylen)                                  \
	{                                                                      \
		(void)b;                                                       \
		snprintf(why, whylen, "not built: %s", CTP_BPFTASK_NO_LSKEL);  \
		return -ENOTSUP;                                               \
	}                                                                      \
	static void skel##__destroy(struct skel *s)                            \
	{                                                                      \
		(void)s;                                                       \
	}
NO_LIGHT(task_iter_lskel)
NO_LIGHT(task_iter_cast_lskel)
NO_LIGHT(task_iter_walk_lskel)
#else
/* And the light skeleton's loader program. */
static const char light_needs[] =
	"the light skeleton needs 5.17+ (CO-RE in the kernel) and "
	"BPF_PROG_RUN of a syscall program";

/*
 * open_<skel>(b, why, whylen): load and attach by the light skeleton skel
 * (held in b->field): 0, or a negative errno with the step and its reason
 * in why. Both light skeletons are of one source, so their structs are
 * alike but for the name.
 */
#define OPEN_LIGHT(skel, field)                                                \
	static int open_##skel(struct ctp_bpftask *b, char *why,               \
			       size_t whylen)                                  \
	{                                                                      \
		struct skel *s = skel##__open();                               \
		int r;                                                         \
                                                                               \
		b->field = s;                                                  \
		if (!s)                                                        \
			return ctp_bpfload_fail(why, whylen, -ENOMEM,          \
						"opening the light skeleton",  \
						NULL);                         \
		/* Its loader program creates the maps, has the kernel         \
		 * relocate and verify the program, and hands their fds        \
		 * back. */                                                    \
		r = skel##__load(s);                                           \
		if (r < 0)                                                     \
			return ctp_bpfload_fail(                               \
				why, whylen, r,                                \
				"loading by the light skeleton", light_needs); \
		if (skel##__attach(s) < 0)                                     \
			return ctp_bpfload_fail(why, whylen, -errno,           \
						"attaching the task iterator", \
						needs);                        \
		b->prog_fd = s->progs.ctp_task_rec.prog_fd;                    \
		b->link_fd = s->links.ctp_task_rec_fd;                         \
		b->skip_delays = &s->bss->ctp_skip_delays;                     \
		b->cg_fd = s->maps.cgsets.map_fd;                              \
		b->cg_gen_var = &s->bss->ctp_cg_gen;                           \
		return 0;                                                      \
	}
OPEN_LIGHT(task_iter_walk_lskel, walk)
OPEN_LIGHT(task_iter_cast_lskel, cast)
OPEN_LIGHT(task_iter_lskel, light)

/* The open-coded pass's program and its arrays mapped, once the light
 * skeleton of task_iter_walk.bpf.o loaded: 0 or a negative errno. */
static int walk_maps(struct ctp_bpftask *b, char *why, size_t whylen)
{
	size_t np = CTP_BPFTASK_WALK_PROCS * sizeof(__u64);
	size_t nr = CTP_BPFTASK_WALK_K * sizeof(struct ctp_bpftask_rec);
	void *p, *q;

	p = mmap(NULL, np, PROT_READ | PROT_WRITE, MAP_SHARED,
		 b->walk->maps.walk_pids.map_fd, 0);
	if (p == MAP_FAILED)
		return ctp_bpfload_fail(why, whylen, -errno,
					"mapping the open-coded pass's tgids",
					NULL);
	q = mmap(NULL, nr, PROT_READ, MAP_SHARED,
		 b->walk->maps.walk_recs.map_fd, 0);
	if (q == MAP_FAILED) {
		int r = -errno;
		munmap(p, np);
		return ctp_bpfload_fail(why, whylen, r,
					"mapping the open-coded pass's records",
					NULL);
	}
	b->w_pids = p;
	b->w_recs = q;
	b->walk_fd = b->walk->progs.ctp_walk.prog_fd;
	return 0;
}

static void walk_unmap(struct ctp_bpftask *b)
{
	if (b->w_pids)
		munmap(b->w_pids, CTP_BPFTASK_WALK_PROCS * sizeof(__u64));
	if (b->w_recs)
		munmap((void *)b->w_recs,
		       CTP_BPFTASK_WALK_K * sizeof(struct ctp_bpftask_rec));
	b->w_pids = NULL;
	b->w_recs = NULL;
}
#endif

bool ctp_bpftask_initial_pidns(int proc_fd)
{
	char buf[4096];
	size_t len;
	int dir = proc_fd, r;

	if (dir < 0)
		dir = open("/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dir < 0)
		return false;
	/* NSpid lists the ids from the proc root's namespace down, so a /proc
	 * mounted inside a child namespace (unshare -p -f --mount-proc) shows
	 * one id there too. The namespace's own inode tells them apart; the
	 * line is the answer only where ns/pid cannot be looked at. */
	r = ctp_proc_ns_initial(dir, "pid");
	if (r < 0)
		r = ctp_read_small(dir, "self/status", buf, sizeof(buf),
				   &len) == 0 &&
		    ctp_bpftask_status_initial_pidns(buf, len);
	if (dir != proc_fd)
		close(dir);
	return r == 1;
}

/* Open, load and attach by libbpf's skeleton: as open_light. */
static int open_libbpf(struct ctp_bpftask *b, char *why, size_t whylen)
{
	int r;

	b->skel = task_iter_bpf__open();
	if (!b->skel)
		return ctp_bpfload_fail(why, whylen, -errno,
					"opening the BPF object", needs);
	r = ctp_bpfload_load_attach(b->skel->skeleton,
				    "attaching the task iterator", needs, why,
				    whylen);
	if (r < 0)
		return r;
	b->prog_fd = bpf_program__fd(b->skel->progs.ctp_task_rec);
	b->link_fd = bpf_link__fd(b->skel->links.ctp_task_rec);
	b->skip_delays = &b->skel->bss->ctp_skip_delays;
	b->cg_fd = bpf_map__fd(b->skel->maps.cgsets);
	b->cg_gen_var = &b->skel->bss->ctp_cg_gen;
	return 0;
}

/*
 * The light skeletons in turn: the one with the open-coded pass where
 * asked for (flags, or CTP_BPFTASK_PASS=open-coded; =iter never), the
 * one of the program with bpf_rdonly_cast (6.2+: a third of the load's
 * CPU), then the one without; force is CTP_BPFTASK_LOADER
 * ("light-nocast" skips the first two). 0 with b->loader said, or a
 * negative errno with the last reason in why.
 */
static int open_lights(struct ctp_bpftask *b, const char *force, unsigned flags,
		       char *why, size_t whylen)
{
	const char *pass = getenv("CTP_BPFTASK_PASS");
	char cast_why[160];
	int r;

	/* The open-coded pass's object first (6.8+): the cast program and
	 * it, sharing their maps. */
	if (pass && !strcmp(pass, "iter")) {
		snprintf(b->walk_why, sizeof(b->walk_why),
			 "not tried (CTP_BPFTASK_PASS=iter)");
		r = -ECANCELED;
	} else if (!(flags & CTP_BPFTASK_OPEN_WALK) &&
		   !(pass && !strcmp(pass, "open-coded"))) {
		snprintf(b->walk_why, sizeof(b->walk_why),
			 "not asked for (pass: iter)");
		r = -ECANCELED;
	} else if (force && !strcmp(force, "light-nocast")) {
		snprintf(b->walk_why, sizeof(b->walk_why),
			 "not tried (CTP_BPFTASK_LOADER=light-nocast)");
		r = -ECANCELED;
	} else if (!ctp_bpftask_initial_pidns(-1)) {
		snprintf(b->walk_why, sizeof(b->walk_why),
			 "not in the initial pid namespace");
		r = -ECANCELED;
	} else {
		r = open_task_iter_walk_lskel(b, b->walk_why,
					      sizeof(b->walk_why));
#ifndef CTP_BPFTASK_NO_LSKEL
		if (r == 0)
			r = walk_maps(b, b->walk_why, sizeof(b->walk_why));
#endif
	}
	if (r == 0) {
		b->walk_on = true;
		b->walk_k = CTP_BPFTASK_WALK_K;
		b->walk_procs = CTP_BPFTASK_WALK_PROCS;
		snprintf(b->loader, sizeof(b->loader), "the light skeleton");
		return 0;
	}
	task_iter_walk_lskel__destroy(b->walk);
	b->walk = NULL;
	if (force && !strcmp(force, "light-nocast")) {
		snprintf(cast_why, sizeof(cast_why),
			 "not tried (CTP_BPFTASK_LOADER=light-nocast)");
		r = -ECANCELED;
	} else {
		r = open_task_iter_cast_lskel(b, cast_why, sizeof(cast_why));
	}
	if (r == 0) {
		snprintf(b->loader, sizeof(b->loader), "the light skeleton");
		return 0;
	}
	task_iter_cast_lskel__destroy(b->cast);
	b->cast = NULL;
	r = open_task_iter_lskel(b, why, whylen);
	if (r == 0)
		snprintf(b->loader, sizeof(b->loader),
			 "the light skeleton, of the program without "
			 "bpf_rdonly_cast (the one with it: %s)",
			 cast_why);
	return r;
}

int ctp_bpftask_open(struct ctp_bpftask **ret, char *why, size_t whylen)
{
	return ctp_bpftask_open_flags(ret, 0, why, whylen);
}

int ctp_bpftask_open_flags(struct ctp_bpftask **ret, unsigned flags, char *why,
			   size_t whylen)
{
	const char *force = getenv("CTP_BPFTASK_LOADER");
	char light_why[160];
	struct ctp_bpftask *b;
	int r;

	r = ctp_bpfload_begin(why, whylen);
	if (r < 0)
		return r;
	b = calloc(1, sizeof(*b));
	if (!b)
		return ctp_bpfload_fail(why, whylen, -ENOMEM, "allocating",
					needs);
	if (force && !strcmp(force, "libbpf")) {
		snprintf(light_why, sizeof(light_why),
			 "not tried (CTP_BPFTASK_LOADER=libbpf)");
		snprintf(b->walk_why, sizeof(b->walk_why),
			 "not tried (CTP_BPFTASK_LOADER=libbpf)");
		r = -ECANCELED;
	} else {
		r = open_lights(b, force, flags, light_why, sizeof(light_why));
	}
	if (r == 0) {
		*ret = b;
		return 0;
	}
	task_iter_lskel__destroy(b->light);
	b->light = NULL;
	if (force && !strncmp(force, "light", 5)) {
		if (why && whylen)
			snprintf(why, whylen, "%s", light_why);
		goto out;
	}
	r = open_libbpf(b, why, whylen);
	if (r < 0)
		goto out;
	snprintf(b->loader, sizeof(b->loader),
		 "libbpf's skeleton (the light one: %s)", light_why);
	*ret = b;
	return 0;
out:
	ctp_bpftask_free(b);
	return r;
}

void ctp_bpftask_free(struct ctp_bpftask *b)
{
	if (!b)
		return;
#ifndef CTP_BPFTASK_NO_LSKEL
	walk_unmap(b);
#endif
	task_iter_walk_lskel__destroy(b->walk);
	task_iter_cast_lskel__destroy(b->cast);
	task_iter_lskel__destroy(b->light);
	task_iter_bpf__destroy(b->skel);
	if (b->buf)
		munmap(b->buf, b->cap);
	free(b->cg_keys);
	free(b->cg_vals);
	free(b->cg);
	free(b->w_keys);
	free(b);
}

const char *ctp_bpftask_loader(const struct ctp_bpftask *b)
{
	return b->loader;
}

void ctp_bpftask_expect(struct ctp_bpftask *b, size_t tasks)
{
	b->expect = tasks;
}

void ctp_bpftask_buf_reused(struct ctp_bpftask *b, bool reused)
{
	b->reused = reused;
}

size_t ctp_bpftask_buf_bytes(const struct ctp_bpftask *b)
{
	return b->cap;
}

/*
 * Room for more of a pass that filled b->buf (at most max_bytes + 1 in
 * all): the first mapping sized for the tasks expected, then twice the
 * size, moved by mremap() (page tables, not bytes), but for the one step
 * from below huge-page size to above: then the few bytes (the check's
 * pass over one task) are copied into a new mapping, which the kernel
 * places on a huge page boundary as mremap() may not. Huge pages are
 * asked for where the buffer spans one. 0 or a negative errno.
 */
static int grow(struct ctp_bpftask *b, size_t max_bytes)
{
	size_t want = ctp_bpftask_buf_want(b->expect), n;
	bool fresh;
	void *p;

	if (b->cap && want < b->cap * 2)
		want = b->cap * 2;
	n = ctp_bpftask_buf_size(want, max_bytes);
	if (n <= b->cap)
		return -E2BIG; /* the caller stops first: not reached */
	fresh = !b->buf || (b->cap < CTP_BPFTASK_HUGE && n >= CTP_BPFTASK_HUGE);
	if (fresh)
		p = mmap(NULL, n, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS |
				 (b->reused ? 0 : MAP_POPULATE),
			 -1, 0);
	else
		p = mremap(b->buf, b->cap, n, MREMAP_MAYMOVE);
	if (p == MAP_FAILED)
		return -errno;
	/* A buffer many passes reuse: one fault per 2 MiB, not per 4 KiB,
	 * where THP is "madvise", asked before the first byte is written (a
	 * range touched before is mapped in 4 KiB pages); EINVAL without
	 * THP, which changes nothing. A one-shot capture's is populated by
	 * the mmap (bpftask.h, ctp_bpftask_buf_reused: why not huge). */
	if (b->reused && n >= CTP_BPFTASK_HUGE)
		(void)madvise(p, n, MADV_HUGEPAGE);
	if (fresh && b->buf) {
		memcpy(p, b->buf, b->cap);
		munmap(b->buf, b->cap);
	}
	b->buf = p;
	b->cap = n;
	return 0;
}

/* Read the stream of the iterator link lfd into b->buf, checking its
 * records as they come (ctp_bpftask_rec_more: on bytes still in the cache
 * the kernel's copy left them in, not in a pass of their own over the
 * whole buffer after it); returns the number of records, or a negative
 * errno (-E2BIG past max_bytes; -EBADMSG, a stream that ended within
 * max_bytes but is not whole records of this version). */
static long read_stream(struct ctp_bpftask *b, int lfd, size_t start,
			size_t max_bytes)
{
	/* From start on: the whole records before it are checked. */
	struct ctp_bpftask_rec_scan sc = {.checked = start};
	int fd = bpf_iter_create(lfd);
	size_t len = start;
	ssize_t got;
	long r;

	if (fd < 0)
		return -errno;
	for (;;) {
		if (len == b->cap && (r = grow(b, max_bytes)) < 0)
			goto out;
		size_t room = b->cap - len;
		if (room > max_bytes + 1 - len)
			room = max_bytes + 1 - len;
		got = read(fd, b->buf + len, room);
		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0) {
			r = -errno;
			goto out;
		}
		if (got == 0)
			break;
		len += (size_t)got;
		if (len > max_bytes) {
			r = -E2BIG;
			goto out;
		}
		ctp_bpftask_rec_more(&sc, b->buf, len);
	}
	r = ctp_bpftask_rec_end(&sc, len);
out:
	close(fd);
	return r;
}

/* The records read_stream() left in b->buf (n of them, or its error). */
static int parse_stream(struct ctp_bpftask *b, long n,
			const struct ctp_bpftask_rec **recs)
{
	if (n < 0)
		return (int)n;
	/* The stream is whole records of the struct's size back to back, so
	 * once checked the buffer itself is the array (a mapping is page
	 * aligned): no copy of any task. */
	*recs = (const struct ctp_bpftask_rec *)(const void *)b->buf;
	return (int)n;
}

int ctp_bpftask_getaffinity(pid_t tid, __u64 words[CTP_BPFTASK_CPU_WORDS])
{
	cpu_set_t set; /* CPU_SETSIZE: 1024 CPUs */
	const unsigned long *bits = (const unsigned long *)(const void *)&set;
	const size_t per = sizeof(unsigned long) * 8;

	if (sched_getaffinity(tid, sizeof(set), &set) < 0)
		return -errno;
	memset(words, 0, CTP_BPFTASK_CPU_WORDS * sizeof(*words));
	for (size_t i = 0; i < sizeof(set) / sizeof(*bits); i++) {
		size_t bit = i * per;
		if (!bits[i])
			continue;
		if (bit >= 64 * CTP_BPFTASK_CPU_WORDS)
			return -EOVERFLOW;
		words[bit / 64] |= (__u64)bits[i] << (bit % 64);
	}
	return 0;
}

void ctp_bpftask_skip_delays(struct ctp_bpftask *b, bool skip)
{
	*b->skip_delays = skip;
}

#ifdef CTP_BPFTASK_NO_LSKEL
static int walk_pass(struct ctp_bpftask *b, size_t max_bytes,
		     const struct ctp_bpftask_rec **recs)
{
	(void)b;
	(void)max_bytes;
	(void)recs;
	return -EAGAIN; /* never on: nothing loaded it */
}
#else
/*
 * A run's records into the pass's buffer without reading the buffer first:
 * streaming stores write whole lines, where a plain copy reads each line
 * of the destination (tens of MiB at 30,000 threads, long out of the
 * cache) before it writes it. The records are read from the buffer after
 * the pass, not now. Recorder at 30 x 1,000 threads, six interleaved
 * pairs: 67.7-73.9 against 65.3-72.3 ms a capture (docs/PERFORMANCE.md).
 */
static void copy_nt(void *dst, const void *src, size_t n)
{
#if defined(__x86_64__)
	char *d = dst;
	const char *s = src;

	for (; n && ((uintptr_t)d & 15); n--)
		*d++ = *s++;
	for (; n >= 64; n -= 64, d += 64, s += 64)
		for (int i = 0; i < 64; i += 16)
			_mm_stream_si128(
				(__m128i *)(void *)(d + i),
				_mm_loadu_si128((
					const __m128i *)(const void *)(s + i)));
	_mm_sfence(); /* ordered before the buffer is read */
	memcpy(d, s, n);
#else
	memcpy(dst, src, n);
#endif
}

/* One run of the open-coded pass's program (its mode and arguments set
 * in its .bss): 0 or a negative errno. */
static int walk_run(struct ctp_bpftask *b)
{
	LIBBPF_OPTS(bpf_test_run_opts, o);

	if (bpf_prog_test_run_opts(b->walk_fd, &o) < 0)
		return -errno;
	b->ws.runs++;
	return 0;
}

/* Room for need bytes more after len in b->buf, at most max_bytes in
 * all: 0 or a negative errno (-E2BIG). */
static int room_for(struct ctp_bpftask *b, size_t len, size_t need,
		    size_t max_bytes)
{
	int r;

	if (need > max_bytes || len > max_bytes - need)
		return -E2BIG;
	while (b->cap < len + need)
		if ((r = grow(b, max_bytes)) < 0)
			return r;
	return 0;
}

/* The list run's tgids (n), sorted in place: the records then come by
 * process in tgid order, as the walk list wants them. 0 or -ENOMEM. */
static int sort_tgids(struct ctp_bpftask *b, size_t n)
{
	int r = CTP_GROW(b->w_keys, b->w_keys_cap, 2 * n, 1024);

	if (r < 0)
		return r;
	for (size_t i = 0; i < n; i++)
		b->w_keys[i] =
			(struct ctp_bpftask_key){.key = b->w_pids[i], .idx = 0};
	ctp_bpftask_sort(b->w_keys, b->w_keys + n, n);
	for (size_t i = 0; i < n; i++)
		b->w_pids[i] = b->w_keys[i].key;
	return 0;
}

/*
 * The open-coded pass (task_walk.h): the list run, then threads runs of
 * at most walk_k records each, checked where the run wrote them and
 * copied into b->buf after each run; a process of more threads walked by the
 * iterator's pid parameter into b->buf after them. Returns the number of
 * records as ctp_bpftask_pass does, -EAGAIN where iter/task's whole pass
 * must give it (more processes than the list holds), or a negative errno
 * (-EPERM, -EACCES: a run or the pid pass's link refused, as it will be
 * on every pass).
 */
static int walk_pass(struct ctp_bpftask *b, size_t max_bytes,
		     const struct ctp_bpftask_rec **recs)
{
	struct ctp_bpftask_rec_scan sc = {0};
	__typeof__(b->walk->bss) v = b->walk->bss;
	size_t len = 0, np;
	__u32 first;
	long n;
	int r;

	v->ctp_walk_mode = 0;
	v->ctp_walk_procs = b->walk_procs;
	if ((r = walk_run(b)) < 0)
		return r;
	b->ws.list_ns = v->ctp_walk_ns;
	if (v->ctp_walk_over)
		return -EAGAIN;
	np = v->ctp_walk_n;
	if ((r = sort_tgids(b, np)) < 0)
		return r;
	v->ctp_walk_mode = 1;
	v->ctp_walk_k = b->walk_k;
	v->ctp_walk_end = (__u32)np;
	for (first = 0; first < np;) {
		size_t bytes;

		v->ctp_walk_first = first;
		if ((r = walk_run(b)) < 0)
			return r;
		if (v->ctp_walk_ns > b->ws.max_run_ns)
			b->ws.max_run_ns = v->ctp_walk_ns;
		if (v->ctp_walk_n > b->ws.max_run_recs)
			b->ws.max_run_recs = v->ctp_walk_n;
		bytes = (size_t)v->ctp_walk_n * sizeof(struct ctp_bpftask_rec);
		if ((r = room_for(b, len, bytes, max_bytes)) < 0)
			return r;
		ctp_bpftask_rec_add(&sc, b->w_recs, bytes);
		copy_nt(b->buf + len, b->w_recs, bytes);
		len += bytes;
		if (v->ctp_walk_big) {
			union bpf_iter_link_info info = {
				.task = {.pid = v->ctp_walk_big}};
			LIBBPF_OPTS(bpf_link_create_opts, opts,
				    .iter_info = &info,
				    .iter_info_len = sizeof(info));
			int lfd = bpf_link_create(b->prog_fd, 0, BPF_TRACE_ITER,
						  &opts);

			/* Refused (a capture child's seccomp filter allows
			 * no new link): refused on every pass, so the caller
			 * turns the open-coded pass off for good. */
			if (lfd < 0)
				return -errno;
			n = read_stream(b, lfd, len, max_bytes);
			close(lfd);
			if (n < 0)
				return (int)n;
			len = (size_t)n * sizeof(struct ctp_bpftask_rec);
			sc.checked = len;
			b->ws.big++;
		}
		if (v->ctp_walk_next <= first)
			return -EIO; /* no step forward: not reached */
		first = v->ctp_walk_next;
	}
	return parse_stream(b, ctp_bpftask_rec_end(&sc, len), recs);
}
#endif

int ctp_bpftask_pass(struct ctp_bpftask *b, size_t max_bytes,
		     const struct ctp_bpftask_rec **recs)
{
	/* A new number: the css_sets noted by the passes before are stale. */
	*b->cg_gen_var = b->cg_on ? ++b->cg_gen : 0;
	int r;

	/* This pass's (all 0 where it is iter/task's alone). */
	memset(&b->ws, 0, sizeof(b->ws));

	if (b->walk_on) {
		r = walk_pass(b, max_bytes, recs);
		/* bpf() refused a run (a filter older than the program) or
		 * the pid pass's link (a capture child's filter): iter/task
		 * from now on, which says so itself if it is refused too. */
		if (r == -EPERM || r == -EACCES)
			b->walk_on = false;
		else if (r != -EAGAIN)
			return r;
		b->ws.whole = true;
	}
	return parse_stream(b, read_stream(b, b->link_fd, 0, max_bytes), recs);
}

/* A pass through a link of its own with the iterator's parameter info. */
static int pass_with(struct ctp_bpftask *b, union bpf_iter_link_info *info,
		     size_t max_bytes, const struct ctp_bpftask_rec **recs)
{
	LIBBPF_OPTS(bpf_link_create_opts, opts, .iter_info = info,
		    .iter_info_len = sizeof(*info));
	int lfd = bpf_link_create(b->prog_fd, 0, BPF_TRACE_ITER, &opts), r;

	if (lfd < 0)
		return -errno;
	r = parse_stream(b, read_stream(b, lfd, 0, max_bytes), recs);
	close(lfd);
	return r;
}

const char *ctp_bpftask_walk_why(const struct ctp_bpftask *b)
{
	return b->w_recs ? NULL : b->walk_why;
}

bool ctp_bpftask_use_walk(struct ctp_bpftask *b, bool on)
{
	b->walk_on = on && b->w_recs;
	return b->walk_on;
}

void ctp_bpftask_walk_limit(struct ctp_bpftask *b, unsigned k, unsigned procs)
{
	b->walk_k = k < 1 ? 1 : k > CTP_BPFTASK_WALK_K ? CTP_BPFTASK_WALK_K : k;
	b->walk_procs =
		procs > CTP_BPFTASK_WALK_PROCS ? CTP_BPFTASK_WALK_PROCS : procs;
}

void ctp_bpftask_walk_stats(const struct ctp_bpftask *b,
			    struct ctp_bpftask_walk_stats *st)
{
	*st = b->ws;
}

void ctp_bpftask_note_cgroups(struct ctp_bpftask *b, bool on)
{
	b->cg_on = on;
}

int ctp_bpftask_cg_sets(struct ctp_bpftask *b,
			const struct ctp_bpfcg_entry **sets)
{
	int fd = b->cg_fd;
	size_t max, n = 0;
	__u32 in = 0, out = 0;
	bool first = true;
	int r;

	if (!b->cg_on)
		return -ENODATA;
	if (!b->cg_max) {
		/* Either loader made the map; its size from the kernel. */
		struct bpf_map_info info = {0};
		__u32 len = sizeof(info);

		if (bpf_obj_get_info_by_fd(fd, &info, &len) < 0)
			return -errno;
		b->cg_max = info.max_entries;
	}
	max = b->cg_max;
	if ((r = CTP_GROW(b->cg_keys, b->cg_cap, max, max)) < 0)
		return r;
	if (!b->cg_vals) {
		b->cg_vals = calloc(max, sizeof(*b->cg_vals));
		b->cg = calloc(max, sizeof(*b->cg));
		if (!b->cg_vals || !b->cg)
			return -ENOMEM;
	}
	/* Batches of whole hash buckets until the end (ENOENT). */
	while (n < max) {
		__u32 count = (__u32)(max - n);

		r = bpf_map_lookup_batch(fd, first ? NULL : &in, &out,
					 b->cg_keys + n, b->cg_vals + n, &count,
					 NULL);
		n += count;
		if (r < 0 && errno == ENOENT)
			break;
		if (r < 0)
			return -errno;
		in = out;
		first = false;
	}
	for (size_t i = 0; i < n; i++) {
		b->cg[i].key = b->cg_keys[i];
		b->cg[i].set = b->cg_vals[i];
	}
	*sets = b->cg;
	return (int)ctp_bpfcg_keep(b->cg, n, b->cg_gen);
}

int ctp_bpftask_pass_tid(struct ctp_bpftask *b, int tid,
			 const struct ctp_bpftask_rec **recs)
{
	union bpf_iter_link_info info = {.task = {.tid = (__u32)tid}};

	return pass_with(b, &info, 4 * sizeof(struct ctp_bpftask_rec), recs);
}

int ctp_bpftask_pass_pid(struct ctp_bpftask *b, int pid, size_t max_bytes,
			 const struct ctp_bpftask_rec **recs)
{
	union bpf_iter_link_info info = {.task = {.pid = (__u32)pid}};

	return pass_with(b, &info, max_bytes, recs);
}
