/* SPDX-License-Identifier: MIT */
/*
 * ctp_cli_keep_pages (core/cli/capture_util.c) with jemalloc as malloc,
 * started as ctprof-core starts it (freed pages returned at once): after
 * the call every arena keeps the pages a free returns (its dirty decay
 * set, pages seen dirty after a free), and a MALLOC_CONF that names
 * dirty_decay_ms is left alone.
 */
#include "capture_util.h"

#include <pthread.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

#include <cmocka.h>

/* As core/cli/main.c sets it for ctprof-core. */
const char *malloc_conf = "dirty_decay_ms:0,muzzy_decay_ms:0";

int mallctl(const char *name, void *oldp, size_t *oldlenp, void *newp,
	    size_t newlen);

static ssize_t decay_of(const char *name)
{
	ssize_t v = -2;
	size_t len = sizeof(v);

	if (mallctl(name, &v, &len, NULL, 0) != 0)
		return -3;
	return v;
}

/* Dirty pages of arena i now (the stats refreshed first). */
static size_t dirty_of(unsigned i)
{
	uint64_t epoch = 1;
	size_t elen = sizeof(epoch), v = 0, len = sizeof(v);
	char name[64];

	mallctl("epoch", &epoch, &elen, &epoch, elen);
	snprintf(name, sizeof(name), "stats.arenas.%u.pdirty", i);
	if (mallctl(name, &v, &len, NULL, 0) != 0)
		return 0;
	return v;
}

/* Threads that allocate at once, so jemalloc gives them arenas beyond the
 * first (a thread takes the least used arena when it first allocates). */
static pthread_barrier_t all_in;

static void *allocate(void *arg)
{
	/* Kept where the compiler sees it used: an unused malloc/free pair
	 * may be removed. */
	void *volatile p = malloc(4096);

	pthread_barrier_wait(&all_in);
	free(p);
	return arg;
}

static unsigned arenas_made(void)
{
	pthread_t t[4];
	unsigned n = 0;
	size_t len = sizeof(n);

	pthread_barrier_init(&all_in, NULL, 4);
	for (int i = 0; i < 4; i++)
		assert_int_equal(pthread_create(&t[i], NULL, allocate, NULL),
				 0);
	for (int i = 0; i < 4; i++)
		pthread_join(t[i], NULL);
	pthread_barrier_destroy(&all_in);
	assert_int_equal(mallctl("arenas.narenas", &n, &len, NULL, 0), 0);
	return n;
}

static void set_all(ssize_t ms)
{
	unsigned n = arenas_made();

	mallctl("arenas.dirty_decay_ms", NULL, NULL, &ms, sizeof(ms));
	for (unsigned i = 0; i < n; i++) {
		char name[48];
		snprintf(name, sizeof(name), "arena.%u.dirty_decay_ms", i);
		mallctl(name, NULL, NULL, &ms, sizeof(ms));
	}
}

static void test_every_arena(void **state)
{
	unsigned n = arenas_made(), checked = 0;
	(void)state;

	set_all(0);
	unsetenv("MALLOC_CONF");
	/* As started: a freed block leaves nothing dirty in arena 0. */
	char *volatile p = malloc(1 << 20);
	memset(p, 1, 1 << 20);
	free(p);
	assert_int_equal(dirty_of(0), 0);

	ctp_cli_keep_pages();
	assert_int_equal(decay_of("arenas.dirty_decay_ms"), 60000);
	for (unsigned i = 0; i < n; i++) {
		char name[48];
		snprintf(name, sizeof(name), "arena.%u.dirty_decay_ms", i);
		ssize_t v = decay_of(name);
		if (v == -3)
			continue; /* an arena not made (yet) */
		assert_int_equal(v, 60000);
		checked++;
	}
	print_message("%u arenas of %u checked\n", checked, n);
	assert_true(checked >= 2);
	/* Now a freed block's pages stay, for the next capture. */
	p = malloc(1 << 20);
	memset(p, 1, 1 << 20);
	free(p);
	assert_true(dirty_of(0) > 0);
}

static void test_user_wins(void **state)
{
	(void)state;
	set_all(0);
	setenv("MALLOC_CONF", "narenas:2,dirty_decay_ms:5000", 1);
	ctp_cli_keep_pages();
	unsetenv("MALLOC_CONF");
	assert_int_equal(decay_of("arenas.dirty_decay_ms"), 0);
	assert_int_equal(decay_of("arena.0.dirty_decay_ms"), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_every_arena),
		cmocka_unit_test(test_user_wins),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
