/* SPDX-License-Identifier: MIT */
/*
 * A copy of a jemalloc build (a library, or an executable with jemalloc
 * linked in) whose version string no layouts entry knows: the same bytes
 * but the commit in "X.Y.Z-N-g<40 hex>", so nothing moves. For the tests
 * of a jemalloc without DWARF that the shipped table does not serve.
 */
#ifndef CTP_TEST_JEMALLOC_UNKNOWN_H
#define CTP_TEST_JEMALLOC_UNKNOWN_H

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "jep.h"

/* 0, or -1 when src cannot be read, holds no version string (as
 * jemalloc-probe finds it: ctp_jep_find_version), or dst cannot be written
 * (mode 0755). */
static inline int jt_unknown_version(const char *src, const char *dst)
{
	FILE *f = fopen(src, "rbe");
	char *data = NULL, *v, version[80];
	long len;
	int r = -1;

	if (!f || fseek(f, 0, SEEK_END) || (len = ftell(f)) <= 0 ||
	    fseek(f, 0, SEEK_SET) || !(data = malloc((size_t)len)) ||
	    fread(data, 1, (size_t)len, f) != (size_t)len ||
	    ctp_jep_find_version(data, (size_t)len, version, sizeof(version)) <
		    0 ||
	    !(v = memmem(data, (size_t)len, version, strlen(version))))
		goto out;
	/* The commit's first ten hex digits, after "-g". */
	memcpy(v + (strstr(version, "-g") - version) + 2, "0000000000", 10);
	int fd = open(dst, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0755);
	if (fd >= 0 && write(fd, data, (size_t)len) == len && !close(fd))
		r = 0;
	else if (fd >= 0)
		close(fd);
out:
	if (f)
		fclose(f);
	free(data);
	return r;
}

#endif
