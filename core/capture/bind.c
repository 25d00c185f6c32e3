// SPDX-License-Identifier: MIT
/*
 * Bound values (bind.h): a plugin's bindings and the per-thread copy.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "bind.h"
#include "model.h"

int ctp_binds_add(struct ctp_binds *b, uint32_t col, uint8_t type,
		  const char *source, uint32_t value)
{
	size_t len = source ? strlen(source) : 0;
	uint32_t guard = value >> 16;

	value &= 0xffff;
	if (!len || len > CTP_SOURCE_NAME_MAX || value >= CTP_BIND_MAX_VALUE ||
	    guard > CTP_BIND_MAX_VALUE)
		return -EINVAL;
	if (type != CTP_TYPE_U64 && type != CTP_TYPE_I64 &&
	    type != CTP_TYPE_CHAR && type != CTP_TYPE_BOOL)
		return -EINVAL;
	if (b->n && strcmp(b->source, source) != 0)
		return -EINVAL;
	for (uint32_t i = 0; i < b->n; i++)
		if (b->v[i].col == col)
			return -EINVAL;
	if (b->n == CTP_MAX_BINDS)
		return -ENOSPC;
	if (!b->n) {
		free(b->v);
		b->v = malloc(CTP_MAX_BINDS * sizeof(*b->v));
		if (!b->v)
			return -ENOMEM;
		memcpy(b->source, source, len + 1);
		b->src = -1;
		memset(b->need, 0, sizeof(b->need));
		b->n_plain = 0;
	}
	b->need[value / 64] |= 1ull << (value % 64);
	if (guard)
		b->need[(guard - 1) / 64] |= 1ull << ((guard - 1) % 64);
	if (value + 1 > b->top)
		b->top = value + 1;
	if (guard > b->top)
		b->top = guard;
	struct ctp_bind k = {
		.col = col,
		.value = (uint16_t)value,
		.guard = (uint16_t)guard,
		.type = type,
		.src = -1,
	};
	if (!guard && (type == CTP_TYPE_U64 || type == CTP_TYPE_I64)) {
		/* Kept ahead of the others: the first of them moves last. */
		if (b->n_plain < b->n)
			b->v[b->n] = b->v[b->n_plain];
		b->v[b->n_plain++] = k;
		b->n++;
	} else {
		b->v[b->n++] = k;
	}
	return 0;
}

void ctp_binds_free(struct ctp_binds *b)
{
	free(b->v);
	b->v = NULL;
	b->n = 0;
	b->n_plain = 0;
	b->top = 0;
}

void ctp_binds_resolve(struct ctp_binds *b, const char *const *names,
		       const struct ctp_valsrc *vs, uint32_t n)
{
	b->src = -1;
	if (!b->n)
		return;
	for (uint32_t i = 0; i < n; i++) {
		if (strcmp(names[i], b->source) != 0)
			continue;
		/* Not a value source (n_values 0), or too few values. */
		if (b->top > vs[i].n_values ||
		    (b->top + 63) / 64 > vs[i].valid_words)
			return;
		b->src = (int8_t)i;
		return;
	}
}

/* Bit i of the valid words at valid. */
static inline bool offered(const char *valid, uint32_t i)
{
	uint64_t w;

	memcpy(&w, valid + (i / 64) * sizeof(w), sizeof(w));
	return w >> (i % 64) & 1;
}

bool ctp_binds_apply(const struct ctp_binds *b, const void *data, size_t len,
		     uint32_t words, struct ctp_table *t, uint32_t row,
		     uint32_t ident)
{
	const char *p = data;
	uint32_t hdr[2];
	size_t head = sizeof(hdr) + (size_t)words * sizeof(uint64_t);

	/* Bytes that lack a value some binding names serve none of them:
	 * nothing is set, and a row's cells are empty until set. */
	if (!p || len < head || !b->n)
		return false;
	memcpy(hdr, p, sizeof(hdr));
	if (hdr[0] != 1 || hdr[1] > len ||
	    hdr[1] < head + (size_t)b->top * sizeof(uint64_t) ||
	    (b->top + 63) / 64 > words || row >= t->nrows)
		return false;

	/* Per binding a bit test, a load and a store, the row's block
	 * found once and its column arrays held in a cursor (model.h). */
	const char *valid = p + sizeof(hdr), *vals = p + head;
	struct ctp_row_cur c = ctp_row_cur(t, row);
	bool all = true, every = true;

	/* Usually every value a plugin binds is offered: one test a word
	 * of the valid bits, then none a binding. */
	for (uint32_t w = 0; w < (b->top + 63) / 64 && every; w++) {
		uint64_t v;
		memcpy(&v, valid + w * sizeof(v), sizeof(v));
		every = (v & b->need[w]) == b->need[w];
	}

	/* The plain bindings of bytes that offer every value: a load and a
	 * store each. */
	const struct ctp_bind *k = b->v;
	if (every) {
		for (const struct ctp_bind *end = k + b->n_plain; k < end;
		     k++) {
			uint64_t v;
			memcpy(&v, vals + (size_t)k->value * sizeof(v),
			       sizeof(v));
			all &= ctp_row_set(&c, ident + k->col, v) == 0;
		}
	}
	for (const struct ctp_bind *end = b->v + b->n; k < end; k++) {
		uint32_t col = ident + k->col;
		uint64_t v;

		if (k->guard) {
			if (!every && !offered(valid, k->guard - 1u)) {
				all = false;
				continue;
			}
			memcpy(&v, vals + (k->guard - 1u) * sizeof(v),
			       sizeof(v));
			if (!v)
				continue;
		}
		if (!every && !offered(valid, k->value)) {
			all = false;
			continue;
		}
		memcpy(&v, vals + (size_t)k->value * sizeof(v), sizeof(v));
		if (k->type == CTP_TYPE_CHAR)
			v = (unsigned char)v;
		else if (k->type == CTP_TYPE_BOOL)
			v = v != 0;
		all &= ctp_row_set(&c, col, v) == 0;
	}
	if (!all)
		for (uint32_t n = 0; n < b->n; n++)
			ctp_table_clear(t, row, ident + b->v[n].col);
	return all;
}
