/* SPDX-License-Identifier: MIT */
/* The split queue; see splitq.h. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "splitq.h"

void ctp_splitq_init(struct ctp_splitq *q)
{
	memset(q, 0, sizeof(*q));
	pthread_mutex_init(&q->lock, NULL);
}

static void split_free(struct ctp_split *sp)
{
	if (sp)
		free(sp->tids);
	free(sp);
}

void ctp_splitq_clear(struct ctp_splitq *q)
{
	for (size_t i = 0; i < q->n; i++)
		split_free(q->v[i]);
	free(q->v);
	q->v = NULL;
	q->n = q->cap = q->first_open = 0;
	atomic_store(&q->open, 0);
}

void ctp_splitq_done(struct ctp_splitq *q)
{
	ctp_splitq_clear(q);
	pthread_mutex_destroy(&q->lock);
}

struct ctp_split *ctp_split_new(const uint32_t *tids, size_t n)
{
	struct ctp_split *sp = calloc(1, sizeof(*sp));

	if (sp)
		sp->tids = malloc((n ? n : 1) * sizeof(*sp->tids));
	if (!sp || !sp->tids) {
		split_free(sp);
		return NULL;
	}
	memcpy(sp->tids, tids, n * sizeof(*sp->tids));
	sp->n = n;
	return sp;
}

int ctp_splitq_push(struct ctp_splitq *q, struct ctp_split *sp)
{
	pthread_mutex_lock(&q->lock);
	if (q->n == q->cap) {
		size_t ncap = q->cap ? 2 * q->cap : 16;
		struct ctp_split **nv = realloc(q->v, ncap * sizeof(*q->v));
		if (!nv) {
			pthread_mutex_unlock(&q->lock);
			split_free(sp);
			return -ENOMEM;
		}
		q->v = nv;
		q->cap = ncap;
	}
	q->v[q->n++] = sp;
	atomic_fetch_add_explicit(&q->open, 1, memory_order_release);
	pthread_mutex_unlock(&q->lock);
	return 0;
}

bool ctp_splitq_claim(struct ctp_splitq *q, struct ctp_split **sp, size_t *lo,
		      size_t *hi)
{
	bool got = false;

	if (!atomic_load_explicit(&q->open, memory_order_acquire))
		return false;
	pthread_mutex_lock(&q->lock);
	for (size_t i = q->first_open; i < q->n; i++) {
		struct ctp_split *s = q->v[i];
		if (s->next >= s->n) {
			if (i == q->first_open)
				q->first_open++;
			continue;
		}
		*sp = s;
		*lo = s->next;
		s->next = s->n - s->next > q->chunk ? s->next + q->chunk : s->n;
		*hi = s->next;
		if (s->next == s->n)
			atomic_fetch_sub(&q->open, 1);
		got = true;
		break;
	}
	pthread_mutex_unlock(&q->lock);
	return got;
}
