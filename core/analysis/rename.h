/* SPDX-License-Identifier: MIT */
/*
 * Renamed cgroups (docs/COMPARE.md "Renamed cgroups"): a cgroup key that
 * exists only in CAND (a service restarted into a new scope, a container
 * with a new id) is paired with the BASE-only cgroup key whose set of
 * thread types overlaps it most, so that `compare` compares them as one
 * group. A thread type is (normalized pcomm, normalized comm), normalized
 * as group.h does it whatever --no-normalize says.
 *
 * The rule: Jaccard(types(A), types(B)) = |A n B| / |A u B| >= min_jaccard
 * and |A n B| >= min_shared; greedy best-first (highest Jaccard, then more
 * shared types, then BASE path, then CAND path) so each key pairs at most
 * once; a pair (X, Y) carries down to the one-sided descendants with the
 * same relative suffix (X/c with Y/c) without the thresholds. Private to
 * the core.
 */
#ifndef CTP_CORE_RENAME_H
#define CTP_CORE_RENAME_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "group.h"
#include "reader.h"

#define CTP_RENAME_MIN_JACCARD 0.90
#define CTP_RENAME_MIN_SHARED  10

/* Bounds on hostile snapshots: key pairs looked at plus type-list steps
 * merged, and pairs over the thresholds kept before the greedy choice.
 * Beyond either, no pair is made (ctp_rename_gave_up). */
#define CTP_RENAME_MAX_WORK	  (1ull << 26)
#define CTP_RENAME_MAX_CANDIDATES (1u << 18)

struct ctp_rename_opts {
	double min_jaccard;
	uint64_t min_shared;
};

struct ctp_rename_pair {
	/* The cgroup key part on each side (BASE, CAND), owned by the group
	 * tables the pairing was made from. */
	const char *path[2];
	double jaccard;
	uint32_t shared;     /* types both sides have */
	uint32_t n_types[2]; /* types per side */
	uint32_t threads[2]; /* threads per side */
	bool carried;	     /* paired because its parents were */
	/* The types only side k has (ctp_rename_type indexes), in order. */
	uint32_t n_only[2];
	const uint32_t *only[2];
};

struct ctp_rename;

/*
 * Pair the one-sided values of key part `part` of two group tables built
 * with the same spec (BASE g[0], CAND g[1]); NULL key parts (unknown
 * cgroup) never pair. The tables must outlive the result. Returns 0 and
 * *ret, or -ENOMEM.
 */
int ctp_rename_new(struct ctp_groups *const g[2], size_t part,
		   const struct ctp_rename_opts *o, struct ctp_rename **ret);
void ctp_rename_free(struct ctp_rename *r);

/* The pairs, best first (a carried pair right after its parent's). */
size_t ctp_rename_count(const struct ctp_rename *r);
const struct ctp_rename_pair *ctp_rename_at(const struct ctp_rename *r,
					    size_t i);
/* The pair whose side-k path is `path`, or NULL. */
const struct ctp_rename_pair *ctp_rename_find(const struct ctp_rename *r, int k,
					      const char *path);
/* Too many one-sided keys or candidate pairs for the bounds: none made. */
bool ctp_rename_gave_up(const struct ctp_rename *r);
/* One-sided keys per side that were considered. */
size_t ctp_rename_one_sided(const struct ctp_rename *r, int k);
/* Type t's normalized process and thread names (empty when unknown);
 * any byte may occur in them. */
void ctp_rename_type(const struct ctp_rename *r, uint32_t t,
		     struct ctp_bytes *pcomm, struct ctp_bytes *comm);

#endif
