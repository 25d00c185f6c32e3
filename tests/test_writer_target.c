/* SPDX-License-Identifier: MIT */
/*
 * Where the writer puts a snapshot (core/snapshot/writer.c): a regular file or
 * a new name gets a file that has no name until it is complete (O_TMPFILE, then
 * linked in or renamed over the target); a character device, FIFO or an
 * inherited descriptor is written straight and never replaced; a
 * directory, socket or block device is refused with a clear message.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "e2e_util.h"
#include "model.h"
#include "reader.h"
#include "snapbuild.h"
#include "writer.h"

static char tmpdir[PATH_MAX];

/* A capture of n threads (in processes of 100) with one counter each. */
static struct ctp_capture *build(uint32_t n)
{
	struct ctp_capture *cap = sb_capture("t");
	static const struct ctp_field_desc d = {
		"t.v",	      "a number",     CTP_SCOPE_THREAD,
		CTP_TYPE_U64, CTP_UNIT_COUNT, CTP_KIND_COUNTER,
		CTP_RULE_SUM};
	int fid = ctp_registry_add(&cap->reg, 0, &d);
	assert_true(fid >= 0);
	for (uint32_t i = 0; i < n; i++) {
		if (i % 100 == 0)
			sb_process(cap, 1000 + i, "proc");
		uint32_t row = sb_thread(cap, 1000 + i, "thread", -1);
		sb_put_u64(cap, &cap->threads[0], row, CTP_THREAD_IDENT, fid,
			   (uint64_t)i * 2654435761u);
	}
	return cap;
}

/* The snapshot in file `path` opens and holds n threads. */
static void assert_snapshot(const char *path, size_t n)
{
	struct ctp_snap *s = NULL;
	char err[512];
	if (ctp_snap_open(path, 1ull << 30, &s, err, sizeof(err)) < 0)
		fail_msg("%s: %s", path, err);
	assert_int_equal(ctp_snap_table(s, CTP_SCOPE_THREAD)->rows, n);
	ctp_snap_free(s);
}

static void case_dir(char *out, size_t len, const char *what)
{
	assert_true((size_t)snprintf(out, len, "%s/%s", tmpdir, what) < len);
	assert_int_equal(mkdir(out, 0700), 0);
}

static size_t entries(const char *dir)
{
	size_t n = 0;
	assert_int_equal(e2e_count_entries(dir, &n), 0);
	return n;
}

/* A FIFO is written into (a reader gets the snapshot), and stays a FIFO. */
static void test_fifo(void **unused)
{
	(void)unused;
	char dir[PATH_MAX], fifo[PATH_MAX + 8], copy[PATH_MAX + 8], err[512];
	case_dir(dir, sizeof(dir), "fifo");
	snprintf(fifo, sizeof(fifo), "%s/pipe", dir);
	snprintf(copy, sizeof(copy), "%s/copy", dir);
	assert_int_equal(mkfifo(fifo, 0600), 0);
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		/* The reader: everything from the FIFO into copy. */
		int in = open(fifo, O_RDONLY), out = creat(copy, 0600);
		char buf[4096];
		ssize_t n;
		if (in < 0 || out < 0)
			_exit(1);
		while ((n = read(in, buf, sizeof(buf))) > 0)
			if (write(out, buf, (size_t)n) != n)
				_exit(1);
		_exit(n < 0);
	}
	struct ctp_capture *cap = build(300);
	int r = ctp_writer_write(cap, fifo, 3, "t", NULL, NULL, err,
				 sizeof(err));
	if (r < 0)
		fail_msg("%s", err);
	struct stat sb;
	assert_int_equal(lstat(fifo, &sb), 0);
	if (!S_ISFIFO(sb.st_mode)) {
		/* Replaced: the reader would wait for a writer forever. */
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
		fail_msg("the FIFO was replaced by a file of mode 0%o",
			 (unsigned)sb.st_mode);
	}
	int st;
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	assert_snapshot(copy, 300);
	assert_int_equal(entries(dir), 2);
	ctp_capture_free(cap);
}

/* A character device (a private /dev/null) is written into, not replaced. */
static void test_char_device(void **unused)
{
	(void)unused;
	char dir[PATH_MAX], dev[PATH_MAX + 8], err[512];
	case_dir(dir, sizeof(dir), "chardev");
	snprintf(dev, sizeof(dev), "%s/null", dir);
	if (mknod(dev, S_IFCHR | 0666, makedev(1, 3)) < 0)
		skip(); /* not root, or no device nodes on this filesystem */
	struct ctp_capture *cap = build(10);
	uint64_t bytes = 0;
	int r = ctp_writer_write(cap, dev, 3, "t", NULL, &bytes, err,
				 sizeof(err));
	if (r < 0)
		fail_msg("%s", err);
	assert_true(bytes > 0);
	struct stat sb;
	assert_int_equal(lstat(dev, &sb), 0);
	assert_true(S_ISCHR(sb.st_mode));
	assert_int_equal(sb.st_rdev, makedev(1, 3));
	assert_int_equal(entries(dir), 1);
	ctp_capture_free(cap);
}

/* /proc/self/fd/N writes into descriptor N, whatever file is behind it. */
static void test_inherited_fd(void **unused)
{
	(void)unused;
	char dir[PATH_MAX], file[PATH_MAX + 8], fdpath[64], err[512];
	case_dir(dir, sizeof(dir), "fd");
	snprintf(file, sizeof(file), "%s/behind", dir);
	int fd = open(file, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	assert_true(fd >= 0);
	snprintf(fdpath, sizeof(fdpath), "/proc/self/fd/%d", fd);
	struct ctp_capture *cap = build(20);
	int r = ctp_writer_write(cap, fdpath, 3, "t", NULL, NULL, err,
				 sizeof(err));
	if (r < 0)
		fail_msg("%s", err);
	assert_int_equal(close(fd), 0);
	assert_snapshot(file, 20);
	assert_int_equal(entries(dir), 1);
	ctp_capture_free(cap);
}

/* What cannot take a snapshot is refused by kind, and left alone. */
static void test_refused(void **unused)
{
	(void)unused;
	char dir[PATH_MAX], sub[PATH_MAX + 8], sock[PATH_MAX + 8], err[512];
	case_dir(dir, sizeof(dir), "refused");
	snprintf(sub, sizeof(sub), "%s/adir", dir);
	assert_int_equal(mkdir(sub, 0700), 0);
	struct ctp_capture *cap = build(5);
	int r = ctp_writer_write(cap, sub, 3, "t", NULL, NULL, err,
				 sizeof(err));
	assert_int_equal(r, -EEXIST);
	assert_non_null(strstr(err, "a directory: refusing to replace it"));

	snprintf(sock, sizeof(sock), "%s/sock", dir);
	int s = socket(AF_UNIX, SOCK_STREAM, 0);
	assert_true(s >= 0);
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	assert_true(strlen(sock) < sizeof(sa.sun_path));
	strcpy(sa.sun_path, sock);
	assert_int_equal(bind(s, (struct sockaddr *)&sa, sizeof(sa)), 0);
	r = ctp_writer_write(cap, sock, 3, "t", NULL, NULL, err, sizeof(err));
	assert_true(r < 0);
	assert_non_null(strstr(err, "socket"));
	struct stat sb;
	assert_int_equal(lstat(sock, &sb), 0);
	assert_true(S_ISSOCK(sb.st_mode));
	close(s);
	/* Only what the test made: nothing of the writer's. */
	assert_int_equal(entries(dir), 2);
	ctp_capture_free(cap);
}

struct watch {
	const char *dir;
	const char *final;
	off_t complete; /* the size of the finished file */
	atomic_bool done;
	atomic_uint strays;  /* entries seen other than the final name */
	atomic_uint partial; /* of those, not (yet) of the complete size */
	atomic_uint scans;
	char stray[256];
};

static void *watcher(void *arg)
{
	struct watch *w = arg;
	while (!atomic_load(&w->done)) {
		DIR *d = opendir(w->dir);
		if (!d)
			continue;
		struct dirent *e;
		while ((e = readdir(d))) {
			if (!strcmp(e->d_name, ".") ||
			    !strcmp(e->d_name, "..") ||
			    !strcmp(e->d_name, w->final))
				continue;
			struct stat sb;
			atomic_fetch_add(&w->strays, 1);
			if (fstatat(dirfd(d), e->d_name, &sb,
				    AT_SYMLINK_NOFOLLOW) == 0 &&
			    sb.st_size != w->complete &&
			    atomic_fetch_add(&w->partial, 1) == 0)
				snprintf(w->stray, sizeof(w->stray), "%s",
					 e->d_name);
		}
		closedir(d);
		atomic_fetch_add(&w->scans, 1);
	}
	return NULL;
}

/*
 * While a snapshot is written, no incomplete file is ever named in the
 * directory: a SIGKILL at any point leaves no partial file behind. Checked
 * by a thread listing the directory throughout a slow (level 19) write. To
 * a new name nothing else is ever named; over an existing file a temporary
 * name may appear only for the instant between linking the complete file
 * and renaming it over the target (Linux has no link-and-replace).
 */
static void test_nameless_while_writing(void **unused)
{
	(void)unused;
	char dir[PATH_MAX], path[PATH_MAX + 16], err[512];
	case_dir(dir, sizeof(dir), "nameless");
	snprintf(path, sizeof(path), "%s/out.ctprof.zst", dir);
	struct ctp_capture *cap = build(60000);
	/* The complete size, from a write elsewhere. */
	char ref[PATH_MAX + 16];
	snprintf(ref, sizeof(ref), "%s/ref", tmpdir);
	assert_int_equal(ctp_writer_write(cap, ref, 19, "t", NULL, NULL, err,
					  sizeof(err)),
			 0);
	struct stat rs;
	assert_int_equal(stat(ref, &rs), 0);
	off_t complete = rs.st_size;
	unlink(ref);
	for (int round = 0; round < 2; round++) {
		struct watch w = {.dir = dir,
				  .final = "out.ctprof.zst",
				  .complete = complete};
		pthread_t th;
		assert_int_equal(pthread_create(&th, NULL, watcher, &w), 0);
		while (atomic_load(&w.scans) < 2)
			;
		int r = ctp_writer_write(cap, path, 19, "t", NULL, NULL, err,
					 sizeof(err));
		atomic_store(&w.done, true);
		pthread_join(th, NULL);
		if (r < 0)
			fail_msg("%s", err);
		if (atomic_load(&w.partial) || (round == 0 && w.strays))
			fail_msg("round %d: '%s' was named in the directory "
				 "during the write (%u sightings, %u of an "
				 "incomplete file, in %u scans)",
				 round, w.stray, atomic_load(&w.strays),
				 atomic_load(&w.partial),
				 atomic_load(&w.scans));
		assert_int_equal(entries(dir), 1);
		assert_snapshot(path, 60000);
		struct stat sb;
		assert_int_equal(stat(path, &sb), 0);
		assert_int_equal(sb.st_mode & 07777, 0640);
	}
	ctp_capture_free(cap);
}

/*
 * In a private mount namespace with its own /dev (so a regression cannot
 * replace this host's /dev/stdout): run the binary with -o /dev/stdout,
 * stdout a file. Exits 0 when the run succeeded and /dev/stdout is still
 * the symbolic link, 10 + step on a failed step.
 */
static int dev_stdout_child(const char *cfg, const char *out, const char *log)
{
	if (unshare(CLONE_NEWNS) < 0)
		return 77;
	if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0 ||
	    mount("tmpfs", "/dev", "tmpfs", 0, "mode=0755") < 0 ||
	    symlink("/proc/self/fd/1", "/dev/stdout") < 0 ||
	    mknod("/dev/null", S_IFCHR | 0666, makedev(1, 3)) < 0)
		return 11;
	const char *args[] = {"--config", cfg, "-o", "/dev/stdout", NULL};
	if (e2e_run(args, out, log) != 0)
		return 12;
	struct stat sb;
	if (lstat("/dev/stdout", &sb) < 0 || !S_ISLNK(sb.st_mode))
		return 13;
	return 0;
}

/* The real binary: -o /dev/stdout writes into whatever stdout is (here a
 * file the shell would have opened), and leaves /dev/stdout alone. */
static void test_binary_dev_stdout(void **unused)
{
	(void)unused;
	char dir[PATH_MAX], cfg[PATH_MAX + 8], out[PATH_MAX + 8],
		log[PATH_MAX + 8];
	case_dir(dir, sizeof(dir), "stdout");
	snprintf(cfg, sizeof(cfg), "%s/c.yaml", dir);
	snprintf(out, sizeof(out), "%s/out", dir);
	snprintf(log, sizeof(log), "%s/log", dir);
	struct e2e_cfg c = {.proc = CTP_TEST_FIXTURES "/proc",
			    .sys = CTP_TEST_FIXTURES "/sys",
			    .cgroup = CTP_TEST_FIXTURES "/cgroup",
			    .workers = 1};
	assert_int_equal(e2e_write_config(cfg, &c), 0);
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0)
		_exit(dev_stdout_child(cfg, out, log));
	int st;
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(WIFEXITED(st));
	if (WEXITSTATUS(st) == 77)
		skip(); /* no private mount namespace (not root) */
	if (WEXITSTATUS(st) != 0) {
		e2e_show_file("stderr", log);
		fail_msg("step %d failed", WEXITSTATUS(st) - 10);
	}
	struct ctp_snap *s = NULL;
	char err[512];
	if (ctp_snap_open(out, 1ull << 30, &s, err, sizeof(err)) < 0)
		fail_msg("%s", err);
	assert_true(ctp_snap_table(s, CTP_SCOPE_THREAD)->rows > 0);
	ctp_snap_free(s);
}

static int setup(void **state)
{
	(void)state;
	return e2e_tmpdir("writer-target", tmpdir, sizeof(tmpdir));
}

static int teardown(void **state)
{
	(void)state;
	return e2e_rm_rf(tmpdir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fifo),
		cmocka_unit_test(test_char_device),
		cmocka_unit_test(test_inherited_fd),
		cmocka_unit_test(test_refused),
		cmocka_unit_test(test_nameless_while_writing),
		cmocka_unit_test(test_binary_dev_stdout),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
