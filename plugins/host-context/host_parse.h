/* SPDX-License-Identifier: MIT */
/*
 * Pure parsers for the host-context plugin: /proc/cpuinfo, /proc/meminfo,
 * the transparent-hugepage menus, /proc/sys/kernel/sched_* tunables, cpu and
 * node online lists, and single-value files (/proc/cmdline, scaling_governor).
 * No I/O, no allocation, no logging; tested on literal kernel text
 * (tests/test_host_parse.c).
 *
 * Results point into the parsed buffer (struct ctp_hc_str), never past len.
 *
 * Truncation: multi-line files (cpuinfo, meminfo) end every line with '\n';
 * a line running into the end of the buffer may have been cut by a short
 * read, so its value is not used. Single-value files are checked for
 * truncation by the reader (a read that fills its buffer is refused), so
 * their parsers accept text with or without the final newline.
 */
#ifndef CTP_HOST_PARSE_H
#define CTP_HOST_PARSE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* A byte range inside the parsed buffer; never contains NUL. */
struct ctp_hc_str {
	const char *ptr;
	size_t len;
};

/*
 * Blank-trimmed content of a single-value file (cmdline, scaling_governor,
 * a THP menu). Returns 0 and *out (possibly empty), or -EINVAL when the
 * text holds a NUL byte (a snapshot string cannot).
 */
int ctp_hc_trim(const char *buf, size_t len, struct ctp_hc_str *out);

/* ---- /proc/cpuinfo --------------------------------------------------------
 */

struct ctp_hc_cpuinfo {
	bool has_model, has_vendor;
	struct ctp_hc_str model;  /* "model name" */
	struct ctp_hc_str vendor; /* "vendor_id"; arm64 has none */
};

/*
 * CPU identity from the first processor block (up to the first empty line;
 * arch/x86/kernel/cpu/proc.c show_cpuinfo). Keys are compared after
 * trimming the blanks the kernel pads them with; an empty value is skipped;
 * the first occurrence wins; a last line without '\n' is ignored. Returns 0
 * when at least one of the two was found, -ENODATA otherwise.
 */
int ctp_hc_parse_cpuinfo(const char *buf, size_t len,
			 struct ctp_hc_cpuinfo *out);

/* ---- /proc/meminfo ---------------------------------------------------------
 */

enum {
	CTP_HC_MEM_TOTAL = 1u << 0,
	CTP_HC_HP_TOTAL = 1u << 1,
	CTP_HC_HP_FREE = 1u << 2,
	CTP_HC_HP_SIZE = 1u << 3,
	CTP_HC_MEM_ALL = 0xfu,
};

struct ctp_hc_meminfo {
	uint32_t present;	  /* CTP_HC_* bits of the values below */
	uint64_t mem_total_bytes; /* MemTotal, "kB" = KiB (fs/proc/meminfo.c) */
	uint64_t hp_total;	  /* HugePages_Total, pages */
	uint64_t hp_free;	  /* HugePages_Free, pages */
	uint64_t hp_size_bytes;	  /* Hugepagesize, "kB" */
};

/*
 * The four keys above. Every value that parses is stored and marked present,
 * whatever happens to the others. Returns 0 when all four are present;
 * otherwise the first problem met: -EINVAL (garbage, or a unit other than
 * "kB" where one belongs), -ERANGE (overflow, including KiB to bytes),
 * -EMSGSIZE (a value line cut by the end of the buffer), -ENODATA (a key is
 * missing, as HugePages_* on a kernel without CONFIG_HUGETLBFS).
 */
int ctp_hc_parse_meminfo(const char *buf, size_t len,
			 struct ctp_hc_meminfo *out);

/* ---- THP menus -------------------------------------------------------------
 */

struct ctp_hc_menu {
	struct ctp_hc_str menu; /* the whole menu, edges trimmed */
	bool has_active;
	struct ctp_hc_str active; /* the bracketed choice, without brackets */
};

/*
 * A kernel menu file such as transparent_hugepage/enabled, "always [madvise]
 * never" (mm/huge_memory.c). The menu is kept verbatim (edges trimmed); the
 * first "[...]" is the active choice. Returns 0 with both; -ENODATA when the
 * menu has no '[' (menu set, no active choice); -EINVAL for an unclosed or
 * empty bracket (menu set, no active choice) or a NUL byte (nothing set).
 */
int ctp_hc_parse_menu(const char *buf, size_t len, struct ctp_hc_menu *out);

/* ---- /proc/sys/kernel/sched_* ----------------------------------------------
 */

/* Longest field name the core accepts. */
#define CTP_HC_NAME_MAX 128

/*
 * Field name for the tunable file `file` ("sched_rt_period_us" ->
 * "host.sched.rt_period_us") into out. Returns 0; -EINVAL when the name
 * does not start with "sched_", has nothing after it, or holds a byte other
 * than [a-z0-9_-] (a '.' would make another name component);
 * -ENAMETOOLONG when the result would not fit in len or in CTP_HC_NAME_MAX.
 */
int ctp_hc_sched_field_name(const char *file, char *out, size_t len);

struct ctp_hc_tunable {
	struct ctp_hc_str text; /* edges trimmed */
	bool is_int;		/* text is exactly the decimal of `value` */
	int64_t value;
};

/*
 * A tunable's content. It is an integer when the trimmed text is the
 * canonical decimal of an int64_t ("0", "42", "-1"; not "+1", "007", "-0"
 * or an overflowing value), so the text can always be rebuilt from the
 * number; otherwise only the text is kept. Returns 0, or -EINVAL for a NUL
 * byte.
 */
int ctp_hc_parse_tunable(const char *buf, size_t len,
			 struct ctp_hc_tunable *out);

/* ---- cpu and node lists -----------------------------------------------------
 */

/*
 * An online list as sysfs prints it ("0-3,8\n", drivers/base/cpu.c and
 * drivers/base/node.c): edges trimmed, then the kernel's cpu list syntax.
 * Fills words[0..nwords) (bit i = CPU or node i) and returns how many are
 * set; -EINVAL on garbage or a reversed range, -ERANGE when a number does
 * not fit in nwords words.
 */
int ctp_hc_parse_online(const char *buf, size_t len, uint64_t *words,
			size_t nwords);

/* True for a sysfs NUMA node directory name, "node" and decimal digits. */
bool ctp_hc_is_node_dir(const char *name);

#endif
