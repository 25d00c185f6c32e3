/* The exit program's user side (bpfexit.h): libbpf and a skeleton. */
#include "bpfexit.h"

#include "bpfload.h"
#include "task_exit.skel.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

struct ctp_bpfexit {
	struct task_exit_bpf *skel;
	struct ring_buffer *rb;
	/* The consume call's target while it runs. */
	ctp_bpfexit_rec_fn fn;
	void *arg;
	uint64_t *bad;
	int n;
	/* The keys of one drain: as many as the map holds. */
	struct ctp_bpfexit_key *keys, cursor;
	size_t n_keys;
};

/* What the exit program needs of a kernel, said when it refuses it. */
static const char needs[] = "the exit program needs 5.12+, "
			    "CONFIG_DEBUG_INFO_BTF and CONFIG_BPF_SYSCALL";

static int fail(char *why, size_t whylen, int err, const char *step)
{
	return ctp_bpfload_fail(why, whylen, err, step, needs);
}

/* The ring size: a power of 2 of at least a page, in [MIN, MAX]. */
static size_t ring_size(size_t want)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE), n = CTP_BPFEXIT_RING_MIN;

	if (!want)
		want = CTP_BPFEXIT_RING_DEFAULT;
	if (want > CTP_BPFEXIT_RING_MAX)
		want = CTP_BPFEXIT_RING_MAX;
	while (n < want || n < page)
		n <<= 1;
	return n;
}

static int on_rec(void *ctx, void *data, size_t len)
{
	struct ctp_bpfexit *b = ctx;
	struct ctp_bpfexit_rec r;

	if (ctp_bpfexit_rec_parse(data, len, &r) < 0) {
		++*b->bad;
		return 0;
	}
	b->fn(b->arg, &r);
	b->n++;
	return 0;
}

int ctp_bpfexit_open(const struct ctp_bpfexit_opts *opts,
		     struct ctp_bpfexit **ret, char *why, size_t whylen)
{
	struct ctp_bpfexit *b;
	uint32_t procs = opts && opts->max_procs ? opts->max_procs
						 : CTP_BPFEXIT_PROCS_DEFAULT;
	int r;

	r = ctp_bpfload_begin(why, whylen);
	if (r < 0)
		return r;
	b = calloc(1, sizeof(*b));
	if (!b)
		return fail(why, whylen, -ENOMEM, "allocating");
	b->skel = task_exit_bpf__open();
	if (!b->skel) {
		r = fail(why, whylen, -errno, "opening the BPF object");
		goto out;
	}
	/* Two generations of totals. */
	r = bpf_map__set_max_entries(
		b->skel->maps.ring,
		(uint32_t)ring_size(opts ? opts->ring_bytes : 0));
	if (r == 0)
		r = bpf_map__set_max_entries(b->skel->maps.sums, 2 * procs);
	if (r < 0) {
		r = fail(why, whylen, r, "sizing the maps");
		goto out;
	}
	r = ctp_bpfload_load_attach(b->skel->skeleton,
				    "attaching to sched_switch", needs, why,
				    whylen);
	if (r < 0)
		goto out;
	b->n_keys = bpf_map__max_entries(b->skel->maps.sums);
	b->keys = calloc(b->n_keys, sizeof(*b->keys));
	if (!b->keys) {
		r = fail(why, whylen, -ENOMEM, "allocating");
		goto out;
	}
	b->rb = ring_buffer__new(bpf_map__fd(b->skel->maps.ring), on_rec, b,
				 NULL);
	if (!b->rb) {
		r = fail(why, whylen, -errno, "mapping the ring buffer");
		goto out;
	}
	*ret = b;
	return 0;
out:
	ctp_bpfexit_free(b);
	return r;
}

void ctp_bpfexit_free(struct ctp_bpfexit *b)
{
	if (!b)
		return;
	ring_buffer__free(b->rb);
	task_exit_bpf__destroy(b->skel);
	free(b->keys);
	free(b);
}

int ctp_bpfexit_fd(const struct ctp_bpfexit *b)
{
	return ring_buffer__epoll_fd(b->rb);
}

int ctp_bpfexit_consume(struct ctp_bpfexit *b, ctp_bpfexit_rec_fn fn, void *arg,
			uint64_t *bad)
{
	int r;

	b->fn = fn;
	b->arg = arg;
	b->bad = bad;
	b->n = 0;
	r = ring_buffer__consume(b->rb);
	return r < 0 ? r : b->n;
}

/* Wait until no program writes generation g: they run with preemption
 * off for microseconds, so a second is a stuck count, not a slow one. */
static void wait_idle(struct ctp_bpfexit *b, uint32_t g)
{
	_Atomic uint64_t *in = (_Atomic uint64_t *)&b->skel->bss->inflight[g];
	struct timespec ms = {0, 1000000};

	for (int i = 0; i < 1000 && atomic_load(in); i++) {
		if (i < 100)
			sched_yield();
		else
			nanosleep(&ms, NULL);
	}
}

int ctp_bpfexit_take_sums(struct ctp_bpfexit *b, ctp_bpfexit_sum_fn fn,
			  void *arg)
{
	_Atomic uint32_t *gen = (_Atomic uint32_t *)&b->skel->bss->gen;
	int fd = bpf_map__fd(b->skel->maps.sums);
	struct ctp_bpfexit_key k, *pk = NULL;
	struct ctp_bpfexit_sum s;
	uint32_t old = atomic_load(gen) & 1;
	size_t nk = 0;
	int n = 0;

	atomic_store(gen, old ^ 1);
	wait_idle(b, old);
	/* The old generation's keys first (no program adds one now), then
	 * each taken and deleted: a walk never sees a key deleted under it.
	 * At most the map's size of keys. */
	while (nk < b->n_keys && bpf_map_get_next_key(fd, pk, &k) == 0) {
		if (k.gen == old)
			b->keys[nk++] = k;
		b->cursor = k;
		pk = &b->cursor;
	}
	for (size_t i = 0; i < nk; i++) {
		if (bpf_map_lookup_elem(fd, &b->keys[i], &s) == 0) {
			fn(arg, b->keys[i].tgid, &s);
			n++;
		}
		bpf_map_delete_elem(fd, &b->keys[i]);
	}
	return n;
}

void ctp_bpfexit_counts(const struct ctp_bpfexit *b, uint64_t *folded,
			uint64_t *lost)
{
	*folded = atomic_load((_Atomic uint64_t *)&b->skel->bss->folded);
	*lost = atomic_load((_Atomic uint64_t *)&b->skel->bss->lost_sums);
}
