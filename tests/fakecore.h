/* SPDX-License-Identifier: MIT */
/*
 * The core's own setters (api.c) on a row of a real capture, for the
 * plugin tests' harness (fakeapi.c), which cannot include engine.h: both
 * define a struct ctp_ctx and a struct ctp_record.
 */
#ifndef CTP_TEST_FAKECORE_H
#define CTP_TEST_FAKECORE_H

#include <stddef.h>
#include <stdint.h>

#include "model.h"

/* The table rows of `scope` live in, and their identity columns. */
struct ctp_table *fakecore_table(struct ctp_capture *cap, uint8_t scope,
				 uint32_t *ident);

/* ctp_api.set_<type> of the core for plugin 0 on row `row` of scope's
 * table: v for numbers, bool and char; (p, n) for a string (bytes) or a
 * cpu set (n words). Returns what the core's setter returns. */
int fakecore_set(struct ctp_capture *cap, uint8_t scope, uint32_t row,
		 int field, uint8_t type, uint64_t v, const void *p, size_t n);

#endif
