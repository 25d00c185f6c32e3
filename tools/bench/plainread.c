/* SPDX-License-Identifier: MIT */
/*
 * ctp-bench-read: the benchmark's baseline, the kernel work of a snapshot
 * with nothing else. It walks the proc root the way core/engine.c does with
 * the procfs-stat plugin and makes the same system calls in the same order,
 * on one thread, without parsing or keeping anything:
 *
 *   list <root> (getdents64), ascending tgids; per tgid:
 *     openat <tgid> O_PATH; read <tgid>/comm (one read);
 *     list <tgid>/task; read <tgid>/stat (until EOF);
 *     per tid, ascending: openat task/<tid> O_PATH; read comm (one read),
 *       cgroup, stat, status (each until EOF); sched_getaffinity(tid);
 *       close.
 *
 * "Until EOF" is the engine's loop: read() until it returns 0, which costs
 * a second call per file. --thread-files/--process-files change the plugin
 * files (comma lists) when the plugin set changes; --no-affinity drops the
 * sched_getaffinity call (procfs-stat's affinity: status).
 *
 * Prints "tgids N tids N vanished N" on stdout.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <sched.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#define DENTS_BUF 32768
#define MAX_FILES 64

struct walk {
	int proc_fd;
	const char *tfile[MAX_FILES];
	size_t n_tfile;
	const char *pfile[MAX_FILES];
	size_t n_pfile;
	bool affinity;
	/* getdents64 fills it with 8-byte aligned records. */
	_Alignas(struct dirent64) char dents[DENTS_BUF];
	/* Big enough for every file read here in one call, like the engine's
	 * grown buffers after the first few tasks. */
	char buf[65536];
	cpu_set_t set;
	uint64_t tgids, tids, vanished;
};

/* What the engine's read_at() does: open, read until EOF, close. */
static int read_all(struct walk *w, int dirfd, const char *name)
{
	int fd = openat(dirfd, name, O_RDONLY | O_CLOEXEC | O_NOCTTY);
	int ret = 0;
	if (fd < 0)
		return -errno;
	for (;;) {
		ssize_t n = read(fd, w->buf, sizeof(w->buf) - 1);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			ret = -errno;
		if (n <= 0)
			break;
	}
	close(fd);
	return ret;
}

/* What the engine's read_line_at() does for comm: one read. */
static int read_once(struct walk *w, int dirfd, const char *name)
{
	int fd = openat(dirfd, name, O_RDONLY | O_CLOEXEC | O_NOCTTY);
	ssize_t n;
	if (fd < 0)
		return -errno;
	do
		n = read(fd, w->buf, 63);
	while (n < 0 && errno == EINTR);
	int ret = n < 0 ? -errno : 0;
	close(fd);
	return ret;
}

static int parse_id(const char *s, uint32_t *out)
{
	uint64_t v = 0;
	if (!*s)
		return -EINVAL;
	for (; *s; s++) {
		if (*s < '0' || *s > '9')
			return -EINVAL;
		v = v * 10 + (uint64_t)(*s - '0');
		if (v > INT32_MAX)
			return -ERANGE;
	}
	*out = (uint32_t)v;
	return 0;
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	return (x > y) - (x < y);
}

/* Numeric entries of an open directory, ascending, into a growable array. */
static int list_ids(struct walk *w, int dirfd, uint32_t **ids, size_t *cap,
		    size_t *n)
{
	*n = 0;
	for (;;) {
		long nread = syscall(SYS_getdents64, dirfd, w->dents,
				     sizeof(w->dents));
		if (nread < 0)
			return -errno;
		if (nread == 0)
			break;
		for (long off = 0; off < nread;) {
			struct dirent64 *d =
				(struct dirent64 *)(w->dents + off);
			uint32_t id;
			off += d->d_reclen;
			if (parse_id(d->d_name, &id) < 0)
				continue;
			if (*n == *cap) {
				size_t nc = *cap ? *cap * 2 : 256;
				uint32_t *ni = realloc(*ids, nc * sizeof(*ni));
				if (!ni)
					return -ENOMEM;
				*ids = ni;
				*cap = nc;
			}
			(*ids)[(*n)++] = id;
		}
	}
	qsort(*ids, *n, sizeof(**ids), cmp_u32);
	return 0;
}

static void walk_thread(struct walk *w, int pdir, uint32_t tid)
{
	char rel[32];
	snprintf(rel, sizeof(rel), "task/%" PRIu32, tid);
	int tdir = openat(pdir, rel, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (tdir < 0) {
		w->vanished++;
		return;
	}
	if (read_once(w, tdir, "comm") < 0) {
		w->vanished++;
		close(tdir);
		return;
	}
	read_all(w, tdir, "cgroup");
	for (size_t f = 0; f < w->n_tfile; f++)
		read_all(w, tdir, w->tfile[f]);
	if (w->affinity)
		sched_getaffinity((pid_t)tid, sizeof(w->set), &w->set);
	close(tdir);
	w->tids++;
}

static int walk_process(struct walk *w, uint32_t tgid, uint32_t **tids,
			size_t *cap)
{
	char name[16];
	size_t n = 0;
	snprintf(name, sizeof(name), "%" PRIu32, tgid);
	int pdir = openat(w->proc_fd, name, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (pdir < 0)
		goto gone;
	if (read_once(w, pdir, "comm") < 0)
		goto gone_pdir;
	int taskfd = openat(pdir, "task", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (taskfd < 0)
		goto gone_pdir;
	int r = list_ids(w, taskfd, tids, cap, &n);
	close(taskfd);
	if (r == -ENOMEM)
		return r;
	if (r < 0)
		goto gone_pdir;
	for (size_t f = 0; f < w->n_pfile; f++)
		read_all(w, pdir, w->pfile[f]);
	for (size_t i = 0; i < n; i++)
		walk_thread(w, pdir, (*tids)[i]);
	close(pdir);
	w->tgids++;
	return 0;
gone_pdir:
	close(pdir);
gone:
	w->vanished++;
	return 0;
}

/* Split a comma list in place into files[]; an empty string gives none. */
static int split_files(char *list, const char **files, size_t *n)
{
	*n = 0;
	for (char *save = NULL, *tok = strtok_r(list, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save)) {
		if (*n == MAX_FILES)
			return -E2BIG;
		files[(*n)++] = tok;
	}
	return 0;
}

static void usage(FILE *out)
{
	fprintf(out,
		"Usage: ctp-bench-read [--proc DIR] [--thread-files LIST] "
		"[--process-files LIST] [--no-affinity]\n"
		"Walk DIR (default /proc) making the system calls ctprof-core "
		"makes with procfs-stat\n"
		"(thread files stat,status; process files stat; "
		"sched_getaffinity per thread),\n"
		"single-threaded, keeping nothing. Prints 'tgids N tids N "
		"vanished N'.\n");
}

int main(int argc, char **argv)
{
	static const struct option lopts[] = {
		{"proc", required_argument, NULL, 'p'},
		{"thread-files", required_argument, NULL, 't'},
		{"process-files", required_argument, NULL, 'P'},
		{"no-affinity", no_argument, NULL, 'A'},
		{"help", no_argument, NULL, 'h'},
		{0},
	};
	char tdefault[] = "stat,status", pdefault[] = "stat";
	char *tlist = tdefault, *plist = pdefault;
	const char *root = "/proc";
	struct walk *w = calloc(1, sizeof(*w));
	uint32_t *tgids = NULL, *tids = NULL;
	size_t n_tgids = 0, tgid_cap = 0, tid_cap = 0;
	int c, r, rc = 1;

	if (!w) {
		perror("ctp-bench-read");
		return 1;
	}
	w->affinity = true;
	while ((c = getopt_long(argc, argv, "h", lopts, NULL)) != -1) {
		switch (c) {
		case 'p':
			root = optarg;
			break;
		case 't':
			tlist = optarg;
			break;
		case 'P':
			plist = optarg;
			break;
		case 'A':
			w->affinity = false;
			break;
		case 'h':
			usage(stdout);
			free(w);
			return 0;
		default:
			usage(stderr);
			free(w);
			return 2;
		}
	}
	if (optind != argc || split_files(tlist, w->tfile, &w->n_tfile) < 0 ||
	    split_files(plist, w->pfile, &w->n_pfile) < 0) {
		usage(stderr);
		free(w);
		return 2;
	}

	w->proc_fd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (w->proc_fd < 0) {
		fprintf(stderr, "ctp-bench-read: %s: %s\n", root,
			strerror(errno));
		goto out;
	}
	int pfd = openat(w->proc_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	r = pfd < 0 ? -errno : list_ids(w, pfd, &tgids, &tgid_cap, &n_tgids);
	if (pfd >= 0)
		close(pfd);
	if (r < 0) {
		fprintf(stderr, "ctp-bench-read: listing %s: %s\n", root,
			strerror(-r));
		goto out;
	}
	for (size_t i = 0; i < n_tgids; i++) {
		r = walk_process(w, tgids[i], &tids, &tid_cap);
		if (r < 0) {
			fprintf(stderr, "ctp-bench-read: %s\n", strerror(-r));
			goto out;
		}
	}
	printf("tgids %" PRIu64 " tids %" PRIu64 " vanished %" PRIu64 "\n",
	       w->tgids, w->tids, w->vanished);
	rc = 0;
out:
	if (w->proc_fd > 0)
		close(w->proc_fd);
	free(tgids);
	free(tids);
	free(w);
	return rc;
}
