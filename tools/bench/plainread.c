/* SPDX-License-Identifier: MIT */
/*
 * ctp-bench-read: the benchmark's baseline, the kernel work of a snapshot
 * with nothing else. It walks the proc root the way core/capture/engine.c does
 * and makes the same system calls in the same order, with the same buffer
 * sizes, on one thread, without parsing more than it must to decide what
 * to read next and without keeping anything:
 *
 *   read <root>/self/mountinfo (until EOF) for the cgroup2 mount, open it
 *   (O_PATH); list <root> (getdents64), ascending tgids; per tgid:
 *     openat <tgid> O_PATH; the process's up-front steps; its name: from
 *       a stat step when there is one (--name-from-stat), else read
 *       <tgid>/comm (one read); list <tgid>/task;
 *     with a cgroup root: read task/<T>/cgroup, T the first tid that is
 *       not the leader (the leader when alone); for a v2 path not decided
 *       yet this walk, decide whether all its threads share it: the root
 *       "/" by listing the cgroup root and reading each child's
 *       cgroup.type (one read, until one says "threaded"), another path
 *       by reading <path>/cgroup.type (one read; shared when it is exactly
 *       "domain"; a path with "/.." is never shared);
 *     the process's other steps (default: read stat);
 *     per tid, ascending: openat task/<tid> O_PATH (or, with
 *       --no-thread-dir, no directory: every name below is read as
 *       task/<tid>/<name> from the process's directory); the up-front
 *       steps; its name (as the process's); unless the process's cgroup
 *       is shared, read cgroup; the other thread steps (default: read
 *       stat, status; sched_getaffinity(tid)); when a read found the
 *       thread gone, faccessat task/<tid>; close.
 *     close <tgid> (a process with no thread recorded counts as gone).
 *
 * "Read" is the engine's read_at(): open, read() into a growable buffer of
 * its own per file (4 KiB, doubled when full) until a read returns 0, or
 * after a first read that returned less than asked and under 2 KiB (the
 * whole of a single-record seq_file), close. Steps are comma lists; a
 * '|' ends the up-front steps (what the engine reads before it names the
 * task: the files plugins declare without '?'); without one, every step
 * is in the second part. A step is a file name or
 *
 *   @affinity      sched_getaffinity(tid) (procfs-stat's affinity)
 *   @smaps_rollup  process step: read smaps_rollup under the smaps plugin's
 *                  rule: statm (an earlier step) read and parsed, size not
 *                  0 (kernel threads), resident <= --smaps-max-rss, and the
 *                  CPU time spent on smaps_rollup below --smaps-budget-ms
 *                  (metered as the plugin does: its thread's CPU clock,
 *                  and the wall clock for its read_wall_us).
 *   @taskstats     thread step: the taskstats replies, batched as the
 *                  plugin does: at every 64th thread of a process one
 *                  TASKSTATS_CMD_GET per tid of the next 64 in one sendto,
 *                  the replies taken with recvmmsg (not parsed).
 *
 * Without an @affinity step the call comes after the thread files unless
 * --no-affinity. --per-thread-cgroup restores the engine's walk before
 * commit 47c3704: no process-level cgroup read, every thread reads its
 * own (bench.py's "rd pt-cg" column).
 *
 * --preset naive is not the engine's walk but the yardstick of issue 17,
 * the cheapest plain program reading the whole default file set: no
 * cgroup root, per process comm, smaps_rollup; per thread a directory,
 * comm, cgroup, stat, status, schedstat, io, sched and the batched
 * taskstats reply; every file with one open, one read, one close.
 *
 * --preset floor is a lower bound, not a mirror: the per-task reads the
 * shipped config cannot do without while its values stay exact (issue 17:
 * io's counters are only in `io`, the taskstats reply rounds them to KiB),
 * per thread stat, io, the affinity call and the batched taskstats reply,
 * per process stat, io, statm and smaps_rollup under smaps's rule; no
 * cgroup listings, no maps, no host files, which the engine reads too.
 *
 * --preset remain is what issue 33 leaves once a walk source lists every
 * thread and serves its values: per process stat, io, statm,
 * smaps_rollup under smaps's rule and maps (jemalloc-probe and appstats),
 * and no thread listed or read (--no-threads); no cgroup listings. At
 * 1,000 threads per process these are not per-process costs: the kernel
 * sums stat and io over the threads, and every thread's stack is a
 * mapping smaps_rollup and maps walk.
 *
 * --shard K/N walks only the processes whose place in the ascending tgid
 * list is K modulo N: N readers started together with K = 0..N-1 do the
 * walk of one between them, which measures how far the kernel lets the
 * same reads run in parallel.
 *
 * Prints "tgids N tids N vanished N" and a line of cgroup and smaps counts
 * on stdout.
 *
 * Why a program of its own, and not the engine with no plugins: it is the
 * yardstick the engine is measured against, so it must cost the system
 * calls of a snapshot and nothing else (no workers, no tables, no plugin
 * dispatch, no snapshot). It therefore keeps its own walk loop, in the
 * engine's order and with the engine's buffer sizes; bench.py --strace
 * checks the two make the same calls, process by process. It is kept
 * deliberately minimal: beyond those calls it holds only what decides the
 * next call (which ids a directory lists, whether a cgroup path was seen
 * before, smaps's rule), with the C library's own containers (qsort,
 * tsearch) rather than the engine's tables. What is not per-task work it
 * takes from the engine and the plugins rather than a copy: the tgid or
 * tid of a directory name (the toolkit's ctp_parse_pid), the "0::" line of
 * a cgroup file, whether a cgroup holds whole processes and where cgroup2
 * is mounted (core/capture/cgroups.c), statm's two numbers (the smaps
 * plugin's ctp_parse_statm).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <sched.h>
#include <search.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/vfs.h>

#include <linux/magic.h>
#include <time.h>
#include <unistd.h>

#include <linux/genetlink.h>
#include <linux/netlink.h>
#include <linux/taskstats.h>
#include <sys/socket.h>

#include "cgroups.h"
#include "taskid.h"
#include "ctprof/plugin-util.h"
#include "smaps_parse.h"
#include "taskstats_reply.h"

#define TS_BATCH 64
#define TS_SLOT	 2048

#define DENTS_BUF     32768
#define FILE_BUF_INIT 4096
#define MAX_STEPS     64

enum step_kind { STEP_FILE, STEP_AFFINITY, STEP_SMAPS, STEP_TASKSTATS };

struct step {
	enum step_kind kind;
	bool upfront; /* before the task's name (a '|' follows) */
	const char *name;
	/* The step's own buffer, as the engine keeps one per file. */
	char *buf;
	size_t cap, len;
	int err;
};

/* A v2 cgroup path met in this walk and whether all threads of a process
 * in it share it; kept in a tsearch(3) tree keyed by the path. */
struct cg_seen {
	bool whole;
	char path[];
};

struct walk {
	int proc_fd, cg_fd;
	struct step tstep[MAX_STEPS], pstep[MAX_STEPS];
	size_t n_tstep, n_pstep;
	int statm; /* index of the statm process step, -1 if none */
	bool per_thread_cg;
	uint32_t shard_k, shard_n; /* --shard K/N; N 0: every process */
	bool procfs;		   /* the root is a procfs */
	bool name_from_stat;	   /* a stat step names the task, not comm */
	bool no_thread_dir;	   /* thread files by path from the process */
	bool no_threads;	   /* no thread listed or read (--no-threads) */
	int tstat, pstat;	   /* the stat steps, -1 if none */
	/* The thread being walked: "task/<tid>/" before its names when
	 * no_thread_dir; the process's tids and its index (for @taskstats). */
	char tpre[24];
	size_t tpre_len;
	const uint32_t *ptids;
	size_t n_ptids, tid_idx;
	/* @taskstats: a generic netlink socket and the family. */
	int nl_fd;
	uint16_t ts_family;
	uint32_t ts_seq;
	uint64_t ts_sent, ts_replies;

	char *cgbuf; /* <tgid>/cgroup and task/<tid>/cgroup, as the engine */
	size_t cgcap;
	void *cg_seen; /* tsearch root of struct cg_seen */

	uint64_t smaps_max_rss, smaps_budget_ns, smaps_spent_ns, smaps_wall_ns;
	uint64_t page_size;

	/* getdents64 fills it with 8-byte aligned records. */
	_Alignas(struct dirent64) char dents[DENTS_BUF];
	char comm[64];
	cpu_set_t set;
	uint64_t tgids, tids, vanished;
	uint64_t cg_proc_reads, cg_whole, cg_thread_reads, cg_decided;
	uint64_t cg_listed;
	/* The engine's v2 listing (core/capture/cgroups.c), built as it
	 * builds it. */
	struct ctp_cg_procs procs;
	uint64_t smaps_reads, smaps_skipped;
};

/* name under the current thread: "task/<tid>/name" when no_thread_dir. */
static const char *tname(struct walk *w, const char *name, char *buf,
			 size_t len)
{
	size_t n = strlen(name);
	if (!w->tpre_len || w->tpre_len + n + 1 > len)
		return name;
	memcpy(buf, w->tpre, w->tpre_len);
	memcpy(buf + w->tpre_len, name, n + 1);
	return buf;
}

static bool vanished_err(int err)
{
	return err == -ENOENT || err == -ESRCH;
}

static uint64_t now_ns(clockid_t clock)
{
	struct timespec ts;
	clock_gettime(clock, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* The engine's read_at(): the same calls with the same sizes. */
static int read_at(int dirfd, const char *name, char **buf, size_t *cap,
		   size_t *len)
{
	int fd = openat(dirfd, name, O_RDONLY | O_CLOEXEC | O_NOCTTY);
	if (fd < 0)
		return -errno;
	size_t off = 0;
	int ret = 0;
	for (;;) {
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
		ssize_t n = read(fd, *buf + off, room);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			ret = -errno;
			break;
		}
		if (n == 0)
			break;
		off += (size_t)n;
		/* The engine's rule: a short first read under 2 KiB is the
		 * whole file. */
		if (off == (size_t)n && (size_t)n < room && off < 2048)
			break;
	}
	close(fd);
	if (ret < 0)
		return ret;
	(*buf)[off] = '\0';
	*len = off;
	return 0;
}

/* The engine's read_line_at() (comm, cgroup.type): one read, newline cut. */
static int read_line_at(int dirfd, const char *name, char *out, size_t outlen)
{
	int fd = openat(dirfd, name, O_RDONLY | O_CLOEXEC | O_NOCTTY);
	if (fd < 0)
		return -errno;
	ssize_t n;
	do
		n = read(fd, out, outlen - 1);
	while (n < 0 && errno == EINTR);
	int err = n < 0 ? -errno : 0;
	close(fd);
	if (err)
		return err;
	out[n] = '\0';
	char *nl = memchr(out, '\n', (size_t)n);
	if (nl)
		*nl = '\0';
	return 0;
}

/* Decimal digits of v after prefix into out (at least 16 bytes more). */
static size_t put_id(char *out, const char *prefix, size_t plen, uint32_t v)
{
	char dig[12];
	size_t nd = 0, n = plen;
	memcpy(out, prefix, plen);
	do {
		dig[nd++] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	while (nd)
		out[n++] = dig[--nd];
	out[n] = '\0';
	return n;
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	return (x > y) - (x < y);
}

/* Numeric entries of an open directory, ascending, into a growable array. */
static int list_ids(struct walk *w, int dirfd, uint32_t **ids, size_t *cap,
		    size_t *n)
{
	*n = 0;
	for (bool last = false; !last;) {
		long nread = syscall(SYS_getdents64, dirfd, w->dents,
				     sizeof(w->dents));
		if (nread < 0)
			return -errno;
		if (nread == 0)
			break;
		/* The engine's rule: on procfs, a call that left room for
		 * another record (288 bytes) was the last. */
		last = w->procfs && (size_t)nread + 288 <= sizeof(w->dents);
		for (long off = 0; off < nread;) {
			struct dirent64 *d =
				(struct dirent64 *)(w->dents + off);
			uint32_t id;
			off += d->d_reclen;
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
	qsort(*ids, *n, sizeof(**ids), cmp_u32);
	return 0;
}

static int cmp_seen(const void *a, const void *b)
{
	return strcmp(((const struct cg_seen *)a)->path,
		      ((const struct cg_seen *)b)->path);
}

/* Whether a path's threads all share it: decided once per distinct path
 * per walk, as the engine does, by the engine's own ctp_cgroup_holds_whole
 * (core/capture/cgroups.c). */
static int cgroup_whole(struct walk *w, const char *path, size_t len,
			bool *whole)
{
	struct cg_seen *key = malloc(sizeof(*key) + len + 1), **found;
	if (!key)
		return -ENOMEM;
	memcpy(key->path, path, len);
	key->path[len] = '\0';
	found = tsearch(key, &w->cg_seen, cmp_seen);
	if (!found) {
		free(key);
		return -ENOMEM;
	}
	if (*found != key) {
		free(key);
	} else {
		key->whole = ctp_cgroup_holds_whole(w->cg_fd, path, len);
		w->cg_decided++;
	}
	*whole = (*found)->whole;
	return 0;
}

/* smaps's rule on statm, parsed by the plugin's own parser. */
static bool smaps_wanted(struct walk *w)
{
	const struct step *st = w->statm >= 0 ? &w->pstep[w->statm] : NULL;
	struct ctp_statm sm;
	if (!st || st->err || !st->buf ||
	    ctp_parse_statm(st->buf, st->len, &sm) < 0 || sm.size == 0)
		return false;
	uint64_t resident = sm.resident > UINT64_MAX / w->page_size
				    ? UINT64_MAX
				    : sm.resident * w->page_size;
	if (resident > w->smaps_max_rss)
		return false;
	return w->smaps_budget_ns == UINT64_MAX ||
	       w->smaps_spent_ns < w->smaps_budget_ns;
}

/* The taskstats family, and a socket to ask it on; -errno. */
static int ts_open(struct walk *w)
{
	char buf[8192] __attribute__((aligned(8)));
	struct sockaddr_nl to = {.nl_family = AF_NETLINK};
	size_t len;
	ssize_t n;

	w->nl_fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_GENERIC);
	if (w->nl_fd < 0)
		return -errno;
	int rcv = 1 << 20;
	setsockopt(w->nl_fd, SOL_SOCKET, SO_RCVBUF, &rcv, sizeof(rcv));
	len = ctp_genl_put_getfamily(buf, sizeof(buf), 1, TASKSTATS_GENL_NAME);
	if (sendto(w->nl_fd, buf, len, 0, (struct sockaddr *)&to, sizeof(to)) <
	    0)
		return -errno;
	n = recv(w->nl_fd, buf, sizeof(buf), 0);
	if (n < 0)
		return -errno;
	return ctp_genl_parse_family(buf, (size_t)n, &w->ts_family);
}

/* At every TS_BATCH-th thread of a process: one GET per tid of the next
 * batch in one send, the replies received (the plugin's batching). */
static void ts_batch(struct walk *w)
{
	static char req[TS_BATCH * CTP_TS_GET_LEN] __attribute__((aligned(8)));
	static char rbuf[TS_BATCH][TS_SLOT] __attribute__((aligned(8)));
	static struct mmsghdr mm[TS_BATCH];
	static struct iovec iov[TS_BATCH];
	struct sockaddr_nl to = {.nl_family = AF_NETLINK};
	size_t n = w->n_ptids - w->tid_idx, off = 0, got = 0;

	if (w->nl_fd < 0 || w->tid_idx % TS_BATCH)
		return;
	if (n > TS_BATCH)
		n = TS_BATCH;
	for (size_t i = 0; i < n; i++)
		off += ctp_ts_put_get(req + off, sizeof(req) - off,
				      w->ts_family, w->ts_seq++,
				      w->ptids[w->tid_idx + i]);
	if (sendto(w->nl_fd, req, off, 0, (struct sockaddr *)&to, sizeof(to)) <
	    0)
		return;
	w->ts_sent += n;
	for (int loops = 0; got < n && loops < 8; loops++) {
		for (size_t i = 0; i < n; i++) {
			iov[i] = (struct iovec){rbuf[i], TS_SLOT};
			mm[i].msg_hdr = (struct msghdr){.msg_iov = &iov[i],
							.msg_iovlen = 1};
		}
		int k = recvmmsg(w->nl_fd, mm, (unsigned)(n - got),
				 MSG_DONTWAIT, NULL);
		if (k <= 0)
			break;
		got += (size_t)k;
	}
	w->ts_replies += got;
}

/* Run one step; returns the read's result (0 for calls). */
static int run_step(struct walk *w, struct step *st, int dirfd, uint32_t tid)
{
	char path[128];

	switch (st->kind) {
	case STEP_AFFINITY:
		sched_getaffinity((pid_t)tid, sizeof(w->set), &w->set);
		return 0;
	case STEP_TASKSTATS:
		ts_batch(w);
		return 0;
	case STEP_SMAPS: {
		if (!smaps_wanted(w)) {
			w->smaps_skipped++;
			return 0;
		}
		/* The plugin meters its reads against its budget. */
		uint64_t c0 = now_ns(CLOCK_THREAD_CPUTIME_ID);
		uint64_t w0 = now_ns(CLOCK_MONOTONIC);
		st->err = read_at(dirfd, "smaps_rollup", &st->buf, &st->cap,
				  &st->len);
		w->smaps_wall_ns += now_ns(CLOCK_MONOTONIC) - w0;
		w->smaps_spent_ns += now_ns(CLOCK_THREAD_CPUTIME_ID) - c0;
		w->smaps_reads++;
		return st->err;
	}
	case STEP_FILE:
		break;
	}
	st->err = read_at(dirfd, tname(w, st->name, path, sizeof(path)),
			  &st->buf, &st->cap, &st->len);
	return st->err;
}

/* The task's name, as the engine takes it: from the stat step `stat`
 * when there is one (and --name-from-stat), else from comm. */
static int task_name(struct walk *w, int dirfd, const struct step *steps,
		     int stat)
{
	char path[128];

	if (w->name_from_stat && stat >= 0) {
		const struct step *st = &steps[stat];
		if (!st->err && st->buf && memchr(st->buf, '(', st->len))
			return 0;
		if (vanished_err(st->err))
			return st->err;
	}
	return read_line_at(dirfd, tname(w, "comm", path, sizeof(path)),
			    w->comm, sizeof(w->comm));
}

/* One thread; true when it was recorded, as the engine's thread_open() and
 * thread_close(). */
static bool walk_thread(struct walk *w, int pdir, uint32_t tid, bool whole)
{
	char rel[32], path[128];
	size_t rl = put_id(rel, "task/", 5, tid);
	int tdir = pdir;
	bool maybe_gone = false;
	size_t i = 0;

	w->tpre_len = 0;
	if (w->no_thread_dir) {
		memcpy(w->tpre, rel, rl);
		w->tpre[rl] = '/';
		w->tpre_len = rl + 1;
	} else {
		tdir = openat(pdir, rel, O_PATH | O_DIRECTORY | O_CLOEXEC);
		if (tdir < 0)
			goto gone;
	}
	for (; i < w->n_tstep && w->tstep[i].upfront; i++)
		maybe_gone |=
			vanished_err(run_step(w, &w->tstep[i], tdir, tid));
	if (task_name(w, tdir, w->tstep, w->tstat) < 0) {
		if (tdir != pdir)
			close(tdir);
		goto gone;
	}
	/* The engine's thread_cgroup(): a thread a threaded cgroup listed
	 * reads no file. */
	size_t listed_len;
	if (!whole && !ctp_cg_threads_find(&w->procs, tid, &listed_len)) {
		size_t len;
		read_at(tdir, tname(w, "cgroup", path, sizeof(path)), &w->cgbuf,
			&w->cgcap, &len);
		w->cg_thread_reads++;
	}
	for (; i < w->n_tstep; i++)
		maybe_gone |=
			vanished_err(run_step(w, &w->tstep[i], tdir, tid));
	if (tdir != pdir)
		close(tdir);
	if (maybe_gone && faccessat(pdir, rel, F_OK, 0) != 0)
		goto gone;
	w->tids++;
	return true;
gone:
	w->vanished++;
	return false;
}

/* The process's v2 cgroup, read from `rel`, and whether all its threads
 * share it. */
/* The leader alive by the up-front stat step, as the engine decides
 * whether the v2 listing places the process. */
static bool leader_alive(const struct walk *w)
{
	const struct step *st = w->pstat >= 0 ? &w->pstep[w->pstat] : NULL;
	char state;
	return st && !st->err && st->buf &&
	       ctp_stat_state(st->buf, st->len, &state) == 0 && state != 'Z' &&
	       state != 'X';
}

static int process_cgroup(struct walk *w, int pdir, uint32_t tgid, size_t ntids,
			  const char *rel, bool *whole)
{
	size_t len, plen;
	const char *path = NULL;
	/* The engine's order: the cgroup.procs listing when it places the
	 * process (and its leader is where its threads are), else a read. */
	if ((ntids == 1 || leader_alive(w)) &&
	    (path = ctp_cg_procs_find(&w->procs, tgid, &plen)) != NULL) {
		w->cg_listed++;
	} else {
		w->cg_proc_reads++;
		if (read_at(pdir, rel, &w->cgbuf, &w->cgcap, &len) < 0 ||
		    ctp_cgroup_v2_path(w->cgbuf, len, &path, &plen) < 0)
			path = NULL;
	}
	if (path && plen < CTP_CGROUP_PATH_MAX &&
	    cgroup_whole(w, path, plen, whole) < 0)
		return -ENOMEM;
	w->cg_whole += *whole;
	return 0;
}

static int walk_process(struct walk *w, uint32_t tgid, uint32_t **tids,
			size_t *cap)
{
	char name[16], rel[40];
	size_t n = 0;
	bool whole = false;
	put_id(name, "", 0, tgid);
	int pdir = openat(w->proc_fd, name, O_PATH | O_DIRECTORY | O_CLOEXEC);
	size_t ps = 0;
	if (pdir < 0)
		goto gone;
	w->tpre_len = 0;
	for (; ps < w->n_pstep && w->pstep[ps].upfront; ps++)
		run_step(w, &w->pstep[ps], pdir, tgid);
	if (task_name(w, pdir, w->pstep, w->pstat) < 0)
		goto gone_pdir;
	if (w->no_threads) {
		for (; ps < w->n_pstep; ps++)
			run_step(w, &w->pstep[ps], pdir, tgid);
		close(pdir);
		w->tgids++;
		return 0;
	}
	bool cg = !w->per_thread_cg && w->cg_fd >= 0;
	int taskfd = openat(pdir, "task", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (taskfd < 0)
		goto gone_pdir;
	int r = list_ids(w, taskfd, tids, cap, &n);
	close(taskfd);
	if (r == -ENOMEM)
		return r;
	if (r < 0)
		goto gone_pdir;
	if (cg && n > 0) {
		/* As the engine: a thread other than the leader, which may
		 * have exited and been left behind by a migration. */
		uint32_t probe = tgid;
		for (size_t i = 0; i < n; i++)
			if ((*tids)[i] != tgid) {
				probe = (*tids)[i];
				break;
			}
		size_t l = put_id(rel, "task/", 5, probe);
		memcpy(rel + l, "/cgroup", 8);
		if (process_cgroup(w, pdir, tgid, n, rel, &whole) < 0)
			return -ENOMEM;
	}
	for (; ps < w->n_pstep; ps++)
		run_step(w, &w->pstep[ps], pdir, tgid);
	size_t recorded = 0;
	w->ptids = *tids;
	w->n_ptids = n;
	for (size_t i = 0; i < n; i++) {
		w->tid_idx = i;
		recorded += walk_thread(w, pdir, (*tids)[i], whole);
	}
	/* As the engine since ef13206: no thread recorded, no process. */
	if (recorded == 0)
		goto gone_pdir;
	close(pdir);
	w->tgids++;
	return 0;
gone_pdir:
	close(pdir);
gone:
	w->vanished++;
	return 0;
}

/* Split a comma list in place into steps, those before a '|' up front;
 * an empty string gives none. */
static int parse_steps(char *list, bool process, struct step *steps, size_t *n,
		       bool *affinity_placed)
{
	char *bar = strchr(list, '|');
	*n = 0;
	if (bar)
		*bar = ',';
	for (char *save = NULL, *tok = strtok_r(list, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save)) {
		if (*n == MAX_STEPS)
			return -E2BIG;
		struct step *st = &steps[(*n)++];
		*st = (struct step){.kind = STEP_FILE,
				    .name = tok,
				    .upfront = bar && tok < bar};
		if (tok[0] != '@')
			continue;
		if (!process && strcmp(tok, "@affinity") == 0) {
			st->kind = STEP_AFFINITY;
			*affinity_placed = true;
		} else if (process && strcmp(tok, "@smaps_rollup") == 0) {
			st->kind = STEP_SMAPS;
		} else if (!process && strcmp(tok, "@taskstats") == 0) {
			st->kind = STEP_TASKSTATS;
		} else {
			return -EINVAL;
		}
	}
	return 0;
}

/* The first up-front stat step, or -1. */
static int stat_step(const struct step *steps, size_t n)
{
	for (size_t i = 0; i < n && steps[i].upfront; i++)
		if (steps[i].kind == STEP_FILE &&
		    !strcmp(steps[i].name, "stat"))
			return (int)i;
	return -1;
}

/* A count, or "unlimited". */
static int parse_u64(const char *s, uint64_t *out)
{
	if (strcmp(s, "unlimited") == 0) {
		*out = UINT64_MAX;
		return 0;
	}
	return ctp_parse_u64_str(s, out);
}

static void usage(FILE *out)
{
	fprintf(out,
		"Usage: ctp-bench-read [--proc DIR] [--cgroup-root DIR|auto|"
		"none]\n"
		"         [--per-thread-cgroup]\n"
		"         [--preset procfs|issue3|naive|floor|remain] "
		"[--no-threads] [--thread-files "
		"LIST]\n"
		"         [--process-files LIST] [--shard K/N]\n"
		"         [--no-affinity] [--name-from-stat] "
		"[--no-thread-dir]\n"
		"         [--smaps-max-rss BYTES] [--smaps-budget-ms MS]\n"
		"Walk DIR (default /proc) making the system calls ctprof-core "
		"makes, single-threaded,\n"
		"keeping nothing. LISTs are steps in order, '|' after the "
		"up-front ones: a file\n"
		"name, @affinity (thread), @smaps_rollup (process, the smaps "
		"plugin's rule),\n"
		"@taskstats (thread, batched replies). Presets (the first two "
		"name tasks from\n"
		"stat and read no thread directory, as the engine with these "
		"plugins):\n"
		"  procfs  threads stat|status,@affinity; processes stat| "
		"(the default)\n"
		"  issue3  threads stat,io|status,@affinity,schedstat (and "
		"sched while\n"
		"          kernel.sched_schedstats is 1); processes "
		"stat,io,statm|@smaps_rollup\n"
		"          (procfs-stat, schedstat, io, smaps)\n"
		"  naive   issue 17's yardstick: no cgroup root; threads comm, "
		"cgroup and\n"
		"          stat,status,schedstat,io,sched,@taskstats; "
		"processes comm,\n"
		"          smaps_rollup; one read per file\n"
		"  floor   a lower bound of the shipped config's walk: threads "
		"stat,io|@affinity,\n"
		"          @taskstats; processes stat,io,statm|@smaps_rollup; "
		"no cgroup root\n"
		"  remain  what a walk source leaves (issue 33): no thread "
		"listed or read;\n"
		"          processes stat,io,statm|@smaps_rollup,maps; no "
		"cgroup root\n"
		"--no-threads lists and reads no thread (the process steps "
		"only).\n"
		"--shard K/N walks only every Nth process, from the Kth.\n"
		"Prints 'tgids N tids N vanished N' and cgroup/smaps "
		"counts.\n");
}

/* kernel.sched_schedstats is 1 under root: the schedstat plugin reads
 * sched then (its `sched: auto`). */
static bool schedstats_live(const char *root)
{
	char path[4096], c = 0;
	snprintf(path, sizeof(path), "%s/sys/kernel/sched_schedstats", root);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	bool on = read(fd, &c, 1) == 1 && c == '1';
	close(fd);
	return on;
}

/* "K/N", 0 <= K < N <= 64, into w's shard. */
static int parse_shard(const char *s, struct walk *w)
{
	unsigned k, n;
	int end = 0;
	if (sscanf(s, "%u/%u%n", &k, &n, &end) != 2 || s[end] || n == 0 ||
	    n > 64 || k >= n)
		return -EINVAL;
	w->shard_k = k;
	w->shard_n = n;
	return 0;
}

struct args {
	const char *root, *cgroot;
	char *tlist, *plist;
	bool no_affinity;
	uint64_t budget_ms;
};

/* The command line into a and w's cgroup and smaps options: 0, 1 after
 * --help, -EINVAL for a bad usage. */
static int parse_args(int argc, char **argv, struct walk *w, struct args *a)
{
	static const struct option lopts[] = {
		{"proc", required_argument, NULL, 'p'},
		{"cgroup-root", required_argument, NULL, 'c'},
		{"per-thread-cgroup", no_argument, NULL, 'C'},
		{"preset", required_argument, NULL, 's'},
		{"thread-files", required_argument, NULL, 't'},
		{"process-files", required_argument, NULL, 'P'},
		{"no-affinity", no_argument, NULL, 'A'},
		{"name-from-stat", no_argument, NULL, 'N'},
		{"no-thread-dir", no_argument, NULL, 'D'},
		{"no-threads", no_argument, NULL, 'T'},
		{"smaps-max-rss", required_argument, NULL, 'm'},
		{"smaps-budget-ms", required_argument, NULL, 'b'},
		{"shard", required_argument, NULL, 'S'},
		{"help", no_argument, NULL, 'h'},
		{0},
	};
	/* Writable: parse_steps splits them in place. */
	static char t_procfs[] = "stat|status,@affinity", p_procfs[] = "stat|";
	static char t_issue3[] = "stat,io|status,@affinity,schedstat";
	static char t_issue3s[] = "stat,io|status,@affinity,schedstat,sched";
	static char p_issue3[] = "stat,io,statm|@smaps_rollup";
	static char t_naive[] = "stat,status,schedstat,io,sched,@taskstats";
	static char p_naive[] = "smaps_rollup";
	static char t_floor[] = "stat,io|@affinity,@taskstats";
	static char p_floor[] = "stat,io,statm|@smaps_rollup";
	static char t_remain[] = "";
	static char p_remain[] = "stat,io,statm|@smaps_rollup,maps";
	int c;

	*a = (struct args){.root = "/proc",
			   .cgroot = "auto",
			   .tlist = t_procfs,
			   .plist = p_procfs,
			   .budget_ms = 300};
	while ((c = getopt_long(argc, argv, "h", lopts, NULL)) != -1) {
		if (c == 'p')
			a->root = optarg;
		else if (c == 'c')
			a->cgroot = optarg;
		else if (c == 'C')
			w->per_thread_cg = true;
		else if (c == 's' && strcmp(optarg, "procfs") == 0)
			a->tlist = t_procfs, a->plist = p_procfs,
			w->name_from_stat = w->no_thread_dir = true;
		else if (c == 's' && strcmp(optarg, "issue3") == 0)
			a->tlist =
				schedstats_live(a->root) ? t_issue3s : t_issue3,
			a->plist = p_issue3,
			w->name_from_stat = w->no_thread_dir = true;
		else if (c == 's' && strcmp(optarg, "naive") == 0)
			a->tlist = t_naive, a->plist = p_naive,
			a->cgroot = "none", a->no_affinity = true;
		else if (c == 's' && strcmp(optarg, "floor") == 0)
			a->tlist = t_floor, a->plist = p_floor,
			a->cgroot = "none",
			w->name_from_stat = w->no_thread_dir = true;
		else if (c == 's' && strcmp(optarg, "remain") == 0)
			a->tlist = t_remain, a->plist = p_remain,
			a->cgroot = "none", a->no_affinity = true,
			w->name_from_stat = w->no_thread_dir = w->no_threads =
				true;
		else if (c == 'T')
			w->no_threads = true;
		else if (c == 'S' && parse_shard(optarg, w) == 0)
			continue;
		else if (c == 'N')
			w->name_from_stat = true;
		else if (c == 'D')
			w->no_thread_dir = true;
		else if (c == 't')
			a->tlist = optarg;
		else if (c == 'P')
			a->plist = optarg;
		else if (c == 'A')
			a->no_affinity = true;
		else if (c == 'm' && parse_u64(optarg, &w->smaps_max_rss) == 0)
			continue;
		else if (c == 'b' && parse_u64(optarg, &a->budget_ms) == 0)
			continue;
		else if (c == 'h')
			return 1;
		else
			return -EINVAL;
	}
	return optind == argc ? 0 : -EINVAL;
}

/* The steps of both scopes, the affinity call placed, the statm step and
 * the smaps budget found; -EINVAL for lists that do not go together. */
static int setup_steps(struct walk *w, const struct args *a)
{
	bool placed = false, unused = false;

	if (parse_steps(a->tlist, false, w->tstep, &w->n_tstep, &placed) < 0 ||
	    parse_steps(a->plist, true, w->pstep, &w->n_pstep, &unused) < 0)
		return -EINVAL;
	if (placed && a->no_affinity)
		return -EINVAL;
	if (!placed && !a->no_affinity) {
		if (w->n_tstep == MAX_STEPS)
			return -EINVAL;
		w->tstep[w->n_tstep++] = (struct step){.kind = STEP_AFFINITY};
	}
	for (size_t i = 0; i < w->n_pstep; i++)
		if (w->pstep[i].kind == STEP_FILE &&
		    strcmp(w->pstep[i].name, "statm") == 0 && w->statm < 0)
			w->statm = (int)i;
	w->tstat = stat_step(w->tstep, w->n_tstep);
	w->pstat = stat_step(w->pstep, w->n_pstep);
	for (size_t i = 0; i < w->n_tstep; i++)
		if (w->tstep[i].kind == STEP_TASKSTATS && w->nl_fd < 0) {
			int r = ts_open(w);
			if (r < 0)
				fprintf(stderr,
					"ctp-bench-read: taskstats: %s (no "
					"queries)\n",
					strerror(-r));
			if (r < 0 && w->nl_fd >= 0) {
				close(w->nl_fd);
				w->nl_fd = -1;
			}
		}
	w->smaps_budget_ns = a->budget_ms >= UINT64_MAX / 1000000
				     ? UINT64_MAX
				     : a->budget_ms * 1000000;
	return 0;
}

/* The proc root, and the cgroup root the engine opens at start, walk or
 * not (*cgfound: its path, or NULL). */
static int open_roots(struct walk *w, const struct args *a, char **cgfound)
{
	w->proc_fd = open(a->root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (w->proc_fd < 0) {
		fprintf(stderr, "ctp-bench-read: %s: %s\n", a->root,
			strerror(errno));
		return -errno;
	}
	struct statfs sf;
	w->procfs =
		fstatfs(w->proc_fd, &sf) == 0 && sf.f_type == PROC_SUPER_MAGIC;
	if (strcmp(a->cgroot, "auto") == 0)
		*cgfound = ctp_cgroup2_mount(w->proc_fd);
	else if (strcmp(a->cgroot, "none") != 0)
		*cgfound = strdup(a->cgroot);
	if (*cgfound) {
		w->cg_fd = open(*cgfound, O_PATH | O_DIRECTORY | O_CLOEXEC);
		if (w->cg_fd < 0)
			fprintf(stderr, "ctp-bench-read: cgroup root %s: %s\n",
				*cgfound, strerror(errno));
	}
	return 0;
}

/* The engine's list_processes(): every v2 cgroup's cgroup.procs, by the
 * core's own code. */
static void list_processes(struct walk *w)
{
	ctp_cg_procs_build(&w->procs, w->cg_fd, w->proc_fd);
}

/* Every tgid of the proc root, ascending. */
static int walk_all(struct walk *w, const char *root)
{
	uint32_t *tgids = NULL, *tids = NULL;
	size_t n_tgids = 0, tgid_cap = 0, tid_cap = 0;
	if (!w->per_thread_cg)
		list_processes(w);
	int pfd = openat(w->proc_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	int r = pfd < 0 ? -errno
			: list_ids(w, pfd, &tgids, &tgid_cap, &n_tgids);

	if (pfd >= 0)
		close(pfd);
	if (r < 0)
		fprintf(stderr, "ctp-bench-read: listing %s: %s\n", root,
			strerror(-r));
	for (size_t i = 0; r == 0 && i < n_tgids; i++) {
		if (w->shard_n && i % w->shard_n != w->shard_k)
			continue;
		r = walk_process(w, tgids[i], &tids, &tid_cap);
		if (r < 0)
			fprintf(stderr, "ctp-bench-read: %s\n", strerror(-r));
	}
	free(tgids);
	free(tids);
	return r;
}

static void report(const struct walk *w, const char *cgfound)
{
	printf("tgids %" PRIu64 " tids %" PRIu64 " vanished %" PRIu64 "\n",
	       w->tgids, w->tids, w->vanished);
	printf("cgroup root %s: processes listed %" PRIu64
	       ", process reads %" PRIu64 " shared %" PRIu64
	       " paths decided %" PRIu64 " thread reads %" PRIu64
	       "; smaps_rollup reads %" PRIu64 " skipped %" PRIu64 "\n",
	       w->cg_fd >= 0 ? cgfound : "none", w->cg_listed, w->cg_proc_reads,
	       w->cg_whole, w->cg_decided, w->cg_thread_reads, w->smaps_reads,
	       w->smaps_skipped);
	if (w->ts_sent)
		printf("taskstats queries %" PRIu64 " replies %" PRIu64 "\n",
		       w->ts_sent, w->ts_replies);
}

static void walk_free(struct walk *w)
{
	if (w->proc_fd >= 0)
		close(w->proc_fd);
	if (w->cg_fd >= 0)
		close(w->cg_fd);
	if (w->nl_fd >= 0)
		close(w->nl_fd);
	for (size_t i = 0; i < MAX_STEPS; i++) {
		free(w->tstep[i].buf);
		free(w->pstep[i].buf);
	}
	tdestroy(w->cg_seen, free);
	ctp_cg_procs_free(&w->procs);
	free(w->cgbuf);
	free(w);
}

int main(int argc, char **argv)
{
	struct walk *w = calloc(1, sizeof(*w));
	char *cgfound = NULL;
	struct args a;
	int r, rc = 1;

	if (!w) {
		perror("ctp-bench-read");
		return 1;
	}
	w->proc_fd = w->cg_fd = w->nl_fd = -1;
	w->statm = -1;
	w->smaps_max_rss = 16ull << 30;
	w->page_size = (uint64_t)getpagesize();
	r = parse_args(argc, argv, w, &a);
	if (r == 0)
		r = setup_steps(w, &a);
	if (r == 1) {
		usage(stdout);
		rc = 0;
	} else if (r < 0) {
		usage(stderr);
		rc = 2;
	} else if (open_roots(w, &a, &cgfound) == 0 &&
		   walk_all(w, a.root) == 0) {
		report(w, cgfound);
		rc = 0;
	}
	walk_free(w);
	free(cgfound);
	return rc;
}
