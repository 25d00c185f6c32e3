/* SPDX-License-Identifier: MIT */
/*
 * The publishing side of appstats (include/ctprof/appstats.h), read here
 * straight from the registry as a collector reads it: declarations, one
 * slot per thread with its own values, slots given back at thread exit and
 * reused, a full table dropping and counting, a fork() child starting with
 * every slot free, and one registry for the executable and a shared object
 * that both include the header.
 */
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "ctprof/appstats.h"

void *appstats_lib_registry(void);
int appstats_lib_add(const char *name, uint64_t delta);

#define R (&ctprof_appstats_v1)

/* The slot a reader finds for tid (stable seq, that tid), or NULL. */
static const struct ctprof_appstats_slot *find(int32_t tid)
{
	for (uint32_t i = 0; i < R->max_slots; i++) {
		const struct ctprof_appstats_slot *s = &R->slots[i];
		uint32_t a = atomic_load(&s->seq);
		if (a % 2 == 0 && atomic_load(&s->tid) == tid &&
		    atomic_load(&s->seq) == a)
			return s;
	}
	return NULL;
}

static uint32_t taken(void)
{
	uint32_t n = 0;
	for (uint32_t i = 0; i < R->max_slots; i++)
		n += atomic_load(&R->slots[i].tid) != 0;
	return n;
}

static void test_fields(void **state)
{
	(void)state;
	int a = ctp_app_field("arena_bytes", CTP_UNIT_BYTES, CTP_KIND_GAUGE,
			      CTP_RULE_MAX);
	assert_true(a >= 0);
	assert_int_equal(R->magic, CTP_APP_MAGIC);
	assert_int_equal(R->version, 1);
	assert_int_equal(R->size, sizeof(struct ctprof_appstats));
	assert_int_equal(R->slots_off, offsetof(struct ctprof_appstats, slots));
	/* The same declaration again: the same index; another kind: no. */
	assert_int_equal(ctp_app_field("arena_bytes", CTP_UNIT_BYTES,
				       CTP_KIND_GAUGE, CTP_RULE_MAX),
			 a);
	assert_int_equal(ctp_app_field("arena_bytes", CTP_UNIT_BYTES,
				       CTP_KIND_COUNTER, CTP_RULE_SUM),
			 -EEXIST);
	static const char *const bad[] = {"",
					  "Upper",
					  "a-b",
					  "a b",
					  ".a",
					  "a.",
					  "a..b",
					  ("0123456789012345678901234567890123"
					   "45678901234567")};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		assert_int_equal(ctp_app_field(bad[i], CTP_UNIT_COUNT,
					       CTP_KIND_COUNTER, CTP_RULE_SUM),
				 -EINVAL);
	assert_int_equal(ctp_app_field(NULL, CTP_UNIT_COUNT, CTP_KIND_COUNTER,
				       CTP_RULE_SUM),
			 -EINVAL);
	assert_int_equal(ctp_app_field("x", CTP_UNIT_COUNT, CTP_KIND_CPUSET,
				       CTP_RULE_UNION),
			 -EINVAL);
	/* A rule the kind does not allow: a gauge does not add up. */
	assert_int_equal(ctp_app_field("g", CTP_UNIT_BYTES, CTP_KIND_GAUGE,
				       CTP_RULE_SUM),
			 -EINVAL);
	assert_int_equal(ctp_app_field("c", CTP_UNIT_COUNT, CTP_KIND_COUNTER,
				       CTP_RULE_MAX),
			 -EINVAL);
	/* 47 bytes: the longest name. */
	assert_true(ctp_app_field("a234567890123456789012345678901234567890"
				  "1234567",
				  CTP_UNIT_COUNT, CTP_KIND_COUNTER,
				  CTP_RULE_SUM) >= 0);
	assert_string_equal(R->fields[a].name, "arena_bytes");
	assert_int_equal(R->fields[a].unit, CTP_UNIT_BYTES);
}

#define WORKERS 8

static pthread_barrier_t published, checked;
static int f_arena, f_requests;
static int32_t worker_tid[WORKERS];

static void *worker(void *arg)
{
	long i = (long)arg;
	worker_tid[i] = (int32_t)syscall(SYS_gettid);
	ctp_app_set(f_arena, (uint64_t)(i + 1) << 20);
	for (int k = 0; k < 1000; k++)
		ctp_app_add(f_requests, (uint64_t)i + 1);
	pthread_barrier_wait(&published);
	pthread_barrier_wait(&checked);
	return NULL;
}

/* Thread i: arena_bytes (i + 1) MiB, requests 1,000 (i + 1); each in its
 * own slot under its tid, given back when it exits. */
static void test_threads(void **state)
{
	pthread_t t[WORKERS];
	(void)state;
	f_arena = ctp_app_field("arena_bytes", CTP_UNIT_BYTES, CTP_KIND_GAUGE,
				CTP_RULE_MAX);
	f_requests = ctp_app_field("requests", CTP_UNIT_COUNT, CTP_KIND_COUNTER,
				   CTP_RULE_SUM);
	assert_true(f_arena >= 0 && f_requests >= 0);
	uint32_t before = taken();
	pthread_barrier_init(&published, NULL, WORKERS + 1);
	pthread_barrier_init(&checked, NULL, WORKERS + 1);
	for (long i = 0; i < WORKERS; i++)
		assert_int_equal(pthread_create(&t[i], NULL, worker, (void *)i),
				 0);
	pthread_barrier_wait(&published);
	for (int i = 0; i < WORKERS; i++) {
		const struct ctprof_appstats_slot *s = find(worker_tid[i]);
		assert_non_null(s);
		assert_int_equal(atomic_load(&s->values[f_arena]),
				 (uint64_t)(i + 1) << 20);
		assert_int_equal(atomic_load(&s->values[f_requests]),
				 1000 * (uint64_t)(i + 1));
	}
	assert_int_equal(taken(), before + WORKERS);
	pthread_barrier_wait(&checked);
	for (int i = 0; i < WORKERS; i++)
		pthread_join(t[i], NULL);
	for (int i = 0; i < WORKERS; i++)
		assert_null(find(worker_tid[i]));
	assert_int_equal(taken(), before);
	pthread_barrier_destroy(&published);
	pthread_barrier_destroy(&checked);
}

static void *once(void *arg)
{
	(void)arg;
	ctp_app_add(f_requests, 1);
	return NULL;
}

/* 2,000 threads one after another: a slot each, given back, reused; no
 * update dropped. */
static void test_churn(void **state)
{
	(void)state;
	f_requests = ctp_app_field("requests", CTP_UNIT_COUNT, CTP_KIND_COUNTER,
				   CTP_RULE_SUM);
	uint64_t dropped = atomic_load(&R->dropped);
	uint32_t before = taken();
	for (int i = 0; i < 2000; i++) {
		pthread_t t;
		assert_int_equal(pthread_create(&t, NULL, once, NULL), 0);
		pthread_join(t, NULL);
	}
	assert_int_equal(taken(), before);
	assert_int_equal(atomic_load(&R->dropped), dropped);
}

static pthread_barrier_t all_in, let_go;

static void *holder(void *arg)
{
	(void)arg;
	ctp_app_add(f_requests, 1);
	pthread_barrier_wait(&all_in);
	pthread_barrier_wait(&let_go);
	return NULL;
}

/* More threads than slots: the rest drop their update and count it. */
static void test_full(void **state)
{
	enum { N = CTP_APP_MAX_SLOTS + 10 };
	pthread_t *t = calloc(N, sizeof(*t));
	pthread_attr_t attr;
	(void)state;
	assert_non_null(t);
	pthread_attr_init(&attr);
	pthread_attr_setstacksize(&attr, 64 * 1024);
	uint32_t free_slots = CTP_APP_MAX_SLOTS - taken();
	uint64_t dropped = atomic_load(&R->dropped);
	pthread_barrier_init(&all_in, NULL, N + 1);
	pthread_barrier_init(&let_go, NULL, N + 1);
	for (int i = 0; i < N; i++)
		assert_int_equal(pthread_create(&t[i], &attr, holder, NULL), 0);
	pthread_barrier_wait(&all_in);
	assert_int_equal(taken(), CTP_APP_MAX_SLOTS);
	assert_int_equal(atomic_load(&R->dropped) - dropped,
			 (uint64_t)N - free_slots);
	pthread_barrier_wait(&let_go);
	for (int i = 0; i < N; i++)
		pthread_join(t[i], NULL);
	assert_int_equal(taken(), CTP_APP_MAX_SLOTS - free_slots);
	pthread_barrier_destroy(&all_in);
	pthread_barrier_destroy(&let_go);
	pthread_attr_destroy(&attr);
	free(t);
}

/* A fork() child starts with every slot free; its thread claims anew under
 * its own tid, from the child's first update. */
static void test_fork(void **state)
{
	(void)state;
	f_requests = ctp_app_field("requests", CTP_UNIT_COUNT, CTP_KIND_COUNTER,
				   CTP_RULE_SUM);
	ctp_app_add(f_requests, 5);
	int32_t me = (int32_t)syscall(SYS_gettid);
	assert_non_null(find(me));
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		if (taken() != 0 || find(me))
			_exit(1);
		ctp_app_add(f_requests, 7);
		const struct ctprof_appstats_slot *s =
			find((int32_t)syscall(SYS_gettid));
		_exit(s && atomic_load(&s->values[f_requests]) == 7 &&
				      taken() == 1
			      ? 0
			      : 2);
	}
	int st;
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(WIFEXITED(st));
	assert_int_equal(WEXITSTATUS(st), 0);
	/* The parent's slot is untouched. */
	assert_int_equal(atomic_load(&find(me)->values[f_requests]) >= 5, 1);
}

/* The executable and a shared object that both include the header: one
 * registry, and one slot for a thread that publishes from both. */
static void test_one_registry(void **state)
{
	(void)state;
	assert_ptr_equal(appstats_lib_registry(), (void *)R);
	f_requests = ctp_app_field("requests", CTP_UNIT_COUNT, CTP_KIND_COUNTER,
				   CTP_RULE_SUM);
	int32_t me = (int32_t)syscall(SYS_gettid);
	const struct ctprof_appstats_slot *s = find(me);
	assert_non_null(s);
	uint64_t v = atomic_load(&s->values[f_requests]);
	uint32_t before = taken();
	assert_int_equal(appstats_lib_add("requests", 3), f_requests);
	assert_int_equal(taken(), before);
	assert_int_equal(atomic_load(&s->values[f_requests]), v + 3);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fields),
		cmocka_unit_test(test_threads),
		cmocka_unit_test(test_churn),
		cmocka_unit_test(test_full),
		cmocka_unit_test(test_fork),
		cmocka_unit_test(test_one_registry),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
