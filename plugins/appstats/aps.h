/* SPDX-License-Identifier: MIT */
/*
 * appstats internals: checking a copy of an application's registry
 * (docs/APPSTATS.md) and taking its stable slots. Pure functions over the
 * bytes read out of the process, so tests and the fuzzer feed them
 * anything; they never read past the lengths they are given.
 */
#ifndef CTP_APS_H
#define CTP_APS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define CTP_APS_SYMBOL	   "ctprof_appstats_v1"
#define CTP_APS_MAGIC	   0x3154535041505443ull /* "CTPAPST1" */
#define CTP_APS_VERSION	   1u
#define CTP_APS_HDR_SIZE   64u
#define CTP_APS_FIELD_SIZE 56u
#define CTP_APS_NAME_MAX   48u /* with its NUL */
/* Bounds a reader holds any registry to, whatever it claims. */
#define CTP_APS_MAX_BYTES  (16u << 20)
#define CTP_APS_MAX_FIELDS 256u
#define CTP_APS_MAX_SLOTS  65536u

/* Outcomes per process: stable strings (summary counters "tag.<name>",
 * the process field appstats.status). The first three are routine. */
#define CTP_APS_TAGS(X)                                                        \
	X(CTP_APS_NONE, "none")		    /* no registry symbol: routine */  \
	X(CTP_APS_EXITED, "process-exited") /* routine */                      \
	X(CTP_APS_UNSET, "unset")	    /* symbol, nothing declared yet */ \
	X(CTP_APS_OK, "ok")                                                    \
	X(CTP_APS_MAPS, "maps-read")                                           \
	X(CTP_APS_READ, "process-vm-readv")                                    \
	X(CTP_APS_BAD_MAGIC, "bad-magic")                                      \
	X(CTP_APS_BAD_VERSION, "bad-version")                                  \
	X(CTP_APS_BAD_LAYOUT, "bad-layout")                                    \
	X(CTP_APS_BAD_FIELD, "bad-field")                                      \
	X(CTP_APS_CHANGED, "changed")                                          \
	X(CTP_APS_CONFLICT, "conflict") /* fields: see ctp_aps_name_claim */   \
	X(CTP_APS_MAX_NAMES, "max-names")                                      \
	X(CTP_APS_NAMES_FULL, "names-full")                                    \
	X(CTP_APS_TOO_LARGE, "too-large") /* over max_registry_bytes */        \
	X(CTP_APS_BUDGET, "time-budget")  /* not read: the capture's budget */

enum ctp_aps_tag {
#define CTP_APS_TAG_ID(id, name) id,
	CTP_APS_TAGS(CTP_APS_TAG_ID)
#undef CTP_APS_TAG_ID
		CTP_APS_N_TAGS
};
const char *ctp_aps_tag_name(enum ctp_aps_tag t);
/* A tag of a registry refused as corrupt or hostile (nothing recorded). */
bool ctp_aps_tag_corrupt(enum ctp_aps_tag t);
/* A tag of a registry read with some of its fields left out (the others
 * recorded): conflict, max-names, names-full. */
bool ctp_aps_tag_partial(enum ctp_aps_tag t);

/* The header's numbers, as checked. */
struct ctp_aps_hdr {
	uint32_t version, size, max_fields, max_slots;
	uint32_t field_size, slot_size, fields_off, slots_off, n_fields;
	uint64_t dropped, fork_gen;
};

/*
 * Check the header in the first len bytes of buf (at least
 * CTP_APS_HDR_SIZE); `bound` is the most bytes the registry may span (the
 * symbol's size in the ELF file, 0 when it has none). CTP_APS_OK with *h,
 * CTP_APS_UNSET (magic 0: nothing declared), or the refusal's tag with
 * *why. Every region the header names lies inside h->size, which lies
 * inside bound and CTP_APS_MAX_BYTES.
 */
enum ctp_aps_tag ctp_aps_header(const void *buf, size_t len, uint64_t bound,
				struct ctp_aps_hdr *h, const char **why);

struct ctp_aps_field {
	char name[CTP_APS_NAME_MAX];
	uint8_t unit, kind, rule;
};

/* Check the n_fields declared fields of a registry image (len >= h->size
 * bytes) into out[h->n_fields]: CTP_APS_OK, or CTP_APS_BAD_FIELD with *why
 * and *bad (the index). Names are [a-z0-9_.], 1 to 47 bytes, distinct. */
enum ctp_aps_tag ctp_aps_fields(const void *img, size_t len,
				const struct ctp_aps_hdr *h,
				struct ctp_aps_field *out, uint32_t *bad,
				const char **why);

/* Whether two images (len >= h->size) of one registry have the same
 * layout and the same declared fields: the registry did not change its
 * shape between them (n_fields may have grown in b). */
bool ctp_aps_same_shape(const void *a, const void *b, size_t len,
			const struct ctp_aps_hdr *h);

/* What ctp_aps_slots saw. */
struct ctp_aps_slot_stats {
	uint32_t kept, torn, dup;
};

/*
 * The stable, owned slots of three images of one registry copied one after
 * the other, a, then v, then b: a slot is kept when its tid is positive and
 * the same in a and b and its seq the same even number in a and b, with
 * the values of v, copied wholly after a and before b (so whatever order a
 * copy moves bytes in, no claim or release happened while v's values were
 * read). Two kept slots of one tid are both dropped (dup). For each kept
 * slot, fn(arg, tid, values) with h->n_fields values. Returns the number
 * kept.
 */
typedef void (*ctp_aps_slot_fn)(void *arg, int32_t tid, const uint64_t *values);
uint32_t ctp_aps_slots(const void *a, const void *v, const void *b, size_t len,
		       const struct ctp_aps_hdr *h, ctp_aps_slot_fn fn,
		       void *arg, struct ctp_aps_slot_stats *st);

/*
 * The names a collector run has seen, each owned by the first declaration
 * seen: its name with its unit, kind and rule, and the process that
 * declared it (a tgid). A declaration of a known name is the owner's
 * field only when its unit, kind and rule are the owner's too.
 */
struct ctp_aps_name {
	struct ctp_aps_field f;
	int32_t owner;
	char owner_comm[16];
	int h; /* what the core answered: a field handle, or its refusal */
};

enum ctp_aps_claim {
	CTP_APS_CLAIM_KNOWN,	 /* *idx: the same name, unit, kind, rule */
	CTP_APS_CLAIM_NEW,	 /* free to append at index n */
	CTP_APS_CLAIM_CONFLICT,	 /* *idx: the name, owned otherwise */
	CTP_APS_CLAIM_MAX_NAMES, /* owner already owns max_names names */
	CTP_APS_CLAIM_FULL,	 /* n == cap */
};

/* What declaring f means for `owner` among names[0, n) of a table of cap
 * entries, where one owner may own at most max_names. */
enum ctp_aps_claim ctp_aps_name_claim(const struct ctp_aps_name *names,
				      size_t n, size_t cap,
				      const struct ctp_aps_field *f,
				      int32_t owner, uint32_t max_names,
				      size_t *idx);

/* "unit/kind/rule" of a field, e.g. "count/counter/sum", into buf (always
 * terminated); the length snprintf would have written. */
int ctp_aps_desc(const struct ctp_aps_field *f, char *buf, size_t len);

#endif /* CTP_APS_H */
