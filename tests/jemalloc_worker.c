// SPDX-License-Identifier: MIT
/*
 * A jemalloc-probe test target. Linked against a jemalloc built with -g
 * (tests/jemalloc_build.sh), statically or as a shared library, or against
 * nothing (glibc malloc) as the non-jemalloc control.
 *
 *   jemalloc_worker FD hold            main thread holds 16 MiB
 *   jemalloc_worker FD threads N       N sleeping threads (+ main holding)
 *   jemalloc_worker FD churn           threads created and joined forever;
 *                                      extra: the main thread's
 *                                      thread.allocated, which stays put
 *                                      (0 without jemalloc)
 *   jemalloc_worker FD spin [N]        one thread malloc/free in a loop,
 *                                      ops count readable at a shared page,
 *                                      plus N sleeping threads
 *   jemalloc_worker FD report N        N threads, thread i holding (i + 1)
 *                                      MiB, each writing "T <tid> <allocated>
 *                                      <deallocated>\n" from its own
 *                                      mallctl("thread.allocated") and
 *                                      ("thread.deallocated") before it
 *                                      blocks (jemalloc builds only)
 *
 * Writes "R <tid> <extra>\n" on FD when set up, then runs until killed.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#define HOLD (16u << 20)

/* jemalloc's, where the worker is linked against it; the glibc control
 * has none. */
extern int mallctl(const char *name, void *oldp, size_t *oldlenp, void *newp,
		   size_t newlen) __attribute__((weak));

static _Atomic unsigned long spin_ops;
static int report_fd;
static _Atomic long reporters_done;
static _Atomic long sleepers_ready;

static void *sleeper(void *arg)
{
	void *p = malloc(64);

	(void)arg;
	__asm__ volatile("" : : "r"(p) : "memory");
	atomic_fetch_add(&sleepers_ready, 1);
	for (;;)
		pause();
	free(p);
	return NULL;
}

/* Thread i of report: its allocation, then its own counters, then it
 * blocks without touching jemalloc again. */
static void *reporter(void *arg)
{
	long i = (long)arg;
	void *p = malloc((size_t)(i + 1) << 20);
	uint64_t a = 0, d = 0;
	size_t al = sizeof(a), dl = sizeof(d);
	char line[96];

	__asm__ volatile("" : : "r"(p) : "memory");
	if (!p || mallctl("thread.allocated", &a, &al, NULL, 0) ||
	    mallctl("thread.deallocated", &d, &dl, NULL, 0))
		_exit(3);
	snprintf(line, sizeof(line), "T %ld %llu %llu\n",
		 (long)syscall(SYS_gettid), (unsigned long long)a,
		 (unsigned long long)d);
	if (write(report_fd, line, strlen(line)) < 0)
		_exit(3);
	atomic_fetch_add(&reporters_done, 1);
	for (;;)
		pause();
	return p;
}

static void *nothing(void *arg)
{
	void *p = malloc(32);

	free(p);
	return arg;
}

static void *spinner(void *arg)
{
	(void)arg;
	for (;;) {
		void *p = malloc(128);

		__asm__ volatile("" : : "r"(p) : "memory");
		free(p);
		atomic_fetch_add_explicit(&spin_ops, 1, memory_order_relaxed);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	int fd;
	char *hold;
	char msg[128];
	unsigned long extra = 0;

	if (argc < 3)
		return 2;
	fd = atoi(argv[1]);
	/* Above jemalloc's thread-cache limit: a real huge allocation
	 * counted once in this thread's thread_allocated. */
	hold = malloc(HOLD);
	if (!hold)
		return 1;
	memset(hold, 1, HOLD);
	/* Kept: a compiler may drop an allocation nothing reads (clang
	 * does). */
	__asm__ volatile("" : : "r"(hold) : "memory");
	if ((!strcmp(argv[2], "threads") || !strcmp(argv[2], "spin")) &&
	    argc > 3) {
		long n = atol(argv[3]);

		for (long i = 0; i < n; i++) {
			pthread_t t;

			if (pthread_create(&t, NULL, sleeper, NULL))
				return 1;
		}
		/* Ready only once every sleeper has allocated. */
		while (atomic_load(&sleepers_ready) < n)
			usleep(1000);
	}
	if (!strcmp(argv[2], "report") && argc > 3) {
		long n = atol(argv[3]);
		uint64_t epoch = 1;
		size_t el = sizeof(epoch);

		/* ctl's first use allocates: here, not in a reporter. */
		if (!mallctl || mallctl("epoch", &epoch, &el, NULL, 0))
			return 4;
		report_fd = fd;
		for (long i = 0; i < n; i++) {
			pthread_t t;

			if (pthread_create(&t, NULL, reporter, (void *)i))
				return 1;
		}
		while (atomic_load(&reporters_done) < n)
			usleep(1000);
	}
	if (!strcmp(argv[2], "churn")) {
		pthread_t t;
		uint64_t a = 0, epoch = 1;
		size_t al = sizeof(a), el = sizeof(epoch);

		/* One thread made and joined first: the main thread allocates
		 * its DTV, and every later thread reuses that stack and DTV,
		 * so what the main thread reports is what it keeps. ctl's
		 * first use allocates too (epoch, as in report). */
		if (pthread_create(&t, NULL, nothing, NULL) ||
		    pthread_join(t, NULL))
			return 1;
		if (mallctl && (mallctl("epoch", &epoch, &el, NULL, 0) ||
				mallctl("thread.allocated", &a, &al, NULL, 0)))
			return 4;
		snprintf(msg, sizeof(msg), "R %ld %llu\n",
			 (long)syscall(SYS_gettid), (unsigned long long)a);
		if (write(fd, msg, strlen(msg)) < 0)
			return 1;
		for (;;) {
			if (pthread_create(&t, NULL, nothing, NULL) == 0)
				pthread_join(t, NULL);
		}
	} else if (!strcmp(argv[2], "spin")) {
		pthread_t t;
		/* The test reads the ops counter with process_vm_readv. */
		extra = (unsigned long)&spin_ops;
		if (pthread_create(&t, NULL, spinner, NULL))
			return 1;
	}
	snprintf(msg, sizeof(msg), "R %ld %lu\n", (long)syscall(SYS_gettid),
		 extra);
	if (write(fd, msg, strlen(msg)) < 0)
		return 1;
	for (;;)
		pause();
	free(hold);
	return 0;
}
