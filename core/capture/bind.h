/* SPDX-License-Identifier: MIT */
/*
 * Bound values (ctp_api.field_bind): thread fields a plugin declared to be
 * values of a value source (struct ctp_source_desc.n_values), which the
 * core copies into their cells itself, for every thread, before the thread
 * callbacks, instead of each plugin asking the source and setting them one
 * by one. A plugin that has nothing else to do for a thread whose bindings
 * were all served is then not called at all (ctp_api.thread_skip_bound).
 */
#ifndef CTP_CAPTURE_BIND_H
#define CTP_CAPTURE_BIND_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ctprof/plugin.h"

struct ctp_table;

/* One binding: the cell's column (in the thread table, after the identity
 * columns), its type, and the source's value number. */
struct ctp_bind {
	uint32_t col;
	uint16_t value;
	uint16_t guard; /* CTP_BIND_GUARD's g + 1, 0: none */
	uint8_t type;
	int8_t src; /* the engine's source index this capture, -1: none */
};

/* A plugin's bindings. The source they name, one per plugin (a plugin
 * binding values of two sources is refused: -EINVAL). */
struct ctp_binds {
	/* v[0 .. n_plain) are plain: no guard, u64 or i64, the value stored
	 * as it is; the others follow. */
	struct ctp_bind *v;
	uint32_t n, n_plain;
	char source[CTP_SOURCE_NAME_MAX + 1];
	int8_t src;	  /* resolved for this capture, -1: not served */
	uint32_t top;	  /* values a thread's bytes must hold: the highest
			   * value or guard named, plus one */
	bool skip;	  /* thread_skip_bound */
	int skip_counter; /* a summary counter, -1: none */
	/* The valid bits every binding needs (its value's, its guard's):
	 * bytes that offer them all are copied without a test a binding. */
	uint64_t need[CTP_BIND_MAX_VALUE / 64];
};

/* A value source as the engine registered it. */
struct ctp_valsrc {
	uint32_t n_values, valid_words;
};

/* Add a binding of column col (type, from the registry) to value `value`
 * of `source` (with CTP_BIND_GUARD bits). 0, -EINVAL, -ENOSPC, -ENOMEM. */
int ctp_binds_add(struct ctp_binds *b, uint32_t col, uint8_t type,
		  const char *source, uint32_t value);
void ctp_binds_free(struct ctp_binds *b);

/* Resolve b against a source table (names[i], vs[i] of n), for one capture:
 * b->src is the source's index, or -1 when it is absent or not a value
 * source, or a binding lies past its values or valid words. */
void ctp_binds_resolve(struct ctp_binds *b, const char *const *names,
		       const struct ctp_valsrc *vs, uint32_t n);

/* Copy b's bound values from a value source's bytes (data, len as its fill
 * made them, words its valid_words) into row `row` of table t, columns
 * offset by `ident`. Returns true when every binding was served; else
 * none of b's cells is left set (bytes too short for b->top values serve
 * none). Pure but for the cells. */
bool ctp_binds_apply(const struct ctp_binds *b, const void *data, size_t len,
		     uint32_t words, struct ctp_table *t, uint32_t row,
		     uint32_t ident);

#endif
