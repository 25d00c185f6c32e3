/* SPDX-License-Identifier: MIT */
/*
 * Per-worker state of a plugin: what a callback keeps from one task to the
 * next on the thread that runs it (a socket, buffers grown once, a window
 * of replies), without a block per thread that ever called it. The core's
 * worker threads persist from capture to capture, but a host may also call
 * the walk from a new thread every time (workers: 1 walks on the calling
 * thread), so a block is held by a thread only while that thread lives,
 * then goes to the next thread that asks: a plugin has as many blocks as
 * threads ever called it at once.
 */
#ifndef CTP_WORKERS_H
#define CTP_WORKERS_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

/* One plugin's blocks of `size` bytes. One pool per plugin: the calling
 * thread's last claim is cached in a thread-local pointer of this file,
 * which each plugin links on its own. */
struct ctp_workers {
	pthread_mutex_t lock;
	struct ctp_worker_hdr *head;
	uint64_t gen; /* claims of another generation are released */
	size_t size;
};

void ctp_workers_init(struct ctp_workers *ws, size_t size);
/* The calling thread's block: the one it holds, else one no living thread
 * holds (as its last holder left it: buffers to reuse, state to reset),
 * else a new one, zeroed; NULL without memory. */
void *ctp_workers_get(struct ctp_workers *ws);
/* The calling thread's block if it holds one, else NULL; no lock, no
 * system call (a thread callback asks it on every thread). */
void *ctp_workers_mine(const struct ctp_workers *ws);
/* Release every claim (from finish or host, when no other callback runs):
 * the next capture's threads take blocks anew, as if all had ended. */
void ctp_workers_reset(struct ctp_workers *ws);
/* Free every block, each after `done` (may be NULL) released its own. */
void ctp_workers_fini(struct ctp_workers *ws, void (*done)(void *block));
/* How many blocks there are. */
size_t ctp_workers_count(struct ctp_workers *ws);

#endif /* CTP_WORKERS_H */
