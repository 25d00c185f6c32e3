/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <sys/stat.h>

#include "cglist.h"
#include "cgroup_parse.h"
#include "ctprof/plugin-util.h"

void cg_listing_reset(struct cg_listing *l)
{
	for (size_t i = 0; i < l->n_hier; i++)
		l->h[i].n = l->h[i].n_ino = 0;
	l->n_hier = 0;
	l->arena_len = 0;
	l->n_keys = 0;
	l->complete = false;
	l->dirs = l->failed = 0;
}

void cg_listing_free(struct cg_listing *l)
{
	for (size_t i = 0; i < CG_LIST_MAX_HIER; i++) {
		free(l->h[i].m);
		free(l->h[i].ino);
	}
	free(l->arena);
	free(l->keys);
	free((void *)l->referenced);
	free((void *)l->path_str);
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
	    (r = CTP_GROW(l->referenced, l->ref_cap, l->n_keys + 1, 64)) < 0 ||
	    (r = CTP_GROW(l->path_str, l->str_cap, l->n_keys + 1, 64)) < 0)
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
	atomic_store_explicit(&l->path_str[l->n_keys], -1,
			      memory_order_relaxed);
	return (int64_t)l->n_keys++;
}

/* The walk's state for one hierarchy. */
struct walk_arg {
	struct cg_listing *l;
	struct cg_hier_list *h;
	bool inos; /* index the directories' inodes, read no `tasks` */
};

/* One cgroup by its directory's inode. */
static int ino_cgroup(struct cg_listing *l, struct cg_hier_list *h, int dirfd,
		      const char *path, size_t plen, unsigned depth)
{
	struct stat sb;
	int64_t key = h->root_key;
	int r;

	if (fstat(dirfd, &sb) < 0)
		return -errno;
	if (depth && (key = add_key(l, h, path, plen)) < 0)
		return (int)key;
	if ((r = CTP_GROW(h->ino, h->ino_cap, h->n_ino + 1, 64)) < 0)
		return r;
	h->ino[h->n_ino++] = (struct cg_ino){.ino = (uint64_t)sb.st_ino,
					     .key = (uint32_t)key};
	return 0;
}

/* One cgroup: its `tasks` (the root's never: cglist.h), or its inode. */
static int list_cgroup(void *arg, int dirfd, const char *path, size_t plen,
		       unsigned depth)
{
	struct walk_arg *a = arg;
	struct cg_listing *l = a->l;
	struct cg_hier_list *h = a->h;
	int64_t key;
	int r;

	l->dirs++;
	if (a->inos)
		return ino_cgroup(l, h, dirfd, path, plen, depth);
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

static int add(struct cg_listing *l, const char *ctrl, size_t ctrl_len,
	       int handle, uint32_t id, bool inos, int dirfd)
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
	h->id = id;
	h->n = h->n_ino = 0;
	int64_t root = add_key(l, h, "/", 1);
	if (root < 0) {
		l->failed++;
		return (int)root;
	}
	h->root_key = (uint32_t)root;
	struct walk_arg a = {.l = l, .h = h, .inos = inos};
	r = ctp_cgroup_walk(dirfd, CG_LIST_MAX_DIRS, CG_LIST_MAX_DEPTH,
			    list_cgroup, &a);
	if (r < 0) {
		h->n = h->n_ino = 0;
		l->failed++;
		return r;
	}
	l->n_hier++;
	return 0;
}

int cg_listing_add(struct cg_listing *l, const char *ctrl, size_t ctrl_len,
		   int handle, int dirfd)
{
	return add(l, ctrl, ctrl_len, handle, 0, false, dirfd);
}

int cg_listing_add_inos(struct cg_listing *l, const char *ctrl, size_t ctrl_len,
			int handle, uint32_t id, int dirfd)
{
	return add(l, ctrl, ctrl_len, handle, id, true, dirfd);
}

static int cmp_ino(const void *a, const void *b)
{
	const struct cg_ino *x = a, *y = b;

	return (x->ino > y->ino) - (x->ino < y->ino);
}

/* Sort h's inodes; false when two directories share one (not cgroupfs:
 * its inodes are kernfs ids, one per cgroup). */
static bool inos_sort(struct cg_hier_list *h)
{
	if (h->n_ino > 1)
		qsort(h->ino, h->n_ino, sizeof(*h->ino), cmp_ino);
	for (size_t i = 1; i < h->n_ino; i++)
		if (h->ino[i].ino == h->ino[i - 1].ino)
			return false;
	return true;
}

void cg_listing_done(struct cg_listing *l)
{
	for (size_t i = 0; i < l->n_hier; i++) {
		ctp_id_pairs_sort(l->h[i].m, &l->h[i].n);
		if (!inos_sort(&l->h[i]))
			l->h[i].n_ino = 0; /* then no thread resolves */
	}
}

/* The key of the cgroup of inode ino in h, or -1. */
static int64_t ino_key(const struct cg_hier_list *h, uint64_t ino)
{
	const struct cg_ino k = {.ino = ino};
	const struct cg_ino *c;

	if (!h->n_ino)
		return -1;
	c = bsearch(&k, h->ino, h->n_ino, sizeof(*h->ino), cmp_ino);
	return c ? (int64_t)c->key : -1;
}

bool cg_listing_resolve(const struct cg_listing *l,
			const struct ctp_src_cg1_pair *p, size_t n,
			uint32_t kid[CG_LIST_MAX_HIER])
{
	if (n != l->n_hier)
		return false;
	for (size_t h = 0; h < l->n_hier; h++) {
		int64_t key = -1;

		/* The pairs are few (a hierarchy each) and in the kernel's
		 * link order, not the file's. */
		for (size_t i = 0; i < n; i++)
			if (p[i].hier == l->h[h].id) {
				key = ino_key(&l->h[h], p[i].id);
				break;
			}
		if (key < 0)
			return false;
		kid[h] = (uint32_t)key;
	}
	return true;
}

const struct ctp_id_pair *cg_listing_find(const struct cg_listing *l, size_t h,
					  uint32_t tid, size_t *pos)
{
	return ctp_cg_pairs_seek(l->h[h].m, l->h[h].n, tid, pos);
}
