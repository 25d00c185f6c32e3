// SPDX-License-Identifier: MIT
/*
 * A publisher through include/ctprof/appstats.h for the appstats tests
 * (test_appstats_e2e.c). Prints what it published on stdout, one line per
 * thread, then "ready", and waits to be killed.
 *
 *   appstats_worker eight   8 threads: thread i sets arena_bytes to
 *                           (i + 1) MiB and adds i + 1 to requests 1,000
 *                           times; lines "name NAME" (its process name,
 *                           unique per pid) and "i tid"; with a second
 *                           argument, that is the name of requests
 *   appstats_worker wide    the same 8 after 300 threads that publish
 *                           nothing (sleepers): the publishers are the
 *                           last 8 of the process's tids
 *   appstats_worker churn   4 steady threads ("i tid") and threads born
 *                           and exiting all the time beside them, ~40
 *                           alive; each publishes its own tid as self_tid
 *                           and counts its updates; after 1,500 threads
 *                           (more than the 1,024 slots) "ready"; on SIGTERM
 *                           "threads N dropped D" and exit
 *   appstats_worker unset   includes the header, declares nothing
 *
 * With APS_LOW_PAGE set in its environment, a page is mapped at 0x10000
 * first: a short first line of its maps, before its executable's.
 */
#include <pthread.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "ctprof/appstats.h"

#define EIGHT 8

static int f_arena, f_requests, f_self;
static pthread_barrier_t published;
static int32_t tids[EIGHT];

static void *eight_thread(void *arg)
{
	long i = (long)arg;

	tids[i] = (int32_t)syscall(SYS_gettid);
	ctp_app_set(f_arena, (uint64_t)(i + 1) << 20);
	for (int k = 0; k < 1000; k++)
		ctp_app_add(f_requests, (uint64_t)i + 1);
	pthread_barrier_wait(&published);
	for (;;)
		pause();
	return NULL;
}

static void *sleeper(void *arg)
{
	(void)arg;
	for (;;)
		pause();
	return NULL;
}

/* `sleepers` threads that publish nothing, then the eight. */
static int eight(int sleepers)
{
	char name[16] = "aps-";
	pthread_attr_t a;
	pthread_t t;

	pthread_attr_init(&a);
	pthread_attr_setstacksize(&a, 64 * 1024);
	for (int i = 0; i < sleepers; i++)
		if (pthread_create(&t, &a, sleeper, NULL))
			return 1;
	pthread_attr_destroy(&a);

	/* A process name of its own, letters only (grouping by name folds
	 * digits), so a check grouped by name sees this process alone. */
	for (unsigned p = (unsigned)getpid(), i = 4; p && i < 15; p /= 26)
		name[i++] = (char)('a' + p % 26);
	prctl(PR_SET_NAME, name);
	printf("name %s\n", name);

	pthread_barrier_init(&published, NULL, EIGHT + 1);
	for (long i = 0; i < EIGHT; i++)
		if (pthread_create(&t, NULL, eight_thread, (void *)i))
			return 1;
	pthread_barrier_wait(&published);
	for (int i = 0; i < EIGHT; i++)
		printf("%d %d\n", i, (int)tids[i]);
	return 0;
}

static atomic_long made;
static volatile sig_atomic_t stop;

/* A short life: publish this thread's own tid and count updates. */
static void *churn_thread(void *arg)
{
	int32_t tid = (int32_t)syscall(SYS_gettid);
	struct timespec d = {0, 200000 + 100000 * ((long)arg % 10)};

	(void)arg;
	for (int k = 0; k < 20; k++) {
		ctp_app_set(f_self, (uint64_t)tid);
		ctp_app_add(f_requests, 1);
		nanosleep(&d, NULL);
	}
	return NULL;
}

#define STEADY 4

/* A long life beside the churn: its own tid, again and again. */
static void *steady_thread(void *arg)
{
	int32_t tid = (int32_t)syscall(SYS_gettid);

	tids[(long)arg] = tid;
	for (;;) {
		ctp_app_set(f_self, (uint64_t)tid);
		ctp_app_add(f_requests, 1);
		usleep(1000);
	}
	return NULL;
}

static void on_term(int sig)
{
	(void)sig;
	stop = 1;
}

static int churn(void)
{
	pthread_attr_t a;
	bool said = false;

	signal(SIGTERM, on_term);
	for (long i = 0; i < STEADY; i++) {
		pthread_t t;

		if (pthread_create(&t, NULL, steady_thread, (void *)i))
			return 1;
	}
	while (!tids[STEADY - 1] || !tids[0])
		usleep(1000);
	usleep(10000); /* each has published */
	for (int i = 0; i < STEADY; i++)
		printf("%d %d\n", i, (int)tids[i]);
	pthread_attr_init(&a);
	pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED);
	while (!stop) {
		pthread_t t;
		long n = atomic_load(&made);

		if (pthread_create(&t, &a, churn_thread, (void *)n) == 0)
			atomic_fetch_add(&made, 1);
		/* ~40 alive: a thread lives ~5 ms, one is born per 125 us */
		usleep(125);
		if (!said && n >= 1500) {
			printf("ready\n");
			fflush(stdout);
			said = true;
		}
	}
	printf("threads %ld dropped %llu\n", atomic_load(&made),
	       (unsigned long long)atomic_load(&ctprof_appstats_v1.dropped));
	fflush(stdout);
	return 0;
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "";

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (getenv("APS_LOW_PAGE") &&
	    mmap((void *)0x10000, 4096, PROT_READ,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1,
		 0) == MAP_FAILED)
		return 3;
	if (!strcmp(mode, "unset")) {
		printf("ready\n");
		for (;;)
			pause();
	}
	f_arena = ctp_app_field("arena_bytes", CTP_UNIT_BYTES, CTP_KIND_GAUGE,
				CTP_RULE_MAX);
	f_requests =
		ctp_app_field(argc > 2 ? argv[2] : "requests", CTP_UNIT_COUNT,
			      CTP_KIND_COUNTER, CTP_RULE_SUM);
	f_self = ctp_app_field("self_tid", CTP_UNIT_NONE, CTP_KIND_ORDINAL,
			       CTP_RULE_MAX);
	if (f_arena < 0 || f_requests < 0 || f_self < 0)
		return 2;
	if (!strcmp(mode, "eight") || !strcmp(mode, "wide")) {
		if (eight(strcmp(mode, "wide") ? 0 : 300))
			return 1;
		printf("ready\n");
		for (;;)
			pause();
	}
	if (!strcmp(mode, "churn"))
		return churn();
	fprintf(stderr,
		"usage: appstats_worker eight|wide|churn|unset [NAME]\n");
	return 2;
}
