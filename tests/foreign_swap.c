// SPDX-License-Identifier: MIT
/*
 * The local user of issue 28 point 1, for test_foreign_files.c: run as an
 * unprivileged user in a directory it owns, it maps files of its own as
 * executable, each with a FIFO beside it, and publishes app.swap_seen =
 * 4242 (include/ctprof/appstats.h).
 *
 *   foreign_swap DIR FD
 *
 * DIR/loop/f<i> it keeps exchanging with the FIFO DIR/loop/x<i>
 * (renameat2 RENAME_EXCHANGE; /proc/PID/maps names each file as it is
 * called at the moment), and every 64 rounds it replaces one by a new
 * file, a new inode no cache of a collector knows. DIR/ctp-swap/f<i> it
 * leaves to the test's swap_shim.c, which exchanges the two names after
 * every lookup the collector makes there: the attacker's best timing,
 * every time. The files sit at low fixed addresses, below the executable,
 * so a plugin that scans the executable mappings in address order meets
 * them before the registry. It writes "R <pid>\n" on FD when set up, then
 * swaps until killed.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ctprof/appstats.h"

#define FILES 8
#define PAGE  4096
#define BASE  0x10000000ul /* far below a PIE executable */

static int gen;		    /* names of new files */
static bool swapped[FILES]; /* loop/: the file is x<i>, the FIFO f<i> */

/* A new one-page file mapped executable at slot `slot`, named `name` in
 * dfd (an old file of that name is replaced and unlinked). */
static int map_new(int dfd, int slot, const char *name)
{
	static const char page[PAGE];
	char tmp[32];
	void *p;
	int fd;

	snprintf(tmp, sizeof(tmp), "t%d", gen++);
	fd = openat(dfd, tmp, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	if (fd < 0 || write(fd, page, PAGE) != PAGE)
		return -1;
	p = mmap((void *)(BASE + (unsigned long)slot * 0x100000ul), PAGE,
		 PROT_READ | PROT_EXEC, MAP_PRIVATE | MAP_FIXED, fd, 0);
	close(fd);
	if (p == MAP_FAILED || renameat(dfd, tmp, dfd, name))
		return -1;
	return 0;
}

/* FILES files f<i>, each mapped at its slot from `first`, and FIFOs x<i>
 * in the new directory `sub` of top: its descriptor, or -1. */
static int set_up(int top, const char *sub, int first)
{
	int dfd;

	if (mkdirat(top, sub, 0755) ||
	    (dfd = openat(top, sub, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0)
		return -1;
	for (int i = 0; i < FILES; i++) {
		char f[16], x[16];

		snprintf(f, sizeof(f), "f%d", i);
		snprintf(x, sizeof(x), "x%d", i);
		if (mkfifoat(dfd, x, 0644) || map_new(dfd, first + i, f))
			return -1;
	}
	return dfd;
}

int main(int argc, char **argv)
{
	char line[32];
	int top, loop, f, out;

	if (argc != 3)
		return 2;
	out = atoi(argv[2]);
	top = open(argv[1], O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (top < 0 || set_up(top, "ctp-swap", FILES) < 0 ||
	    (loop = set_up(top, "loop", 0)) < 0) {
		perror("foreign_swap: set-up");
		return 1;
	}
	/* The loop takes what CPU is left over: tests beside this one on a
	 * small host are not slowed by it. */
	if (nice(19) < 0)
		perror("foreign_swap: nice");
	f = ctp_app_field("swap_seen", CTP_UNIT_COUNT, CTP_KIND_GAUGE,
			  CTP_RULE_MAX);
	ctp_app_set(f, 4242);
	snprintf(line, sizeof(line), "R %d\n", (int)getpid());
	if (write(out, line, strlen(line)) < 0)
		return 1;
	close(out);
	for (unsigned long round = 1;; round++) {
		for (int i = 0; i < FILES; i++) {
			char a[16], b[16];

			snprintf(a, sizeof(a), "f%d", i);
			snprintf(b, sizeof(b), "x%d", i);
			if (renameat2(loop, a, loop, b, RENAME_EXCHANGE) == 0)
				swapped[i] = !swapped[i];
		}
		if (round % 64 == 0) {
			int i = (int)(round / 64 % FILES);
			char name[16];

			snprintf(name, sizeof(name), "%c%d",
				 swapped[i] ? 'x' : 'f', i);
			if (map_new(loop, i, name))
				return 1;
		}
	}
}
