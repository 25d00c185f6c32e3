/*
 * The kernel types task_iter.bpf.c reads for a task's cgroup v1
 * membership, as task_core.h declares the others (CO-RE, members by name):
 * task->cgroups (struct css_set) links to one cgroup per hierarchy through
 * its cgrp_links list of struct cgrp_cset_link (cgrp_link anchored at
 * css_set.cgrp_links, link->cgrp the cgroup); cgroup->root->hierarchy_id
 * names the hierarchy (0: the default, v2 one) and cgroup->kn->id is the
 * kernfs id, on 64-bit the inode number of the cgroup's directory (5.5+: a
 * u64; before, a union of the same bytes). Definitions:
 * include/linux/cgroup-defs.h, kernel/cgroup/cgroup-internal.h
 * (cgrp_cset_link), include/linux/kernfs.h. Flavours (___cg), so they never
 * meet task_exit.bpf.c's css_set, cgroup and kernfs_node.
 */
#ifndef CTP_BPFTASK_CGROUP_CORE_H
#define CTP_BPFTASK_CGROUP_CORE_H

#include <linux/types.h>

struct list_head___cg {
	struct list_head___cg *next;
} __attribute__((preserve_access_index));

struct kernfs_node___cg {
	__u64 id;
} __attribute__((preserve_access_index));

struct cgroup_root___cg {
	int hierarchy_id;
} __attribute__((preserve_access_index));

struct cgroup___cg {
	struct kernfs_node___cg *kn;
	struct cgroup_root___cg *root;
} __attribute__((preserve_access_index));

struct cgrp_cset_link___cg {
	struct cgroup___cg *cgrp;
	struct list_head___cg cgrp_link;
} __attribute__((preserve_access_index));

struct css_set___cg {
	struct list_head___cg cgrp_links;
} __attribute__((preserve_access_index));

/* task_struct.cgroups, read through this flavour (task_core.h's
 * task_struct declares it with task_exit.bpf.c's css_set). */
struct task_struct___cg {
	struct css_set___cg *cgroups;
} __attribute__((preserve_access_index));

#endif /* CTP_BPFTASK_CGROUP_CORE_H */
