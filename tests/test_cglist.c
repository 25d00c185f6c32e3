/* SPDX-License-Identifier: MIT */
/*
 * Unit tests for the inode index of the v1 hierarchies (plugins/cgroup/
 * cglist.c, cg_listing_add_inos and cg_listing_resolve): every cgroup of a
 * tree by its directory's inode, and a thread's "cgroup-v1" pairs turned
 * into each hierarchy's cgroup key. The trees are plain directories made
 * here (the walk reads no cgroupfs file in this mode).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
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

#include "cglist.h"

static char top[PATH_MAX];

static void mk(const char *rel)
{
	char p[PATH_MAX + 64];

	snprintf(p, sizeof(p), "%s/%s", top, rel);
	assert_int_equal(mkdir(p, 0755), 0);
}

static uint64_t ino(const char *rel)
{
	char p[PATH_MAX + 64];
	struct stat sb;

	snprintf(p, sizeof(p), "%s/%s", top, rel);
	assert_int_equal(stat(p, &sb), 0);
	return (uint64_t)sb.st_ino;
}

static int open_dir(const char *rel)
{
	char p[PATH_MAX + 64];

	snprintf(p, sizeof(p), "%s/%s", top, rel);
	int fd = open(p, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	assert_true(fd >= 0);
	return fd;
}

/* Key k of l as "v1:<ctrl>:<path>" and its path tail. */
static void assert_key(const struct cg_listing *l, uint32_t k, const char *key,
		       const char *path)
{
	const struct cg_key *c = &l->keys[k];

	assert_int_equal(c->len, strlen(key));
	assert_memory_equal(l->arena + c->off, key, c->len);
	assert_int_equal(c->len - c->path_off, strlen(path));
	assert_memory_equal(l->arena + c->off + c->path_off, path,
			    strlen(path));
}

static int setup(void **s)
{
	(void)s;
	snprintf(top, sizeof(top), "%s/ctp-cglist-XXXXXX",
		 getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	assert_non_null(mkdtemp(top));
	/* Two hierarchies: mem (a/b, c) and sysd (s). */
	mk("mem");
	mk("mem/a");
	mk("mem/a/b");
	mk("mem/c");
	mk("sysd");
	mk("sysd/s");
	return 0;
}

static int teardown(void **s)
{
	static const char *const dirs[] = {"mem/a/b", "mem/a",	"mem/c",
					   "mem",     "sysd/s", "sysd"};
	char p[PATH_MAX + 64];

	(void)s;
	for (size_t i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++) {
		snprintf(p, sizeof(p), "%s/%s", top, dirs[i]);
		rmdir(p);
	}
	return rmdir(top);
}

/* Both hierarchies indexed, as the plugin's walk does (ids 4 and 9). */
static void index_both(struct cg_listing *l)
{
	int fd = open_dir("mem");

	assert_int_equal(cg_listing_add_inos(l, "memory", 6, 11, 4, fd), 0);
	close(fd);
	fd = open_dir("sysd");
	assert_int_equal(cg_listing_add_inos(l, "name=systemd", 12, 12, 9, fd),
			 0);
	close(fd);
	cg_listing_done(l);
	assert_int_equal(l->n_hier, 2);
	assert_int_equal(l->h[0].n_ino, 4);
	assert_int_equal(l->h[1].n_ino, 2);
	/* No `tasks` read: nothing listed. */
	assert_int_equal(l->h[0].n, 0);
	assert_int_equal(l->h[1].n, 0);
}

static void test_resolve(void **s)
{
	struct cg_listing l = {0};
	uint32_t kid[CG_LIST_MAX_HIER];
	(void)s;
	index_both(&l);
	/* The kernel's link order, not the file's: sysd's pair first. */
	struct ctp_src_cg1_pair p[2] = {{.hier = 9, .id = ino("sysd/s")},
					{.hier = 4, .id = ino("mem/a/b")}};
	assert_true(cg_listing_resolve(&l, p, 2, kid));
	assert_key(&l, kid[0], "v1:memory:/a/b", "/a/b");
	assert_key(&l, kid[1], "v1:name=systemd:/s", "/s");
	/* The roots: "/" (the hierarchy's root key). */
	p[0].id = ino("sysd");
	p[1].id = ino("mem");
	assert_true(cg_listing_resolve(&l, p, 2, kid));
	assert_int_equal(kid[0], l.h[0].root_key);
	assert_int_equal(kid[1], l.h[1].root_key);
	assert_key(&l, kid[0], "v1:memory:/", "/");
	/* Every directory of mem by its own inode. */
	static const char *const rel[] = {"mem/a", "mem/a/b", "mem/c"};
	static const char *const path[] = {"/a", "/a/b", "/c"};
	for (int i = 0; i < 3; i++) {
		p[1].id = ino(rel[i]);
		assert_true(cg_listing_resolve(&l, p, 2, kid));
		assert_memory_equal(l.arena + l.keys[kid[0]].off +
					    l.keys[kid[0]].path_off,
				    path[i], strlen(path[i]));
	}
	cg_listing_free(&l);
}

static void test_resolve_fails(void **s)
{
	struct cg_listing l = {0};
	uint32_t kid[CG_LIST_MAX_HIER];
	(void)s;
	index_both(&l);
	struct ctp_src_cg1_pair p[3] = {{.hier = 9, .id = ino("sysd/s")},
					{.hier = 4, .id = ino("mem/c")},
					{.hier = 5, .id = ino("mem/c")}};
	assert_true(cg_listing_resolve(&l, p, 2, kid));
	/* A hierarchy missing, one too many, one the index lacks. */
	assert_false(cg_listing_resolve(&l, p, 1, kid));
	assert_false(cg_listing_resolve(&l, p, 3, kid));
	assert_false(cg_listing_resolve(&l, p + 1, 2, kid));
	/* An inode of no cgroup of the hierarchy (the other one's, a
	 * cgroup made after the walk). */
	p[1].id = ino("sysd/s");
	assert_false(cg_listing_resolve(&l, p, 2, kid));
	p[1].id = ino("mem/c");
	mk("mem/new");
	p[0].id = ino("mem/new");
	p[0].hier = 4;
	p[1].hier = 9;
	p[1].id = ino("sysd");
	assert_false(cg_listing_resolve(&l, p, 2, kid));
	char d[PATH_MAX + 64];
	snprintf(d, sizeof(d), "%s/mem/new", top);
	rmdir(d);
	/* Reset: the next capture's index starts empty. */
	cg_listing_reset(&l);
	assert_int_equal(l.n_hier, 0);
	assert_false(cg_listing_resolve(&l, p, 2, kid));
	index_both(&l);
	p[0].id = ino("mem/a");
	assert_true(cg_listing_resolve(&l, p, 2, kid));
	assert_key(&l, kid[0], "v1:memory:/a", "/a");
	cg_listing_free(&l);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_resolve, setup, teardown),
		cmocka_unit_test_setup_teardown(test_resolve_fails, setup,
						teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
