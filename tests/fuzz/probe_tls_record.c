/* SPDX-License-Identifier: MIT */
/*
 * Record a seed for the probe_tls harness from a live jemalloc worker:
 *
 *   probe_tls_record OUT WORKER ARGS...
 *
 * starts `WORKER FD ARGS...` (tests/jemalloc_worker.c), waits for its
 * readiness line, finds its jemalloc module as the plugin does, and reads
 * its threads' counters with ctp_jep_read_thread_db through a ctp_jep_mem
 * that passes every read and symbol lookup to the real process and keeps
 * them. OUT gets the harness's input (probe_tls.c): the module's header,
 * the symbols asked and every byte read, merged into segments (the
 * harness serves the _thread_db_* descriptors its own libc has from
 * there, so the recorded ones only stand for those it lacks).
 * Prints the counters read and the number of reads made; exit 0 when at
 * least one thread's counters were read.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

#include "jep.h"

#define MAX_READS 65536

struct rec {
	pid_t pid;
	const struct ctp_jep_target *real; /* mem NULL: the process */
	struct {
		uint64_t addr;
		size_t len;
		uint8_t *bytes;
	} r[MAX_READS];
	size_t n;
	struct {
		char name[128];
		uint64_t addr;
	} sym[64];
	size_t n_sym;
};

static int rec_read(void *arg, uint64_t addr, void *buf, size_t len)
{
	struct rec *rc = arg;
	struct iovec l = {buf, len}, r = {(void *)(uintptr_t)addr, len};

	if (process_vm_readv(rc->pid, &l, 1, &r, 1, 0) != (ssize_t)len)
		return -EIO;
	if (rc->n < MAX_READS) {
		rc->r[rc->n].bytes = malloc(len ? len : 1);
		if (!rc->r[rc->n].bytes)
			return -ENOMEM;
		memcpy(rc->r[rc->n].bytes, buf, len);
		rc->r[rc->n].addr = addr;
		rc->r[rc->n++].len = len;
	}
	return 0;
}

static int rec_lookup(void *arg, const char *name, uint64_t *addr)
{
	struct rec *rc = arg;
	int r = ctp_jep_symbol(rc->real, name, addr);

	if (r || rc->n_sym == 64)
		return r;
	for (size_t i = 0; i < rc->n_sym; i++)
		if (!strcmp(rc->sym[i].name, name))
			return 0;
	snprintf(rc->sym[rc->n_sym].name, sizeof(rc->sym[0].name), "%s", name);
	rc->sym[rc->n_sym++].addr = *addr;
	return 0;
}

static void put64(FILE *f, uint64_t v)
{
	for (int i = 0; i < 8; i++)
		fputc((int)(v >> (8 * i) & 0xff), f);
}

static int cmp_addr(const void *a, const void *b)
{
	const uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* Every read, merged where they overlap or touch (later reads win). */
static void write_segments(FILE *f, struct rec *rc)
{
	size_t i = 0;

	/* addr is the first member of each read: sort them by it. */
	qsort(rc->r, rc->n, sizeof(rc->r[0]), cmp_addr);
	while (i < rc->n) {
		uint64_t start = rc->r[i].addr, end = start + rc->r[i].len;
		size_t j = i + 1;
		uint8_t *buf;

		while (j < rc->n && rc->r[j].addr <= end) {
			if (rc->r[j].addr + rc->r[j].len > end)
				end = rc->r[j].addr + rc->r[j].len;
			j++;
		}
		buf = calloc(1, end - start);
		if (!buf)
			exit(1);
		for (size_t k = i; k < j; k++)
			memcpy(buf + (rc->r[k].addr - start), rc->r[k].bytes,
			       rc->r[k].len);
		put64(f, start);
		for (int b = 0; b < 4; b++)
			fputc((int)((end - start) >> (8 * b) & 0xff), f);
		fwrite(buf, 1, end - start, f);
		free(buf);
		i = j;
	}
}

static int write_seed(const char *out, const struct ctp_jep_target *t,
		      struct rec *rc)
{
	FILE *f = fopen(out, "wb");

	if (!f)
		return -errno;
	fputc(t->in_main_exe ? 1 : 0, f);
	fputc((int)rc->n_sym, f);
	for (int i = 0; i < 6; i++)
		fputc(0, f);
	put64(f, t->file->tsd_value);
	put64(f, t->file->off_alloc);
	put64(f, t->file->off_dealloc);
	put64(f, t->file->dyn_vaddr);
	put64(f, t->bias);
	for (size_t i = 0; i < rc->n_sym; i++) {
		fwrite(rc->sym[i].name, 1, strlen(rc->sym[i].name) + 1, f);
		put64(f, rc->sym[i].addr);
	}
	write_segments(f, rc);
	return fclose(f) ? -errno : 0;
}

/* Start the worker; its pid once it printed its readiness line. */
static pid_t spawn(char **argv)
{
	int p[2];
	char fd[16], buf[128];
	ssize_t n;
	pid_t pid;

	if (pipe(p))
		return -1;
	pid = fork();
	if (pid == 0) {
		char *args[16] = {argv[0], fd};
		int k = 2;

		close(p[0]);
		snprintf(fd, sizeof(fd), "%d", p[1]);
		for (int i = 1; argv[i] && k < 15; i++)
			args[k++] = argv[i];
		execv(argv[0], args);
		_exit(127);
	}
	close(p[1]);
	struct pollfd pf = {p[0], POLLIN, 0};

	n = poll(&pf, 1, 10000) > 0 ? read(p[0], buf, sizeof(buf) - 1) : -1;
	close(p[0]);
	if (n <= 0 || buf[0] != 'R') {
		kill(pid, SIGKILL);
		return -1;
	}
	return pid;
}

static char maps_buf[1 << 20];
static struct ctp_map maps[4096];

/* The worker's jemalloc module, as the plugin finds it. */
static int find(pid_t pid, struct ctp_jep_file *file, struct ctp_jep_target *t)
{
	char path[4200];
	struct stat exe;
	size_t len = 0, n = 0;
	ssize_t r;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	fd = open(path, O_RDONLY);
	if (fd < 0)
		return -errno;
	while ((r = read(fd, maps_buf + len, sizeof(maps_buf) - 1 - len)) > 0)
		len += (size_t)r;
	close(fd);
	for (char *s = maps_buf, *e; s < maps_buf + len && n < 4096;
	     s = e + 1) {
		e = memchr(s, '\n', (size_t)(maps_buf + len - s));
		if (!e)
			e = maps_buf + len;
		*e = '\0';
		if (ctp_maps_line(s, (size_t)(e - s), &maps[n]) == 0 &&
		    maps[n].ino && maps[n].path[0] == '/')
			n++;
	}
	snprintf(path, sizeof(path), "/proc/%d/exe", (int)pid);
	if (stat(path, &exe))
		return -errno;
	t->pid = pid;
	t->file = file;
	t->maps = maps;
	t->n_maps = n;
	t->root = NULL;
	for (size_t i = 0; i < n; i++) {
		if (!maps[i].exec)
			continue;
		snprintf(path, sizeof(path), "%.*s", (int)maps[i].path_len,
			 maps[i].path);
		if (ctp_jep_file_probe(path, file) || !file->found)
			continue;
		for (size_t k = 0; k < n; k++)
			if (maps[k].dev == maps[i].dev &&
			    maps[k].ino == maps[i].ino && !maps[k].offset) {
				t->bias =
					file->is_dyn
						? maps[k].start -
							  file->first_load_vaddr
						: 0;
				t->in_main_exe = maps[k].ino == exe.st_ino &&
						 maps[k].dev == exe.st_dev;
				return 0;
			}
	}
	return -ENOENT;
}

int main(int argc, char **argv)
{
	static struct rec rc;
	static struct ctp_jep_counters c[64];
	struct ctp_jep_file file;
	struct ctp_jep_target real = {0}, t;
	struct ctp_jep_mem mem = {rec_read, rec_lookup, &rc};
	enum ctp_jep_tag tag = CTP_JEP_NOT_JEMALLOC;
	size_t n = 0, ok = 0;
	pid_t pid;
	int r;

	if (argc < 3) {
		fprintf(stderr, "usage: %s OUT WORKER ARGS...\n", argv[0]);
		return 2;
	}
	pid = spawn(argv + 2);
	if (pid < 0) {
		fprintf(stderr, "probe_tls_record: %s did not start\n",
			argv[2]);
		return 1;
	}
	r = find(pid, &file, &real);
	if (r == 0) {
		rc.pid = pid;
		rc.real = &real;
		t = real;
		t.mem = &mem;
		r = ctp_jep_read_thread_db(&t, c, 64, &n, &tag);
	}
	if (r == 0)
		r = write_seed(argv[1], &t, &rc);
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	for (size_t i = 0; i < n; i++) {
		printf("tid %d err %d allocated %llu deallocated %llu\n",
		       (int)c[i].tid, c[i].err,
		       (unsigned long long)c[i].allocated,
		       (unsigned long long)c[i].deallocated);
		ok += c[i].err == 0;
	}
	printf("%zu threads, %zu read, %zu memory reads, %zu symbols\n", n, ok,
	       rc.n, rc.n_sym);
	if (r)
		fprintf(stderr, "probe_tls_record: %s (tag %s)\n", strerror(-r),
			ctp_jep_tag_name(tag));
	return r || !ok;
}
