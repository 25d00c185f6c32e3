/* SPDX-License-Identifier: MIT */
/*
 * The thread ids of a live process, from /proc: shared by the live tests
 * that check a source's tasks against the kernel's own list. Test code
 * only.
 */
#ifndef CTP_TEST_PROC_TIDS_H
#define CTP_TEST_PROC_TIDS_H

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/types.h>

/* The threads of pid in readdir order, at most max: how many, or a
 * negative errno when /proc/pid/task cannot be opened. */
static inline int test_list_tids(pid_t pid, int *tids, int max)
{
	char path[64];
	struct dirent *e;
	int n = 0;
	DIR *d;

	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	if (!(d = opendir(path)))
		return -errno;
	while (n < max && (e = readdir(d)))
		if (e->d_name[0] != '.')
			tids[n++] = atoi(e->d_name);
	closedir(d);
	return n;
}

#endif
