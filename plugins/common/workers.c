/* SPDX-License-Identifier: MIT */
/* Per-worker state of a plugin (see workers.h). */
#include <errno.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "workers.h"

struct ctp_worker_hdr {
	struct ctp_worker_hdr *next;
	uint64_t gen; /* the generation of its claim */
	pid_t tid;    /* the thread that claimed it */
	max_align_t block[];
};

static _Atomic uint64_t next_gen = 1;

/*
 * A thread that claimed a block gives it back as it ends: a key's
 * destructor runs in the ending thread before pthread_join returns, where
 * tgkill alone may still find the thread for a moment (it is reaped after
 * it wakes its joiner). The pools of this plugin are listed so that the
 * destructor finds its claims; the key is deleted with the last pool, so
 * no destructor of an unloaded plugin ever runs.
 */
static pthread_mutex_t pools_lock = PTHREAD_MUTEX_INITIALIZER;
static struct ctp_workers *pools[64];
static size_t n_pools;
static pthread_key_t exit_key;
static bool key_made;

static void on_thread_exit(void *unused)
{
	pid_t me = (pid_t)syscall(SYS_gettid);
	(void)unused;
	pthread_mutex_lock(&pools_lock);
	for (size_t i = 0; i < n_pools; i++) {
		pthread_mutex_lock(&pools[i]->lock);
		for (struct ctp_worker_hdr *h = pools[i]->head; h; h = h->next)
			if (h->tid == me)
				h->tid = 0;
		pthread_mutex_unlock(&pools[i]->lock);
	}
	pthread_mutex_unlock(&pools_lock);
}

static void pool_add(struct ctp_workers *ws)
{
	pthread_mutex_lock(&pools_lock);
	if (!key_made)
		key_made = pthread_key_create(&exit_key, on_thread_exit) == 0;
	if (n_pools < sizeof(pools) / sizeof(*pools))
		pools[n_pools++] = ws;
	pthread_mutex_unlock(&pools_lock);
}

static void pool_remove(struct ctp_workers *ws)
{
	pthread_mutex_lock(&pools_lock);
	for (size_t i = 0; i < n_pools; i++)
		if (pools[i] == ws)
			pools[i] = pools[--n_pools];
	if (!n_pools && key_made) {
		pthread_key_delete(exit_key);
		key_made = false;
	}
	pthread_mutex_unlock(&pools_lock);
}
/* The calling thread's last claim, of the pool whose generation is
 * tls_gen (generations are unique to a pool and its resets). */
static _Thread_local uint64_t tls_gen;
static _Thread_local struct ctp_worker_hdr *tls_mine;

static pid_t self_tid(void)
{
	return (pid_t)syscall(SYS_gettid);
}

/* Does h's claim stand: made in this generation by a thread still alive?
 * tgkill with no signal says ESRCH once the thread has ended; a tid the
 * kernel handed to a new thread of ours since only keeps the block held
 * (never one block for two threads). */
static bool held(const struct ctp_workers *ws, const struct ctp_worker_hdr *h)
{
	if (h->gen != ws->gen || h->tid == 0)
		return false;
	return syscall(SYS_tgkill, getpid(), h->tid, 0) == 0 || errno != ESRCH;
}

void ctp_workers_init(struct ctp_workers *ws, size_t size)
{
	pthread_mutex_init(&ws->lock, NULL);
	ws->head = NULL;
	ws->gen = atomic_fetch_add(&next_gen, 1);
	ws->size = size;
	pool_add(ws);
}

/* The calling thread's claim in ws (ws->lock held), or NULL. */
static struct ctp_worker_hdr *find_mine(const struct ctp_workers *ws, pid_t me)
{
	for (struct ctp_worker_hdr *h = ws->head; h; h = h->next)
		if (h->gen == ws->gen && h->tid == me)
			return h;
	return NULL;
}

void *ctp_workers_mine(const struct ctp_workers *ws)
{
	return tls_gen == ws->gen && tls_mine ? tls_mine->block : NULL;
}

void *ctp_workers_get(struct ctp_workers *ws)
{
	struct ctp_worker_hdr *h;
	pid_t me;

	if (tls_gen == ws->gen && tls_mine)
		return tls_mine->block;
	me = self_tid();
	pthread_mutex_lock(&ws->lock);
	/* Ours (the cache held another pool's claim), else the first block
	 * no living thread holds, else a new one. */
	h = find_mine(ws, me);
	for (struct ctp_worker_hdr *f = ws->head; !h && f; f = f->next)
		if (!held(ws, f))
			h = f;
	if (!h) {
		h = calloc(1, sizeof(*h) + ws->size);
		if (h) {
			h->next = ws->head;
			ws->head = h;
		}
	}
	if (h) {
		h->gen = ws->gen;
		h->tid = me;
	}
	pthread_mutex_unlock(&ws->lock);
	if (!h)
		return NULL;
	tls_mine = h;
	tls_gen = ws->gen;
	pthread_mutex_lock(&pools_lock);
	if (key_made)
		pthread_setspecific(exit_key, (void *)1);
	pthread_mutex_unlock(&pools_lock);
	return h->block;
}

void ctp_workers_reset(struct ctp_workers *ws)
{
	pthread_mutex_lock(&ws->lock);
	ws->gen = atomic_fetch_add(&next_gen, 1);
	pthread_mutex_unlock(&ws->lock);
}

size_t ctp_workers_count(struct ctp_workers *ws)
{
	size_t n = 0;

	pthread_mutex_lock(&ws->lock);
	for (struct ctp_worker_hdr *h = ws->head; h; h = h->next)
		n++;
	pthread_mutex_unlock(&ws->lock);
	return n;
}

void ctp_workers_fini(struct ctp_workers *ws, void (*done)(void *block))
{
	pool_remove(ws);
	while (ws->head) {
		struct ctp_worker_hdr *h = ws->head;

		ws->head = h->next;
		if (done)
			done(h->block);
		free(h);
	}
	pthread_mutex_destroy(&ws->lock);
}
