// SPDX-License-Identifier: MIT
/*
 * Two shared objects that both include appstats.h, and an executable that
 * does not, for test_appstats_e2e: the dynamic linker binds one registry
 * (the first object loaded, mapped highest), the other object's copy stays
 * zero, and the reader must find the one in use. Built twice, as
 * libappstats_dso_a.so and _b.so (APPSTATS_DSO_NAME), and as the worker
 * (APPSTATS_DSO_MAIN): 3 threads, thread i adds 10 (i + 1) to "hits"
 * through object a or b in turn; lines "i tid", then "ready".
 */
#ifdef APPSTATS_DSO_MAIN
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/syscall.h>
#include <unistd.h>

int appstats_dso_a_add(const char *name, uint64_t delta);
int appstats_dso_b_add(const char *name, uint64_t delta);

static pthread_barrier_t ready;
static int32_t tids[3];

static void *thread(void *arg)
{
	long i = (long)arg;

	tids[i] = (int32_t)syscall(SYS_gettid);
	if (i % 2)
		appstats_dso_b_add("hits", 10 * (uint64_t)(i + 1));
	else
		appstats_dso_a_add("hits", 10 * (uint64_t)(i + 1));
	pthread_barrier_wait(&ready);
	for (;;)
		pause();
	return NULL;
}

int main(void)
{
	pthread_t t;

	setvbuf(stdout, NULL, _IOLBF, 0);
	pthread_barrier_init(&ready, NULL, 4);
	for (long i = 0; i < 3; i++)
		if (pthread_create(&t, NULL, thread, (void *)i))
			return 1;
	pthread_barrier_wait(&ready);
	for (int i = 0; i < 3; i++)
		printf("%d %d\n", i, (int)tids[i]);
	printf("ready\n");
	for (;;)
		pause();
}
#else
#include "ctprof/appstats.h"

__attribute__((visibility("default"))) int APPSTATS_DSO_NAME(const char *name,
							     uint64_t delta)
{
	int f = ctp_app_field(name, CTP_UNIT_COUNT, CTP_KIND_COUNTER,
			      CTP_RULE_SUM);
	if (f >= 0)
		ctp_app_add(f, delta);
	return f;
}
#endif
