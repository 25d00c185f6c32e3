/* SPDX-License-Identifier: MIT */
/*
 * An appstats publisher (docs/APPSTATS.md): N worker threads, each
 * keeping the bytes of its own arena and counting the requests it serves,
 * published per thread for ctprof-core to read. Runs until interrupted.
 *
 *   make && ./publisher 4
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include <ctprof/appstats.h>

static int f_arena, f_requests;

static void *serve(void *arg)
{
	long id = (long)arg;
	uint64_t arena = 0;

	for (;;) {
		/* A request: some work, some memory kept. */
		arena += 4096 * (uint64_t)(id + 1);
		ctp_app_set(f_arena, arena);
		ctp_app_add(f_requests, 1);
		usleep(1000);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 4;

	f_arena = ctp_app_field("arena_bytes", CTP_UNIT_BYTES, CTP_KIND_GAUGE,
				CTP_RULE_MAX);
	f_requests = ctp_app_field("requests", CTP_UNIT_COUNT, CTP_KIND_COUNTER,
				   CTP_RULE_SUM);
	if (f_arena < 0 || f_requests < 0) {
		fprintf(stderr, "publisher: cannot declare the fields\n");
		return 1;
	}
	for (long i = 0; i < n; i++) {
		pthread_t t;
		if (pthread_create(&t, NULL, serve, (void *)i) != 0) {
			perror("publisher: pthread_create");
			return 1;
		}
	}
	printf("publisher %d: %ld threads publishing arena_bytes and "
	       "requests\n",
	       (int)getpid(), n);
	fflush(stdout);
	for (;;)
		pause();
}
