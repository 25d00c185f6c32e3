// SPDX-License-Identifier: MIT
/*
 * Answers about files kept across runs (plugins/common/procelf.c
 * ctp_file_cache_keep/save, in a state directory of statedir.c), as
 * jemalloc-probe and appstats use them: a later run takes the answer for
 * the same file instead of probing it, probes a file whose size, times or
 * inode changed, keeps only the answers the plugin calls keepable, merges
 * what two runs wrote, and uses no state file that is not whole, sorted,
 * of this answer size and of this build, nor one that is a link or
 * another user's.
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "procelf.h"
#include "statedir.h"

struct answer {
	uint64_t probed; /* the probe's call number */
	uint64_t first;	 /* the file's first byte */
	bool keep;
};

static char dir[] = "/tmp/ctp-file-keep-XXXXXX";
static char state[64];
static unsigned probes;

static void probe(void *arg, int fd, const char *path, void *out)
{
	struct answer *a = out;
	unsigned char c = 0;

	(void)arg;
	(void)path;
	a->probed = ++probes;
	if (pread(fd, &c, 1, 0) == 1)
		a->first = c;
	a->keep = c != 'x'; /* a file starting with x: not keepable */
}

static bool keepable(const void *answer)
{
	return ((const struct answer *)answer)->keep;
}

/* Somewhere in a shared object (the build a state file is bound to). */
static const void *self(void)
{
	return (const void *)&_cmocka_run_group_tests;
}

static void put(const char *name, const char *text)
{
	char p[128];
	FILE *f;

	snprintf(p, sizeof(p), "%s/%s", dir, name);
	f = fopen(p, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

/* The answer for file `name` of dir through cache c (as a mapping of this
 * process). */
static const struct answer *get(struct ctp_file_cache *c, const char *name)
{
	static char p[128];
	struct ctp_map m = {0};
	struct stat sb;

	snprintf(p, sizeof(p), "%s/%s", dir, name);
	assert_int_equal(stat(p, &sb), 0);
	m.dev = sb.st_dev;
	m.ino = sb.st_ino;
	m.exec = true;
	m.path = p;
	m.path_len = strlen(p);
	return ctp_file_cache_get(c, getpid(), &m, probe, NULL);
}

static int keep(struct ctp_file_cache *c, char *why, size_t len)
{
	ctp_file_cache_init(c, sizeof(struct answer));
	return ctp_file_cache_keep(c, state, "test-files", keepable, self(),
				   why, len);
}

static void reset(void)
{
	char p[128];

	snprintf(p, sizeof(p), "rm -rf %s/*", dir);
	assert_int_equal(system(p), 0);
	mkdir(state, 0700);
	probes = 0;
}

static void test_round_trip(void **s)
{
	struct ctp_file_cache a, b;
	char why[512];
	(void)s;

	reset();
	put("one", "1");
	put("two", "2");
	assert_int_equal(keep(&a, why, sizeof(why)), 0);
	assert_int_equal(a.n_kept, 0);
	assert_int_equal(get(&a, "one")->first, '1');
	assert_int_equal(get(&a, "two")->first, '2');
	assert_int_equal(probes, 2);
	assert_int_equal(ctp_file_cache_save(&a), 1);
	assert_int_equal(ctp_file_cache_save(&a), 0); /* nothing new */
	ctp_file_cache_fini(&a);

	assert_int_equal(keep(&b, why, sizeof(why)), 0);
	assert_int_equal(b.n_kept, 2);
	const struct answer *x = get(&b, "one");
	assert_int_equal(x->first, '1');
	assert_int_equal(x->probed, 1); /* the first run's probe */
	assert_int_equal(probes, 2);	/* none now */
	/* A capture's end: one answer taken; nothing new to write. */
	assert_int_equal(ctp_file_cache_capture_end(&b, NULL, NULL), 1);
	assert_int_equal(ctp_file_cache_capture_end(&b, NULL, NULL), 0);
	assert_int_equal(ctp_file_cache_save(&b), 0);
	ctp_file_cache_fini(&b);
}

static void test_changed(void **s)
{
	struct ctp_file_cache a, b;
	struct timespec ts[2];
	struct stat sb;
	char why[512], p[128];
	(void)s;

	reset();
	put("one", "1");
	put("two", "2");
	put("three", "3");
	assert_int_equal(keep(&a, why, sizeof(why)), 0);
	get(&a, "one");
	get(&a, "two");
	get(&a, "three");
	assert_int_equal(ctp_file_cache_save(&a), 1);
	ctp_file_cache_fini(&a);
	/* "one": new contents, same size; "two": its times set back to what
	 * they were (the change time still moves); "three": replaced by
	 * another inode under the name. */
	snprintf(p, sizeof(p), "%s/two", dir);
	assert_int_equal(stat(p, &sb), 0);
	usleep(20000);
	put("one", "9");
	ts[0] = sb.st_atim;
	ts[1] = sb.st_mtim;
	assert_int_equal(utimensat(AT_FDCWD, p, ts, 0), 0);
	put("three.new", "3");
	snprintf(p, sizeof(p), "mv %s/three.new %s/three", dir, dir);
	assert_int_equal(system(p), 0);
	assert_int_equal(keep(&b, why, sizeof(why)), 0);
	assert_int_equal(b.n_kept, 3);
	assert_int_equal(get(&b, "one")->first, '9');
	assert_int_equal(get(&b, "two")->probed, 5);
	assert_int_equal(get(&b, "three")->probed, 6);
	assert_int_equal(probes, 6);
	ctp_file_cache_fini(&b);
}

static void test_not_keepable(void **s)
{
	struct ctp_file_cache a, b;
	char why[512];
	(void)s;

	reset();
	put("x", "x");
	assert_int_equal(keep(&a, why, sizeof(why)), 0);
	get(&a, "x");
	assert_int_equal(ctp_file_cache_save(&a), 0);
	ctp_file_cache_fini(&a);
	assert_int_equal(keep(&b, why, sizeof(why)), 0);
	assert_int_equal(b.n_kept, 0);
	get(&b, "x");
	assert_int_equal(probes, 2);
	ctp_file_cache_fini(&b);
}

static void test_merge(void **s)
{
	struct ctp_file_cache a, b, c;
	char why[512];
	(void)s;

	reset();
	put("one", "1");
	put("two", "2");
	/* Two runs side by side, each probing a file of its own. */
	assert_int_equal(keep(&a, why, sizeof(why)), 0);
	assert_int_equal(keep(&b, why, sizeof(why)), 0);
	get(&a, "one");
	get(&b, "two");
	assert_int_equal(ctp_file_cache_save(&a), 1);
	assert_int_equal(ctp_file_cache_save(&b), 1);
	ctp_file_cache_fini(&a);
	ctp_file_cache_fini(&b);
	assert_int_equal(keep(&c, why, sizeof(why)), 0);
	assert_int_equal(c.n_kept, 2);
	get(&c, "one");
	get(&c, "two");
	assert_int_equal(probes, 2);
	ctp_file_cache_fini(&c);
}

/* The state file's bytes, changed by `spoil`, then loaded: keep's return
 * and why. */
static int spoiled(void (*spoil)(unsigned char *buf, size_t *len), char *why,
		   size_t whylen)
{
	struct ctp_file_cache a, b;
	unsigned char buf[8192];
	char p[128];
	size_t len;
	FILE *f;
	int r;

	reset();
	put("one", "1");
	put("two", "2");
	assert_int_equal(keep(&a, why, whylen), 0);
	get(&a, "one");
	get(&a, "two");
	assert_int_equal(ctp_file_cache_save(&a), 1);
	ctp_file_cache_fini(&a);
	snprintf(p, sizeof(p), "%s/test-files", state);
	f = fopen(p, "r");
	assert_non_null(f);
	len = fread(buf, 1, sizeof(buf), f);
	fclose(f);
	spoil(buf, &len);
	f = fopen(p, "w");
	assert_non_null(f);
	assert_int_equal(fwrite(buf, 1, len, f), len);
	fclose(f);
	r = keep(&b, why, whylen);
	/* Not used, and the cache still answers (by probing). */
	if (r < 0) {
		assert_int_equal(b.n_kept, 0);
		assert_int_equal(get(&b, "one")->first, '1');
		assert_int_equal(probes, 3);
	}
	ctp_file_cache_fini(&b);
	return r;
}

/* Offsets in the header (procelf.c struct keep_hdr): magic 0, version 8,
 * answer size 12, count 16, the build 24. */
static void magic(unsigned char *b, size_t *len)
{
	(void)len;
	b[0] ^= 1;
}
static void version(unsigned char *b, size_t *len)
{
	(void)len;
	b[8] = 2;
}
static void size(unsigned char *b, size_t *len)
{
	(void)len;
	b[12] += 8;
}
static void count(unsigned char *b, size_t *len)
{
	(void)len;
	b[16] = 3;
}
static void huge(unsigned char *b, size_t *len)
{
	(void)len;
	b[22] = 0x10; /* 2^52 entries */
}
static void build(unsigned char *b, size_t *len)
{
	(void)len;
	b[24 + 8] ^= 1; /* the build's inode */
}
static void shorter(unsigned char *b, size_t *len)
{
	(void)b;
	*len -= 1;
}
static void unsorted(unsigned char *b, size_t *len)
{
	/* Swap the two entries (header 80 bytes, entries 56 + 24). */
	unsigned char t[80];

	(void)len;
	memcpy(t, b + 80, 80);
	memcpy(b + 80, b + 160, 80);
	memcpy(b + 160, t, 80);
}
static void intact(unsigned char *b, size_t *len)
{
	(void)b;
	(void)len;
}

static void test_hostile(void **s)
{
	char why[512];
	(void)s;

	assert_int_equal(spoiled(intact, why, sizeof(why)), 0);
	assert_int_equal(spoiled(magic, why, sizeof(why)), -EINVAL);
	assert_non_null(strstr(why, "not a file of this version"));
	assert_int_equal(spoiled(version, why, sizeof(why)), -EINVAL);
	assert_int_equal(spoiled(size, why, sizeof(why)), -EINVAL);
	assert_int_equal(spoiled(count, why, sizeof(why)), -EINVAL);
	assert_non_null(strstr(why, "its length is not its count's"));
	assert_int_equal(spoiled(huge, why, sizeof(why)), -EINVAL);
	assert_int_equal(spoiled(shorter, why, sizeof(why)), -EINVAL);
	assert_int_equal(spoiled(build, why, sizeof(why)), -ESTALE);
	assert_non_null(strstr(why, "another build"));
	assert_int_equal(spoiled(unsorted, why, sizeof(why)), -EINVAL);
	assert_non_null(strstr(why, "not sorted"));
}

static void test_not_a_file(void **s)
{
	struct ctp_file_cache a;
	char why[512], p[128], t[128];
	(void)s;

	reset();
	put("one", "1");
	/* A link to a file that would load is still refused. */
	snprintf(t, sizeof(t), "%s/elsewhere", dir);
	snprintf(p, sizeof(p), "%s/test-files", state);
	assert_int_equal(symlink(t, p), 0);
	assert_true(keep(&a, why, sizeof(why)) < 0);
	assert_int_equal(a.n_kept, 0);
	ctp_file_cache_fini(&a);
	unlink(p);
	if (geteuid() == 0) {
		put("state/test-files", "");
		assert_int_equal(chown(p, 65534, 65534), 0);
		assert_true(keep(&a, why, sizeof(why)) < 0);
		assert_non_null(strstr(why, "not a regular file of this user"));
		ctp_file_cache_fini(&a);
	}
}

static void test_off(void **s)
{
	struct ctp_file_cache a;
	char why[512];
	(void)s;

	reset();
	put("one", "1");
	ctp_file_cache_init(&a, sizeof(struct answer));
	assert_int_equal(ctp_file_cache_keep(&a, "off", "test-files", keepable,
					     self(), why, sizeof(why)),
			 -ENOENT);
	assert_string_equal(why, "off");
	get(&a, "one");
	assert_int_equal(ctp_file_cache_save(&a), 0);
	ctp_file_cache_fini(&a);
}

static int setup(void **s)
{
	(void)s;
	if (!mkdtemp(dir))
		return -1;
	snprintf(state, sizeof(state), "%s/state", dir);
	return 0;
}

static int teardown(void **s)
{
	char cmd[128];

	(void)s;
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	return system(cmd) == 0 ? 0 : -1;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_round_trip),
		cmocka_unit_test(test_changed),
		cmocka_unit_test(test_not_keepable),
		cmocka_unit_test(test_merge),
		cmocka_unit_test(test_hostile),
		cmocka_unit_test(test_not_a_file),
		cmocka_unit_test(test_off),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
