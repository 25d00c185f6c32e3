/* SPDX-License-Identifier: MIT */
/*
 * Pure parsers for the cgroup collector: cgroupfs control files of both
 * versions (kernel/cgroup/, kernel/sched/core.c, mm/memcontrol*.c,
 * kernel/cgroup/pids.c), /proc/<pid>/task/<tid>/cgroup
 * (proc_cgroup_show) and /proc/self/mountinfo (show_mountinfo), plus the
 * names and keys the plugin derives from them. No I/O, no allocation, no
 * logging; tested on literal kernel text (tests/test_cgroup_parse.c).
 *
 * Returns: 0, or -EINVAL (garbage), -ERANGE (a number too large for its
 * type), -EMSGSIZE (the text ends without its '\n': a short read may have
 * cut it), -ENODATA (an empty file). Nothing is written to *out on failure
 * unless the function says otherwise.
 */
#ifndef CTP_CGROUP_PARSE_H
#define CTP_CGROUP_PARSE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ctprof/plugin-util.h"

/* ---- Single-value files -------------------------------------------------- */

/* "N\n": memory.current, cpu.weight, cpuacct.usage, pids.current ... */
int ctp_cg_parse_u64(const char *buf, size_t len, uint64_t *out);

/* "N\n" or "max\n" (memory.max/high/low/min, pids.max): *is_max says
 * which; *out is 0 for "max". */
int ctp_cg_parse_u64_max(const char *buf, size_t len, uint64_t *out,
			 bool *is_max);

/* "[-]N\n": cpu.weight.nice, cpu.cfs_quota_us. */
int ctp_cg_parse_i64(const char *buf, size_t len, int64_t *out);

/* cpu.max: "$MAX $PERIOD\n", $MAX a number or "max" (cpu_max_show). */
struct ctp_cg_cpu_max {
	uint64_t quota;	 /* microseconds; 0 when quota_max */
	bool quota_max;	 /* "max": no bandwidth limit */
	uint64_t period; /* microseconds */
};
int ctp_cg_parse_cpu_max(const char *buf, size_t len,
			 struct ctp_cg_cpu_max *out);

/* One line of text ("domain threaded\n", cgroup.type): *word points into
 * buf, *wlen excludes the '\n'. An empty line is -ENODATA; a second line,
 * a NUL, or a control byte is -EINVAL. */
int ctp_cg_parse_line(const char *buf, size_t len, const char **word,
		      size_t *wlen);

/* ---- Keyed files ("key value\n" lines) ----------------------------------- */

/* Keys kept per file (a 6.18 memory.stat has 70) and bytes per key. */
#define CTP_CG_MAX_KEYS 192
#define CTP_CG_KEY_MAX	64

struct ctp_cg_keyed {
	size_t n; /* kv[0..n) in file order, each key once */
	struct ctp_keyval kv[CTP_CG_MAX_KEYS];
	unsigned malformed; /* lines skipped: bad key or value, repeated key,
			       value too large, or cut by the buffer's end */
	unsigned dropped;   /* valid lines past CTP_CG_MAX_KEYS */
};

/*
 * cpu.stat, memory.stat, memory.events (v2) and cpu.stat, memory.stat
 * (v1): "key value\n" per line, the value an unsigned decimal. A key is
 * 1..CTP_CG_KEY_MAX bytes of [a-z0-9_.], not starting or ending with '.'
 * and without "..", so "<prefix>.<key>" is a valid field name
 * ("core_sched.force_idle_usec" is a real cpu.stat key). Every well-formed
 * key is kept, known or not. Returns 0 when nothing was skipped, else the
 * first problem (-EINVAL, -ERANGE, -EMSGSIZE, -E2BIG for keys past the
 * cap); what did parse is in *out either way. An empty buffer is 0 keys.
 */
int ctp_cg_parse_keyed(const char *buf, size_t len, struct ctp_cg_keyed *out);

/* ---- /proc/<pid>/task/<tid>/cgroup --------------------------------------- */

#define CTP_CG_MAX_LINES 32

struct ctp_cg_line {
	uint32_t id;	  /* hierarchy id; 0 is the v2 hierarchy */
	const char *ctrl; /* controller list ("cpu,cpuacct",
			     "name=systemd"); empty for v2 */
	size_t ctrl_len;
	const char *path; /* "/system.slice/x"; begins with '/' */
	size_t path_len;
};

struct ctp_cg_membership {
	size_t n; /* line[0..n) in file order */
	struct ctp_cg_line line[CTP_CG_MAX_LINES];
	unsigned malformed; /* lines skipped */
	unsigned dropped;   /* valid lines past CTP_CG_MAX_LINES */
};

/*
 * "hierarchy-ID:controller-list:cgroup-path" lines (cgroups(7)). The path
 * is everything after the second ':' (a cgroup name may hold ':'). A v1
 * line has ID >= 1 and a non-empty list of [A-Za-z0-9_.=,-]; the v2 line
 * is "0::/path". Returns like ctp_cg_parse_keyed; *out always describes
 * what parsed.
 */
int ctp_cg_parse_membership(const char *buf, size_t len,
			    struct ctp_cg_membership *out);

/* ---- /proc/self/mountinfo ------------------------------------------------ */

/* One mountinfo line, fields as in proc(5); slices of the buffer, still
 * octal-escaped (\040 for a space) where the kernel escapes them. */
struct ctp_cg_mount {
	const char *root, *point, *fstype, *super;
	size_t root_len, point_len, fstype_len, super_len;
};

/*
 * Parse the line at *p and advance *p past it. Returns 1 with *m, 0 at the
 * end of the text, -EINVAL for a malformed line (*p still advances, so the
 * caller can go on), -EMSGSIZE for a last line without '\n'.
 */
int ctp_cg_mountinfo_next(const char **p, const char *end,
			  struct ctp_cg_mount *m);

/* Decode mountinfo's \ooo escapes of s[0..len) into dst, NUL-terminated.
 * Returns the decoded length, -ENAMETOOLONG when dst is too small, -EINVAL
 * for a NUL byte (encoded or not). */
int ctp_cg_unescape(const char *s, size_t len, char *dst, size_t dstlen);

/* Is `item` (ilen bytes) one of the comma-separated entries of list? */
bool ctp_cg_list_has(const char *list, size_t len, const char *item,
		     size_t ilen);

/* Does a "cgroup" (v1) mount with super options `super` hold exactly the
 * hierarchy whose /proc controller list is `ctrl` (every entry of ctrl is
 * one of its options)? */
bool ctp_cg_mount_holds(const struct ctp_cg_mount *m, const char *ctrl,
			size_t ctrl_len);

/*
 * A cgroup path relative to its mount: `path` ("/a/b") minus the mount's
 * root ("/a", "/" for a mount of the whole hierarchy) when the root is a
 * component-wise prefix of it. Both are relative to the reader's cgroup
 * namespace, so a path outside the root is not visible through this mount:
 * -ENOENT. A "." or ".." component (a task outside the reader's cgroup
 * namespace shows "/../x") would leave the mount: -EINVAL. On success *rel
 * does not start with '/'; "" is the mount's own directory.
 */
int ctp_cg_path_in_mount(const char *path, size_t path_len, const char *root,
			 size_t root_len, const char **rel, size_t *rel_len);

/* ---- Names and keys ------------------------------------------------------ */

/*
 * The snapshot's key of a v1 cgroup, "v1:<controllers>:<path>" (the
 * controller list verbatim from /proc, e.g. "v1:cpu,cpuacct:/a"). Writes
 * it NUL-terminated into buf; returns its length or -ENAMETOOLONG.
 */
int ctp_cg_v1_key(char *buf, size_t buflen, const char *ctrl, size_t ctrl_len,
		  const char *path, size_t path_len);

/* Split such a key; -EINVAL when it is not one. */
int ctp_cg_v1_key_split(const char *key, size_t len, const char **ctrl,
			size_t *ctrl_len, const char **path, size_t *path_len);

/*
 * The field-name component of a v1 hierarchy: its controller list with
 * ',' and '=' turned into '-' and letters lowered ("cpu,cpuacct" ->
 * "cpu-cpuacct", "name=systemd" -> "name-systemd"). Returns its length or
 * -ENAMETOOLONG / -EINVAL (a byte no field name may hold, an empty list).
 */
int ctp_cg_hier_name(const char *ctrl, size_t ctrl_len, char *buf,
		     size_t buflen);

/* How the values of one key of a keyed file behave. */
enum ctp_cg_keyed_file {
	CTP_CG_V2_CPU_STAT = 1,
	CTP_CG_V2_MEMORY_STAT = 2,
	CTP_CG_V2_MEMORY_EVENTS = 3,
	CTP_CG_V1_CPU_STAT = 4,
	CTP_CG_V1_MEMORY_STAT = 5,
};

struct ctp_cg_keymeta {
	uint8_t unit, kind, rule; /* enum ctp_unit, ctp_kind, ctp_rule */
};

/* Unit, kind and rule of `key` in `file`: event counts and times are
 * counters (sum), sizes are gauges in bytes (max). */
void ctp_cg_key_meta(enum ctp_cg_keyed_file file, const char *key,
		     size_t key_len, struct ctp_cg_keymeta *out);

/*
 * cgroup v1 memory limits print PAGE_COUNTER_MAX pages in bytes when
 * unlimited (mm/memcontrol-v1.c: LONG_MAX / PAGE_SIZE pages), e.g.
 * 9223372036854771712 with 4 KiB pages; writes above it are clamped to
 * it. Any value at or above that of the largest page size (64 KiB) is
 * taken as unlimited.
 */
#define CTP_CG_V1_UNLIMITED ((uint64_t)INT64_MAX / 65536 * 65536)

/*
 * The pair of `id` in pairs[0 .. n) sorted by id (ctp_id_pairs_sort), or
 * NULL, searched from *pos, where the previous search left off: ahead of
 * it by doubling steps, so ids asked in rising order (the tids a worker
 * walks) cost a few comparisons each; an id behind it is searched from
 * the start. *pos becomes the index of the first pair not below id (any
 * value of *pos is valid; 0 before the first search). Pure.
 */
const struct ctp_id_pair *ctp_cg_pairs_seek(const struct ctp_id_pair *pairs,
					    size_t n, uint32_t id, size_t *pos);

#endif
