/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cglist.h"
#include "cgroup_parse.h"
#include "ctprof/plugin-util.h"

void cg_listing_reset(struct cg_listing *l)
{
	for (size_t i = 0; i < l->n_hier; i++)
		l->h[i].n = 0;
	l->n_hier = 0;
	l->arena_len = 0;
	l->n_keys = 0;
	l->complete = false;
	l->dirs = l->failed = 0;
}

void cg_listing_free(struct cg_listing *l)
{
	for (size_t i = 0; i < CG_LIST_MAX_HIER; i++)
		free(l->h[i].m);
	free(l->arena);
	free(l->keys);
	free((void *)l->referenced);
	ctp_id_list_free(&l->ids);
	memset(l, 0, sizeof(*l));
}

/* The key "v1:<ctrl>:<path>" of a cgroup; its index or -errno. */
static int64_t add_key(struct cg_listing *l, const struct cg_hier_list *h,
		       const char *path, size_t plen)
{
	size_t len = 3 + h->ctrl_len + 1 + plen;
	struct cg_key *k;
	int r;

	if ((r = CTP_GROW(l->arena, l->arena_cap, l->arena_len + len, 4096)) <
		    0 ||
	    (r = CTP_GROW(l->keys, l->keys_cap, l->n_keys + 1, 64)) < 0 ||
	    (r = CTP_GROW(l->referenced, l->ref_cap, l->n_keys + 1, 64)) < 0)
		return r;
	k = &l->keys[l->n_keys];
	k->off = (uint32_t)l->arena_len;
	k->len = (uint32_t)len;
	k->path_off = (uint32_t)(3 + h->ctrl_len + 1);
	memcpy(l->arena + l->arena_len, "v1:", 3);
	memcpy(l->arena + l->arena_len + 3, h->ctrl, h->ctrl_len);
	l->arena[l->arena_len + 3 + h->ctrl_len] = ':';
	memcpy(l->arena + l->arena_len + k->path_off, path, plen);
	l->arena_len += len;
	atomic_store_explicit(&l->referenced[l->n_keys], 0,
			      memory_order_relaxed);
	return (int64_t)l->n_keys++;
}

/* The walk's state for one hierarchy. */
struct walk_arg {
	struct cg_listing *l;
	struct cg_hier_list *h;
};

/* One cgroup: its `tasks` (the root's never: cglist.h). */
static int list_cgroup(void *arg, int dirfd, const char *path, size_t plen,
		       unsigned depth)
{
	struct walk_arg *a = arg;
	struct cg_listing *l = a->l;
	struct cg_hier_list *h = a->h;
	int64_t key;
	int r;

	l->dirs++;
	if (!depth)
		return 0;
	r = ctp_read_id_list(dirfd, "tasks", &l->ids);
	if (r < 0 || !l->ids.n)
		return r;
	key = add_key(l, h, path, plen);
	if (key < 0)
		return (int)key;
	if ((r = CTP_GROW(h->m, h->cap, h->n + l->ids.n, 256)) < 0)
		return r;
	for (size_t i = 0; i < l->ids.n; i++)
		h->m[h->n++] = (struct ctp_id_pair){.id = l->ids.ids[i],
						    .val = (uint32_t)key};
	return 0;
}

int cg_listing_add(struct cg_listing *l, const char *ctrl, size_t ctrl_len,
		   int handle, int dirfd)
{
	struct cg_hier_list *h;
	int r;

	if (l->n_hier == CG_LIST_MAX_HIER || ctrl_len >= CG_LIST_CTRL_LEN) {
		l->failed++;
		return -E2BIG;
	}
	h = &l->h[l->n_hier];
	memcpy(h->ctrl, ctrl, ctrl_len);
	h->ctrl_len = ctrl_len;
	h->handle = handle;
	h->n = 0;
	int64_t root = add_key(l, h, "/", 1);
	if (root < 0) {
		l->failed++;
		return (int)root;
	}
	h->root_key = (uint32_t)root;
	struct walk_arg a = {.l = l, .h = h};
	r = ctp_cgroup_walk(dirfd, CG_LIST_MAX_DIRS, CG_LIST_MAX_DEPTH,
			    list_cgroup, &a);
	if (r < 0) {
		h->n = 0;
		l->failed++;
		return r;
	}
	l->n_hier++;
	return 0;
}

void cg_listing_done(struct cg_listing *l)
{
	for (size_t i = 0; i < l->n_hier; i++)
		ctp_id_pairs_sort(l->h[i].m, &l->h[i].n);
}

const struct ctp_id_pair *cg_listing_find(const struct cg_listing *l, size_t h,
					  uint32_t tid, size_t *pos)
{
	return ctp_cg_pairs_seek(l->h[h].m, l->h[h].n, tid, pos);
}
