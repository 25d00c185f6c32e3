// SPDX-License-Identifier: MIT
/*
 * The files jemalloc-probe opens for a file it probes (issue 28 point 1):
 * the file, the debug file its .gnu_debuglink names, the dwz alt file its
 * DWARF names. Each sits where the probed process's user puts what it
 * likes: a FIFO there, or a link to /dev/zero, must not block the probe
 * nor keep it reading (each probe runs in a child killed after 60 s,
 * which fails the test); the real file there is still read.
 *
 * The library probed is tests/jep_tsd.c (a TSD TLS symbol and a tsd_s,
 * built with -g), made into each case here with objcopy, strip and dwz;
 * the dwz cases are skipped without dwz.
 *
 * And a file its owner can shrink while libelf maps it (ctp_foreign_open):
 * read from a sealed copy, so a page past the truncated end is no SIGBUS;
 * a file only root can write is read in place.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "jep.h"
#include "procelf.h"

static char tmp[] = "/tmp/ctp-jep-files-XXXXXX";

/* Run a shell command line; its exit status. */
static int sh(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int sh(const char *fmt, ...)
{
	char cmd[8192];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	int st = system(cmd);
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* ctp_jep_file_probe of path in a child, which is killed when it takes
 * more than 60 s: its return value, with *out. */
static int probe(const char *path, struct ctp_jep_file *out)
{
	struct {
		int r;
		struct ctp_jep_file f;
	} res = {.r = -EIO};
	int p[2], st;
	pid_t pid;

	assert_int_equal(pipe(p), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		close(p[0]);
		alarm(60);
		res.r = ctp_jep_file_probe(path, &res.f);
		_exit(write(p[1], &res, sizeof(res)) == sizeof(res) ? 0 : 1);
	}
	close(p[1]);
	ssize_t n = read(p[0], &res, sizeof(res));
	close(p[0]);
	assert_int_equal(waitpid(pid, &st, 0), pid);
	if (WIFSIGNALED(st) && WTERMSIG(st) == SIGALRM)
		fail_msg("probing %s blocked for 60 s", path);
	assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	assert_int_equal(n, (ssize_t)sizeof(res));
	*out = res.f;
	return res.r;
}

/* A FIFO named as the file: refused at once. */
static void test_fifo(void **state)
{
	char path[PATH_MAX];
	struct ctp_jep_file f;

	(void)state;
	snprintf(path, sizeof(path), "%s/fifo", tmp);
	assert_int_equal(mkfifo(path, 0600), 0);
	assert_int_equal(probe(path, &f), -EINVAL);
}

/* The DWARF in the debug file the library's .gnu_debuglink names: found
 * beside it and in .debug/ there; a FIFO, a link to /dev/zero or a file
 * of another CRC under that name is passed over. */
static void test_debuglink(void **state)
{
	struct ctp_jep_file f;
	char lib[PATH_MAX];

	(void)state;
	snprintf(lib, sizeof(lib), "%s/link/lib.so", tmp);
	assert_int_equal(sh("mkdir -p %s/link/.debug && cd %s/link && "
			    "cp '%s' lib.so && "
			    "objcopy --only-keep-debug lib.so lib.so.dbg && "
			    "strip --strip-debug lib.so && "
			    "objcopy --add-gnu-debuglink=lib.so.dbg lib.so",
			    tmp, tmp, JEP_TSD),
			 0);
	assert_int_equal(probe(lib, &f), 0);
	assert_true(f.found);
	assert_true(f.off_alloc != f.off_dealloc);
	assert_int_equal(sh("cd %s/link && mv lib.so.dbg .debug/", tmp), 0);
	assert_int_equal(probe(lib, &f), 0);
	assert_true(f.found);

	/* What the process's user may put under the name instead. */
	static const char *const bad[] = {
		"mkfifo lib.so.dbg",
		"ln -s /dev/zero lib.so.dbg",
		"cp lib.so lib.so.dbg",
	};
	assert_int_equal(sh("cd %s/link && mv .debug/lib.so.dbg keep", tmp), 0);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		assert_int_equal(
			sh("cd %s/link && rm -f lib.so.dbg && %s", tmp, bad[i]),
			0);
		assert_int_equal(probe(lib, &f), 0);
		assert_false(f.found);
		assert_int_equal(f.tag, CTP_JEP_NO_DEBUGINFO);
	}
}

/* A process in a root of its own (chroot): its library's debug file under
 * that root's /usr/lib/debug, reached through /proc/PID/root as the
 * plugin reaches a process's files. */
static void test_debuglink_root(void **state)
{
	struct ctp_jep_file f;
	char root[PATH_MAX], lib[PATH_MAX];
	int p[2];
	char c;

	(void)state;
	if (geteuid() != 0)
		skip(); /* chroot */
	snprintf(root, sizeof(root), "%s/root", tmp);
	assert_int_equal(sh("mkdir -p %s/lib %s/usr/lib/debug/lib && cd %s/lib "
			    "&& cp '%s' lib.so && "
			    "objcopy --only-keep-debug lib.so lib.so.dbg && "
			    "strip --strip-debug lib.so && "
			    "objcopy --add-gnu-debuglink=lib.so.dbg lib.so && "
			    "mv lib.so.dbg %s/usr/lib/debug/lib/",
			    root, root, root, JEP_TSD, root),
			 0);
	assert_int_equal(pipe(p), 0);
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		close(p[0]);
		if (chroot(root) < 0 || chdir("/") < 0)
			_exit(1);
		if (write(p[1], "r", 1) != 1)
			_exit(1);
		pause();
		_exit(0);
	}
	close(p[1]);
	assert_int_equal(read(p[0], &c, 1), 1);
	close(p[0]);
	snprintf(lib, sizeof(lib), "/proc/%d/root/lib/lib.so", (int)pid);
	int r = probe(lib, &f);
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	assert_int_equal(r, 0);
	assert_true(f.found);
	assert_true(f.off_alloc != f.off_dealloc);
}

/* dwz moved what the library shares with its twin into an alt file (the
 * name "tsd_s" among it): read beside the library when it is the alt
 * file the library names; a FIFO or another file there is passed over,
 * and then nothing looks for it (libdw would, by the name). */
static void test_dwz_alt(void **state)
{
	struct ctp_jep_file f;
	char lib[PATH_MAX];

	(void)state;
	if (sh("command -v dwz >/dev/null") != 0)
		skip();
	snprintf(lib, sizeof(lib), "%s/dwz/a.so", tmp);
	if (sh("mkdir -p %s/dwz && cd %s/dwz && cp '%s' a.so && "
	       "cp '%s' b.so && dwz -m common.debug -M common.debug a.so b.so",
	       tmp, tmp, JEP_TSD, JEP_TSD_TWIN) != 0) {
		print_message("dwz cannot process these libraries\n");
		skip();
	}
	assert_int_equal(sh("readelf -S %s | grep -q gnu_debugaltlink", lib),
			 0);
	assert_int_equal(probe(lib, &f), 0);
	assert_true(f.found);
	assert_true(f.off_alloc != f.off_dealloc);

	static const char *const bad[] = {
		"mkfifo common.debug",
		"ln -s /dev/zero common.debug",
		"cp b.so common.debug",
	};
	assert_int_equal(sh("cd %s/dwz && mv common.debug keep", tmp), 0);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		assert_int_equal(sh("cd %s/dwz && rm -f common.debug && %s",
				    tmp, bad[i]),
				 0);
		assert_int_equal(probe(lib, &f), 0);
		assert_false(f.found);
		assert_int_equal(f.tag, CTP_JEP_NO_TSD_LAYOUT);
	}
}

/* The library copied to tmp/NAME, owned by uid with mode, opened as a
 * file of another process; the open's result, *st the file's stat. */
static int open_as(const char *name, uid_t uid, mode_t mode, struct stat *st,
		   char *path, size_t len)
{
	snprintf(path, len, "%s/%s", tmp, name);
	assert_int_equal(sh("cp '%s' '%s'", JEP_TSD, path), 0);
	assert_int_equal(chown(path, uid, 0), 0);
	assert_int_equal(chmod(path, mode), 0);
	return ctp_foreign_open(AT_FDCWD, path, 0, 0, st);
}

/* In a child: map fd's first `size` bytes and read the last one; whether
 * the child lived (no SIGBUS). */
static bool last_page_reads(int fd, off_t size)
{
	pid_t pid = fork();
	int st;

	assert_true(pid >= 0);
	if (pid == 0) {
		signal(SIGBUS, SIG_DFL); /* not cmocka's handler */
		const volatile char *p =
			mmap(NULL, (size_t)size, PROT_READ, MAP_PRIVATE, fd, 0);
		if (p == MAP_FAILED)
			_exit(2);
		_exit(p[size - 1] == 0x7f ? 3 : 0);
	}
	assert_int_equal(waitpid(pid, &st, 0), pid);
	return WIFEXITED(st) && WEXITSTATUS(st) != 2;
}

static void test_shrunk(void **state)
{
	char path[PATH_MAX];
	struct stat st, got;
	int fd;

	(void)state;
	if (geteuid() != 0)
		skip(); /* chown */
	/* Another user's: a copy, whole, that outlives the truncation. */
	fd = open_as("users.so", 65534, 0644, &st, path, sizeof(path));
	assert_true(fd >= 0);
	assert_int_equal(fstat(fd, &got), 0);
	assert_int_not_equal(got.st_ino, st.st_ino);
	assert_int_equal(got.st_size, st.st_size);
	assert_int_equal(truncate(path, 0), 0);
	assert_true(last_page_reads(fd, st.st_size));
	close(fd);
	/* Root's but group writable: the same. */
	fd = open_as("group.so", 0, 0664, &st, path, sizeof(path));
	assert_true(fd >= 0);
	assert_int_equal(fstat(fd, &got), 0);
	assert_int_not_equal(got.st_ino, st.st_ino);
	close(fd);
	/* Root's alone: the file itself (and the SIGBUS the copy spares
	 * the others, which shows the check above can fail). */
	fd = open_as("roots.so", 0, 0644, &st, path, sizeof(path));
	assert_true(fd >= 0);
	assert_int_equal(fstat(fd, &got), 0);
	assert_int_equal(got.st_ino, st.st_ino);
	assert_int_equal(truncate(path, 0), 0);
	assert_false(last_page_reads(fd, st.st_size));
	close(fd);
}

static int setup(void **state)
{
	(void)state;
	/* Never reach out for debug information. */
	unsetenv("DEBUGINFOD_URLS");
	return mkdtemp(tmp) ? 0 : -1;
}

static int teardown(void **state)
{
	(void)state;
	sh("rm -rf '%s'", tmp);
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fifo),
		cmocka_unit_test(test_debuglink),
		cmocka_unit_test(test_debuglink_root),
		cmocka_unit_test(test_dwz_alt),
		cmocka_unit_test(test_shrunk),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
