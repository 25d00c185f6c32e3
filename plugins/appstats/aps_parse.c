// SPDX-License-Identifier: MIT
/*
 * Checking a copy of an application's appstats registry (aps.h,
 * docs/APPSTATS.md). Every offset is computed in 64 bits from numbers the
 * header check bounded first, so no product or sum wraps.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "aps.h"

static const char *const tag_names[CTP_APS_N_TAGS] = {
#define CTP_APS_TAG_NAME(id, name) [id] = name,
	CTP_APS_TAGS(CTP_APS_TAG_NAME)
#undef CTP_APS_TAG_NAME
};

const char *ctp_aps_tag_name(enum ctp_aps_tag t)
{
	return (unsigned)t < CTP_APS_N_TAGS ? tag_names[t] : "?";
}

bool ctp_aps_tag_corrupt(enum ctp_aps_tag t)
{
	return t == CTP_APS_BAD_MAGIC || t == CTP_APS_BAD_VERSION ||
	       t == CTP_APS_BAD_LAYOUT || t == CTP_APS_BAD_FIELD ||
	       t == CTP_APS_CHANGED;
}

bool ctp_aps_tag_partial(enum ctp_aps_tag t)
{
	return t == CTP_APS_CONFLICT || t == CTP_APS_MAX_NAMES ||
	       t == CTP_APS_NAMES_FULL;
}

enum ctp_aps_claim ctp_aps_name_claim(const struct ctp_aps_name *names,
				      size_t n, size_t cap,
				      const struct ctp_aps_field *f,
				      int32_t owner, uint32_t max_names,
				      size_t *idx)
{
	uint32_t owned = 0;

	for (size_t i = 0; i < n; i++) {
		const struct ctp_aps_field *k = &names[i].f;

		owned += names[i].owner == owner;
		if (strcmp(k->name, f->name))
			continue;
		*idx = i;
		return k->unit == f->unit && k->kind == f->kind &&
				       k->rule == f->rule
			       ? CTP_APS_CLAIM_KNOWN
			       : CTP_APS_CLAIM_CONFLICT;
	}
	if (owned >= max_names)
		return CTP_APS_CLAIM_MAX_NAMES;
	return n >= cap ? CTP_APS_CLAIM_FULL : CTP_APS_CLAIM_NEW;
}

int ctp_aps_desc(const struct ctp_aps_field *f, char *buf, size_t len)
{
	/* enum ctp_unit, ctp_kind, ctp_rule (include/ctprof/appstats.h) */
	static const char *const unit[] = {"none",  "count", "ns",	"us",
					   "ticks", "bytes", "centipct"};
	static const char *const kind[] = {"?",	    "counter",	   "peak",
					   "gauge", "categorical", "ordinal"};
	static const char *const rule[] = {"?",	  "sum",  "max",
					   "min", "mode", "range"};

	return snprintf(
		buf, len, "%s/%s/%s",
		f->unit < sizeof(unit) / sizeof(*unit) ? unit[f->unit] : "?",
		f->kind < sizeof(kind) / sizeof(*kind) ? kind[f->kind] : "?",
		f->rule < sizeof(rule) / sizeof(*rule) ? rule[f->rule] : "?");
}

static uint32_t u32_at(const unsigned char *p, size_t off)
{
	uint32_t v;

	memcpy(&v, p + off, sizeof(v));
	return v;
}

static uint64_t u64_at(const unsigned char *p, size_t off)
{
	uint64_t v;

	memcpy(&v, p + off, sizeof(v));
	return v;
}

static enum ctp_aps_tag bad(const char **why, const char *w)
{
	*why = w;
	return CTP_APS_BAD_LAYOUT;
}

enum ctp_aps_tag ctp_aps_header(const void *buf, size_t len, uint64_t bound,
				struct ctp_aps_hdr *h, const char **why)
{
	const unsigned char *p = buf;
	uint64_t magic, fields_end, slots_end, limit = CTP_APS_MAX_BYTES;

	*why = "";
	memset(h, 0, sizeof(*h));
	if (len < CTP_APS_HDR_SIZE)
		return bad(why, "shorter than the header");
	magic = u64_at(p, 0);
	if (magic == 0)
		return CTP_APS_UNSET;
	if (magic != CTP_APS_MAGIC) {
		*why = "not the registry's magic";
		return CTP_APS_BAD_MAGIC;
	}
	h->version = u32_at(p, 8);
	h->size = u32_at(p, 12);
	h->max_fields = u32_at(p, 16);
	h->max_slots = u32_at(p, 20);
	h->field_size = u32_at(p, 24);
	h->slot_size = u32_at(p, 28);
	h->fields_off = u32_at(p, 32);
	h->slots_off = u32_at(p, 36);
	h->n_fields = u32_at(p, 40);
	h->dropped = u64_at(p, 48);
	h->fork_gen = u64_at(p, 56);
	if (h->version != CTP_APS_VERSION) {
		*why = "a layout version this reader does not know";
		return CTP_APS_BAD_VERSION;
	}
	/* An ELF symbol smaller than the header cannot be the registry. */
	if (bound && bound < CTP_APS_HDR_SIZE)
		return bad(why, "the symbol is smaller than the header");
	if (bound && bound < limit)
		limit = bound;
	if (h->size < CTP_APS_HDR_SIZE || h->size > limit)
		return bad(why,
			   "size outside the symbol or the reader's bound");
	if (h->max_fields == 0 || h->max_fields > CTP_APS_MAX_FIELDS)
		return bad(why, "max_fields not 1 to 256");
	if (h->max_slots == 0 || h->max_slots > CTP_APS_MAX_SLOTS)
		return bad(why, "max_slots not 1 to 65536");
	if (h->field_size != CTP_APS_FIELD_SIZE)
		return bad(why, "field_size not 56");
	if (h->slot_size != 8 + 8 * (uint64_t)h->max_fields)
		return bad(why, "slot_size not 8 + 8 x max_fields");
	if (h->n_fields > h->max_fields)
		return bad(why, "n_fields above max_fields");
	if (h->fields_off < CTP_APS_HDR_SIZE || h->fields_off % 8 ||
	    h->slots_off < CTP_APS_HDR_SIZE || h->slots_off % 8)
		return bad(why, "a table inside the header or misaligned");
	fields_end = h->fields_off + (uint64_t)h->max_fields * h->field_size;
	slots_end = h->slots_off + (uint64_t)h->max_slots * h->slot_size;
	if (fields_end > h->size || slots_end > h->size)
		return bad(why, "a table past the registry's size");
	if (h->slots_off < fields_end && h->fields_off < slots_end)
		return bad(why, "the field table and the slots overlap");
	return CTP_APS_OK;
}

/* Counter: sum (1); peak: max, min (2, 3); gauge: max, min, range (2, 3,
 * 5); categorical: mode (4); ordinal: max, min, mode, range. */
static bool rule_fits(uint8_t kind, uint8_t rule)
{
	static const uint8_t allowed[6] = {0,
					   1u << 1,
					   1u << 2 | 1u << 3,
					   1u << 2 | 1u << 3 | 1u << 5,
					   1u << 4,
					   1u << 2 | 1u << 3 | 1u << 4 |
						   1u << 5};

	return kind >= 1 && kind <= 5 && rule <= 7 &&
	       (allowed[kind] >> rule & 1);
}

static bool name_ok(const char *n, size_t max)
{
	size_t len = strnlen(n, max);

	if (len == 0 || len == max)
		return false;
	/* The core's field-name rule too: no empty dotted component. */
	for (size_t i = 0; i < len; i++)
		if (!((n[i] >= 'a' && n[i] <= 'z') ||
		      (n[i] >= '0' && n[i] <= '9') || n[i] == '_' ||
		      (n[i] == '.' && i > 0 && i + 1 < len && n[i + 1] != '.')))
			return false;
	return true;
}

enum ctp_aps_tag ctp_aps_fields(const void *img, size_t len,
				const struct ctp_aps_hdr *h,
				struct ctp_aps_field *out, uint32_t *bad_idx,
				const char **why)
{
	const unsigned char *p = img;

	*why = "";
	*bad_idx = 0;
	if (len < h->size)
		return bad(why, "image shorter than the registry");
	for (uint32_t i = 0; i < h->n_fields; i++) {
		const unsigned char *f =
			p + h->fields_off + (size_t)i * h->field_size;
		struct ctp_aps_field *o = &out[i];

		*bad_idx = i;
		memcpy(o->name, f, CTP_APS_NAME_MAX);
		o->unit = f[48];
		o->kind = f[49];
		o->rule = f[50];
		if (!name_ok(o->name, CTP_APS_NAME_MAX)) {
			*why = "a name not of 1 to 47 bytes of [a-z0-9_.] "
			       "(no dot first, last or doubled)";
			return CTP_APS_BAD_FIELD;
		}
		/* enum ctp_unit, ctp_kind (no cpu sets), ctp_rule (no
		 * union): what the publishing header accepts. */
		if (o->unit > 6 || o->kind < 1 || o->kind > 5 || o->rule < 1 ||
		    o->rule > 5) {
			*why = "a unit, kind or rule outside the known sets";
			return CTP_APS_BAD_FIELD;
		}
		if (!rule_fits(o->kind, o->rule)) {
			*why = "a rule the kind does not allow";
			return CTP_APS_BAD_FIELD;
		}
		for (uint32_t k = 0; k < i; k++)
			if (!strcmp(out[k].name, o->name)) {
				*why = "a name declared twice";
				return CTP_APS_BAD_FIELD;
			}
	}
	return CTP_APS_OK;
}

bool ctp_aps_same_shape(const void *a, const void *b, size_t len,
			const struct ctp_aps_hdr *h)
{
	const unsigned char *pa = a, *pb = b;
	uint32_t nb;

	if (len < h->size)
		return false;
	/* magic through slots_off: every number that places something */
	if (memcmp(pa, pb, 40))
		return false;
	nb = u32_at(pb, 40);
	if (nb < h->n_fields)
		return false; /* fields are never taken back */
	return !memcmp(pa + h->fields_off, pb + h->fields_off,
		       (size_t)h->n_fields * h->field_size);
}

static int cmp_u64(const void *x, const void *y)
{
	uint64_t a = *(const uint64_t *)x, b = *(const uint64_t *)y;

	return (a > b) - (a < b);
}

/* Candidates as (tid << 32 | slot), sorted: a tid held by two stable slots
 * is a registry no one can attribute, so neither is kept. */
uint32_t ctp_aps_slots(const void *a, const void *v, const void *b, size_t len,
		       const struct ctp_aps_hdr *h, ctp_aps_slot_fn fn,
		       void *arg, struct ctp_aps_slot_stats *st)
{
	const unsigned char *pa = a, *pv = v, *pb = b;
	uint64_t vals[CTP_APS_MAX_FIELDS];
	uint64_t *cand;
	uint32_t nc = 0;

	memset(st, 0, sizeof(*st));
	if (len < h->size || !h->max_slots)
		return 0;
	cand = malloc((size_t)h->max_slots * sizeof(*cand));
	if (!cand)
		return 0;
	for (uint32_t j = 0; j < h->max_slots; j++) {
		size_t off = h->slots_off + (size_t)j * h->slot_size;
		int32_t ta = (int32_t)u32_at(pa, off);
		int32_t tb = (int32_t)u32_at(pb, off);
		uint32_t sa = u32_at(pa, off + 4), sb = u32_at(pb, off + 4);

		if (ta > 0 && ta == tb && sa == sb && !(sa & 1))
			cand[nc++] = (uint64_t)(uint32_t)ta << 32 | j;
		else if (ta || tb)
			st->torn++;
	}
	qsort(cand, nc, sizeof(*cand), cmp_u64);
	for (uint32_t i = 0; i < nc; i++) {
		uint32_t tid = (uint32_t)(cand[i] >> 32);
		size_t off;

		if ((i > 0 && (uint32_t)(cand[i - 1] >> 32) == tid) ||
		    (i + 1 < nc && (uint32_t)(cand[i + 1] >> 32) == tid)) {
			st->dup++;
			continue;
		}
		off = h->slots_off + (size_t)(uint32_t)cand[i] * h->slot_size;
		memcpy(vals, pv + off + 8, (size_t)h->n_fields * 8);
		fn(arg, (int32_t)tid, vals);
		st->kept++;
	}
	free(cand);
	return st->kept;
}
