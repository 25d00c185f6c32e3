/* SPDX-License-Identifier: MIT */
/*
 * The per-task source "cgroup-v1" (ctp_api.source_add, plugin.h): a
 * thread's cgroup in every cgroup v1 hierarchy, as the kernel links them to
 * the thread's css_set, one (hierarchy id, kernfs id) pair a hierarchy:
 * the hierarchy id is the number /proc/<pid>/cgroup prints first on that
 * hierarchy's line (cgroup_root.hierarchy_id; the default, v2, hierarchy
 * is never listed), the kernfs id that of the cgroup's directory
 * (kernfs_node.id), which on a 64-bit kernel is its inode number (st_ino)
 * in any mount of the hierarchy. A consumer turns them into the paths
 * /proc/<pid>/cgroup prints by walking each hierarchy's directories (the
 * cgroup plugin, plugins/cgroup/README.md). The bpf-task plugin offers it
 * from the same BPF task-iterator pass as the source "task"
 * (plugins/bpf-task/README.md says how).
 *
 * The pairs are those of the one css_set the thread was linked to when
 * the pass met it, every hierarchy of the host at once. Offered only where
 * the paths are the file's: a reader in the initial cgroup namespace (the
 * file prints paths relative to the reader's namespace), a thread that is
 * not exiting (the file prints "/" on every v1 line of a PF_EXITING task).
 * A thread the provider cannot place fails the fill: -ENODATA for that
 * thread, -EAGAIN for every thread of a capture without a pass; consumers
 * read their files then.
 *
 * Layout: source-values.h with one valid word, struct ctp_src_cgroup_v1:
 * value CTP_SRC_CG1_N is the number of pairs, then pair i is values
 * CTP_SRC_CG1_HIER(i) and CTP_SRC_CG1_ID(i), in no particular order. Read
 * them with ctp_src_cg1_pairs().
 */
#ifndef CTPROF_SOURCE_CGROUP_V1_H
#define CTPROF_SOURCE_CGROUP_V1_H

#include "source-values.h"

#include <errno.h>

#define CTP_SOURCE_CGROUP_V1 "cgroup-v1"

/* Most pairs, hierarchies, a thread's bytes hold. */
#define CTP_SRC_CG1_MAX_PAIRS 16

/* Value numbers: fixed, never reordered or reused. */
enum ctp_src_cg1_value {
	CTP_SRC_CG1_N = 0, /* pairs that follow, 0..CTP_SRC_CG1_MAX_PAIRS */
	CTP_SRC_CG1_PAIR0 = 1,
	CTP_SRC_CG1_N_VALUES = 1 + 2 * CTP_SRC_CG1_MAX_PAIRS
};
#define CTP_SRC_CG1_HIER(i) (CTP_SRC_CG1_PAIR0 + 2 * (i))
#define CTP_SRC_CG1_ID(i)   (CTP_SRC_CG1_PAIR0 + 2 * (i) + 1)

struct ctp_src_cgroup_v1 {
	uint32_t abi;	   /* 1 */
	uint32_t size;	   /* bytes of this struct as the provider built it */
	uint64_t valid[1]; /* bit i: value i is offered */
	uint64_t v[CTP_SRC_CG1_N_VALUES];
};

/* One hierarchy's cgroup. */
struct ctp_src_cg1_pair {
	uint32_t hier; /* hierarchy id, 1..INT32_MAX */
	uint64_t id;   /* kernfs id of the cgroup's directory */
};

/*
 * The pairs of a "cgroup-v1" source's bytes (as ctp_api.source_get
 * returned them) into out[0 .. cap): their number, or -EBADMSG for bytes
 * that are not such a layout (short, another abi, a count above
 * CTP_SRC_CG1_MAX_PAIRS or cap, a pair missing a value, a hierarchy id
 * of 0 or above INT32_MAX, one hierarchy twice). Pure.
 */
static inline int ctp_src_cg1_pairs(const void *data, size_t len,
				    struct ctp_src_cg1_pair *out, size_t cap)
{
	uint64_t n, h, id;

	if (!ctp_src_values_get(data, len, 1, CTP_SRC_CG1_N, &n) ||
	    n > CTP_SRC_CG1_MAX_PAIRS || n > cap)
		return -EBADMSG;
	for (unsigned i = 0; i < n; i++) {
		if (!ctp_src_values_get(data, len, 1, CTP_SRC_CG1_HIER(i),
					&h) ||
		    !ctp_src_values_get(data, len, 1, CTP_SRC_CG1_ID(i), &id) ||
		    h == 0 || h > INT32_MAX)
			return -EBADMSG;
		for (unsigned j = 0; j < i; j++)
			if (out[j].hier == h)
				return -EBADMSG;
		out[i].hier = (uint32_t)h;
		out[i].id = id;
	}
	return (int)n;
}

#endif /* CTPROF_SOURCE_CGROUP_V1_H */
