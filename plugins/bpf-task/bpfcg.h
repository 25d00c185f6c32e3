/*
 * A task's cgroup v1 membership from the iter/task pass (README.md "The
 * cgroup-v1 source"): the program notes each css_set it meets, once a
 * pass, in the map `cgsets` (key: the css_set's address, an opaque key
 * that never leaves this process), and the record of every task carries
 * the key of its css_set (ctp_bpftask_rec.cg_set). Shared by the BPF
 * program and user space: fixed-width types, no padding.
 */
#ifndef CTP_BPFCG_H
#define CTP_BPFCG_H

#include <linux/types.h>

/* Most v1 hierarchies a css_set is noted with; one with more is not. */
#define CTP_BPFCG_MAX_PAIRS 16
/* Links a css_set is noted with: the v1 ones and the default's. */
#define CTP_BPFCG_MAX_LINKS (CTP_BPFCG_MAX_PAIRS + 1)

struct ctp_bpfcg_pair {
	__u32 hier; /* cgroup_root.hierarchy_id, 0 for the v2 one */
	__u32 pad;
	__u64 id; /* kernfs_node.id of the cgroup */
};

/* The value of `cgsets`: a css_set's cgroups, one a link in the order of
 * its cgrp_links (the default hierarchy's among them), as the pass `gen`
 * found them (an entry of another pass is stale: rewritten when met
 * again). */
struct ctp_bpfcg_set {
	__u64 gen;
	__u32 n, pad;
	struct ctp_bpfcg_pair p[CTP_BPFCG_MAX_LINKS];
};

#ifndef __bpf__
#include <stddef.h>
#include <stdint.h>

_Static_assert(sizeof(struct ctp_bpfcg_set) == 288,
	       "ctp_bpfcg_set has padding or changed size");

struct ctp_src_cgroup_v1;

/* One entry of `cgsets` as read after a pass. */
struct ctp_bpfcg_entry {
	__u64 key;
	struct ctp_bpfcg_set set;
};

/*
 * Keep the entries of pass gen among e[0 .. n) (the rest are other
 * passes' css_sets, or entries that do not hold: n above the bound, more
 * than CTP_BPFCG_MAX_PAIRS v1 links, a hierarchy twice), sorted by key for
 * ctp_bpfcg_find. Returns how many are kept (at the front of e). Pure.
 */
size_t ctp_bpfcg_keep(struct ctp_bpfcg_entry *e, size_t n, __u64 gen);

/* The entry of key in e[0 .. n) as ctp_bpfcg_keep left them, or NULL (key
 * 0 never has one). Pure. */
const struct ctp_bpfcg_entry *ctp_bpfcg_find(const struct ctp_bpfcg_entry *e,
					     size_t n, __u64 key);

/* A css_set's v1 pairs (its links but the default hierarchy's) as the
 * source "cgroup-v1" offers them (include/ctprof/source-cgroup-v1.h) from
 * an entry ctp_bpfcg_keep kept. Pure. */
void ctp_bpfcg_to_src(const struct ctp_bpfcg_set *s,
		      struct ctp_src_cgroup_v1 *out);
#endif

#endif /* CTP_BPFCG_H */
