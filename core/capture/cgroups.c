/* SPDX-License-Identifier: MIT */
/* The identity of the cgroups a capture meets; see cgroups.h. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "cgroups.h"
#include "ctprof/plugin-util.h"

#define DENTS_BUF 32768
/* The most of <proc>/self/mountinfo read (a container host's is a few
 * hundred KiB). */
#define MOUNTINFO_MAX (16u << 20)

void ctp_cgroups_init(struct ctp_cgroups *cg)
{
	*cg = (struct ctp_cgroups){0};
	pthread_mutex_init(&cg->lock, NULL);
}

void ctp_cgroups_done(struct ctp_cgroups *cg)
{
	free(cg->row);
	free(cg->whole);
	for (uint32_t i = 0; cg->refs && i < cg->refs_n; i++)
		free(cg->refs[i]);
	free(cg->refs);
	free(cg->refs_words);
	pthread_mutex_destroy(&cg->lock);
}

/* Room for blob id `id` in the id -> row map (under the lock). */
static int row_room(struct ctp_cgroups *cg, int64_t id)
{
	size_t nc = cg->row_cap ? cg->row_cap : 256;
	int64_t *nr;

	if ((size_t)id < cg->row_cap)
		return 0;
	while (nc <= (size_t)id)
		nc *= 2;
	nr = realloc(cg->row, nc * sizeof(*nr));
	if (!nr)
		return -ENOMEM;
	for (size_t i = cg->row_cap; i < nc; i++)
		nr[i] = -1;
	cg->row = nr;
	cg->row_cap = nc;
	return 0;
}

int64_t ctp_cgroups_row(struct ctp_cgroups *cg, struct ctp_capture *cap,
			const char *path, size_t len)
{
	int64_t id = ctp_blobpool_intern(cap->blobs, path, len);
	int64_t row;

	if (id < 0)
		return id;
	pthread_mutex_lock(&cg->lock);
	row = row_room(cg, id);
	if (row == 0) {
		row = cg->row[id];
		if (row < 0) {
			row = ctp_table_add_row(&cap->cgroups);
			if (row >= 0) {
				ctp_table_set(&cap->cgroups, (uint32_t)row,
					      CTP_CCOL_PATH, (uint64_t)id);
				cg->row[id] = row;
			}
		}
	}
	pthread_mutex_unlock(&cg->lock);
	return row;
}

bool ctp_cgroup_key_ok(const char *key, size_t len)
{
	size_t i = 0;

	if (!key || len == 0 || len > 4096 || memchr(key, '\0', len))
		return false;
	while (i < len && ((key[i] >= 'a' && key[i] <= 'z') ||
			   (key[i] >= '0' && key[i] <= '9') || key[i] == '_'))
		i++;
	return i > 0 && i < len && key[i] == ':';
}

/* Room for row bit `word` of plugin p's bitmap (under the lock). */
static int ref_room(struct ctp_cgroups *cg, uint32_t n, uint32_t p, size_t word)
{
	size_t old, nw;
	uint64_t *bits;

	if (!cg->refs) {
		cg->refs = calloc(n, sizeof(*cg->refs));
		cg->refs_words = calloc(n, sizeof(*cg->refs_words));
		if (!cg->refs || !cg->refs_words) {
			free(cg->refs);
			free(cg->refs_words);
			cg->refs = NULL;
			cg->refs_words = NULL;
			return -ENOMEM;
		}
		cg->refs_n = n;
	}
	old = cg->refs_words[p];
	if (word < old)
		return 0;
	nw = old ? old * 2 : 4;
	while (nw <= word)
		nw *= 2;
	bits = realloc(cg->refs[p], nw * sizeof(*bits));
	if (!bits)
		return -ENOMEM;
	memset(bits + old, 0, (nw - old) * sizeof(*bits));
	cg->refs[p] = bits;
	cg->refs_words[p] = nw;
	return 0;
}

int ctp_cgroups_ref(struct ctp_cgroups *cg, struct ctp_capture *cap,
		    uint32_t plugin, const char *key, size_t len)
{
	int64_t row;
	int ret;

	if (!ctp_cgroup_key_ok(key, len))
		return -EINVAL;
	row = ctp_cgroups_row(cg, cap, key, len);
	if (row < 0)
		return (int)row;
	if (row > INT_MAX || plugin >= cap->n_plugins)
		return -EINVAL;
	pthread_mutex_lock(&cg->lock);
	ret = ref_room(cg, cap->n_plugins, plugin, (size_t)row / 64);
	if (ret == 0) {
		cg->refs[plugin][row / 64] |= 1ull << (row % 64);
		ret = (int)row;
	}
	pthread_mutex_unlock(&cg->lock);
	return ret;
}

bool ctp_cgroups_referenced(struct ctp_cgroups *cg, uint32_t p, uint32_t row)
{
	bool yes = false;

	pthread_mutex_lock(&cg->lock);
	if (cg->refs && p < cg->refs_n && row / 64 < cg->refs_words[p])
		yes = cg->refs[p][row / 64] >> (row % 64) & 1;
	pthread_mutex_unlock(&cg->lock);
	return yes;
}

/* The first line of a cgroup's cgroup.type ("domain", "threaded", ...):
 * one read(), as for every short one-line file of the walk (the
 * benchmark's plain reader makes the same calls). */
static int read_type(int cgfd, const char *rel, char *out, size_t outlen)
{
	int fd = ctp_open_regular(cgfd, rel);
	ssize_t n;

	if (fd < 0)
		return fd;
	do
		n = read(fd, out, outlen - 1);
	while (n < 0 && errno == EINTR);
	if (n < 0) {
		n = -errno;
		close(fd);
		return (int)n;
	}
	close(fd);
	if (n > 0 && out[n - 1] == '\n')
		n--;
	out[n] = '\0';
	return 0;
}

/* Is the cgroup v2 root a threaded domain, i.e. could threads of a process
 * in the root sit in a threaded child? Only when a child is threaded. */
static bool root_has_threaded_child(int cgfd)
{
	int dfd = openat(cgfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0)
		return true; /* cannot tell: assume the worst */
	char *dents = malloc(DENTS_BUF);
	bool threaded = dents == NULL;
	while (!threaded) {
		long n = syscall(SYS_getdents64, dfd, dents, DENTS_BUF);
		if (n <= 0) {
			threaded = n < 0;
			break;
		}
		for (long off = 0; off < n && !threaded;) {
			struct dirent64 *d = (struct dirent64 *)(dents + off);
			off += d->d_reclen;
			/* Any name but "." and ".." is a legal cgroup
			 * (".x" too); a file system that does not fill
			 * d_type may hide a directory behind DT_UNKNOWN. */
			if ((d->d_type != DT_DIR && d->d_type != DT_UNKNOWN) ||
			    !strcmp(d->d_name, ".") || !strcmp(d->d_name, ".."))
				continue;
			char rel[300], type[64];
			snprintf(rel, sizeof(rel), "%.255s/cgroup.type",
				 d->d_name);
			if (read_type(cgfd, rel, type, sizeof(type)) == 0 &&
			    strstr(type, "threaded"))
				threaded = true;
		}
	}
	free(dents);
	close(dfd);
	return threaded;
}

/* cgroup v2 moves whole processes, except within threaded subtrees: a
 * "domain" cgroup (not "domain threaded") holds whole processes, and the
 * root does unless one of its children is threaded. */
bool ctp_cgroup_holds_whole(int cgfd, const char *path, size_t len)
{
	char rel[1024], type[64];

	/* A path with ".." lies outside our cgroup namespace: it cannot be
	 * looked up under the mount, so no shortcut. */
	if (cgfd < 0 || len == 0 || path[0] != '/' ||
	    memmem(path, len, "/..", 3))
		return false;
	if (len == 1)
		return !root_has_threaded_child(cgfd);
	if (len >= 900)
		return false;
	snprintf(rel, sizeof(rel), "%.*s/cgroup.type", (int)(len - 1),
		 path + 1);
	return read_type(cgfd, rel, type, sizeof(type)) == 0 &&
	       strcmp(type, "domain") == 0;
}

bool ctp_cgroups_whole(struct ctp_cgroups *cg, int cgroup_fd, int64_t key,
		       const char *path, size_t len)
{
	int8_t known = -1;
	bool whole;

	pthread_mutex_lock(&cg->lock);
	if ((size_t)key < cg->whole_cap)
		known = cg->whole[key];
	pthread_mutex_unlock(&cg->lock);
	if (known >= 0)
		return known;
	whole = ctp_cgroup_holds_whole(cgroup_fd, path, len);
	pthread_mutex_lock(&cg->lock);
	if ((size_t)key >= cg->whole_cap) {
		size_t nc = cg->whole_cap ? cg->whole_cap : 64;
		while (nc <= (size_t)key)
			nc *= 2;
		int8_t *nw = realloc(cg->whole, nc);
		if (nw) {
			memset(nw + cg->whole_cap, -1, nc - cg->whole_cap);
			cg->whole = nw;
			cg->whole_cap = nc;
		}
	}
	if ((size_t)key < cg->whole_cap)
		cg->whole[key] = whole;
	pthread_mutex_unlock(&cg->lock);
	return whole;
}

int ctp_cgroup_v2_path(const char *buf, size_t len, const char **path,
		       size_t *plen)
{
	const char *p = buf, *end = buf + len;
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *le = nl ? nl : end;
		if (le - p >= 3 && p[0] == '0' && p[1] == ':' && p[2] == ':') {
			*path = p + 3;
			*plen = (size_t)(le - p - 3);
			return 0;
		}
		p = nl ? nl + 1 : end;
	}
	return -ENOENT;
}

/* The mount point field of the first cgroup2 line of mountinfo text
 * (NUL-terminated, modified in place). */
static char *mountinfo_cgroup2(char *buf)
{
	for (char *line = buf; line && *line;) {
		char *nl = strchr(line, '\n');
		if (nl)
			*nl = '\0';
		/* id parent maj:min root mountpoint opts [tags] - fstype ... */
		char *sep = strstr(line, " - ");
		if (sep && strncmp(sep + 3, "cgroup2 ", 8) == 0) {
			char *f = line;
			for (int i = 0; i < 4 && f; i++) {
				f = strchr(f, ' ');
				if (f)
					f++;
			}
			if (f) {
				char *e = strchr(f, ' ');
				if (e)
					*e = '\0';
				return strdup(f);
			}
		}
		line = nl ? nl + 1 : NULL;
	}
	return NULL;
}

char *ctp_cgroup2_mount(int proc_fd)
{
	size_t cap = 4096, off = 0;
	char *buf = NULL, *found = NULL;
	int fd = ctp_open_regular(proc_fd, "self/mountinfo");

	if (fd < 0)
		return NULL;
	for (;;) {
		if (!buf || off + 1 >= cap) {
			char *nb;
			if (buf)
				cap *= 2;
			nb = cap <= MOUNTINFO_MAX ? realloc(buf, cap) : NULL;
			if (!nb)
				goto out;
			buf = nb;
		}
		ssize_t n = read(fd, buf + off, cap - 1 - off);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			goto out;
		if (n == 0)
			break;
		off += (size_t)n;
	}
	buf[off] = '\0';
	found = mountinfo_cgroup2(buf);
out:
	close(fd);
	free(buf);
	return found;
}

/* ---- Processes by v2 cgroup, from the cgroups' own listings ------------- */

#define PROCS_MAX_DIRS	100000
#define PROCS_MAX_DEPTH 64

/* A listed cgroup's path kept in the arena: its index, or a negative
 * errno. */
static int64_t procs_add_path(struct ctp_cg_procs *p, const char *path,
			      size_t plen)
{
	int r;
	if ((r = CTP_GROW(p->arena, p->arena_cap, p->arena_len + plen + 1,
			  4096)) < 0 ||
	    (r = CTP_GROW(p->path, p->path_cap, p->n_path + 1, 64)) < 0)
		return r;
	p->path[p->n_path] = (struct ctp_cg_path){.off = (uint32_t)p->arena_len,
						  .len = (uint32_t)plen};
	memcpy(p->arena + p->arena_len, path, plen + 1);
	p->arena_len += plen + 1;
	return (int64_t)p->n_path++;
}

/* The ids just read (p->ids) into *ent as listed in cgroup `path`. */
static int procs_add_ids(struct ctp_cg_procs *p, struct ctp_id_pair **ent,
			 size_t *n, size_t *cap, const char *path, size_t plen)
{
	if (!p->ids.n)
		return 0;
	int64_t idx = procs_add_path(p, path, plen);
	int r;
	if (idx < 0)
		return (int)idx;
	if ((r = CTP_GROW(*ent, *cap, *n + p->ids.n, 256)) < 0)
		return r;
	for (size_t i = 0; i < p->ids.n; i++)
		(*ent)[(*n)++] = (struct ctp_id_pair){.id = p->ids.ids[i],
						      .val = (uint32_t)idx};
	return 0;
}

/* One cgroup: its cgroup.procs. A threaded cgroup refuses that read
 * (EOPNOTSUPP): its processes are listed by its threaded domain, and its
 * own threads by its cgroup.threads. */
static int procs_cgroup(void *arg, int dirfd, const char *path, size_t plen,
			unsigned depth)
{
	struct ctp_cg_procs *p = arg;
	int r;

	(void)depth;
	r = ctp_read_id_list(dirfd, "cgroup.procs", &p->ids);
	if (r == -EOPNOTSUPP) {
		r = ctp_read_id_list(dirfd, "cgroup.threads", &p->ids);
		if (r < 0)
			return r == -ENOENT ? 0 : r;
		return procs_add_ids(p, &p->tent, &p->tn, &p->tcap, path, plen);
	}
	if (r < 0)
		return r == -ENOENT ? 0 : r;
	return procs_add_ids(p, &p->ent, &p->n, &p->cap, path, plen);
}

static const char *listed_path(const struct ctp_cg_procs *p,
			       const struct ctp_id_pair *ent, size_t n,
			       uint32_t id, size_t *len)
{
	const struct ctp_id_pair *e = ctp_id_pairs_find(ent, n, id);

	if (!e || e->val == CTP_ID_AMBIGUOUS)
		return NULL;
	*len = p->path[e->val].len;
	return p->arena + p->path[e->val].off;
}

int ctp_cg_procs_build(struct ctp_cg_procs *p, int cgroup_fd, int proc_fd)
{
	char buf[CTP_CGROUP_PATH_MAX + 8];
	size_t n = 0, want_len, got_len;
	const char *want, *got;
	int r;

	p->n = p->tn = p->n_path = 0;
	p->arena_len = 0;
	p->ok = false;
	if (cgroup_fd < 0 || !ctp_proc_is_live(proc_fd))
		return -EBADF;
	r = ctp_cgroup_walk(cgroup_fd, PROCS_MAX_DIRS, PROCS_MAX_DEPTH,
			    procs_cgroup, p);
	if (r < 0)
		return r;
	ctp_id_pairs_sort(p->ent, &p->n);
	ctp_id_pairs_sort(p->tent, &p->tn);
	/* This process's own cgroup as the listing and its file name it:
	 * not the same when the mount shows another cgroup namespace's
	 * tree. */
	if (ctp_read_small(proc_fd, "self/cgroup", buf, sizeof(buf), &n) < 0 ||
	    ctp_cgroup_v2_path(buf, n, &want, &want_len) < 0 ||
	    !(got = listed_path(p, p->ent, p->n, (uint32_t)getpid(),
				&got_len)) ||
	    got_len != want_len || memcmp(got, want, got_len) != 0)
		return -EXDEV;
	p->ok = true;
	return 0;
}

const char *ctp_cg_procs_find(const struct ctp_cg_procs *p, uint32_t tgid,
			      size_t *len)
{
	return p->ok ? listed_path(p, p->ent, p->n, tgid, len) : NULL;
}

const char *ctp_cg_threads_find(const struct ctp_cg_procs *p, uint32_t tid,
				size_t *len)
{
	return p->ok ? listed_path(p, p->tent, p->tn, tid, len) : NULL;
}

void ctp_cg_procs_free(struct ctp_cg_procs *p)
{
	free(p->ent);
	free(p->tent);
	free(p->path);
	free(p->arena);
	ctp_id_list_free(&p->ids);
	memset(p, 0, sizeof(*p));
}
