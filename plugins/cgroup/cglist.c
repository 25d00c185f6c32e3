/* SPDX-License-Identifier: MIT */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cglist.h"
#include "cgroup_parse.h"
#include "ctprof/plugin-util.h"

#define BUF_INIT 16384

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
	free(l->tids);
	free(l->buf);
	memset(l, 0, sizeof(*l));
}

/* Grow *p (elements of size sz, *cap of them) to hold need. */
static int grow(void **p, size_t *cap, size_t need, size_t sz)
{
	size_t nc = *cap ? *cap : 64;
	void *np;

	if (need <= *cap)
		return 0;
	while (nc < need)
		nc *= 2;
	np = realloc(*p, nc * sz);
	if (!np)
		return -ENOMEM;
	*p = np;
	*cap = nc;
	return 0;
}

/* The key "v1:<ctrl>:<path>" of a cgroup; its index or -errno. */
static int64_t add_key(struct cg_listing *l, const struct cg_hier_list *h,
		       const char *path, size_t plen)
{
	size_t len = 3 + h->ctrl_len + 1 + plen;
	struct cg_key *k;
	int r;

	if ((r = grow((void **)&l->arena, &l->arena_cap, l->arena_len + len,
		      1)) < 0 ||
	    (r = grow((void **)&l->keys, &l->keys_cap, l->n_keys + 1,
		      sizeof(*l->keys))) < 0 ||
	    (r = grow((void **)&l->referenced, &l->ref_cap, l->n_keys + 1,
		      sizeof(*l->referenced))) < 0)
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

/* Read `tasks` of the cgroup at dirfd into l->tids; the count or -errno. */
static int64_t read_tasks(struct cg_listing *l, int dirfd)
{
	int fd = ctp_open_regular(dirfd, "tasks");
	size_t off = 0, n = 0;
	ssize_t got;
	int r;

	if (fd < 0)
		return fd;
	for (;;) {
		if (off + 1 >= l->buf_cap &&
		    (r = grow((void **)&l->buf, &l->buf_cap,
			      l->buf_cap ? l->buf_cap * 2 : BUF_INIT, 1)) < 0)
			break;
		got = read(fd, l->buf + off, l->buf_cap - off - 1);
		if (got < 0 && errno == EINTR)
			continue;
		r = got < 0 ? -errno : 0;
		if (got <= 0)
			break;
		off += (size_t)got;
		if (off > 64u << 20) {
			r = -EFBIG;
			break;
		}
	}
	close(fd);
	if (r < 0)
		return r;
	if ((r = grow((void **)&l->tids, &l->tids_cap,
		      ctp_cg_count_lines(l->buf, off) + 1, sizeof(*l->tids))) <
	    0)
		return r;
	r = ctp_cg_parse_tids(l->buf, off, l->tids, l->tids_cap, &n);
	return r < 0 ? r : (int64_t)n;
}

/* The cgroup at dirfd (path, plen) and every cgroup below it. */
static int walk(struct cg_listing *l, struct cg_hier_list *h, int dirfd,
		char *path, size_t plen, unsigned depth)
{
	int64_t n, key;
	DIR *d;
	struct dirent *e;
	int r = 0;

	if (++l->dirs > CG_LIST_MAX_DIRS || depth > CG_LIST_MAX_DEPTH)
		return -E2BIG;
	/* The root's threads are the ones nobody else lists (cglist.h). */
	n = depth ? read_tasks(l, dirfd) : 0;
	if (n < 0)
		return (int)n;
	if (n > 0) {
		key = add_key(l, h, path, plen);
		if (key < 0)
			return (int)key;
		if ((r = grow((void **)&h->m, &h->cap, h->n + (size_t)n,
			      sizeof(*h->m))) < 0)
			return r;
		for (int64_t i = 0; i < n; i++)
			h->m[h->n++] = (struct cg_member){.tid = l->tids[i],
							  .key = (uint32_t)key};
	}
	int fd = openat(dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	d = fdopendir(fd);
	if (!d) {
		r = -errno;
		close(fd);
		return r;
	}
	while (r == 0 && (e = readdir(d)) != NULL) {
		size_t el = strlen(e->d_name);
		int sub;

		if (e->d_type != DT_DIR || !strcmp(e->d_name, ".") ||
		    !strcmp(e->d_name, ".."))
			continue;
		if (plen + (plen > 1) + el >= PATH_MAX) {
			r = -E2BIG;
			break;
		}
		sub = openat(dirfd, e->d_name,
			     O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
		if (sub < 0)
			continue; /* removed while walked */
		size_t nl = plen;
		if (plen > 1)
			path[nl++] = '/';
		memcpy(path + nl, e->d_name, el);
		r = walk(l, h, sub, path, nl + el, depth + 1);
		close(sub);
		/* A cgroup removed under the walk lists nobody. */
		if (r == -ENOENT || r == -ENODEV)
			r = 0;
	}
	closedir(d);
	return r;
}

int cg_listing_add(struct cg_listing *l, const char *ctrl, size_t ctrl_len,
		   int handle, int dirfd)
{
	char path[PATH_MAX] = "/";
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
	l->dirs = 0;
	int64_t root = add_key(l, h, "/", 1);
	if (root < 0) {
		l->failed++;
		return (int)root;
	}
	h->root_key = (uint32_t)root;
	r = walk(l, h, dirfd, path, 1, 0);
	if (r < 0) {
		h->n = 0;
		l->failed++;
		return r;
	}
	l->n_hier++;
	return 0;
}

static int cmp_member(const void *a, const void *b)
{
	const struct cg_member *x = a, *y = b;

	return (x->tid > y->tid) - (x->tid < y->tid);
}

void cg_listing_done(struct cg_listing *l)
{
	for (size_t i = 0; i < l->n_hier; i++) {
		struct cg_hier_list *h = &l->h[i];
		size_t k = 0;

		qsort(h->m, h->n, sizeof(*h->m), cmp_member);
		for (size_t j = 0; j < h->n; j++) {
			if (k && h->m[k - 1].tid == h->m[j].tid) {
				if (h->m[k - 1].key != h->m[j].key)
					h->m[k - 1].key = CG_LIST_AMBIGUOUS;
				continue;
			}
			h->m[k++] = h->m[j];
		}
		h->n = k;
	}
}

const struct cg_member *cg_listing_find(const struct cg_listing *l, size_t h,
					uint32_t tid)
{
	const struct cg_hier_list *hl = &l->h[h];
	size_t lo = 0, hi = hl->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (hl->m[mid].tid < tid)
			lo = mid + 1;
		else if (hl->m[mid].tid > tid)
			hi = mid;
		else
			return &hl->m[mid];
	}
	return NULL;
}
