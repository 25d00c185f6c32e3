/* SPDX-License-Identifier: MIT */
/*
 * Loading the bpf-task program in a live test, or saying why the host
 * cannot: shared by test_bpftask_live.c and test_bpftask_walk.c. Test
 * code only.
 */
#ifndef CTP_TEST_BPFTASK_OPEN_H
#define CTP_TEST_BPFTASK_OPEN_H

#include <errno.h>
#include <stdio.h>
#include <unistd.h>

#include "bpftask.h"

/* Open the program with flags into *b: 0; 77 (the test's skip, said)
 * where the host lacks root, the program or the capabilities; 1 (said)
 * on any other failure. why (whylen bytes) holds the loader's reason. */
static inline int bpftask_test_open(struct ctp_bpftask **b, unsigned flags,
				    char *why, size_t whylen)
{
	int r;

	if (geteuid() != 0) {
		printf("SKIP: not root (the program needs CAP_BPF + "
		       "CAP_PERFMON)\n");
		return 77;
	}
	r = ctp_bpftask_open_flags(b, flags, why, whylen);
	if (r == -ENOENT || r == -EPERM || r == -EACCES) {
		printf("SKIP: %s\n", why);
		return 77;
	}
	if (r < 0) {
		printf("FAIL: %s\n", why);
		return 1;
	}
	return 0;
}

#endif
