/* The pure parser of the iter/task record stream and the pure arithmetic
 * that turns a record into the files' values (bpftask_rec.h). */
#include "bpftask_rec.h"

#include <ctprof/source-process.h>
#include <ctprof/source-task.h>

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

/* Whether the record at p (any alignment) is one of this version. */
static bool rec_ok(const unsigned char *p)
{
	struct {
		__u16 size, version;
		__u32 present;
		__s32 tgid, pid;
	} h;

	memcpy(&h, p, sizeof(h));
	return h.size == sizeof(struct ctp_bpftask_rec) &&
	       h.version == CTP_BPFTASK_REC_VERSION &&
	       !(h.present & ~CTP_BPFTASK_HAS_ALL) && h.tgid > 0 && h.pid > 0 &&
	       memchr(p + offsetof(struct ctp_bpftask_rec, comm), '\0',
		      sizeof(((struct ctp_bpftask_rec *)0)->comm));
}

int ctp_bpftask_rec_next(const void *buf, size_t len, size_t *off,
			 struct ctp_bpftask_rec *out)
{
	if (*off > len)
		return -EBADMSG;
	if (*off == len)
		return 0;
	if (len - *off < sizeof(*out) ||
	    !rec_ok((const unsigned char *)buf + *off))
		return -EBADMSG;
	memcpy(out, (const char *)buf + *off, sizeof(*out));
	*off += sizeof(*out);
	return 1;
}

long ctp_bpftask_rec_check(const void *buf, size_t len)
{
	const unsigned char *p = buf;
	size_t n = len / sizeof(struct ctp_bpftask_rec);

	if (len % sizeof(struct ctp_bpftask_rec))
		return -EBADMSG;
	for (size_t i = 0; i < n; i++)
		if (!rec_ok(p + i * sizeof(struct ctp_bpftask_rec)))
			return -EBADMSG;
	return (long)n;
}

void ctp_bpftask_rec_more(struct ctp_bpftask_rec_scan *sc, const void *buf,
			  size_t len)
{
	const size_t rec = sizeof(struct ctp_bpftask_rec);
	size_t whole;

	if (len < sc->checked)
		return; /* not the bytes so far: ctp_bpftask_rec_end says */
	whole = (len - sc->checked) / rec * rec;
	if (whole)
		ctp_bpftask_rec_add(
			sc, (const unsigned char *)buf + sc->checked, whole);
}

void ctp_bpftask_rec_add(struct ctp_bpftask_rec_scan *sc, const void *recs,
			 size_t bytes)
{
	if (!sc->bad && ctp_bpftask_rec_check(recs, bytes) < 0)
		sc->bad = 1;
	sc->checked += bytes;
}

long ctp_bpftask_rec_end(const struct ctp_bpftask_rec_scan *sc, size_t len)
{
	if (sc->bad || len != sc->checked)
		return -EBADMSG;
	return (long)(len / sizeof(struct ctp_bpftask_rec));
}

size_t ctp_bpftask_buf_size(size_t want, size_t max_bytes)
{
	const size_t page = 4096;
	size_t limit, unit;

	/* max_bytes + 1 rounded up to a page (saturating). */
	limit = max_bytes / page * page;
	limit = limit > SIZE_MAX - page ? limit : limit + page;
	if (want > limit)
		want = limit;
	unit = want >= CTP_BPFTASK_HUGE ? CTP_BPFTASK_HUGE : page;
	if (want % unit) {
		size_t up = unit - want % unit;
		want = want > limit - up ? limit : want + up;
	}
	return want ? want : page;
}

size_t ctp_bpftask_buf_want(size_t tasks)
{
	const size_t rec = sizeof(struct ctp_bpftask_rec);
	size_t n = tasks + tasks / 8;

	if (n < tasks || n > SIZE_MAX - 16 || n + 16 > SIZE_MAX / rec)
		return SIZE_MAX / rec * rec;
	return (n + 16) * rec;
}

int ctp_bpftask_loadavg_tasks(const char *buf, size_t len, size_t *tasks)
{
	/* "0.52 0.58 0.59 3/1193 12345\n" (fs/proc/loadavg.c): the first '/'
	 * is the fourth field's. */
	const char *p = memchr(buf, '/', len), *end = buf + len;
	size_t n = 0;

	if (!p || ++p == end || *p < '0' || *p > '9')
		return -EBADMSG;
	for (; p < end && *p >= '0' && *p <= '9'; p++) {
		if (n > (SIZE_MAX - 9) / 10)
			return -ERANGE;
		n = n * 10 + (size_t)(*p - '0');
	}
	if (p == end || *p != ' ')
		return -EBADMSG;
	*tasks = n;
	return 0;
}

bool ctp_bpftask_status_initial_pidns(const char *buf, size_t len)
{
	static const char key[] = "\nNSpid:";
	const char *end = buf + len, *p = buf;

	/* The line, not a value that happens to hold the word. */
	for (;; p++) {
		p = memchr(p, '\n', (size_t)(end - p));
		if (!p || (size_t)(end - p) < sizeof(key) - 1)
			return true; /* before 4.1: no pid namespace column */
		if (!memcmp(p, key, sizeof(key) - 1))
			break;
	}
	p += sizeof(key) - 1;
	while (p < end && (*p == ' ' || *p == '\t'))
		p++;
	while (p < end && *p != ' ' && *p != '\t' && *p != '\n')
		p++;
	return p == end || *p == '\n';
}

bool ctp_bpftask_comm_short(__u32 flags, const char *comm)
{
	if (flags & CTP_PF_WQ_WORKER)
		return true;
	/* kernel/kthread.c keeps full_name only for a name of 16 bytes or
	 * more, which comm holds cut to 15. */
	return (flags & CTP_PF_KTHREAD) && memchr(comm, '\0', 15) == NULL;
}

char *ctp_bpftask_comm_text(const char *comm, char *out)
{
	static const char hex[] = "0123456789abcdef";
	size_t o = 0;

	for (size_t i = 0; i < 16 && comm[i]; i++) {
		unsigned char c = (unsigned char)comm[i];
		if (c < 0x20 || c == 0x7f || c == '\\') {
			out[o++] = '\\';
			out[o++] = 'x';
			out[o++] = hex[c >> 4];
			out[o++] = hex[c & 15];
		} else {
			out[o++] = (char)c;
		}
	}
	out[o] = '\0';
	return out;
}

/* include/linux/sched.h (5.14+). */
#define TASK_INTERRUPTIBLE   0x0001u
#define TASK_UNINTERRUPTIBLE 0x0002u
#define TASK_NOLOAD	     0x0400u
#define TASK_RTLOCK_WAIT     0x1000u
#define TASK_FROZEN	     0x8000u
#define TASK_IDLE	     (TASK_UNINTERRUPTIBLE | TASK_NOLOAD)
/* RUNNING | INTERRUPTIBLE | UNINTERRUPTIBLE | __TASK_STOPPED |
 * __TASK_TRACED | EXIT_DEAD | EXIT_ZOMBIE | TASK_PARKED */
#define TASK_REPORT	 0x7fu
#define TASK_REPORT_IDLE (TASK_REPORT + 1)

char ctp_bpftask_state_char(__u32 state, __u32 exit_state)
{
	static const char letters[] = "RSDTtXZPI";
	unsigned s = (state | exit_state) & TASK_REPORT, idx = 0;

	if ((state & TASK_IDLE) == TASK_IDLE)
		s = TASK_REPORT_IDLE;
	if ((state & TASK_RTLOCK_WAIT) || (state & TASK_FROZEN))
		s = TASK_UNINTERRUPTIBLE;
	if (s) /* fls() */
		idx = 32 - (unsigned)__builtin_clz(s);
	return letters[idx];
}

void ctp_cputime_adjust(__u64 utime, __u64 stime, __u64 rtime,
			__u64 *prev_utime, __u64 *prev_stime)
{
	/* The order of the kernel's steps, its comments in brief. */
	if (*prev_stime + *prev_utime >= rtime)
		return; /* rtime not past what was handed out: keep it */
	if (stime == 0) {
		utime = rtime; /* no system tick: all user */
	} else if (utime == 0) {
		stime = rtime;
	} else {
		unsigned __int128 p = (unsigned __int128)stime * rtime;
		stime = (__u64)(p / ((unsigned __int128)stime + utime));
		if (stime > rtime)
			stime = rtime;
	}
	if (stime < *prev_stime)
		stime = *prev_stime;
	utime = rtime - stime;
	if (utime < *prev_utime) {
		utime = *prev_utime;
		stime = rtime - utime;
	}
	*prev_utime = utime;
	*prev_stime = stime;
}

__u64 ctp_nsec_to_clock_t(__u64 ns, unsigned long user_hz)
{
	/* NSEC_PER_SEC % USER_HZ == 0 for every USER_HZ Linux has; the
	 * kernel's other branch (x * 9 / ((9 * NSEC_PER_SEC + USER_HZ / 2)
	 * / USER_HZ)) is for HZ 512-like values none ship. USER_HZ is 100
	 * on x86, arm64 and most others: a constant divisor, which the
	 * compiler makes a multiply (a division is ~8 ns here, three a
	 * task a pass). */
	if (user_hz == 100)
		return ns / 10000000u;
	if (1000000000ul % user_hz == 0)
		return ns / (1000000000ul / user_hz);
	return ns * 9 / ((9ull * 1000000000ul + user_hz / 2) / user_hz);
}

int ctp_bpftask_hiwater(const struct ctp_bpftask_rec *r, __u64 page_size,
			__u64 *rss_bytes, __u64 *vm_bytes)
{
	if (!(r->present & CTP_BPFTASK_HAS_MM))
		return -ENODATA;
	*rss_bytes = r->hiwater_rss * page_size;
	*vm_bytes = r->hiwater_vm * page_size;
	return 0;
}

int ctp_bpftask_active_cpus(const __u64 mask[CTP_BPFTASK_CPU_WORDS],
			    const __u64 cpus[CTP_BPFTASK_CPU_WORDS],
			    const __u64 possible[CTP_BPFTASK_CPU_WORDS],
			    __u64 active[CTP_BPFTASK_CPU_WORDS])
{
	for (unsigned w = 0; w < CTP_BPFTASK_CPU_WORDS; w++)
		if (possible[w] & ~cpus[w])
			return -ENODATA;
	memcpy(active, mask, CTP_BPFTASK_CPU_WORDS * sizeof(*active));
	return 0;
}

void ctp_bpftask_src_put(struct ctp_src_task *o, unsigned which, __u64 v)
{
	o->v[which] = v;
	o->valid[which / 64] |= UINT64_C(1) << (which % 64);
}

#define BIT(i) (UINT64_C(1) << (i))
/* Values a record always has, and those of each group (all in valid[0]:
 * every value number is below 64). */
#define ALWAYS                                                                 \
	(BIT(CTP_SRC_TASK_MINFLT) | BIT(CTP_SRC_TASK_MAJFLT) |                 \
	 BIT(CTP_SRC_TASK_PRIORITY) | BIT(CTP_SRC_TASK_NICE) |                 \
	 BIT(CTP_SRC_TASK_START_TIME) | BIT(CTP_SRC_TASK_RT_PRIORITY) |        \
	 BIT(CTP_SRC_TASK_POLICY) | BIT(CTP_SRC_TASK_NVCSW) |                  \
	 BIT(CTP_SRC_TASK_NIVCSW) | BIT(CTP_SRC_TASK_RUN_NS))
#define TIMES (BIT(CTP_SRC_TASK_UTIME) | BIT(CTP_SRC_TASK_STIME))
#define IO_XACCT                                                               \
	(BIT(CTP_SRC_TASK_RCHAR) | BIT(CTP_SRC_TASK_WCHAR) |                   \
	 BIT(CTP_SRC_TASK_SYSCR) | BIT(CTP_SRC_TASK_SYSCW))
#define IO_BYTES                                                               \
	(BIT(CTP_SRC_TASK_READ_BYTES) | BIT(CTP_SRC_TASK_WRITE_BYTES) |        \
	 BIT(CTP_SRC_TASK_CANCELLED_WRITE_BYTES))
#define SCHED		  (BIT(CTP_SRC_TASK_RUN_DELAY_NS) | BIT(CTP_SRC_TASK_TIMESLICES))
#define FAMILY(f, lo, hi) (((BIT((hi) + 1) - 1) >> (lo) << (lo)) << (4 * (f)))
#define MARKS		  (BIT(CTP_SRC_TASK_HIWATER_RSS) | BIT(CTP_SRC_TASK_HIWATER_VM))
#define CPUS		  (FAMILY(0, 0, 3) << CTP_SRC_TASK_CPUS0)
_Static_assert(CTP_SRC_TASK_N_VALUES <= 64, "valid[0] holds every value");

/* The valid bits of a record with these present bits under conv. */
static uint64_t src_valid(__u32 has, __u32 flags,
			  const struct ctp_bpftask_conv *conv)
{
	uint64_t v = ALWAYS;

	if (conv->times && (has & CTP_BPFTASK_HAS_PREV))
		v |= TIMES;
	if (has & CTP_BPFTASK_HAS_CPU)
		v |= BIT(CTP_SRC_TASK_PROCESSOR);
	if (has & CTP_BPFTASK_HAS_STATE)
		v |= BIT(CTP_SRC_TASK_STATE);
	if (has & CTP_BPFTASK_HAS_IO_XACCT)
		v |= IO_XACCT;
	if (has & CTP_BPFTASK_HAS_IO_BYTES)
		v |= IO_BYTES;
	if (has & CTP_BPFTASK_HAS_SCHED_INFO) {
		v |= SCHED;
		/* taskstats' cpu family: delayacct_add_tsk() copies
		 * sched_info's pcount, run_delay, max_run_delay,
		 * min_run_delay. */
		if (conv->cpu_delay)
			v |= FAMILY(0, 0, 1) << CTP_SRC_TASK_DELAY0;
		if (conv->cpu_delay && (has & CTP_BPFTASK_HAS_RUN_DELAY_MAXMIN))
			v |= FAMILY(0, 2, 3) << CTP_SRC_TASK_DELAY0;
	}
	if (conv->delays_on) {
		/* Each family's two present bits to its four valid ones,
		 * without a branch (a fill a task): the loop unrolls. */
		uint64_t cnt = has / CTP_BPFTASK_HAS_DELAY(0),
			 mm = has / CTP_BPFTASK_HAS_DELAY_MAXMIN(0);
		for (unsigned f = 0; f < CTP_BPFTASK_N_FAM; f++)
			v |= ((cnt >> f & 1) * FAMILY(f + 1, 0, 1) |
			      (mm >> f & 1) * FAMILY(f + 1, 2, 3))
			     << CTP_SRC_TASK_DELAY0;
	}
	/* xacct_add_tsk(): get_task_mm() gives a kernel thread no mm, so the
	 * reply's marks stay 0 (taskstats reads both 0 as no address
	 * space); offered, so it needs no query. */
	if ((has & CTP_BPFTASK_HAS_MM) || (flags & CTP_PF_KTHREAD))
		v |= MARKS;
	if (conv->cpus_on && (has & CTP_BPFTASK_HAS_CPUS))
		v |= CPUS;
	return v;
}

void ctp_bpftask_to_src(const struct ctp_bpftask_rec *r,
			const struct ctp_bpftask_conv *conv, __u64 utime_ticks,
			__u64 stime_ticks, struct ctp_src_task *out)
{
	uint64_t *v = out->v;

	/* Every value written, straight: those of a group the record lacks
	 * are its zeros, left out by their valid bit. */
	out->abi = 1;
	out->size = sizeof(*out);
	out->valid[0] = src_valid(r->present, r->flags, conv);
	out->valid[1] = 0;
	v[CTP_SRC_TASK_MINFLT] = r->minflt;
	v[CTP_SRC_TASK_MAJFLT] = r->majflt;
	v[CTP_SRC_TASK_UTIME] = utime_ticks;
	v[CTP_SRC_TASK_STIME] = stime_ticks;
	/* task_prio() = prio - MAX_RT_PRIO, task_nice() = static_prio -
	 * DEFAULT_PRIO; signed, stored as two's complement. */
	v[CTP_SRC_TASK_PRIORITY] = (__u64)(__s64)(r->prio - 100);
	v[CTP_SRC_TASK_NICE] = (__u64)(__s64)(r->static_prio - 120);
	v[CTP_SRC_TASK_START_TIME] =
		ctp_nsec_to_clock_t(r->start_boottime, conv->user_hz);
	v[CTP_SRC_TASK_PROCESSOR] = r->cpu;
	v[CTP_SRC_TASK_RT_PRIORITY] = r->rt_priority;
	v[CTP_SRC_TASK_POLICY] = r->policy;
	v[CTP_SRC_TASK_STATE] =
		(unsigned char)ctp_bpftask_state_char(r->state, r->exit_state);
	v[CTP_SRC_TASK_NVCSW] = r->nvcsw;
	v[CTP_SRC_TASK_NIVCSW] = r->nivcsw;
	v[CTP_SRC_TASK_RCHAR] = r->rchar;
	v[CTP_SRC_TASK_WCHAR] = r->wchar;
	v[CTP_SRC_TASK_SYSCR] = r->syscr;
	v[CTP_SRC_TASK_SYSCW] = r->syscw;
	v[CTP_SRC_TASK_READ_BYTES] = r->read_bytes;
	v[CTP_SRC_TASK_WRITE_BYTES] = r->write_bytes;
	v[CTP_SRC_TASK_CANCELLED_WRITE_BYTES] = r->cancelled_write_bytes;
	v[CTP_SRC_TASK_RUN_NS] = r->sum_exec_runtime;
	v[CTP_SRC_TASK_RUN_DELAY_NS] = r->run_delay;
	v[CTP_SRC_TASK_TIMESLICES] = r->pcount;
	v[CTP_SRC_TASK_DELAY(0, 0)] = r->pcount;
	v[CTP_SRC_TASK_DELAY(0, 1)] = r->run_delay;
	v[CTP_SRC_TASK_DELAY(0, 2)] = r->run_delay_max;
	v[CTP_SRC_TASK_DELAY(0, 3)] = r->run_delay_min;
	/* Families 1..7 are the record's delays[0..6], in the same order. */
	_Static_assert(CTP_SRC_TASK_DELAY(CTP_BPFTASK_N_FAM, 3) + 1 ==
			       CTP_SRC_TASK_HIWATER_RSS,
		       "the families end where the marks begin");
	memcpy(&v[CTP_SRC_TASK_DELAY(1, 0)], r->delays, sizeof(r->delays));
	/* A kernel thread's marks are 0 whatever the record holds. */
	uint64_t mm = -(uint64_t) !!(r->present & CTP_BPFTASK_HAS_MM);
	v[CTP_SRC_TASK_HIWATER_RSS] = r->hiwater_rss * conv->page_size & mm;
	v[CTP_SRC_TASK_HIWATER_VM] = r->hiwater_vm * conv->page_size & mm;
	for (unsigned w = 0; w < CTP_BPFTASK_CPU_WORDS; w++)
		v[CTP_SRC_TASK_CPUS(w)] = r->cpus[w] & conv->active[w];
}

void ctp_bpftask_sort(struct ctp_bpftask_key *keys, struct ctp_bpftask_key *tmp,
		      size_t n)
{
	uint32_t count[8][256];
	struct ctp_bpftask_key *src = keys, *dst = tmp, *sw;
	bool sorted = true, low_sorted = true;
	unsigned from;

	if (n < 2)
		return;
	for (size_t i = 1; i < n && (sorted || low_sorted); i++) {
		__u64 a = keys[i - 1].key, b = keys[i].key;
		sorted &= a <= b;
		low_sorted &= (__u32)a <= (__u32)b;
	}
	if (sorted)
		return;
	/* Keys in tid order already (a pass's stream is, but for tids
	 * reused): the passes over the low four bytes would leave them where
	 * they are, so a stable sort by the high four gives the order. */
	from = low_sorted ? 4 : 0;
	memset(count, 0, sizeof(count));
	for (size_t i = 0; i < n; i++) {
		__u64 k = keys[i].key;
		for (unsigned d = from; d < 8; d++)
			count[d][(k >> (8 * d)) & 0xff]++;
	}
	for (unsigned d = from; d < 8; d++) {
		uint32_t at = 0, c;
		if (count[d][(src[0].key >> (8 * d)) & 0xff] == n)
			continue; /* every key has this byte */
		for (unsigned b = 0; b < 256; b++) {
			c = count[d][b];
			count[d][b] = at;
			at += c;
		}
		for (size_t i = 0; i < n; i++)
			dst[count[d][(src[i].key >> (8 * d)) & 0xff]++] =
				src[i];
		sw = src;
		src = dst;
		dst = sw;
	}
	if (src != keys)
		memcpy(keys, src, n * sizeof(*keys));
}

static int cmp_id(__s32 tgid_a, __s32 tid_a, __s32 tgid_b, __s32 tid_b)
{
	if (tgid_a != tgid_b)
		return tgid_a < tgid_b ? -1 : 1;
	return tid_a < tid_b ? -1 : tid_a > tid_b;
}

void ctp_bpftask_keep_monotonic(const struct ctp_bpftask_ticks *prev,
				size_t n_prev, struct ctp_bpftask_ticks *cur,
				size_t n_cur)
{
	size_t j = 0;

	for (size_t i = 0; i < n_cur; i++) {
		struct ctp_bpftask_ticks *c = &cur[i];
		while (j < n_prev &&
		       cmp_id(prev[j].tgid, prev[j].tid, c->tgid, c->tid) < 0)
			j++;
		if (j == n_prev)
			break;
		if (cmp_id(prev[j].tgid, prev[j].tid, c->tgid, c->tid) ||
		    prev[j].start_boottime != c->start_boottime)
			continue;
		/* Another thread in the leader's place after an exec: its
		 * own times, however low. */
		if (prev[j].exec_id && c->exec_id &&
		    prev[j].exec_id != c->exec_id)
			continue;
		if (c->utime < prev[j].utime)
			c->utime = prev[j].utime;
		if (c->stime < prev[j].stime)
			c->stime = prev[j].stime;
	}
}

/* The values of a layout (source-values.h, words valid words, n values)
 * valid in both pass and files whose two differ: their bits or'ed into
 * off, their number returned. */
static unsigned check_values(const void *pass, const void *files, size_t len,
			     unsigned words, unsigned n, uint64_t *off)
{
	unsigned k = 0;

	for (unsigned i = 0; i < n; i++) {
		uint64_t a, b;
		if (!ctp_src_values_get(pass, len, words, i, &a) ||
		    !ctp_src_values_get(files, len, words, i, &b) || a == b)
			continue;
		off[i / 64] |= UINT64_C(1) << (i % 64);
		k++;
	}
	return k;
}

unsigned ctp_bpftask_check(const struct ctp_src_task *pass,
			   const struct ctp_src_task *files, uint64_t off[2])
{
	return check_values(pass, files, sizeof(*pass), 2,
			    CTP_SRC_TASK_N_VALUES, off);
}

unsigned ctp_bpftask_proc_check(const struct ctp_src_process *pass,
				const struct ctp_src_process *files,
				uint64_t off[1])
{
	return check_values(pass, files, sizeof(*pass), 1,
			    CTP_SRC_PROC_N_VALUES, off);
}

static const char *const value_names[] = {
	[CTP_SRC_TASK_MINFLT] = "stat minflt",
	[CTP_SRC_TASK_MAJFLT] = "stat majflt",
	[CTP_SRC_TASK_UTIME] = "stat utime",
	[CTP_SRC_TASK_STIME] = "stat stime",
	[CTP_SRC_TASK_PRIORITY] = "stat priority",
	[CTP_SRC_TASK_NICE] = "stat nice",
	[CTP_SRC_TASK_START_TIME] = "stat starttime",
	[CTP_SRC_TASK_PROCESSOR] = "stat processor",
	[CTP_SRC_TASK_RT_PRIORITY] = "stat rt_priority",
	[CTP_SRC_TASK_POLICY] = "stat policy",
	[CTP_SRC_TASK_STATE] = "stat state",
	[CTP_SRC_TASK_NVCSW] = "status voluntary_ctxt_switches",
	[CTP_SRC_TASK_NIVCSW] = "status nonvoluntary_ctxt_switches",
	[CTP_SRC_TASK_RCHAR] = "io rchar",
	[CTP_SRC_TASK_WCHAR] = "io wchar",
	[CTP_SRC_TASK_SYSCR] = "io syscr",
	[CTP_SRC_TASK_SYSCW] = "io syscw",
	[CTP_SRC_TASK_READ_BYTES] = "io read_bytes",
	[CTP_SRC_TASK_WRITE_BYTES] = "io write_bytes",
	[CTP_SRC_TASK_CANCELLED_WRITE_BYTES] = "io cancelled_write_bytes",
	[CTP_SRC_TASK_RUN_NS] = "schedstat run_ns",
	[CTP_SRC_TASK_RUN_DELAY_NS] = "schedstat run_delay_ns",
	[CTP_SRC_TASK_TIMESLICES] = "schedstat timeslices",
	[CTP_SRC_TASK_CPUS(0)] = "affinity cpus0",
	[CTP_SRC_TASK_CPUS(1)] = "affinity cpus1",
	[CTP_SRC_TASK_CPUS(2)] = "affinity cpus2",
	[CTP_SRC_TASK_CPUS(3)] = "affinity cpus3",
};

const char *ctp_bpftask_value_name(unsigned which)
{
	return which < sizeof(value_names) / sizeof(*value_names)
		       ? value_names[which]
		       : NULL;
}

int ctp_bpftask_value_by_name(const char *name)
{
	for (unsigned i = 0;
	     name && i < sizeof(value_names) / sizeof(*value_names); i++) {
		const char *n = value_names[i], *sp = n ? strchr(n, ' ') : NULL;
		if (n && (!strcmp(n, name) || (sp && !strcmp(sp + 1, name))))
			return (int)i;
	}
	return -1;
}

static const char *const proc_value_names[] = {
	[CTP_SRC_PROC_NUM_THREADS] = "process stat num_threads",
	[CTP_SRC_PROC_MINFLT] = "process stat minflt",
	[CTP_SRC_PROC_MAJFLT] = "process stat majflt",
	[CTP_SRC_PROC_UTIME] = "process stat utime",
	[CTP_SRC_PROC_STIME] = "process stat stime",
	[CTP_SRC_PROC_CMINFLT] = "process stat cminflt",
	[CTP_SRC_PROC_CMAJFLT] = "process stat cmajflt",
	[CTP_SRC_PROC_CUTIME] = "process stat cutime",
	[CTP_SRC_PROC_CSTIME] = "process stat cstime",
	[CTP_SRC_PROC_RCHAR] = "process io rchar",
	[CTP_SRC_PROC_WCHAR] = "process io wchar",
	[CTP_SRC_PROC_SYSCR] = "process io syscr",
	[CTP_SRC_PROC_SYSCW] = "process io syscw",
	[CTP_SRC_PROC_READ_BYTES] = "process io read_bytes",
	[CTP_SRC_PROC_WRITE_BYTES] = "process io write_bytes",
	[CTP_SRC_PROC_CANCELLED_WRITE_BYTES] =
		"process io cancelled_write_bytes",
	[CTP_SRC_PROC_MM_GEN] = "process maps generation",
};
_Static_assert(sizeof(proc_value_names) / sizeof(*proc_value_names) ==
		       CTP_SRC_PROC_N_VALUES,
	       "every process value has a name");

const char *ctp_bpftask_proc_value_name(unsigned which)
{
	return which < CTP_SRC_PROC_N_VALUES ? proc_value_names[which] : NULL;
}

int ctp_bpftask_proc_value_by_name(const char *name)
{
	for (unsigned i = 0; name && i < CTP_SRC_PROC_N_VALUES; i++)
		if (!strcmp(proc_value_names[i], name))
			return (int)i;
	return -1;
}

unsigned ctp_bpftask_judged(uint64_t off[2], uint64_t poff[1])
{
	unsigned k = 0;

	for (unsigned i = 0; i < CTP_SRC_TASK_N_VALUES; i++)
		if (ctp_bpftask_value_name(i)) {
			off[i / 64] |= UINT64_C(1) << (i % 64);
			k++;
		}
	for (unsigned i = 0; i < CTP_SRC_PROC_N_VALUES; i++)
		if (i != CTP_SRC_PROC_MM_GEN) {
			poff[0] |= UINT64_C(1) << i;
			k++;
		}
	return k;
}

/* ---- The process source ---------------------------------------------- */

void ctp_bpftask_proc_add(struct ctp_bpftask_proc *p,
			  const struct ctp_bpftask_rec *r, __u32 idx)
{
	__u32 has =
		r->present & CTP_BPFTASK_HAS_SIG_SEQ ? CTP_BPFTASK_PROC_SEQ : 0;

	if (p->n == 0) {
		p->flags |= has;
		p->seq = r->sig_seq;
	} else if ((p->flags & CTP_BPFTASK_PROC_SEQ) != has ||
		   p->seq != r->sig_seq) {
		p->flags |= CTP_BPFTASK_PROC_SEQ_MIXED;
	}
	if (r->pid == r->tgid) {
		p->flags |= CTP_BPFTASK_PROC_LEADER;
		p->leader = idx;
	}
	p->n++;
	p->minflt += r->minflt;
	p->majflt += r->majflt;
	p->utime += r->utime;
	p->stime += r->stime;
	p->rtime += r->sum_exec_runtime;
	p->io[0] += r->rchar;
	p->io[1] += r->wchar;
	p->io[2] += r->syscr;
	p->io[3] += r->syscw;
	p->io[4] += r->read_bytes;
	p->io[5] += r->write_bytes;
	p->io[6] += r->cancelled_write_bytes;
}

int ctp_bpftask_proc_whole(const struct ctp_bpftask_proc *p,
			   const struct ctp_bpftask_rec *leader)
{
	if (!leader || !(leader->present & CTP_BPFTASK_HAS_SIG) ||
	    (p->flags & CTP_BPFTASK_PROC_SEQ_MIXED))
		return 0;
	if ((p->flags & CTP_BPFTASK_PROC_SEQ) && (p->seq & 1))
		return 0; /* the block was written into while read */
	return p->n == leader->nr_threads;
}

void ctp_bpftask_proc_ticks(const struct ctp_bpftask_proc *p,
			    const struct ctp_bpftask_rec *leader,
			    unsigned long user_hz, __u64 *utime, __u64 *stime)
{
	/* thread_group_cputime(): the block's, then every live thread's;
	 * cputime_adjust() against signal->prev_cputime. */
	__u64 pu = leader->sig_prev_utime, ps = leader->sig_prev_stime;

	ctp_cputime_adjust(leader->sig_utime + p->utime,
			   leader->sig_stime + p->stime,
			   leader->sig_rtime + p->rtime, &pu, &ps);
	*utime = ctp_nsec_to_clock_t(pu, user_hz);
	*stime = ctp_nsec_to_clock_t(ps, user_hz);
}

#define PBIT(i) (UINT64_C(1) << (i))
/* From the leader's block alone. */
#define P_BLOCK                                                                \
	(PBIT(CTP_SRC_PROC_NUM_THREADS) | PBIT(CTP_SRC_PROC_CMINFLT) |         \
	 PBIT(CTP_SRC_PROC_CMAJFLT) | PBIT(CTP_SRC_PROC_CUTIME) |              \
	 PBIT(CTP_SRC_PROC_CSTIME))
#define P_FLT	(PBIT(CTP_SRC_PROC_MINFLT) | PBIT(CTP_SRC_PROC_MAJFLT))
#define P_TIMES (PBIT(CTP_SRC_PROC_UTIME) | PBIT(CTP_SRC_PROC_STIME))
#define P_IO_XACCT                                                             \
	(PBIT(CTP_SRC_PROC_RCHAR) | PBIT(CTP_SRC_PROC_WCHAR) |                 \
	 PBIT(CTP_SRC_PROC_SYSCR) | PBIT(CTP_SRC_PROC_SYSCW))
#define P_IO_BYTES                                                             \
	(PBIT(CTP_SRC_PROC_READ_BYTES) | PBIT(CTP_SRC_PROC_WRITE_BYTES) |      \
	 PBIT(CTP_SRC_PROC_CANCELLED_WRITE_BYTES))
_Static_assert(CTP_SRC_PROC_READ_BYTES == CTP_SRC_PROC_RCHAR + 4 &&
		       CTP_SRC_PROC_CANCELLED_WRITE_BYTES ==
			       CTP_SRC_PROC_RCHAR + 6,
	       "the io values in sig_io's order");

static inline __u64 rotl(__u64 x, unsigned b)
{
	return (x << b) | (x >> (64 - b));
}

/* One SipHash round on v[0..3]. */
static void sip_round(__u64 v[4])
{
	v[0] += v[1];
	v[1] = rotl(v[1], 13) ^ v[0];
	v[0] = rotl(v[0], 32);
	v[2] += v[3];
	v[3] = rotl(v[3], 16) ^ v[2];
	v[0] += v[3];
	v[3] = rotl(v[3], 21) ^ v[0];
	v[2] += v[1];
	v[1] = rotl(v[1], 17) ^ v[2];
	v[2] = rotl(v[2], 32);
}

__u64 ctp_bpftask_siphash(const __u64 key[2], const __u64 *w, size_t n)
{
	__u64 v[4] = {
		key[0] ^ 0x736f6d6570736575ull, key[1] ^ 0x646f72616e646f6dull,
		key[0] ^ 0x6c7967656e657261ull, key[1] ^ 0x7465646279746573ull};
	__u64 last = (__u64)(8 * n) << 56;

	for (size_t i = 0; i <= n; i++) {
		__u64 m = i < n ? w[i] : last;
		v[3] ^= m;
		sip_round(v);
		sip_round(v);
		v[0] ^= m;
	}
	v[2] ^= 0xff;
	for (int i = 0; i < 4; i++)
		sip_round(v);
	return v[0] ^ v[1] ^ v[2] ^ v[3];
}

__u64 ctp_bpftask_mm_gen(const struct ctp_bpftask_rec *l, const __u64 key[2])
{
	if (!(l->present & CTP_BPFTASK_HAS_MM_SEQ))
		return 0;
	__u64 w[5] = {l->start_boottime, l->mm_id, l->exe_id, l->exec_id,
		      l->mm_seq};
	__u64 h = ctp_bpftask_siphash(key, w, 5);
	return h ? h : 1;
}

int ctp_bpftask_proc_to_src(const struct ctp_bpftask_proc *p,
			    const struct ctp_bpftask_rec *leader,
			    const struct ctp_bpftask_conv *conv,
			    __u64 utime_ticks, __u64 stime_ticks,
			    struct ctp_src_process *out)
{
	const struct ctp_bpftask_rec *l = leader;
	uint64_t *v = out->v, valid = P_BLOCK;

	memset(out, 0, sizeof(*out));
	out->abi = 1;
	out->size = sizeof(*out);
	if (!l || !(l->present & CTP_BPFTASK_HAS_SIG))
		return -ENODATA;
	v[CTP_SRC_PROC_NUM_THREADS] = l->nr_threads;
	v[CTP_SRC_PROC_CMINFLT] = l->sig_cminflt;
	v[CTP_SRC_PROC_CMAJFLT] = l->sig_cmajflt;
	v[CTP_SRC_PROC_CUTIME] =
		ctp_nsec_to_clock_t(l->sig_cutime, conv->user_hz);
	if (conv->mm_gen_on &&
	    (v[CTP_SRC_PROC_MM_GEN] = ctp_bpftask_mm_gen(l, conv->mm_key)))
		valid |= PBIT(CTP_SRC_PROC_MM_GEN);
	v[CTP_SRC_PROC_CSTIME] =
		ctp_nsec_to_clock_t(l->sig_cstime, conv->user_hz);
	if (ctp_bpftask_proc_whole(p, l)) {
		valid |= P_FLT;
		v[CTP_SRC_PROC_MINFLT] = l->sig_minflt + p->minflt;
		v[CTP_SRC_PROC_MAJFLT] = l->sig_majflt + p->majflt;
		if (conv->times && (l->present & CTP_BPFTASK_HAS_SIG_PREV)) {
			valid |= P_TIMES;
			v[CTP_SRC_PROC_UTIME] = utime_ticks;
			v[CTP_SRC_PROC_STIME] = stime_ticks;
		}
		if (l->present & CTP_BPFTASK_HAS_IO_XACCT)
			valid |= P_IO_XACCT;
		if (l->present & CTP_BPFTASK_HAS_IO_BYTES)
			valid |= P_IO_BYTES;
		for (unsigned i = 0; i < 7; i++)
			v[CTP_SRC_PROC_RCHAR + i] = l->sig_io[i] + p->io[i];
	}
	out->valid[0] = valid;
	return 0;
}

int ctp_bpftask_process(const struct ctp_bpftask_rec *recs, const __u32 *idx,
			size_t n, const struct ctp_bpftask_conv *conv,
			struct ctp_src_process *out)
{
	struct ctp_bpftask_proc p = {0};
	const struct ctp_bpftask_rec *leader = NULL;
	__u64 ut = 0, st = 0;

	for (size_t k = 0; k < n; k++) {
		__u32 i = idx ? idx[k] : (__u32)k;
		p.tgid = recs[i].tgid;
		ctp_bpftask_proc_add(&p, &recs[i], i);
	}
	if (p.flags & CTP_BPFTASK_PROC_LEADER) {
		leader = &recs[p.leader];
		ctp_bpftask_proc_ticks(&p, leader, conv->user_hz, &ut, &st);
	}
	return ctp_bpftask_proc_to_src(&p, leader, conv, ut, st, out);
}
