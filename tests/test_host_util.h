/* SPDX-License-Identifier: MIT */
/*
 * Helpers shared by the host-context end-to-end tests (test_host_e2e.c,
 * test_host_live.c): run the built ctprof-core with host-context alone on
 * given roots and read host values back. Test code only.
 */
#ifndef CTP_TEST_HOST_UTIL_H
#define CTP_TEST_HOST_UTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "reader.h"

/* Result of one capture; paths live in a private temporary directory. */
struct host_run {
	char dir[512];
	char cfg[600], out[600], log[600];
	struct ctp_snap *snap;
};

/*
 * Capture with host-context (required) on the given roots (NULL: the
 * config's default, i.e. the live /proc or /sys). Returns 0 with r->snap
 * open, or a negative errno / the exit status (> 0) with the child's
 * stderr shown and the temporary directory already removed.
 */
int host_capture(const char *proc, const char *sys, struct host_run *r);
/* Free the snapshot and remove the temporary directory. */
void host_run_done(struct host_run *r);

/* The host value of `name` (absent when the field does not exist or is
 * not host scope). */
struct ctp_value host_value(const struct ctp_snap *s, const char *name);
/* A host string equals want; false (with a message on stderr) otherwise. */
bool host_str_is(const struct ctp_snap *s, const char *name, const char *want);
/* A host U64 (or I64 when is_i64) equals want; false with a message. */
bool host_u64_is(const struct ctp_snap *s, const char *name, uint64_t want);
bool host_i64_is(const struct ctp_snap *s, const char *name, int64_t want);
/* A plugin summary counter of host-context, or UINT64_MAX when missing. */
uint64_t host_summary(const struct ctp_snap *s, const char *name);

/* The allocator ctprof-core was built to use. */
#ifdef CTP_TEST_WITH_JEMALLOC
#define HOST_EXPECT_ALLOCATOR "jemalloc"
#else
#define HOST_EXPECT_ALLOCATOR "glibc"
#endif

#include "sanitizer.h"

/* Under AddressSanitizer malloc is ASan's: glibc's mallinfo2 sees an
 * unused arena and reports zeros (the allocator is still "glibc"). */
#define HOST_ASAN CTP_TEST_ASAN

#endif
