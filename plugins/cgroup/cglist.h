/* SPDX-License-Identifier: MIT */
/*
 * Every thread's cgroup v1 paths from the cgroups' own listings: per
 * capture, each hierarchy's tree is walked once and every cgroup's `tasks`
 * read, so a thread needs no `task/<tid>/cgroup` of its own (one read per
 * cgroup instead of one per thread). A thread the listings do not place
 * in every hierarchy (born after its listing, or moved while it was read)
 * falls back to its own file.
 *
 * The root cgroup's `tasks` is not read: it usually holds most threads of
 * a host, and the kernel sorts every listing it prints (pidlist), which
 * made it the listing's main cost. A thread no other cgroup lists is in
 * the root if it started before the listing did (its stat start time);
 * a younger one may have been born into any cgroup and reads its file.
 *
 * Bounded: at most CG_LIST_MAX_DIRS cgroups per hierarchy, depth
 * CG_LIST_MAX_DEPTH, paths of PATH_MAX; a hierarchy past a bound is not
 * listed (its threads read their files).
 *
 * The same walk also makes the other index (cg_listing_add_inos): every
 * cgroup by the inode of its directory, which is the kernfs id the source
 * "cgroup-v1" gives a thread's cgroup by (include/ctprof/source-cgroup-v1.h),
 * so a thread the source places needs no listing at all.
 */
#ifndef CTP_CGLIST_H
#define CTP_CGLIST_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ctprof/plugin-util.h"
#include "ctprof/source-cgroup-v1.h"

#define CG_LIST_MAX_HIER  64
#define CG_LIST_CTRL_LEN  128
#define CG_LIST_MAX_DIRS  100000
#define CG_LIST_MAX_DEPTH 64
/* A cgroup's directory inode and its key (cg_listing_add_inos). */
struct cg_ino {
	uint64_t ino;
	uint32_t key, pad;
};

struct cg_hier_list {
	char ctrl[CG_LIST_CTRL_LEN]; /* as task/<tid>/cgroup prints it */
	size_t ctrl_len;
	int handle;	   /* the hierarchy's path field */
	uint32_t root_key; /* the key of its root cgroup "/" */
	uint32_t id;	   /* hierarchy id (cg_listing_add_inos) */
	/* The threads of every other cgroup: tid -> index into keys, or
	 * CTP_ID_AMBIGUOUS (listed in two cgroups: moved while read). */
	struct ctp_id_pair *m;
	size_t n, cap;
	/* cg_listing_add_inos: every cgroup by its directory's inode. */
	struct cg_ino *ino;
	size_t n_ino, ino_cap;
};

/* One v1 cgroup row key "v1:<ctrl>:<path>" in the arena; the path is its
 * tail from path_off. */
struct cg_key {
	uint32_t off, len, path_off;
};

struct cg_listing {
	size_t n_hier;
	struct cg_hier_list h[CG_LIST_MAX_HIER];
	char *arena;
	size_t arena_len, arena_cap;
	struct cg_key *keys;
	_Atomic uint8_t *referenced; /* per key: its row referenced */
	/* Per key: its path's string handle this capture (ctp_api.str_intern),
	 * -1 until the first thread of it needs one. */
	_Atomic int64_t *path_str;
	size_t n_keys, keys_cap, ref_cap, str_cap;
	/* Scratch of the walk: the listing just read. */
	struct ctp_id_list ids;
	/* Every hierarchy of the host is listed: the thread callback may
	 * skip the files. */
	bool complete;
	uint64_t dirs, failed; /* cgroups read / hierarchies not listed */
};

/* Forget the last capture's listing (memory kept for the next). */
void cg_listing_reset(struct cg_listing *l);
void cg_listing_free(struct cg_listing *l);

/*
 * List hierarchy `ctrl` (the controller list task/<tid>/cgroup shows)
 * from its mount's root directory, dirfd (borrowed). Returns 0, or a
 * negative errno (the hierarchy is then not listed: complete turns
 * false): -ENOMEM, -E2BIG past a bound, or a read error of its root's
 * `tasks`. A cgroup below the root that vanished while walked is skipped.
 */
int cg_listing_add(struct cg_listing *l, const char *ctrl, size_t ctrl_len,
		   int handle, int dirfd);

/*
 * Index hierarchy `ctrl` (hierarchy id `id`, as /proc/<pid>/cgroup prints
 * it) from its mount's root directory, dirfd (borrowed): every cgroup's key
 * by the inode of its directory, its `tasks` not read. Returns as
 * cg_listing_add (-EEXIST: two directories with one inode).
 */
int cg_listing_add_inos(struct cg_listing *l, const char *ctrl, size_t ctrl_len,
			int handle, uint32_t id, int dirfd);

/* Sort every hierarchy's members by tid, marking tids listed twice, and
 * its inodes. */
void cg_listing_done(struct cg_listing *l);

/* tid's pair in hierarchy h (a cgroup other than the root), or NULL;
 * searched from *pos, the caller's place in h's listing (ctp_cg_pairs_seek:
 * tids asked in rising order cost a few comparisons each). */
const struct ctp_id_pair *cg_listing_find(const struct cg_listing *l, size_t h,
					  uint32_t tid, size_t *pos);

/*
 * The key of every hierarchy of l, kid[h] for l->h[h], from the pairs of a
 * thread's "cgroup-v1" source (p[0 .. n)): true when they name each
 * hierarchy of l once (no other) with a cgroup l indexed
 * (cg_listing_add_inos); false, kid undefined, otherwise (a cgroup made
 * after the walk, a hierarchy l does not have). Pure.
 */
bool cg_listing_resolve(const struct cg_listing *l,
			const struct ctp_src_cg1_pair *p, size_t n,
			uint32_t kid[CG_LIST_MAX_HIER]);

#endif
