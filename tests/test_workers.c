/* SPDX-License-Identifier: MIT */
/*
 * A plugin's per-worker blocks (plugins/common/workers.c): a thread keeps
 * its block while it lives; a block whose thread ended goes to the next
 * thread that asks, with what that thread left in it; threads alive at
 * once never share one; a reset releases every claim; two pools of one
 * plugin keep their own claims. So 300 threads that each walk once, one
 * after the other (a host calling the walk from a new thread every time),
 * leave one block, not 300.
 */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "workers.h"

struct blk {
	uint64_t mark;
	char pad[200];
};

struct ask {
	struct ctp_workers *ws, *ws2;
	struct blk *got, *got2, *again, *mine;
	/* Waited twice: the block is claimed; the thread may end. */
	pthread_barrier_t *both;
};

static void *ask_main(void *arg)
{
	struct ask *a = arg;
	a->got = ctp_workers_get(a->ws);
	if (a->got)
		a->got->mark++;
	if (a->ws2) {
		/* Alternating between two pools: each keeps this thread's. */
		for (int i = 0; i < 50; i++) {
			a->got2 = ctp_workers_get(a->ws2);
			a->again = ctp_workers_get(a->ws);
		}
	} else {
		a->again = ctp_workers_get(a->ws);
	}
	a->mine = ctp_workers_mine(a->ws);
	if (a->both) {
		pthread_barrier_wait(a->both);
		pthread_barrier_wait(a->both);
	}
	return NULL;
}

static void ask_on_thread(struct ask *a)
{
	pthread_t th;
	assert_int_equal(pthread_create(&th, NULL, ask_main, a), 0);
	assert_int_equal(pthread_join(th, NULL), 0);
	assert_non_null(a->got);
	assert_ptr_equal(a->again, a->got);
	assert_ptr_equal(a->mine, a->got);
}

/* 300 threads one after another: one block, handed on with its marks. */
static void test_ended_threads_hand_on(void **state)
{
	struct ctp_workers ws;
	(void)state;
	ctp_workers_init(&ws, sizeof(struct blk));
	for (int i = 1; i <= 300; i++) {
		struct ask a = {.ws = &ws};
		ask_on_thread(&a);
		assert_int_equal(a.got->mark, (uint64_t)i);
	}
	assert_int_equal(ctp_workers_count(&ws), 1);
	ctp_workers_fini(&ws, NULL);
}

/* Threads alive at once have blocks of their own; this (living) thread
 * keeps its block while others come and go. */
static void test_live_threads_apart(void **state)
{
	struct ctp_workers ws;
	pthread_barrier_t both;
	pthread_t th;
	(void)state;
	ctp_workers_init(&ws, sizeof(struct blk));
	struct blk *own = ctp_workers_get(&ws);
	assert_non_null(own);
	assert_ptr_equal(ctp_workers_mine(&ws), own);
	for (int i = 0; i < 20; i++) {
		pthread_barrier_init(&both, NULL, 2);
		struct ask a = {.ws = &ws, .both = &both};
		assert_int_equal(pthread_create(&th, NULL, ask_main, &a), 0);
		/* While that thread lives and holds its block, another asks. */
		pthread_barrier_wait(&both);
		struct ask b = {.ws = &ws};
		ask_on_thread(&b);
		pthread_barrier_wait(&both);
		assert_int_equal(pthread_join(th, NULL), 0);
		pthread_barrier_destroy(&both);
		assert_ptr_not_equal(a.got, own);
		assert_ptr_not_equal(b.got, own);
		assert_ptr_not_equal(a.got, b.got);
	}
	assert_int_equal(ctp_workers_count(&ws), 3);
	assert_ptr_equal(ctp_workers_get(&ws), own);
	ctp_workers_fini(&ws, NULL);
}

/* After a reset a living thread's block may go to another. */
static void test_reset_releases(void **state)
{
	struct ctp_workers ws;
	(void)state;
	ctp_workers_init(&ws, sizeof(struct blk));
	struct blk *own = ctp_workers_get(&ws);
	assert_non_null(own);
	ctp_workers_reset(&ws);
	assert_null(ctp_workers_mine(&ws));
	struct ask a = {.ws = &ws};
	ask_on_thread(&a);
	assert_ptr_equal(a.got, own);
	assert_int_equal(ctp_workers_count(&ws), 1);
	ctp_workers_fini(&ws, NULL);
}

/* Two pools asked in turn by each of 100 threads: one block each. */
static void test_two_pools(void **state)
{
	struct ctp_workers ws, ws2;
	(void)state;
	ctp_workers_init(&ws, sizeof(struct blk));
	ctp_workers_init(&ws2, sizeof(struct blk));
	for (int i = 0; i < 100; i++) {
		struct ask a = {.ws = &ws, .ws2 = &ws2};
		ask_on_thread(&a);
		assert_non_null(a.got2);
	}
	assert_int_equal(ctp_workers_count(&ws), 1);
	assert_int_equal(ctp_workers_count(&ws2), 1);
	ctp_workers_fini(&ws, NULL);
	ctp_workers_fini(&ws2, NULL);
}

static unsigned done_calls;

static void count_done(void *block)
{
	assert_non_null(block);
	done_calls++;
}

/* fini hands every block to `done`. */
static void test_fini_done(void **state)
{
	struct ctp_workers ws;
	pthread_barrier_t both;
	pthread_t th;
	(void)state;
	ctp_workers_init(&ws, sizeof(struct blk));
	assert_non_null(ctp_workers_get(&ws));
	pthread_barrier_init(&both, NULL, 2);
	struct ask a = {.ws = &ws, .both = &both};
	assert_int_equal(pthread_create(&th, NULL, ask_main, &a), 0);
	pthread_barrier_wait(&both);
	pthread_barrier_wait(&both);
	assert_int_equal(pthread_join(th, NULL), 0);
	pthread_barrier_destroy(&both);
	done_calls = 0;
	ctp_workers_fini(&ws, count_done);
	assert_int_equal(done_calls, 2);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ended_threads_hand_on),
		cmocka_unit_test(test_live_threads_apart),
		cmocka_unit_test(test_reset_releases),
		cmocka_unit_test(test_two_pools),
		cmocka_unit_test(test_fini_done),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
