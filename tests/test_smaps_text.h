/* SPDX-License-Identifier: MIT */
/*
 * Literal smaps_rollup and statm text for the smaps tests, copied from the
 * build machine (Linux 6.18, 4 KiB pages): a python3 process and a `cat`.
 */
#ifndef CTP_TEST_SMAPS_TEXT_H
#define CTP_TEST_SMAPS_TEXT_H

/* cat /proc/<python3>/smaps_rollup */
static const char ROLLUP_PY[] =
	"00400000-7ffdbe6ab000 ---p 00000000 00:00 0                 "
	"             [rollup]\n"
	"Rss:               11400 kB\n"
	"Pss:                9719 kB\n"
	"Pss_Dirty:          5344 kB\n"
	"Pss_Anon:           5344 kB\n"
	"Pss_File:           4375 kB\n"
	"Pss_Shmem:             0 kB\n"
	"Shared_Clean:       1784 kB\n"
	"Shared_Dirty:          0 kB\n"
	"Private_Clean:      4272 kB\n"
	"Private_Dirty:      5344 kB\n"
	"Referenced:        11400 kB\n"
	"Anonymous:          5344 kB\n"
	"KSM:                   0 kB\n"
	"LazyFree:              0 kB\n"
	"AnonHugePages:         0 kB\n"
	"ShmemPmdMapped:        0 kB\n"
	"FilePmdMapped:         0 kB\n"
	"Shared_Hugetlb:        0 kB\n"
	"Private_Hugetlb:       0 kB\n"
	"Swap:                  0 kB\n"
	"SwapPss:               0 kB\n"
	"Locked:                0 kB\n";

/* Its keys and kB values, in file order. */
static const struct {
	const char *key;
	unsigned long long kib;
} ROLLUP_PY_KV[] = {
	{"Rss", 11400},
	{"Pss", 9719},
	{"Pss_Dirty", 5344},
	{"Pss_Anon", 5344},
	{"Pss_File", 4375},
	{"Pss_Shmem", 0},
	{"Shared_Clean", 1784},
	{"Shared_Dirty", 0},
	{"Private_Clean", 4272},
	{"Private_Dirty", 5344},
	{"Referenced", 11400},
	{"Anonymous", 5344},
	{"KSM", 0},
	{"LazyFree", 0},
	{"AnonHugePages", 0},
	{"ShmemPmdMapped", 0},
	{"FilePmdMapped", 0},
	{"Shared_Hugetlb", 0},
	{"Private_Hugetlb", 0},
	{"Swap", 0},
	{"SwapPss", 0},
	{"Locked", 0},
};
#define ROLLUP_PY_N (sizeof(ROLLUP_PY_KV) / sizeof(ROLLUP_PY_KV[0]))

/* cat /proc/self/smaps_rollup */
static const char ROLLUP_CAT[] =
	"55cdc062b000-7ffde9ac2000 ---p 00000000 00:00 0             "
	"             [rollup]\n"
	"Rss:                1708 kB\n"
	"Pss:                 377 kB\n"
	"Pss_Dirty:           116 kB\n"
	"Pss_Anon:            116 kB\n"
	"Pss_File:            261 kB\n"
	"Pss_Shmem:             0 kB\n"
	"Shared_Clean:       1552 kB\n"
	"Shared_Dirty:          0 kB\n"
	"Private_Clean:        40 kB\n"
	"Private_Dirty:       116 kB\n"
	"Referenced:         1708 kB\n"
	"Anonymous:           116 kB\n"
	"KSM:                   0 kB\n"
	"LazyFree:              0 kB\n"
	"AnonHugePages:         0 kB\n"
	"ShmemPmdMapped:        0 kB\n"
	"FilePmdMapped:         0 kB\n"
	"Shared_Hugetlb:        0 kB\n"
	"Private_Hugetlb:       0 kB\n"
	"Swap:                  0 kB\n"
	"SwapPss:               0 kB\n"
	"Locked:                0 kB\n";

/* statm of the python3 process (pages) and of a kernel thread (no mm). */
static const char STATM_PY[] = "4025 2850 1514 691 0 1686 0\n";
static const char STATM_KTHREAD[] = "0 0 0 0 0 0 0\n";

#endif
