// SPDX-License-Identifier: MIT
/*
 * procelf's maps (plugins/common/procelf.h): PROCMAP_QUERY's answers turned
 * into the mappings the text of maps gives, on literal values; then on a
 * live child (threads, a deleted file, a file mapped twice, odd names, and
 * 50,000 mappings), the ioctl's mappings against the text's, field by
 * field; and ctp_proc_find's choice: the ioctl without the core's read, the
 * text with CTP_PROCELF_MAPS=text or when a seccomp filter makes the ioctl
 * ENOTTY (then never asked again).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "ctprof/plugin.h"
#include "procelf.h"

static char tmp[] = "/tmp/ctp-procelf-XXXXXX";

/* ---- Equality ------------------------------------------------------------ */

/* Mapping i of a and of b, every field the plugins read. */
static void same_map(const struct ctp_map *a, const struct ctp_map *b, size_t i)
{
	if (a->start != b->start || a->end != b->end ||
	    a->offset != b->offset || a->dev != b->dev || a->ino != b->ino ||
	    a->exec != b->exec || a->path_len != b->path_len ||
	    memcmp(a->path, b->path, a->path_len))
		fail_msg("mapping %zu differs: %llx-%llx off %llx dev %llx "
			 "ino %llu x%d '%.*s' against %llx-%llx off %llx dev "
			 "%llx ino %llu x%d '%.*s'",
			 i, (unsigned long long)a->start,
			 (unsigned long long)a->end,
			 (unsigned long long)a->offset,
			 (unsigned long long)a->dev, (unsigned long long)a->ino,
			 a->exec, (int)a->path_len, a->path,
			 (unsigned long long)b->start,
			 (unsigned long long)b->end,
			 (unsigned long long)b->offset,
			 (unsigned long long)b->dev, (unsigned long long)b->ino,
			 b->exec, (int)b->path_len, b->path);
}

static void same_maps(const struct ctp_maps *a, const struct ctp_maps *b)
{
	size_t n = a->n < b->n ? a->n : b->n;

	for (size_t i = 0; i < n; i++)
		same_map(&a->v[i], &b->v[i], i);
	if (a->n != b->n)
		fail_msg("%zu mappings against %zu", a->n, b->n);
}

/* ---- Literal answers ----------------------------------------------------- */

struct answer {
	struct ctp_procmap_query q;
	const char *name; /* NULL: none */
	const char *line; /* the same mapping as maps prints it */
};

#define Q(s, e, fl, off, maj, min, ino)                                        \
	{                                                                      \
		.vma_start = (s), .vma_end = (e), .vma_flags = (fl),           \
		.vma_offset = (off), .dev_major = (maj), .dev_minor = (min),   \
		.inode = (ino)                                                 \
	}

#define R 0x1 /* PROCMAP_QUERY_VMA_READABLE */
#define X CTP_PROCMAP_VMA_EXECUTABLE

static const struct answer answers[] = {
	{Q(0x55d0a000, 0x55d0b000, R, 0, 0xfd, 1, 42), "/usr/bin/prog",
	 "55d0a000-55d0b000 r--p 00000000 fd:01 42                         "
	 "/usr/bin/prog"},
	{Q(0x55d0b000, 0x55d0c000, R | X, 0x1000, 0xfd, 1, 42), "/usr/bin/prog",
	 "55d0b000-55d0c000 r-xp 00001000 fd:01 42                         "
	 "/usr/bin/prog"},
	/* A file-backed mapping named by prctl: no path. */
	{Q(0x7f0000000000, 0x7f0000001000, R, 0, 0, 1, 5), "[anon_shmem:a/b]",
	 "7f0000000000-7f0000001000 rw-s 00000000 00:01 5                  "
	 "[anon_shmem:a/b]"},
	{Q(0x7f0000002000, 0x7f0000003000, R, 0, 0, 1, 77),
	 "/memfd:x (deleted)",
	 "7f0000002000-7f0000003000 rw-s 00000000 00:01 77                 "
	 "/memfd:x (deleted)"},
	/* An unlinked file: d_path's suffix, in both. */
	{Q(0x7f0000004000, 0x7f0000006000, R | X, 0x2000, 8, 3, 1001),
	 "/tmp/gone (deleted)",
	 "7f0000004000-7f0000006000 r-xp 00002000 08:03 1001               "
	 "/tmp/gone (deleted)"},
	/* A newline in a name: the ioctl's raw, the text's octal. */
	{Q(0x7f0000006000, 0x7f0000007000, R, 0, 8, 3, 1002), "/tmp/a\nb\n",
	 "7f0000006000-7f0000007000 r--p 00000000 08:03 1002               "
	 "/tmp/a\\012b\\012"},
	/* A backslash is not escaped: the same text as a newline's. */
	{Q(0x7f0000007000, 0x7f0000008000, R, 0, 8, 3, 1003), "/tmp/a\\012b",
	 "7f0000007000-7f0000008000 r--p 00000000 08:03 1003               "
	 "/tmp/a\\012b"},
	{Q(0x7f0000008000, 0x7f0000009000, R, 0x3000, 8, 3, 1004),
	 "/tmp/with space ",
	 "7f0000008000-7f0000009000 r--p 00003000 08:03 1004               "
	 "/tmp/with space "},
	/* No inode; a pseudo file; no name at all. */
	{Q(0x7f000000a000, 0x7f000000b000, R, 0, 0, 5, 0), "/zero",
	 "7f000000a000-7f000000b000 r--p 00000000 00:05 0                  "
	 "/zero"},
	{Q(0x7f000000b000, 0x7f000000c000, R, 0, 0, 14, 1234),
	 "anon_inode:[perf_event]",
	 "7f000000b000-7f000000c000 r--s 00000000 00:0e 1234               "
	 "anon_inode:[perf_event]"},
	{Q(0x7f000000c000, 0x7f000000d000, R, 0, 0, 14, 9), NULL,
	 "7f000000c000-7f000000d000 r--s 00000000 00:0e 9"},
	/* Majors and minors past a byte; the same file again. */
	{Q(0x7f000000e000, 0x7f000000f000, R | X, 0, 0x103, 0x10a, 7),
	 "/lib/libc.so.6",
	 "7f000000e000-7f000000f000 r-xp 00000000 103:10a 7                "
	 "/lib/libc.so.6"},
	{Q(0x7ffd00000000, 0x7ffd00001000, R, 0, 0xfd, 1, 42), "/usr/bin/prog",
	 "7ffd00000000-7ffd00001000 r--p 00000000 fd:01 42                 "
	 "/usr/bin/prog"},
};

static int add(struct ctp_maps *m, const struct answer *a)
{
	struct ctp_procmap_query q = a->q;

	q.vma_name_size = a->name ? (uint32_t)strlen(a->name) + 1 : 0;
	return ctp_maps_add_query(m, &q, a->name);
}

/* Every answer against the text of the same mappings. */
static void query_as_text(void **state)
{
	struct ctp_maps t = {0}, q = {0};
	char text[4096];
	size_t len = 0;

	(void)state;
	for (size_t i = 0; i < sizeof(answers) / sizeof(answers[0]); i++) {
		len += (size_t)snprintf(text + len, sizeof(text) - len, "%s\n",
					answers[i].line);
		assert_int_equal(add(&q, &answers[i]), 0);
	}
	assert_true(len < sizeof(text));
	assert_int_equal(ctp_maps_parse(&t, text, len), 0);
	assert_int_equal(t.n, 9);
	same_maps(&q, &t);
	/* The names as the plugins see them. */
	assert_int_equal(q.v[3].path_len, strlen("/tmp/gone (deleted)"));
	assert_memory_equal(q.v[4].path, "/tmp/a\\012b\\012", 14);
	assert_true(q.v[7].dev == makedev(0x103, 0x10a));
	/* One copy of a name its file's next mapping repeats. */
	assert_ptr_equal(q.v[0].path, q.v[1].path);
	ctp_maps_free(&t);
	ctp_maps_free(&q);
}

/* The names move with the buffer as it grows; a name without its NUL is
 * refused; and past CTP_MAPS_MAX, -EFBIG. */
static void query_growth(void **state)
{
	struct ctp_procmap_query a = Q(0x1000, 0x2000, R, 0, 8, 1, 3);
	struct ctp_maps m = {0};
	char name[300];

	(void)state;
	for (unsigned i = 0; i < 3000; i++) {
		int n = snprintf(name, sizeof(name), "/lib/%0*u", 40 + i % 200,
				 i);

		a.vma_start = 0x1000 + (uint64_t)i * 0x1000;
		a.vma_end = a.vma_start + 0x1000;
		a.vma_name_size = (uint32_t)n + 1;
		assert_int_equal(ctp_maps_add_query(&m, &a, name), 0);
	}
	assert_int_equal(m.n, 3000);
	for (unsigned i = 0; i < 3000; i++) {
		int n = snprintf(name, sizeof(name), "/lib/%0*u", 40 + i % 200,
				 i);

		assert_int_equal(m.v[i].path_len, (size_t)n);
		assert_memory_equal(m.v[i].path, name, (size_t)n);
	}
	a.vma_name_size = 4;
	assert_int_equal(ctp_maps_add_query(&m, &a, "/abcdef"), -EINVAL);
	assert_int_equal(m.n, 3000);

	m.n = 0;
	m.len = 0;
	a.vma_name_size = 5;
	for (size_t i = 0; i < CTP_MAPS_MAX; i++)
		assert_int_equal(ctp_maps_add_query(&m, &a, "/lib"), 0);
	assert_int_equal(ctp_maps_add_query(&m, &a, "/lib"), -EFBIG);
	assert_int_equal(m.n, CTP_MAPS_MAX);
	ctp_maps_free(&m);
}

/* ---- A live child -------------------------------------------------------- */

#define THREADS 200

struct child {
	pid_t pid;
	int go; /* closing it ends the child */
	int dirfd;
};

static void *idle(void *arg)
{
	int fd = (int)(intptr_t)arg;
	char c;

	while (read(fd, &c, 1) < 0 && errno == EINTR)
		;
	return NULL;
}

static int make_file(const char *name, size_t size)
{
	char path[PATH_MAX], page[4096];
	int fd;

	snprintf(path, sizeof(path), "%s/%s", tmp, name);
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		return -1;
	memset(page, 0x5a, sizeof(page));
	for (size_t off = 0; off < size; off += sizeof(page))
		if (write(fd, page, sizeof(page)) != (ssize_t)sizeof(page))
			return -1;
	return fd;
}

/* The child's mappings: THREADS threads (their stacks and guards), a file
 * mapped twice (offset 0 read-only, then executable), a deleted file, a
 * file with a newline and one with a space in its name; `many` more
 * single-page mappings of one file (no two merge: all at offset 0). */
static int child_maps(size_t many, int hold)
{
	int twice = make_file("twice", 16384), gone = make_file("gone", 8192),
	    nl = make_file("new\nline", 4096), sp = make_file("a space", 4096);
	char path[PATH_MAX];

	if (twice < 0 || gone < 0 || nl < 0 || sp < 0)
		return -1;
	if (mmap(NULL, 8192, PROT_READ, MAP_PRIVATE, twice, 0) == MAP_FAILED ||
	    mmap(NULL, 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE, twice, 8192) ==
		    MAP_FAILED ||
	    mmap(NULL, 8192, PROT_READ | PROT_EXEC, MAP_PRIVATE, gone, 0) ==
		    MAP_FAILED ||
	    mmap(NULL, 4096, PROT_READ, MAP_SHARED, nl, 0) == MAP_FAILED ||
	    mmap(NULL, 4096, PROT_READ, MAP_PRIVATE, sp, 0) == MAP_FAILED)
		return -1;
	snprintf(path, sizeof(path), "%s/gone", tmp);
	if (unlink(path) < 0)
		return -1;
	for (size_t i = 0; i < many; i++)
		if (mmap(NULL, 4096, PROT_READ, MAP_PRIVATE, sp, 0) ==
		    MAP_FAILED)
			return -1;
	for (int i = 0; i < THREADS; i++) {
		pthread_t t;
		pthread_attr_t at;

		pthread_attr_init(&at);
		pthread_attr_setstacksize(&at, 64 * 1024);
		if (pthread_create(&t, &at, idle, (void *)(intptr_t)hold))
			return -1;
		pthread_attr_destroy(&at);
	}
	return 0;
}

static void start(struct child *c, size_t many)
{
	int ready[2], go[2];
	char path[64], b;

	assert_int_equal(pipe2(ready, O_CLOEXEC), 0);
	assert_int_equal(pipe2(go, O_CLOEXEC), 0);
	c->pid = fork();
	assert_true(c->pid >= 0);
	if (c->pid == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		close(ready[0]);
		close(go[1]);
		b = child_maps(many, go[0]) ? 'e' : 'r';
		if (write(ready[1], &b, 1) != 1 || b != 'r')
			_exit(1);
		idle((void *)(intptr_t)go[0]);
		_exit(0);
	}
	close(ready[1]);
	close(go[0]);
	c->go = go[1];
	assert_int_equal(read(ready[0], &b, 1), 1);
	close(ready[0]);
	assert_int_equal(b, 'r');
	snprintf(path, sizeof(path), "/proc/%d", (int)c->pid);
	c->dirfd = open(path, O_PATH | O_DIRECTORY | O_CLOEXEC);
	assert_true(c->dirfd >= 0);
}

static void stop(struct child *c)
{
	int st;

	close(c->go);
	close(c->dirfd);
	assert_int_equal(waitpid(c->pid, &st, 0), c->pid);
	assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
}

/* The kernel answers PROCMAP_QUERY, or the test is skipped. */
static bool have_query(void)
{
	struct ctp_maps m = {0};
	int dirfd = open("/proc/self", O_PATH | O_DIRECTORY | O_CLOEXEC);
	int r = ctp_maps_query(&m, dirfd);

	close(dirfd);
	ctp_maps_free(&m);
	if (r == -ENOTTY || r == -EINVAL)
		return false;
	assert_int_equal(r, 0);
	return true;
}

#define NEED_QUERY()                                                           \
	do {                                                                   \
		if (!have_query()) {                                           \
			print_message("[ SKIPPED  ] no PROCMAP_QUERY (Linux "  \
				      "6.11+)\n");                             \
			exit(77);                                              \
		}                                                              \
	} while (0)

static size_t count_path(const struct ctp_maps *m, const char *suffix)
{
	size_t n = 0, sl = strlen(suffix);

	for (size_t i = 0; i < m->n; i++)
		if (m->v[i].path_len >= sl &&
		    !memcmp(m->v[i].path + m->v[i].path_len - sl, suffix, sl))
			n++;
	return n;
}

/* A child with `many` more mappings, its mappings from the text into *t
 * and through the ioctl into *q, equal. */
static void start_both(struct child *c, size_t many, struct ctp_maps *t,
		       struct ctp_maps *q)
{
	NEED_QUERY();
	start(c, many);
	assert_int_equal(ctp_maps_read(t, c->dirfd), 0);
	assert_int_equal(ctp_maps_query(q, c->dirfd), 0);
	same_maps(q, t);
}

/* The child's mappings through the ioctl equal the text's, and hold what
 * the child mapped. */
static void live_query_as_text(void **state)
{
	struct ctp_maps t = {0}, q = {0};
	struct child c;

	(void)state;
	start_both(&c, 0, &t, &q);
	assert_int_equal(count_path(&q, "/twice"), 2);
	assert_int_equal(count_path(&q, "/gone (deleted)"), 1);
	assert_int_equal(count_path(&q, "/new\\012line"), 1);
	assert_int_equal(count_path(&q, "/a space"), 1);
	/* The file mapped twice: its offset-0 mapping (ctp_maps_bias's) not
	 * executable, the other one executable. */
	for (size_t i = 0; i < q.n; i++) {
		const struct ctp_map *v = &q.v[i];

		if (v->path_len > 6 &&
		    !memcmp(v->path + v->path_len - 6, "/twice", 6))
			assert_true(v->offset == 0
					    ? !v->exec
					    : v->exec && v->offset == 8192);
	}
	stop(&c);
	ctp_maps_free(&t);
	ctp_maps_free(&q);
}

/* 50,000 file mappings (the core's bound on a file refuses their text):
 * the ioctl's walk takes them all, the same as the text, and keeps their
 * one name once. */
static void live_many_mappings(void **state)
{
	struct ctp_maps t = {0}, q = {0};
	struct child c;

	(void)state;
	start_both(&c, 50000, &t, &q);
	assert_true(count_path(&q, "/a space") == 50001);
	print_message("[ INFO     ] %zu file mappings, %zu bytes of names in "
		      "a buffer of %zu; the text %zu bytes\n",
		      q.n, q.len, q.cap, t.cap);
	assert_true(q.cap <= 65536);
	stop(&c);
	ctp_maps_free(&t);
	ctp_maps_free(&q);
}

/* No memory, no mappings (maps' text is empty): a zombie, a kernel
 * thread. */
static void live_no_memory(void **state)
{
	struct ctp_maps t = {0}, q = {0};
	siginfo_t si;
	pid_t p;
	int dirfd;
	char path[64];

	(void)state;
	NEED_QUERY();
	p = fork();
	assert_true(p >= 0);
	if (p == 0)
		_exit(0);
	assert_int_equal(waitid(P_PID, (id_t)p, &si, WEXITED | WNOWAIT), 0);
	snprintf(path, sizeof(path), "/proc/%d", (int)p);
	dirfd = open(path, O_PATH | O_DIRECTORY | O_CLOEXEC);
	assert_true(dirfd >= 0);
	assert_int_equal(ctp_maps_read(&t, dirfd), 0);
	assert_int_equal(ctp_maps_query(&q, dirfd), 0);
	assert_int_equal(t.n, 0);
	assert_int_equal(q.n, 0);
	close(dirfd);
	assert_int_equal(waitpid(p, NULL, 0), p);

	dirfd = open("/proc/2", O_PATH | O_DIRECTORY | O_CLOEXEC);
	assert_true(dirfd >= 0);
	assert_int_equal(ctp_maps_read(&t, dirfd), 0);
	assert_int_equal(ctp_maps_query(&q, dirfd), 0);
	assert_int_equal(t.n, 0);
	assert_int_equal(q.n, 0);
	close(dirfd);
	ctp_maps_free(&t);
	ctp_maps_free(&q);
}

/* ---- ctp_proc_find's source ---------------------------------------------- */

struct fake_task {
	struct ctp_task task;
	char *text; /* the maps text, once fetched */
	int gets;
};

/* The core's file_get for the declared "?+maps": the text, read once. */
static int fake_file_get(const struct ctp_task *task, uint32_t i,
			 const struct ctp_file **out)
{
	struct fake_task *ft = (struct fake_task *)task;
	static struct ctp_file f;
	struct ctp_maps m = {0};

	if (i != 0)
		return -EINVAL;
	ft->gets++;
	if (!ft->text) {
		if (ctp_maps_read(&m, task->dirfd))
			return -EIO;
		ft->text = m.buf;
		free(m.v);
	}
	f = (struct ctp_file){.data = ft->text, .len = strlen(ft->text)};
	*out = &f;
	return 0;
}

static void probe(void *arg, int fd, const char *path, void *out)
{
	(void)arg;
	(void)fd;
	(void)path;
	(void)out;
}

static int verdict(const void *answer, int *tag)
{
	(void)answer;
	(void)tag;
	return 0;
}

/* ctp_proc_find on the child: its maps equal to the text's; the number of
 * times it fetched the core's text. */
static int find(const struct child *c, struct ctp_maps *maps)
{
	static struct ctp_api api = {.file_get = fake_file_get};
	struct ctp_file_cache files;
	struct ctp_ident_cache idents;
	struct ctp_proc_found pf;
	struct ctp_maps t = {0};
	struct fake_task ft = {.task = {.tgid = c->pid,
					.tid = c->pid,
					.dirfd = c->dirfd,
					.proc_fd = -1,
					.n_files = 1}};
	const struct ctp_proc_scan s = {.files = &files,
					.idents = &idents,
					.probe = probe,
					.verdict = verdict,
					.api = &api,
					.maps_file = 0};

	ctp_file_cache_init(&files, 8);
	ctp_ident_cache_init(&idents);
	assert_int_equal(ctp_proc_find(&s, maps, &ft.task, &pf), 0);
	assert_int_equal(ctp_maps_read(&t, c->dirfd), 0);
	same_maps(maps, &t);
	ctp_maps_free(&t);
	ctp_file_cache_fini(&files);
	ctp_ident_cache_fini(&idents);
	free(ft.text);
	return ft.gets;
}

/* A filter on ioctl(_, PROCMAP_QUERY, _): `action` for it, the rest
 * allowed. */
static int filter_query(uint32_t action)
{
#if defined(__x86_64__)
	const uint32_t arch = AUDIT_ARCH_X86_64;
#elif defined(__aarch64__)
	const uint32_t arch = AUDIT_ARCH_AARCH64;
#else
	return -ENOTSUP;
#endif
	struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
			 offsetof(struct seccomp_data, arch)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, arch, 0, 5),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
			 offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_ioctl, 0, 3),
		/* The request's low 32 bits (little-endian), as the kernel
		 * compares an unsigned int. */
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
			 offsetof(struct seccomp_data, args[1])),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (uint32_t)CTP_PROCMAP_QUERY,
			 0, 1),
		BPF_STMT(BPF_RET | BPF_K, action),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = {.len = sizeof(f) / sizeof(f[0]), .filter = f};

	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 ||
	    prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) < 0)
		return -errno;
	return 0;
}

/* fn in a forked process (procelf's choice, once made, stays with the
 * process that made it): its exit status. */
static int in_fork(int (*fn)(const struct child *), const struct child *c)
{
	int st;
	pid_t p = fork();

	assert_true(p >= 0);
	if (p == 0)
		_exit(fn(c));
	assert_int_equal(waitpid(p, &st, 0), p);
	if (WIFSIGNALED(st))
		return 128 + WTERMSIG(st);
	return WEXITSTATUS(st);
}

/* The ioctl serves: the core's text is never fetched. */
static int find_query(const struct child *c)
{
	struct ctp_maps m = {0};
	int gets = find(c, &m);

	ctp_maps_free(&m);
	return gets == 0 ? 0 : 10 + gets;
}

/* CTP_PROCELF_MAPS=text: the core's text, and no ioctl (one would kill
 * the process). */
static int find_text_env(const struct child *c)
{
	struct ctp_maps m = {0};
	int gets;

	setenv("CTP_PROCELF_MAPS", "text", 1);
	if (filter_query(SECCOMP_RET_KILL_PROCESS))
		return 2;
	gets = find(c, &m);
	ctp_maps_free(&m);
	return gets == 1 ? 0 : 10 + gets;
}

/* The kernel answers ENOTTY: the text, and from then on no ioctl. */
static int find_enotty(const struct child *c)
{
	struct ctp_maps m = {0};
	int a, b;

	if (filter_query(SECCOMP_RET_ERRNO | ENOTTY))
		return 2;
	a = find(c, &m);
	if (filter_query(SECCOMP_RET_KILL_PROCESS))
		return 3;
	b = find(c, &m);
	ctp_maps_free(&m);
	return a == 1 && b == 1 ? 0 : 10 + a * 4 + b;
}

static void proc_find_source(void **state)
{
	struct child c;

	(void)state;
	NEED_QUERY();
	start(&c, 0);
	assert_int_equal(in_fork(find_query, &c), 0);
	assert_int_equal(in_fork(find_text_env, &c), 0);
	assert_int_equal(in_fork(find_enotty, &c), 0);
	stop(&c);
}

static int setup(void **state)
{
	(void)state;
	return mkdtemp(tmp) ? 0 : -1;
}

static int teardown(void **state)
{
	const char *names[] = {"twice", "new\nline", "a space"};
	char path[PATH_MAX];

	(void)state;
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		snprintf(path, sizeof(path), "%s/%s", tmp, names[i]);
		unlink(path);
	}
	return rmdir(tmp);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(query_as_text),
		cmocka_unit_test(query_growth),
		cmocka_unit_test(live_query_as_text),
		cmocka_unit_test(live_many_mappings),
		cmocka_unit_test(live_no_memory),
		cmocka_unit_test(proc_find_source),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
