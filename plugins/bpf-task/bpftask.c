/* The iter/task program's user side (bpftask.h): libbpf and a skeleton. */
#include "bpftask.h"

#include "bpfload.h"
#include "task_iter.skel.h"

#include <ctprof/plugin-util.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct ctp_bpftask {
	struct task_iter_bpf *skel;
	unsigned char *buf; /* the raw stream of the last pass */
	size_t cap;
};

/* What the iterator needs of a kernel, said when it refuses the program. */
static const char needs[] = "the task iterator needs 5.8+, "
			    "CONFIG_DEBUG_INFO_BTF and CONFIG_BPF_SYSCALL";

int ctp_bpftask_open(struct ctp_bpftask **ret, char *why, size_t whylen)
{
	struct ctp_bpftask *b;
	int r;

	r = ctp_bpfload_begin(why, whylen);
	if (r < 0)
		return r;
	b = calloc(1, sizeof(*b));
	if (!b)
		return ctp_bpfload_fail(why, whylen, -ENOMEM, "allocating",
					needs);
	b->skel = task_iter_bpf__open();
	if (!b->skel) {
		r = ctp_bpfload_fail(why, whylen, -errno,
				     "opening the BPF object", needs);
		goto out;
	}
	r = ctp_bpfload_load_attach(b->skel->skeleton,
				    "attaching the task iterator", needs, why,
				    whylen);
	if (r < 0)
		goto out;
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
	task_iter_bpf__destroy(b->skel);
	free(b->buf);
	free(b);
}

/* Read the stream of the iterator link lfd into b->buf; returns its
 * length. */
static ssize_t read_stream(struct ctp_bpftask *b, int lfd, size_t max_bytes)
{
	int fd = bpf_iter_create(lfd);
	size_t len = 0;
	ssize_t r;

	if (fd < 0)
		return -errno;
	for (;;) {
		/* 32 KiB: the most one read() of an iterator returns. */
		if (len == b->cap &&
		    (r = CTP_GROW(b->buf, b->cap, len + 32768, 32768)) < 0)
			goto out;
		size_t room = b->cap - len;
		if (room > max_bytes + 1 - len)
			room = max_bytes + 1 - len;
		r = read(fd, b->buf + len, room);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			r = -errno;
			goto out;
		}
		if (r == 0)
			break;
		len += (size_t)r;
		if (len > max_bytes) {
			r = -E2BIG;
			goto out;
		}
	}
	r = (ssize_t)len;
out:
	close(fd);
	return r;
}

/* Check the len bytes of b->buf as records, in place. */
static int parse_stream(struct ctp_bpftask *b, ssize_t len,
			const struct ctp_bpftask_rec **recs)
{
	long n;

	if (len < 0)
		return (int)len;
	/* The stream is whole records of the struct's size back to back, so
	 * once checked the buffer itself is the array (malloc's alignment
	 * suits the struct): no copy of any task. */
	n = ctp_bpftask_rec_check(b->buf, (size_t)len);
	if (n < 0)
		return (int)n;
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
	b->skel->bss->ctp_skip_delays = skip;
}

int ctp_bpftask_pass(struct ctp_bpftask *b, size_t max_bytes,
		     const struct ctp_bpftask_rec **recs)
{
	return parse_stream(
		b,
		read_stream(b, bpf_link__fd(b->skel->links.ctp_task_rec),
			    max_bytes),
		recs);
}

/* A pass through a link of its own with the iterator's parameter info. */
static int pass_with(struct ctp_bpftask *b, union bpf_iter_link_info *info,
		     size_t max_bytes, const struct ctp_bpftask_rec **recs)
{
	LIBBPF_OPTS(bpf_iter_attach_opts, opts, .link_info = info,
		    .link_info_len = sizeof(*info));
	struct bpf_link *link =
		bpf_program__attach_iter(b->skel->progs.ctp_task_rec, &opts);
	int r;

	if (!link)
		return -errno;
	r = parse_stream(b, read_stream(b, bpf_link__fd(link), max_bytes),
			 recs);
	bpf_link__destroy(link);
	return r;
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
