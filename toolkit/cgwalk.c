/* SPDX-License-Identifier: MIT */
/* cgroup trees and their id listings; see <ctprof/plugin-util.h>. */
#include "ctprof/plugin-util.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define LIST_READ_INIT 16384
#define LIST_READ_MAX  (64u << 20)

size_t ctp_count_lines(const char *buf, size_t len)
{
	size_t n = 0;
	const char *p = buf, *end = buf + len;

	while (p < end && (p = memchr(p, '\n', (size_t)(end - p))) != NULL) {
		n++;
		p++;
	}
	return n;
}

int ctp_parse_id_list(const char *buf, size_t len, uint32_t *out, size_t cap,
		      size_t *n)
{
	const char *p = buf, *end = buf + len;
	uint64_t v;

	*n = 0;
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));

		if (!nl || ctp_scan_u64(&p, nl, &v) < 0 || p != nl || v == 0 ||
		    v > INT32_MAX)
			return -EINVAL;
		if (*n == cap)
			return -E2BIG;
		out[(*n)++] = (uint32_t)v;
		p = nl + 1;
	}
	return 0;
}

int ctp_read_id_list(int dirfd, const char *name, struct ctp_id_list *l)
{
	int fd = ctp_open_regular(dirfd, name);
	size_t off = 0;
	int r = 0;

	l->n = 0;
	if (fd < 0)
		return fd;
	/* To the end: a listing is a seq_file of many records, handed out a
	 * buffer (a page) per read. */
	for (;;) {
		size_t room;
		ssize_t got;

		if (off + 1 >= l->buf_cap &&
		    (r = CTP_GROW(l->buf, l->buf_cap, off + 2,
				  LIST_READ_INIT)) < 0)
			break;
		room = l->buf_cap - off - 1;
		got = read(fd, l->buf + off, room);
		if (got < 0 && errno == EINTR)
			continue;
		r = got < 0 ? -errno : 0;
		if (got <= 0)
			break;
		off += (size_t)got;
		if (off > LIST_READ_MAX) {
			r = -EFBIG;
			break;
		}
	}
	close(fd);
	if (r < 0)
		return r;
	r = CTP_GROW(l->ids, l->cap, ctp_count_lines(l->buf, off) + 1, 256);
	if (r < 0)
		return r;
	return ctp_parse_id_list(l->buf, off, l->ids, l->cap, &l->n);
}

void ctp_id_list_free(struct ctp_id_list *l)
{
	free(l->ids);
	free(l->buf);
	*l = (struct ctp_id_list){0};
}

static int cmp_pair(const void *a, const void *b)
{
	const struct ctp_id_pair *x = a, *y = b;

	return (x->id > y->id) - (x->id < y->id);
}

void ctp_id_pairs_sort(struct ctp_id_pair *pairs, size_t *n)
{
	size_t k = 0;

	if (*n > 1)
		qsort(pairs, *n, sizeof(*pairs), cmp_pair);
	for (size_t i = 0; i < *n; i++) {
		if (k && pairs[k - 1].id == pairs[i].id) {
			if (pairs[k - 1].val != pairs[i].val)
				pairs[k - 1].val = CTP_ID_AMBIGUOUS;
			continue;
		}
		pairs[k++] = pairs[i];
	}
	*n = k;
}

const struct ctp_id_pair *ctp_id_pairs_find(const struct ctp_id_pair *pairs,
					    size_t n, uint32_t id)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (pairs[mid].id < id)
			lo = mid + 1;
		else if (pairs[mid].id > id)
			hi = mid;
		else
			return &pairs[mid];
	}
	return NULL;
}

struct walk {
	int (*fn)(void *arg, int dirfd, const char *path, size_t plen,
		  unsigned depth);
	void *arg;
	size_t dirs, max_dirs;
	unsigned max_depth;
	char path[PATH_MAX];
};

static int walk(struct walk *w, int dirfd, size_t plen, unsigned depth)
{
	struct dirent *e;
	DIR *d;
	int fd, r;

	if (++w->dirs > w->max_dirs || depth > w->max_depth)
		return -E2BIG;
	r = w->fn(w->arg, dirfd, w->path, plen, depth);
	if (r < 0)
		return r;
	fd = openat(dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	d = fdopendir(fd);
	if (!d) {
		r = -errno;
		close(fd);
		return r;
	}
	r = 0;
	while (r == 0 && (e = readdir(d)) != NULL) {
		size_t el = strlen(e->d_name), nl = plen;
		int sub;

		if (e->d_type != DT_DIR || !strcmp(e->d_name, ".") ||
		    !strcmp(e->d_name, ".."))
			continue;
		if (plen + 1 + el >= sizeof(w->path)) {
			r = -E2BIG;
			break;
		}
		sub = openat(dirfd, e->d_name,
			     O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
		if (sub < 0)
			continue; /* removed while walked */
		if (plen > 1)
			w->path[nl++] = '/';
		memcpy(w->path + nl, e->d_name, el);
		w->path[nl + el] = '\0';
		r = walk(w, sub, nl + el, depth + 1);
		close(sub);
		w->path[plen] = '\0';
		/* A cgroup removed under the walk lists nobody. */
		if (r == -ENOENT || r == -ENODEV)
			r = 0;
	}
	closedir(d);
	return r;
}

int ctp_cgroup_walk(int dirfd, size_t max_dirs, unsigned max_depth,
		    int (*fn)(void *arg, int dirfd, const char *path,
			      size_t plen, unsigned depth),
		    void *arg)
{
	struct walk *w = malloc(sizeof(*w));
	int r;

	if (!w)
		return -ENOMEM;
	w->fn = fn;
	w->arg = arg;
	w->dirs = 0;
	w->max_dirs = max_dirs;
	w->max_depth = max_depth;
	w->path[0] = '/';
	w->path[1] = '\0';
	r = walk(w, dirfd, 1, 0);
	free(w);
	return r;
}
