// SPDX-License-Identifier: MIT
/* Fields registered as their names appear: a name -> handle table that
 * workers read without a lock (include/ctprof/plugin-util.h). */
#include <string.h>

#include "ctprof/plugin-util.h"

void ctp_handle_cache_init(struct ctp_handle_cache *c, size_t cap)
{
	/* Slots past n are never read: no need to clear them. */
	pthread_mutex_init(&c->lock, NULL);
	c->n = 0;
	c->cap = cap < CTP_HANDLE_CACHE_MAX ? cap : CTP_HANDLE_CACHE_MAX;
}

void ctp_handle_cache_done(struct ctp_handle_cache *c)
{
	if (c)
		pthread_mutex_destroy(&c->lock);
}

static const struct ctp_handle_slot *
find(const struct ctp_handle_cache *c, size_t n, const char *name, size_t len)
{
	for (size_t i = 0; i < n; i++)
		if (c->slot[i].len == len &&
		    memcmp(c->slot[i].name, name, len) == 0)
			return &c->slot[i];
	return NULL;
}

int ctp_handle_cache_get(struct ctp_handle_cache *c, const char *name,
			 size_t len,
			 int (*reg)(void *arg, const char *name, size_t len),
			 void *arg)
{
	/* Slots below n are complete and never change: the acquire load
	 * sees them whole. */
	size_t n = __atomic_load_n(&c->n, __ATOMIC_ACQUIRE);
	const struct ctp_handle_slot *s = find(c, n, name, len);
	struct ctp_handle_slot *slot;
	int h;

	if (s)
		return s->handle;
	if (len >= CTP_HANDLE_NAME_MAX)
		return -ENAMETOOLONG;
	pthread_mutex_lock(&c->lock);
	n = __atomic_load_n(&c->n, __ATOMIC_RELAXED);
	s = find(c, n, name, len);
	if (s) {
		h = s->handle;
	} else if (n >= c->cap) {
		h = -ENOSPC;
	} else {
		/* Refusals are kept too: the core logged it once. */
		h = reg(arg, name, len);
		slot = &c->slot[n];
		memcpy(slot->name, name, len);
		slot->len = len;
		slot->handle = h;
		__atomic_store_n(&c->n, n + 1, __ATOMIC_RELEASE);
	}
	pthread_mutex_unlock(&c->lock);
	return h;
}
