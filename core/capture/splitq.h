/* SPDX-License-Identifier: MIT */
/*
 * The split queue: large processes whose threads are walked in chunks by
 * whichever worker is free (config split_threads). The worker that claimed
 * the tgid runs its process callback, walks the first chunk, and publishes
 * the rest here with what the threads need from the process; any worker
 * then claims the next chunk. Safe from concurrent workers. Private to the
 * capture.
 */
#ifndef CTP_CORE_SPLITQ_H
#define CTP_CORE_SPLITQ_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cgroups.h"

/* One published process. */
struct ctp_split {
	uint32_t tgid;
	size_t span; /* index of the owner's span in cap->spans */
	uint32_t *tids;
	size_t n, next; /* next: first tid not claimed (under the lock) */
	_Atomic uint32_t recorded; /* threads recorded from the chunks */
	/* Threads unread for lack of resources, the owner's included. */
	_Atomic uint32_t unread;
	char pcomm[64];
	bool cg_whole;
	size_t cglen;
	char cg[CTP_CGROUP_PATH_MAX];
};

struct ctp_splitq {
	uint32_t chunk; /* threads per chunk; 0: this capture does not split */
	pthread_mutex_t lock;
	struct ctp_split **v;
	size_t n, cap, first_open;
	/* Splits with a chunk left, so a claim looks at the list only when
	 * there is one. */
	_Atomic size_t open;
};

void ctp_splitq_init(struct ctp_splitq *q);
/* Free every split published; the queue is empty again. */
void ctp_splitq_clear(struct ctp_splitq *q);
void ctp_splitq_done(struct ctp_splitq *q);

/* A new split of tids[0, n) (copied), its other members zero. NULL when
 * short of memory. */
struct ctp_split *ctp_split_new(const uint32_t *tids, size_t n);
/* Publish sp for any worker; -ENOMEM (sp is then freed). */
int ctp_splitq_push(struct ctp_splitq *q, struct ctp_split *sp);
/* Claim the next chunk of any published split: *sp and its tids [*lo,
 * *hi); false when no chunk is left. */
bool ctp_splitq_claim(struct ctp_splitq *q, struct ctp_split **sp, size_t *lo,
		      size_t *hi);

#endif
