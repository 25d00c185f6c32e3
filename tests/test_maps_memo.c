/*
 * The maps of the capture before (plugins/common/procelf.c): kept by tgid
 * with the process source's MM_GEN, handed back as a read would leave them
 * while it is the same, dropped when no capture used them; and
 * ctp_proc_find reading the maps only where the generation moved, is
 * absent, or no memo is given.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "procelf.h"

#include <ctprof/plugin-util.h>
#include <ctprof/plugin.h>
#include <ctprof/source-process.h>

static const char text1[] =
	"00400000-00452000 r-xp 00000000 fd:01 1234 /usr/bin/prog\n"
	"00651000-00652000 rw-p 00051000 fd:01 1234 /usr/bin/prog\n"
	"01e3c000-01e5d000 rw-p 00000000 00:00 0 [heap]\n"
	"7f0000000000-7f0000200000 r-xp 00000000 fd:01 99 /lib/libc.so.6\n"
	"7fff00000000-7fff00021000 rw-p 00000000 00:00 0 [stack]\n";

static void parse(struct ctp_maps *m, const char *text)
{
	assert_int_equal(ctp_maps_parse(m, text, strlen(text)), 0);
}

/* Every member of every mapping, the paths by their bytes. */
static void same_maps(const struct ctp_maps *a, const struct ctp_maps *b)
{
	assert_int_equal(a->n, b->n);
	for (size_t i = 0; i < a->n; i++) {
		const struct ctp_map *x = &a->v[i], *y = &b->v[i];
		assert_true(x->start == y->start && x->end == y->end &&
			    x->offset == y->offset && x->dev == y->dev &&
			    x->ino == y->ino && x->exec == y->exec);
		assert_int_equal(x->path_len, y->path_len);
		assert_memory_equal(x->path, y->path, x->path_len);
	}
}

static void test_round_trip(void **s)
{
	struct ctp_maps_memo memo;
	struct ctp_maps m = {0}, got = {0};
	uint64_t dev = 0, ino = 0;
	(void)s;
	ctp_maps_memo_init(&memo);
	parse(&m, text1);
	assert_int_equal(m.n, 3);
	assert_int_equal(ctp_maps_memo_get(&memo, 42, 7, &got, &dev, &ino),
			 -ENOENT);
	assert_int_equal(ctp_maps_memo_put(&memo, 42, 7, &m, 0xfd01, 1234), 0);
	/* The text the kept paths pointed into is gone. */
	char *again = strdup(text1);
	assert_non_null(again);
	ctp_maps_parse(&m, again, strlen(again));
	memset(again, 'x', strlen(again));
	assert_int_equal(ctp_maps_memo_get(&memo, 42, 7, &got, &dev, &ino), 0);
	struct ctp_maps want = {0};
	parse(&want, text1);
	same_maps(&got, &want);
	assert_true(dev == 0xfd01 && ino == 1234);
	/* The paths are strings in the caller's buffer. */
	assert_string_equal(got.v[2].path, "/lib/libc.so.6");
	assert_true(got.v[0].path >= got.buf &&
		    got.v[0].path < got.buf + got.cap);
	/* Another generation, another process: none. */
	assert_int_equal(ctp_maps_memo_get(&memo, 42, 8, &got, &dev, &ino),
			 -ENOENT);
	assert_int_equal(ctp_maps_memo_get(&memo, 43, 7, &got, &dev, &ino),
			 -ENOENT);
	/* A new generation replaces the old one. */
	parse(&m, "1000-2000 r-xp 0 fd:01 5 /bin/other\n");
	assert_int_equal(ctp_maps_memo_put(&memo, 42, 9, &m, 1, 5), 0);
	assert_int_equal(memo.n, 1);
	assert_int_equal(ctp_maps_memo_get(&memo, 42, 7, &got, &dev, &ino),
			 -ENOENT);
	assert_int_equal(ctp_maps_memo_get(&memo, 42, 9, &got, &dev, &ino), 0);
	assert_int_equal(got.n, 1);
	assert_string_equal(got.v[0].path, "/bin/other");
	/* No file mapping at all (kept as such). */
	m.n = 0;
	assert_int_equal(ctp_maps_memo_put(&memo, 44, 3, &m, 1, 2), 0);
	assert_int_equal(ctp_maps_memo_get(&memo, 44, 3, &got, &dev, &ino), 0);
	assert_int_equal(got.n, 0);
	free(again);
	ctp_maps_free(&m);
	ctp_maps_free(&got);
	ctp_maps_free(&want);
	ctp_maps_memo_fini(&memo);
}

/* A sweep drops what was not used since the one before; more processes
 * than buckets chain. */
static void test_sweep(void **s)
{
	struct ctp_maps_memo memo;
	struct ctp_maps m = {0}, got = {0};
	uint64_t dev, ino;
	(void)s;
	ctp_maps_memo_init(&memo);
	parse(&m, text1);
	for (int32_t t = 1; t <= 10000; t++)
		assert_int_equal(
			ctp_maps_memo_put(&memo, t, (uint64_t)t, &m, 1, 2), 0);
	assert_int_equal(memo.n, 10000);
	/* Put since the last sweep: all kept by this one. */
	ctp_maps_memo_sweep(&memo);
	assert_int_equal(memo.n, 10000);
	/* The next capture uses the even ones only. */
	for (int32_t t = 2; t <= 10000; t += 2)
		assert_int_equal(ctp_maps_memo_get(&memo, t, (uint64_t)t, &got,
						   &dev, &ino),
				 0);
	/* A get of another generation is no use. */
	assert_int_equal(ctp_maps_memo_get(&memo, 1, 2, &got, &dev, &ino),
			 -ENOENT);
	ctp_maps_memo_sweep(&memo);
	assert_int_equal(memo.n, 5000);
	for (int32_t t = 1; t <= 10000; t++)
		assert_int_equal(ctp_maps_memo_get(&memo, t, (uint64_t)t, &got,
						   &dev, &ino),
				 t % 2 ? -ENOENT : 0);
	/* Then a capture that uses none. */
	ctp_maps_memo_sweep(&memo);
	ctp_maps_memo_sweep(&memo);
	assert_int_equal(memo.n, 0);
	ctp_maps_free(&m);
	ctp_maps_free(&got);
	ctp_maps_memo_fini(&memo);
}

/* ---- ctp_proc_find ---------------------------------------------------- */

static char maps_text[4096];
static int file_gets;
static uint64_t gen; /* the process source's MM_GEN; 0: not offered */
static int probes;

static int t_file_get(const struct ctp_task *task, uint32_t i,
		      const struct ctp_file **out)
{
	static struct ctp_file f;
	(void)task;
	assert_int_equal(i, 0);
	file_gets++;
	f = (struct ctp_file){.data = maps_text, .len = strlen(maps_text)};
	*out = &f;
	return 0;
}

static int t_source_get(const struct ctp_task *task, const char *name,
			const void **data, size_t *len)
{
	static struct ctp_src_process p;
	(void)task;
	if (strcmp(name, CTP_SOURCE_PROCESS) || !gen)
		return -ENOENT;
	memset(&p, 0, sizeof(p));
	p.abi = 1;
	p.size = sizeof(p);
	p.valid[0] = UINT64_C(1) << CTP_SRC_PROC_MM_GEN;
	p.v[CTP_SRC_PROC_MM_GEN] = gen;
	*data = &p;
	*len = sizeof(p);
	return 0;
}

/* Every file answers "not here". */
static void probe(void *arg, int fd, const char *path, void *out)
{
	(void)arg;
	(void)fd;
	(void)path;
	*(int *)out = 1;
	probes++;
}

static int verdict(const void *answer, int *tag)
{
	(void)answer;
	*tag = 5;
	return -1;
}

static void test_proc_find(void **s)
{
	struct ctp_api api = {.abi = CTP_ABI_MAJOR,
			      .size = sizeof(api),
			      .file_get = t_file_get,
			      .source_get = t_source_get};
	struct ctp_file_cache files;
	struct ctp_ident_cache idents;
	struct ctp_maps_memo memo;
	struct ctp_maps m = {0}, first = {0};
	struct ctp_proc_found pf, pf1;
	struct ctp_proc_scan scan = {.files = &files,
				     .idents = &idents,
				     .probe = probe,
				     .verdict = verdict,
				     .none_tag = 0,
				     .api = &api,
				     .maps_file = 0,
				     .memo = &memo};
	int dirfd = open("/proc/self", O_PATH | O_DIRECTORY | O_CLOEXEC);
	struct ctp_task task = {.abi = 1,
				.size = sizeof(task),
				.tgid = getpid(),
				.tid = getpid(),
				.dirfd = dirfd};
	(void)s;
	assert_true(dirfd >= 0);
	ctp_file_cache_init(&files, sizeof(int));
	ctp_ident_cache_init(&idents);
	ctp_maps_memo_init(&memo);
	/* This process's own maps, as the core would hand them over. */
	int fd = open("/proc/self/maps", O_RDONLY | O_CLOEXEC);
	ssize_t n = read(fd, maps_text, sizeof(maps_text) - 1);
	close(fd);
	assert_true(n > 0);
	maps_text[n] = '\0';
	char *nl = strrchr(maps_text, '\n');
	if (nl)
		nl[1] = '\0';

	/* Generation 11: read once, then taken from the memo. */
	gen = 11;
	assert_int_equal(ctp_proc_find(&scan, &m, &task, &pf1), 0);
	assert_int_equal(file_gets, 1);
	assert_false(pf1.maps_kept);
	assert_true(m.n > 0);
	assert_int_equal(pf1.tag, 5);
	assert_int_equal(ctp_maps_parse(&first, maps_text, strlen(maps_text)),
			 0);
	int probed = probes;
	/* The text the core handed out is gone after the callback. */
	char saved[sizeof(maps_text)];
	memcpy(saved, maps_text, sizeof(saved));
	memset(maps_text, 0, sizeof(maps_text));
	assert_int_equal(ctp_proc_find(&scan, &m, &task, &pf), 0);
	assert_int_equal(file_gets, 1);
	assert_true(pf.maps_kept);
	assert_true(pf.cache_hit);
	assert_int_equal(probes, probed);
	assert_int_equal(pf.tag, 5);
	assert_true(pf.exe_dev == pf1.exe_dev && pf.exe_ino == pf1.exe_ino);
	memcpy(maps_text, saved, sizeof(maps_text));
	ctp_maps_parse(&first, maps_text, strlen(maps_text));
	same_maps(&m, &first);

	/* Another generation: read again. */
	gen = 12;
	assert_int_equal(ctp_proc_find(&scan, &m, &task, &pf), 0);
	assert_int_equal(file_gets, 2);
	assert_false(pf.maps_kept);
	assert_int_equal(ctp_proc_find(&scan, &m, &task, &pf), 0);
	assert_int_equal(file_gets, 2);
	assert_true(pf.maps_kept);
	/* No generation offered: read every time. */
	gen = 0;
	assert_int_equal(ctp_proc_find(&scan, &m, &task, &pf), 0);
	assert_int_equal(ctp_proc_find(&scan, &m, &task, &pf), 0);
	assert_int_equal(file_gets, 4);
	assert_false(pf.maps_kept);
	/* No memo: read every time. */
	gen = 12;
	scan.memo = NULL;
	assert_int_equal(ctp_proc_find(&scan, &m, &task, &pf), 0);
	assert_int_equal(file_gets, 5);
	assert_false(pf.maps_kept);
	/* An api without source_get (an older core): read. */
	scan.memo = &memo;
	api.size = offsetof(struct ctp_api, source_get);
	assert_int_equal(ctp_proc_find(&scan, &m, &task, &pf), 0);
	assert_int_equal(file_gets, 6);
	assert_false(pf.maps_kept);

	close(dirfd);
	ctp_maps_free(&m);
	ctp_maps_free(&first);
	ctp_maps_memo_fini(&memo);
	ctp_ident_cache_fini(&idents);
	ctp_file_cache_fini(&files);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_round_trip),
		cmocka_unit_test(test_sweep),
		cmocka_unit_test(test_proc_find),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
