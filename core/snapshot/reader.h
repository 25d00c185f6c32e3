/* SPDX-License-Identifier: MIT */
/*
 * Snapshot reader: opens a ctprof-core snapshot (docs/FORMAT.md), checks it
 * against the spec and exposes it as plain structs. Used by `show`, `dump`
 * and `compare`. Private to the core.
 *
 * Everything returned points into the struct ctp_snap and lives until
 * ctp_snap_free(). Strings from tables (comm, cgroup paths, STRING values)
 * are byte ranges that are NOT NUL-terminated and may hold any byte but NUL;
 * strings of the header, fields and plugins are NUL-terminated copies.
 */
#ifndef CTP_CORE_READER_H
#define CTP_CORE_READER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <msgpack.h>

#include "ctprof/plugin.h"
#include "format.h"

/* A byte string inside the snapshot (not NUL-terminated). */
struct ctp_bytes {
	const char *ptr;
	size_t len;
};

/* A value's type tag: an enum ctp_type, or absent. */
#define CTP_VALUE_ABSENT 0
/* At most this many capture.self_tgids (FORMAT.md). */
#define CTP_SNAP_MAX_SELF 4

/* One cell. `type` is CTP_VALUE_ABSENT when the value was not measured
 * (nil in the file) and the field's enum ctp_type otherwise. */
struct ctp_value {
	uint8_t type;
	union {
		uint64_t u64;
		int64_t i64;
		bool b;
		unsigned char c;
		struct ctp_bytes str;
		struct {
			/* n inclusive pairs: lo0, hi0, lo1, hi1, ...;
			 * ascending, disjoint, non-adjacent */
			const uint32_t *r;
			size_t n;
		} cpuset;
	};
};

/* One term of a derived field's formula (docs/FORMAT.md §4 `derive`). */
struct ctp_snap_term {
	uint32_t input; /* index of the input field, always below the
			   derived field's own */
	int32_t coef;
	uint8_t max_set;
};

/* One registered field. The enums are plugin.h's numbers; `unit`, `kind`
 * and `rule` are 0 when the file names a value this reader does not know
 * (scope and type are always known: an unknown one refuses the file). */
struct ctp_snap_field {
	const char *name;
	const char *plugin; /* "" when the file has nil */
	const char *help;   /* "" when none */
	/* Where readers show it and its labelled dimensions
	 * ("key=value,..."); "" when the plugin gave none. */
	const char *section, *dims;
	/* What readers may rely on the field for (FORMAT.md §4), "" when
	 * none: "start_time" (the task's start since boot), "elapsed" (an
	 * exited task's age at its exit), "reaped" (a counter of reaped
	 * children, whose change is not time spent in an interval). */
	const char *role;
	/* Its values are the source's rounded down to a multiple of this
	 * (`step`, 1024 for taskstats' I/O counters); 0 when exact. */
	uint64_t step;
	uint8_t scope, type, unit, kind, rule;
	uint32_t index; /* position in ctp_snap_fields() */
	/* A derived field (n_terms > 0) has no values in the file: compute
	 * them with core/analysis/group.h. The reader checked the formula:
	 * inputs are earlier U64/I64 fields of the same scope whose rule is
	 * sum, max, min or mode, and the field itself is U64 or I64. */
	size_t n_terms;
	const struct ctp_snap_term *terms; /* NULL when n_terms is 0 */
};

struct ctp_snap_plugin {
	const char *name;
	const char *version; /* NULL when nil */
	const char *path;    /* NULL when nil */
	const char *reason;  /* NULL when nil */
	const char *hint;    /* the plugin's remediation hint, NULL when nil */
	uint8_t status;	     /* 1 loaded, 2 failed, 3 disabled, 0 unknown */
	bool required;
	uint64_t time_ns, calls, errors, vanished;
	/* Calls that failed for lack of resources (0 in files without
	 * plugins[].resource). */
	uint64_t resource;
	size_t n_summary;
	const char **summary_name;
	const uint64_t *summary;
	/* Listed in exited.lost (it takes part in the exited table), and the
	 * exited tasks it said it missed; false and 0 otherwise. */
	bool exited;
	uint64_t exited_lost;
};

struct ctp_snap_readfail {
	uint64_t tids_walked, tids_recorded, tids_vanished;
	uint64_t tgids_walked, tgids_vanished;
	size_t n_files;
	const char **file;
	const uint64_t *failures;
	/* Per file[i]: the kernel config option the file exists only with
	 * (read_failures.gates), or NULL when it is not gated. */
	const char **gate;
	/* Per file[i]: how many of failures[i] were ENOENT (the file does not
	 * exist); 0 for files a file without read_failures.missing lists. */
	const uint64_t *missing;
	/* Per file[i]: how many of failures[i] were EACCES or EPERM
	 * (read_failures.denied; 0 for files without it). */
	const uint64_t *denied;
	/* Per file[i]: how many of failures[i] were resource errors
	 * (EMFILE, ENFILE, ENOMEM, ENOBUFS; read_failures.resource, 0 for
	 * files without it). */
	const uint64_t *resource;
	const char *dominant_file; /* NULL when nil */
	/* Tasks and cgroups left unread for lack of resources, the first
	 * such error's name ("EMFILE"; NULL none) and the descriptor limit
	 * (0 unknown); all 0 or NULL in files written before them. */
	uint64_t tids_unread_resource, tgids_unread_resource;
	uint64_t cgroups_unread_resource;
	const char *resource_error;
	uint64_t nofile_limit;
};

struct ctp_snap_header {
	uint64_t version;
	const char *tool_name;	  /* "" when nil */
	const char *tool_version; /* "" when nil */
	uint64_t start_realtime_ns, end_realtime_ns, duration_ns;
	uint64_t workers;
	/* NULL when nil or missing. */
	const char *proc_root, *sys_root, *cgroup_root;
	const char *config_path, *kernel_release, *hostname;
	/* The collector held CAP_SYS_PTRACE: 1, 0, or -1 when not recorded. */
	int ptrace_capable;
	/* The capturing processes' tgids (FORMAT.md), n_self of them. */
	uint32_t self_tgid[CTP_SNAP_MAX_SELF];
	size_t n_self;
	/* CLOCK_BOOTTIME at the start of the capture, the clock of the
	 * start-time fields; 0 when not recorded (older snapshots). */
	uint64_t start_boottime_ns;
	/* CLOCK_BOOTTIME when the cgroups' rows were read, not before
	 * start_boottime_ns; 0 when not recorded (no cgroup rows, older
	 * snapshots). */
	uint64_t cgroups_read_boottime_ns;
	/* How the tasks were listed (FORMAT.md): the walk source's name,
	 * NULL when the proc root was listed; why a loaded walk source was
	 * not used (NULL: none was loaded, or it was used), and how many
	 * captures of the collector had fallen back so far (0 with no
	 * fallback). All NULL or 0 in older snapshots. */
	const char *walk_source, *walk_fallback;
	uint64_t walk_fallbacks;
	/* With walk_source: processes under the proc root the source's list
	 * did not name, walked from their files (0 in older snapshots). */
	uint64_t walk_unlisted;
};

/*
 * One table (host, cgroups, processes, threads, exited). Identity columns
 * that the table does not have are NULL:
 *   threads:   tid, tgid, comm, cgroup
 *   processes: tgid, comm, nthreads, read_ns (NULL in files from before
 *              it; 0 where nil)
 *   cgroups:   path
 *   exited:    tid, tgid, comm, exit_ns (tgid and exit_ns 0 when nil)
 *   host:      none (rows is 1)
 * comm and path entries have ptr NULL when the file has nil. cgroup[i] is a
 * row of the cgroups table, or -1 when nil. A snapshot without an exited
 * table has one of 0 rows.
 */
struct ctp_snap_table {
	uint8_t scope;
	size_t rows;
	const uint64_t *tid, *tgid, *nthreads;
	const uint64_t *exit_ns; /* CLOCK_BOOTTIME at exit, ns */
	/* CLOCK_BOOTTIME when the process's threads were read, ns */
	const uint64_t *read_ns;
	const struct ctp_bytes *comm, *path;
	const int64_t *cgroup;
	/* Per field, indexed by ctp_snap_field.index: the column's rows
	 * values, or NULL when the field is of another scope or was omitted
	 * (all absent). Use ctp_snap_get() to not care. */
	const struct ctp_value *const *col;
};

struct ctp_snap;

/* Bytes per table row the open sets aside from its budget for what a
 * caller keeps per row: show's sort order (8) and one derived column (a
 * struct ctp_value, 24). */
#define CTP_SNAP_ROW_RESERVE 32

/*
 * Open and fully validate a snapshot. `path` "-" reads stdin. The file is
 * opened non-blocking and must be a regular file; a pipe, FIFO or device is
 * read only when the path names a descriptor of this process ("-",
 * "/dev/stdin", "/dev/fd/N", "/proc/self/fd/N": a shell's pipe), so a FIFO
 * or a device named anywhere else never blocks the reader (-EINVAL).
 * max_decompressed is a memory budget (docs/FORMAT.md "Size cap"): the
 * decompressed bytes, msgpack-c's tree of them, everything decoded from it
 * and CTP_SNAP_ROW_RESERVE per table row must fit in it, checked before
 * each is allocated. Returns 0 and *ret, or a negative errno
 * (-ENOENT/-EACCES/... for I/O, -EINVAL for a file that is not a valid
 * snapshot, -EPROTONOSUPPORT for a version other than CTP_SNAP_VERSION,
 * -EFBIG over the budget, -ENOMEM) with a one-line message "PATH: what is
 * wrong" in err; *ret is untouched on failure.
 */
int ctp_snap_open(const char *path, uint64_t max_decompressed,
		  struct ctp_snap **ret, char *err, size_t errlen);
/* Same over the open descriptor fd (read from where it is, not closed;
 * the caller checked what it is); `name` is used in messages. */
int ctp_snap_open_fd(int fd, const char *name, uint64_t max_decompressed,
		     struct ctp_snap **ret, char *err, size_t errlen);
/* Same over compressed bytes in memory; `name` is used in messages. */
int ctp_snap_open_buf(const char *name, const void *data, size_t len,
		      uint64_t max_decompressed, struct ctp_snap **ret,
		      char *err, size_t errlen);
void ctp_snap_free(struct ctp_snap *snap);

const struct ctp_snap_header *ctp_snap_header(const struct ctp_snap *snap);

size_t ctp_snap_n_fields(const struct ctp_snap *snap);
const struct ctp_snap_field *ctp_snap_fields(const struct ctp_snap *snap);
/* The field named `name`, or NULL. */
const struct ctp_snap_field *ctp_snap_field_find(const struct ctp_snap *snap,
						 const char *name);

/* The field with role start_time of `scope` (thread or process), or NULL:
 * a u64 in ns, us or ticks since boot, comparable with the header's
 * start_boottime_ns (the reader checked it). */
const struct ctp_snap_field *ctp_snap_start_field(const struct ctp_snap *snap,
						  uint8_t scope);
/* The field of `scope` with role `role` (the first), or NULL. "elapsed"
 * (exited scope) is a u64 in ns, us or ticks, the reader checked. */
const struct ctp_snap_field *ctp_snap_role_field(const struct ctp_snap *snap,
						 uint8_t scope,
						 const char *role);

size_t ctp_snap_n_plugins(const struct ctp_snap *snap);
const struct ctp_snap_plugin *ctp_snap_plugins(const struct ctp_snap *snap);

const struct ctp_snap_readfail *ctp_snap_readfail(const struct ctp_snap *snap);

/* The table of a scope (enum ctp_scope); NULL for an invalid scope. */
const struct ctp_snap_table *ctp_snap_table(const struct ctp_snap *snap,
					    uint8_t scope);

/* The value of `field` in `row` of its scope's table (absent when the
 * column was omitted or row is out of range). `field` must come from this
 * snapshot: to compare two, look fields up by name in each. */
struct ctp_value ctp_snap_get(const struct ctp_snap *snap,
			      const struct ctp_snap_field *field, size_t row);

/* The whole decoded MessagePack tree (for `dump`); NULL once dropped. */
const msgpack_object *ctp_snap_root(const struct ctp_snap *snap);
/* Free the MessagePack tree: everything above but ctp_snap_root reads
 * what was decoded from it (strings point into the decompressed bytes,
 * which stay), and at 24 bytes an element it is the largest part of an
 * open snapshot (~40 %). For a reader that keeps snapshots (serve's and
 * record --textfile's series). ctp_snap_mem_size is unchanged. */
void ctp_snap_drop_tree(struct ctp_snap *snap);
/* Decompressed size in bytes. */
size_t ctp_snap_raw_size(const struct ctp_snap *snap);
/* What the open charged to its budget: the smallest max_decompressed that
 * opens this snapshot. */
uint64_t ctp_snap_mem_size(const struct ctp_snap *snap);

/* The row of task (tgid, tid) in a processes or threads table (rows
 * ascend by tgid, then tid: FORMAT.md §7.2); a processes table has no tid
 * (pass 0), and tid 0 in a threads table finds tgid's first thread. -1
 * when absent, or t is NULL. */
long ctp_snap_row(const struct ctp_snap_table *t, uint64_t tgid, uint64_t tid);

#endif
