/* SPDX-License-Identifier: MIT */
/*
 * `record` when the disk refuses (issue 28, docs/RECORD.md "Write
 * failures"), on small tmpfs mounts in a mount namespace of the test's own
 * (root only: exits 77 where it cannot mount), the whole test directory
 * a tmpfs of its own:
 * - a full disk with retention set: the recorder removes its oldest files
 *   to make room and goes on, never another file;
 * - a full disk without retention: nothing removed, --count ends it after N
 *   captures, exit 1, the cause said once and counted;
 * - a read-only filesystem: the same with --count; without it the
 *   recording ends after 10 failures in a row (exit 1).
 * Every run is bounded (a recorder that loops forever fails the test).
 */
#include <errno.h>
#include <limits.h>
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "e2e_util.h"

#define FIX_PROC CTP_TEST_FIXTURES "/proc"
#define FIX_SYS	 CTP_TEST_FIXTURES "/sys"
/* A recorder that has not ended by then never will (each run here takes
 * a few seconds). */
#define LIMIT_S 120

static char tmpdir[PATH_MAX], cfg[PATH_MAX], snap[PATH_MAX];

static unsigned count(const char *text, const char *needle)
{
	unsigned n = 0;
	for (const char *p = text; (p = strstr(p, needle)); p++)
		n++;
	return n;
}

/* Run record with args after `--config cfg -o dir`; its stderr in *log. */
static int record(const char *dir, const char *const *more, char **log)
{
	const char *args[24] = {"record", "--config", cfg, "-o", dir};
	size_t n = 5, len;
	char lp[PATH_MAX];
	for (; *more && n < 23; more++)
		args[n++] = *more;
	args[n] = NULL;
	assert_int_equal(E2E_PATHF(lp, "%s/log", tmpdir), 0);
	int rc = e2e_run_within(args, NULL, lp, LIMIT_S);
	assert_int_equal(e2e_read_file(lp, log, &len), 0);
	if (rc == -ETIME)
		fail_msg("record still running after %d s:\n%s", LIMIT_S, *log);
	return rc;
}

/* A tmpfs of `kib` KiB at tmpdir/tag with an empty rec/ in it; the mount
 * point into mnt, rec/ into rec. */
static void mount_tmpfs(const char *tag, unsigned kib, char *mnt, char *rec)
{
	char opt[32];
	assert_int_equal(e2e_pathf(mnt, PATH_MAX, "%s/%s", tmpdir, tag), 0);
	assert_int_equal(e2e_pathf(rec, PATH_MAX, "%s/rec", mnt), 0);
	assert_int_equal(mkdir(mnt, 0700), 0);
	snprintf(opt, sizeof(opt), "size=%uk", kib);
	assert_int_equal(mount("tmpfs", mnt, "tmpfs", 0, opt), 0);
	assert_int_equal(mkdir(rec, 0750), 0);
}

/* Write zeros to path until the filesystem is full; its size. */
static off_t fill(const char *path)
{
	static const char zero[4096];
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	setvbuf(f, NULL, _IONBF, 0);
	while (fwrite(zero, 1, sizeof(zero), f) == sizeof(zero))
		;
	fclose(f);
	struct stat st;
	assert_int_equal(stat(path, &st), 0);
	return st.st_size;
}

static unsigned entries(const char *dir)
{
	size_t n = 0;
	assert_int_equal(e2e_count_entries(dir, &n), 0);
	return (unsigned)n;
}

/* A full disk with --keep: the recording's old files make room, one per
 * capture here; the filler (not the recorder's) stays whole. */
static void test_full_disk_room(void **state)
{
	(void)state;
	char mnt[PATH_MAX], rec[PATH_MAX], p[PATH_MAX], filler[PATH_MAX], *log;
	mount_tmpfs("room", 64, mnt, rec);
	for (int i = 0; i < 3; i++) {
		assert_int_equal(
			E2E_PATHF(p,
				  "%s/ctprof-20010101T00000%d.000Z.ctprof.zst",
				  rec, i),
			0);
		assert_int_equal(e2e_copy_file(snap, p), 0);
	}
	assert_int_equal(E2E_PATHF(filler, "%s/filler", mnt), 0);
	off_t size = fill(filler);
	const char *more[] = {"--interval", "200ms", "--count", "3",
			      "--keep",	    "10",    NULL};
	int rc = record(rec, more, &log);
	if (rc != 0)
		fail_msg("exit %d:\n%s", rc, log);
	assert_non_null(strstr(log, "record: 3 snapshot(s) in "));
	unsigned made = count(log, " to make room");
	if (made < 1 || made > 3)
		fail_msg("%u files removed to make room:\n%s", made, log);
	free(log);
	struct stat st;
	assert_int_equal(stat(filler, &st), 0);
	assert_int_equal(st.st_size, size);
	assert_int_equal(entries(rec), 3 + 3 - made);
	assert_int_equal(umount(mnt), 0);
}

/* A full disk without retention: nothing of the directory is removed;
 * --count 3 counts the three attempts and ends, exit 1, the cause said once
 * with how many captures were lost. */
static void test_full_disk_no_retention(void **state)
{
	(void)state;
	char mnt[PATH_MAX], rec[PATH_MAX], p[PATH_MAX], *log;
	mount_tmpfs("full", 64, mnt, rec);
	assert_int_equal(
		E2E_PATHF(p, "%s/ctprof-20010101T000000.000Z.ctprof.zst", rec),
		0);
	assert_int_equal(e2e_copy_file(snap, p), 0);
	assert_int_equal(E2E_PATHF(p, "%s/filler", mnt), 0);
	fill(p);
	const char *more[] = {"--interval", "200ms", "--count", "3", NULL};
	int rc = record(rec, more, &log);
	if (rc != 1 ||
	    count(log, "No space left on device; no snapshot") != 1 ||
	    !strstr(log, "record: 0 snapshot(s) in ") ||
	    !strstr(log, "; 3 capture(s) not written (last: "))
		fail_msg("exit %d:\n%s", rc, log);
	free(log);
	assert_int_equal(entries(rec), 1);
	assert_int_equal(umount(mnt), 0);
}

/* A read-only filesystem: --count 3 ends (it looped before), exit 1, one
 * error line and the count; without --count the recording gives up after
 * 10 failures in a row. */
static void test_read_only(void **state)
{
	(void)state;
	char mnt[PATH_MAX], rec[PATH_MAX], *log;
	mount_tmpfs("ro", 64, mnt, rec);
	assert_int_equal(mount(NULL, mnt, NULL, MS_REMOUNT | MS_RDONLY, NULL),
			 0);
	const char *more[] = {"--interval", "100ms", "--count", "3", NULL};
	int rc = record(rec, more, &log);
	if (rc != 1 ||
	    count(log, "Read-only file system; no snapshot this interval") !=
		    1 ||
	    !strstr(log, "record: 0 snapshot(s) in ") ||
	    !strstr(log, "; 3 capture(s) not written (last: "))
		fail_msg("exit %d:\n%s", rc, log);
	free(log);
	const char *forever[] = {"--interval", "100ms", NULL};
	rc = record(rec, forever, &log);
	if (rc != 1 || count(log, "no snapshot this interval") != 1 ||
	    !strstr(log, "giving up: 10 captures in a row could not be "
			 "written (") ||
	    !strstr(log, "; 10 capture(s) not written"))
		fail_msg("exit %d:\n%s", rc, log);
	free(log);
	assert_int_equal(umount(mnt), 0);
}

/* The config, and one snapshot of the fixture to seed recordings with. */
static int setup(void **state)
{
	(void)state;
	char yaml[4 * PATH_MAX];
	if (E2E_PATHF(cfg, "%s/c.yaml", tmpdir) < 0 ||
	    E2E_PATHF(snap, "%s/seed.ctprof.zst", tmpdir) < 0)
		return -1;
	int n = snprintf(yaml, sizeof(yaml),
			 "plugin_dirs: [\"%s\"]\n"
			 "roots: {proc: \"%s\", sys: \"%s\"}\n"
			 "plugins:\n"
			 "  procfs-stat: {options: {affinity: status}}\n",
			 CTP_TEST_PLUGIN_DIR, FIX_PROC, FIX_SYS);
	if (n < 0 || (size_t)n >= sizeof(yaml) ||
	    e2e_write_file(cfg, yaml, (size_t)n) < 0)
		return -1;
	const char *args[] = {"--config", cfg, "-o", snap, NULL};
	char lp[PATH_MAX];
	if (E2E_PATHF(lp, "%s/seed.log", tmpdir) < 0 ||
	    e2e_run(args, NULL, lp) != 0) {
		e2e_show_file("seed capture", lp);
		return -1;
	}
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	/* tmpdir is a tmpfs of this namespace: gone with it. */
	umount2(tmpdir, MNT_DETACH);
	rmdir(tmpdir);
	return 0;
}

int main(void)
{
	/* Mounts of our own, gone with this process. */
	if (e2e_tmpdir("record-fs", tmpdir, sizeof(tmpdir)) < 0)
		return 1;
	if (unshare(CLONE_NEWNS) < 0 ||
	    mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0 ||
	    mount("tmpfs", tmpdir, "tmpfs", 0, "size=4m") < 0) {
		printf("SKIP: no tmpfs mount of our own (%s); needs root\n",
		       strerror(errno));
		e2e_rm_rf(tmpdir);
		return 77;
	}
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_full_disk_room),
		cmocka_unit_test(test_full_disk_no_retention),
		cmocka_unit_test(test_read_only),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
