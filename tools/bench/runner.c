/* SPDX-License-Identifier: MIT */
/*
 * ctp-bench-run: run one program and report what wait4() says about it.
 *
 *   ctp-bench-run OUT ERR PROGRAM [ARG...]
 *
 * Runs PROGRAM with stdin /dev/null, stdout to OUT and stderr to ERR, reaps
 * it with wait4() and prints one line:
 *
 *   exit STATUS user SECS sys SECS wall SECS maxrss KIB
 *
 * STATUS is the exit code, or 128 + the signal that killed it.
 *
 * Why a C helper: exec keeps the old address space's RSS high-water mark in
 * ru_maxrss, so a child spawned from the Python driver would report at least
 * the interpreter's ~14 MiB. Spawned from here (posix_spawn, which shares
 * this small image until exec) the floor is this helper's own ~1 MiB.
 * Wall time is spawn to reap on CLOCK_MONOTONIC.
 *
 * Exit status: 0 when the line was printed, 2 usage, 1 spawn failure.
 */
#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

static double secs(struct timeval tv)
{
	return (double)tv.tv_sec + (double)tv.tv_usec / 1e6;
}

static double mono(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	posix_spawn_file_actions_t fa;
	struct rusage ru;
	pid_t pid;
	int status, r;

	if (argc < 4) {
		fprintf(stderr,
			"Usage: ctp-bench-run OUT ERR PROGRAM [ARG...]\n");
		return 2;
	}
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
	posix_spawn_file_actions_addopen(&fa, 1, argv[1],
					 O_WRONLY | O_CREAT | O_TRUNC, 0600);
	posix_spawn_file_actions_addopen(&fa, 2, argv[2],
					 O_WRONLY | O_CREAT | O_TRUNC, 0600);
	double t0 = mono();
	r = posix_spawn(&pid, argv[3], &fa, NULL, argv + 3, environ);
	posix_spawn_file_actions_destroy(&fa);
	if (r != 0) {
		fprintf(stderr, "ctp-bench-run: %s: %s\n", argv[3],
			strerror(r));
		return 1;
	}
	while (wait4(pid, &status, 0, &ru) < 0) {
		if (errno != EINTR) {
			perror("ctp-bench-run: wait4");
			return 1;
		}
	}
	double wall = mono() - t0;
	int code =
		WIFEXITED(status)
			? WEXITSTATUS(status)
			: (WIFSIGNALED(status) ? 128 + WTERMSIG(status) : 255);
	printf("exit %d user %.6f sys %.6f wall %.6f maxrss %ld\n", code,
	       secs(ru.ru_utime), secs(ru.ru_stime), wall, ru.ru_maxrss);
	return 0;
}
