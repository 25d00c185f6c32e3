/* SPDX-License-Identifier: MIT */
/*
 * ctprof-core collector plugin ABI, major version 1.
 *
 * A collector is a shared object that exports exactly one symbol,
 * `ctp_plugin_v1`, a const struct ctp_plugin. Everything else it needs from
 * the core comes through the struct ctp_api table handed to its init
 * callback; a plugin links against nothing of the core. Build it with
 * -fvisibility=hidden -Wl,-z,defs and mark the descriptor CTP_EXPORT.
 *
 * Versioning: every ABI struct starts with `uint32_t abi, size` (or is an
 * array whose element size is passed beside it) and only ever grows at the
 * end. The core treats members past the `size` a plugin was built with as
 * absent; a plugin must do the same with members of struct ctp_api and
 * struct ctp_task past their `size` (use CTP_HAS()).
 *
 * Enum values are fixed numbers stored in fixed-width members; they are
 * never reordered or reused, so they also appear verbatim in snapshots.
 *
 * Return convention: a function that can fail returns int, >= 0 on success,
 * a negative errno on failure.
 */
#ifndef CTPROF_PLUGIN_H
#define CTPROF_PLUGIN_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define CTP_ABI_MAJOR 1
/* Name of the one symbol a plugin exports. */
#define CTP_PLUGIN_SYMBOL "ctp_plugin_v1"

#define CTP_EXPORT __attribute__((visibility("default")))

/* True when a struct of reported size `sz` contains member `m` of type T. */
#define CTP_HAS(ptr, T, m) ((ptr)->size >= offsetof(T, m) + sizeof(((T *)0)->m))

/* ---- Field description -------------------------------------------------- */

/* Which table a field's values live in. */
enum ctp_scope {
	CTP_SCOPE_HOST = 1,    /* one value per snapshot */
	CTP_SCOPE_CGROUP = 2,  /* one value per distinct cgroup */
	CTP_SCOPE_PROCESS = 3, /* one value per tgid */
	CTP_SCOPE_THREAD = 4,  /* one value per tid */
	/* Appended in ABI 1: one value per task that exited since the last
	 * snapshot (ctp_api.exited_begin), the columns of the exited table. */
	CTP_SCOPE_EXITED = 5,
};

/* How a value is stored. */
enum ctp_type {
	CTP_TYPE_U64 = 1,
	CTP_TYPE_I64 = 2,
	CTP_TYPE_BOOL = 3,
	CTP_TYPE_CHAR = 4,   /* one byte, e.g. a task state letter */
	CTP_TYPE_STRING = 5, /* NUL-free UTF-8 (bytes are kept verbatim) */
	CTP_TYPE_CPUSET = 6, /* a set of CPU numbers */
};

/* What a number measures; readers use it only to render. */
enum ctp_unit {
	CTP_UNIT_NONE = 0,
	CTP_UNIT_COUNT = 1,
	CTP_UNIT_NS = 2,
	CTP_UNIT_US = 3,
	CTP_UNIT_TICKS = 4, /* USER_HZ clock ticks */
	CTP_UNIT_BYTES = 5,
	CTP_UNIT_CENTIPCT = 6, /* hundredths of a percent */
};

/* How a value behaves over time; decides which rules are legal. */
enum ctp_kind {
	CTP_KIND_COUNTER = 1,	  /* cumulative, monotonic: sum */
	CTP_KIND_PEAK = 2,	  /* lifetime high-water or extreme: max/min */
	CTP_KIND_GAUGE = 3,	  /* instantaneous reading: max/min/range */
	CTP_KIND_CATEGORICAL = 4, /* a label: mode */
	CTP_KIND_ORDINAL = 5,	  /* an ordered label: range/min/max/mode */
	CTP_KIND_CPUSET = 6,	  /* a cpu set: union */
};

/* How values of one field are reduced across a group of rows. */
enum ctp_rule {
	CTP_RULE_SUM = 1,
	CTP_RULE_MAX = 2,
	CTP_RULE_MIN = 3,
	CTP_RULE_MODE = 4,  /* most frequent; ties to the smallest value */
	CTP_RULE_RANGE = 5, /* [min, max] */
	CTP_RULE_UNION = 6, /* union of cpu sets */
};

/*
 * One field. Plugins usually keep these in a static designated-initializer
 * table referenced by the descriptor; open key sets register more at runtime
 * with ctp_api.field_register. `name` is dotted and unique across all
 * plugins (convention: "<plugin>.<name>"), [a-z0-9_.-] only.
 */
struct ctp_field_desc {
	const char *name;
	const char *help; /* one line, may be NULL */
	uint8_t scope;	  /* enum ctp_scope */
	uint8_t type;	  /* enum ctp_type */
	uint8_t unit;	  /* enum ctp_unit */
	uint8_t kind;	  /* enum ctp_kind */
	uint8_t rule;	  /* enum ctp_rule */
	uint8_t flags;	  /* CTP_FIELD_*, else 0 */
	uint16_t reserved;
	/* Appended in ABI 1, read only with CTP_FIELD_META in flags: where
	 * readers show the field and along which labelled dimensions it
	 * varies, so a reader groups fields without knowing their names
	 * (docs/PLUGINS.md "Sections and dimensions"). */
	const char *section; /* e.g. "psi"; NULL: none */
	const char *dims;    /* "key=value,key=value", e.g.
				"resource=cpu,window=avg10"; NULL: none */
};

/* ctp_field_desc.flags: `section` and `dims` are set (a description built
 * with this header). */
#define CTP_FIELD_META (1u << 0)
/*
 * ctp_field_desc.flags, appended in ABI 1: the field is the task's start
 * time since boot (the kernel's start_boottime, CLOCK_BOOTTIME), in its
 * unit (ns, us or ticks). Readers tell a task from a later one with the
 * same id by it (compare joins threads by tid and start time) and compute
 * ages from it. Thread or process scope, u64, kind ordinal; at most one per
 * scope across all plugins. Snapshot: `"role": "start_time"`.
 */
#define CTP_FIELD_START_TIME (1u << 1)
/*
 * ctp_field_desc.flags, appended in ABI 1: the exited task's age when it
 * exited (start to exit), in its unit (ns, us or ticks). Readers take the
 * task's start as its row's exit time less this (the clock of
 * CTP_FIELD_START_TIME, give or take how late the plugin stamped the
 * exit), to tell it from another task of the same ids a snapshot saw
 * live. Exited scope, u64, at most one. Snapshot: `"role": "elapsed"`.
 */
#define CTP_FIELD_ELAPSED (1u << 2)
/*
 * ctp_field_desc.flags, appended in ABI 1: a counter of the task's
 * children that were waited for (the kernel's cutime and cstime,
 * getrusage(RUSAGE_CHILDREN)), which grows by a child's whole life at the
 * moment it is reaped, however long before that life was spent (init
 * reaping an orphan adds all of it). Its change over an interval is no
 * measure of what happened in that interval, so readers show it as an
 * amount and never as a percent of the interval or a rate. Thread or
 * process scope, kind counter. Snapshot: `"role": "reaped"`.
 */
#define CTP_FIELD_REAPED (1u << 3)
/*
 * ctp_field_desc.flags, appended in ABI 1: every value is its source's
 * rounded down to a multiple of 1024 (taskstats masks its I/O counters,
 * the system call counts included, with KB_MASK), so a count under 1024
 * reads 0. Readers say so wherever they show it. u64 or i64. Snapshot:
 * `"step": 1024`.
 */
#define CTP_FIELD_KIB_STEP (1u << 4)
/*
 * ctp_field_desc.flags, appended in ABI 1: the exited task's parent, the
 * process id (tgid) of its parent when it exited (taskstats ac_ppid).
 * Readers place a task no snapshot saw live (its process born and gone
 * between two captures) where its parent ran: a child starts in its
 * parent's cgroup. Exited scope, u64, at most one. Snapshot:
 * `"role": "parent"`.
 */
#define CTP_FIELD_PARENT (1u << 5)
/*
 * ctp_field_desc.flags, appended in ABI 1: the exited task's cgroup v2
 * path when it exited ("/..." as the core's cgroup rows), from a source
 * that knows it (taskstats' BPF exit program). Readers place the exited
 * task there, before any cgroup a snapshot saw it or its parent in.
 * Exited scope, string, at most one. Snapshot: `"role": "cgroup"`.
 */
#define CTP_FIELD_CGROUP (1u << 6)
/* The flags that give a field a role; a field has at most one. */
#define CTP_FIELD_ROLES                                                        \
	(CTP_FIELD_START_TIME | CTP_FIELD_ELAPSED | CTP_FIELD_REAPED |         \
	 CTP_FIELD_PARENT | CTP_FIELD_CGROUP)

/* ---- What the core hands to callbacks ------------------------------------ */

/* The bytes of one per-task file the plugin declared, read once by the core. */
struct ctp_file {
	const char *data; /* NUL-terminated copy; NULL when err != 0 */
	size_t len;	  /* bytes read, excluding the terminating NUL */
	int err;	  /* 0, or negative errno of the open/read */
};

struct ctp_walk_task; /* below */

/* One task (a thread, or a process for process-scope callbacks). */
struct ctp_task {
	uint32_t abi, size;
	int32_t tgid;
	int32_t tid;	   /* == tgid for the process callback */
	int dirfd;	   /* /proc/<tgid>/task/<tid> or /proc/<tgid>,
			      O_PATH|O_DIRECTORY; -1 in thread callbacks
			      when every plugin says
			      CTP_PLUGIN_NO_THREAD_DIR */
	int proc_fd;	   /* the proc root directory */
	const char *pcomm; /* process name */
	const char *comm; /* thread name (process name for process callbacks) */
	const char *cgroup; /* cgroup v2 path ("0::" line), "" when none */
	/* The files this plugin declared for this scope, in declaration order.
	 */
	const struct ctp_file *files;
	uint32_t n_files;
	/* Private to the core (used by ctp_api.file_get). */
	void *core;
	/* Appended in ABI 1, thread callbacks only (NULL and 0 elsewhere):
	 * the tids this worker walks next in this process, in order, this
	 * task's first. A plugin that asks the kernel about several threads
	 * at once (a netlink batch) takes the batch from here; the list is
	 * the worker's own run, so nothing is shared with other workers. A
	 * tid listed may be gone by the time its turn comes. */
	const uint32_t *walk_tids;
	uint32_t n_walk_tids;
	/* Appended in ABI 1, thread callbacks only: the task's entry in the
	 * list of the walk source the core walked from (struct
	 * ctp_source_desc.walk), or NULL when the core listed /proc. A
	 * provider's fill finds its own record by it (the entry's index in
	 * the list it returned) without a lookup. When it is set, no
	 * declared thread file was read up front: files[i] says -ENODATA
	 * until fetched (ctp_api.file_get, ctp_task_fetch). */
	const struct ctp_walk_task *walked;
	/* Appended in ABI 1, thread callbacks only: 1 when the core set
	 * every field this plugin bound (ctp_api.field_bind) for this
	 * thread, 0 when it bound none or one was not served (then none of
	 * them is set). */
	uint32_t bound;
};

/*
 * A per-task source that is not a file (ctp_api.source_register): bytes a
 * plugin makes for one thread on request, such as the kernel's taskstats
 * reply (or, for a process source, struct ctp_source_desc.scope, for one
 * process row). The core calls `fill` at most once per thread (process
 * row), the first time any plugin asks for the source
 * (ctp_api.source_get), and shares the bytes with every later asker, like
 * the bytes of a declared file. `fill` writes at most `cap`
 * (CTP_SOURCE_MAX_BYTES) bytes at buf (8-aligned), sets *len and returns
 * 0, or returns a negative errno (then askers fall back to files). It runs
 * on the asker's worker, inside the asker's thread (process) callback,
 * with `task` as the asker got it (task->files are the asker's); it must
 * not call source_get. A provider whose callback of that scope the core
 * disabled (repeated failures) fills nothing more: askers get -ENODATA.
 */
typedef int (*ctp_source_fill_fn)(void *state, const struct ctp_task *task,
				  void *buf, size_t cap, size_t *len);
#define CTP_SOURCE_MAX_BYTES 1024
/*
 * One task of a walk source's list (struct ctp_source_desc.walk): what the
 * core needs to walk the task without listing /proc/<tgid>/task or opening
 * a file of the thread's. Ids are as the proc root names them. A list the
 * core cannot walk (empty, an id <= 0, not sorted by tgid then tid, a
 * task twice) is a failed pass: the core walks /proc and says why. A tgid
 * /proc no longer has is a vanished process; a listed thread that exited
 * is found (and counted as vanished) only when a read of its files fails.
 */
struct ctp_walk_task {
	int32_t tgid;
	int32_t tid;
	uint32_t flags;	   /* CTP_WALK_* */
	uint32_t reserved; /* 0 */
	char comm[16];	   /* the thread's name, NUL-terminated */
};
/* The name in comm is not the whole of what /proc shows (a workqueue
 * worker, "kworker/0:1" where comm shows "kworker/0:1-events"): the core
 * reads the thread's comm file for it. */
#define CTP_WALK_COMM_FILE (1u << 0)

/*
 * A per-task source (ctp_api.source_add). fill as for source_register.
 * walk, optional, makes it a walk source: called once at the start of
 * every capture, on the thread that runs the capture, after every
 * plugin's host callback and before any process is walked, it returns every
 * task the source sees at that moment (one pass), sorted by tgid then tid,
 * valid until the next call or fini. The core then walks those tasks instead of
 * listing /proc: it opens each process's directory for the per-process files
 * plugins declare, but reads a thread's declared files only when a plugin
 * fetches them (ctp_api.file_get; the up-front ones are lazy too) and takes its
 * name from the list. A negative errno (a failed pass) makes the core walk
 * /proc for this capture and count why; 0, or CTP_WALK_COMPLETE from a
 * source that says whether its list is complete (flags,
 * CTP_SOURCE_WALK_SAYS_COMPLETE), is a list to walk. The first walk source
 * of the config's plugin order is used; later ones are plain sources.
 */
struct ctp_source_desc {
	uint32_t abi, size; /* CTP_ABI_MAJOR, sizeof(struct ctp_source_desc) */
	const char *name;
	ctp_source_fill_fn fill;
	int (*walk)(void *state, const struct ctp_walk_task **tasks, size_t *n);
	/* Appended: a value source when n_values > 0. Then the bytes fill
	 * makes are `uint32_t abi` (1), `uint32_t size` (the bytes built,
	 * at most the fill's len), `uint64_t valid[valid_words]` (bit i of
	 * valid[i / 64]: value i is offered) and `uint64_t v[n_values]`; a
	 * value exists when size covers it and its bit is set (the layout of
	 * include/ctprof/source-task.h). The core copies bound values
	 * (ctp_api.field_bind) from it; askers of source_get read it as
	 * before. */
	uint32_t n_values;
	uint32_t valid_words;
	/* Appended: whose rows the source serves. 0 or CTP_SCOPE_THREAD: a
	 * thread's (fill runs for thread callbacks, as before).
	 * CTP_SCOPE_PROCESS: a process's; fill runs at most once per process
	 * row, for a process callback that asks, with the task of that row
	 * (tid = tgid, the process's directory), and source_get from a
	 * process callback finds only such sources (from a thread callback,
	 * only thread ones). A process source has no walk (one with a walk is
	 * -EINVAL) and no bindings (field_bind naming it binds nothing: the
	 * bindings resolve to no source). Another value is -EINVAL. */
	uint32_t scope;
	/* Appended: CTP_SOURCE_* flags; another bit, or a flag of walk's
	 * without walk, is -EINVAL. */
	uint32_t flags;
};
/*
 * walk() says, pass by pass, whether its list is complete: it returns
 * CTP_WALK_COMPLETE when the list names every task of the proc root's pid
 * namespace that lived through the pass (one born or ended during it may be
 * in it or not, as in any listing), and 0 when it may lack some. With
 * CTP_WALK_COMPLETE the core walks the list alone and does not list the
 * proc root: a process born after the pass is not in the snapshot, as a
 * process born after the proc root's listing is not in a capture that lists
 * it. With 0 the core lists the proc root too and walks a process the list
 * lacks from its files (capture.walk_unlisted), as it does for every walk
 * source without this flag, whose walk() return >= 0 says nothing more.
 */
#define CTP_SOURCE_WALK_SAYS_COMPLETE (1u << 0)
#define CTP_WALK_COMPLETE	      1
/*
 * walk() says, pass by pass, how many tasks of the proc root's pid
 * namespace its list lacks, where it knows: CTP_WALK_MISSING(m), m counted
 * by the kernel over the pass (every task there was, less those listed;
 * CTP_WALK_MISSING(0) is CTP_WALK_COMPLETE, with its meaning), and 0 when
 * it does not know. A kernel may keep some tasks from a source (a process
 * the BPF task iterators do not visit): the core lists the proc root, walks
 * the processes the list lacks from their files, and in a later capture of
 * the same process, where those processes still have m tasks in all (and
 * pid 1 is among them or in the list), walks them again without listing the
 * proc root. m is at most INT_MAX - 1.
 */
#define CTP_SOURCE_WALK_SAYS_MISSING (1u << 1)
#define CTP_WALK_MISSING(m)	     (CTP_WALK_COMPLETE + (m))

/* Longest source name; a field name's syntax ([a-z0-9_.-], dot-separated,
 * no empty component). */
#define CTP_SOURCE_NAME_MAX 31
/* Sources in one capture, all plugins together. */
#define CTP_MAX_SOURCES 8

/* One distinct cgroup a captured thread is in. */
struct ctp_cgroup {
	uint32_t abi, size;
	const char *path; /* as in /proc/<tid>/cgroup, e.g. "/system.slice/x" */
	int dirfd;	/* the cgroup v2 directory, or -1 when not reachable */
	int v2_root_fd; /* the cgroup v2 mount, or -1 */
};

/* Roots the capture runs against (fixture trees in tests). */
struct ctp_roots {
	uint32_t abi, size;
	const char *proc;   /* e.g. "/proc" */
	const char *sys;    /* e.g. "/sys" */
	const char *cgroup; /* resolved cgroup v2 mount, or NULL when none */
	int proc_fd, sys_fd, cgroup_fd; /* directory fds, -1 when not open */
};

/* ---- Derived fields -------------------------------------------------------
 *
 * A derived field is computed by snapshot readers from the aggregated values
 * of other fields: over a group of rows, each input is first reduced by its
 * own rule, then the formula is applied; one row is a group of one. The
 * value is absent when any input is absent. The formula is linear, with
 * optional "max sets" for inputs that overlap:
 *
 *   value = sum of coef*input over terms with max_set 0
 *         + for each max_set k > 0: the largest coef*input of its terms
 *
 * e.g. total off-CPU delay = cpu + blkio + freepages + compact + wpcopy + irq
 * + max(swapin, thrashing), since every thrashing wait is also a swapin wait
 * (docs/GROUPING.md).
 */

#define CTP_DERIVE_MAX_TERMS 8
/* An input may itself be derived, nesting at most this deep. */
#define CTP_DERIVE_MAX_DEPTH 4

struct ctp_derive_term {
	/* An input: a registered U64 or I64 field of the same scope, reduced
	 * by SUM, MAX, MIN or MODE (a RANGE has no single value). */
	const char *field;
	int32_t coef;	 /* non-zero; negative only for an I64 result */
	uint8_t max_set; /* 0: added; k > 0: only the largest term of set k */
	uint8_t reserved[3];
};

struct ctp_derived_desc {
	uint32_t abi, size; /* CTP_ABI_MAJOR, sizeof(struct ctp_derived_desc) */
	/* Name, help, scope, unit, kind and rule as for any field; type U64
	 * or I64, kind COUNTER, PEAK or GAUGE. The rule describes how the
	 * result behaves; readers never apply it (they apply the formula). */
	struct ctp_field_desc field;
	uint32_t n_terms; /* 1..CTP_DERIVE_MAX_TERMS */
	struct ctp_derive_term terms[CTP_DERIVE_MAX_TERMS];
};

/* Opaque handles owned by the core. */
struct ctp_ctx;	   /* one per loaded plugin */
struct ctp_record; /* one row being filled */

enum ctp_log_level {
	CTP_LOG_ERR = 3,
	CTP_LOG_WARNING = 4,
	CTP_LOG_NOTICE = 5,
	CTP_LOG_INFO = 6,
	CTP_LOG_DEBUG = 7,
};

/*
 * The core's services. Members past `size` do not exist in an older core.
 * All functions are safe to call from any worker thread but exited_begin
 * and exited_end, which belong to the host and finish callbacks.
 */
struct ctp_api {
	uint32_t abi, size;

	/* Logging, prefixed with the plugin name; repeats are rate-limited. */
	void (*log)(struct ctp_ctx *ctx, int level, const char *fmt, ...)
		__attribute__((format(printf, 3, 4)));

	/* Options from the config's `plugins.<name>.options` map. Values are
	 * scalars (sequences are joined with ','). Returns -ENOENT when the key
	 * is not set, -EINVAL when it does not parse as the asked type. */
	int (*opt_str)(struct ctp_ctx *ctx, const char *key, const char **out);
	int (*opt_u64)(struct ctp_ctx *ctx, const char *key, uint64_t *out);
	int (*opt_i64)(struct ctp_ctx *ctx, const char *key, int64_t *out);
	int (*opt_bool)(struct ctp_ctx *ctx, const char *key, int *out);
	/* Iterate option keys (to reject unknown ones): NULL past the end. */
	const char *(*opt_key)(struct ctp_ctx *ctx, size_t i);

	/* Register one field at any time (init or a callback). Returns the
	 * field's handle (>= 0), or -EEXIST / -EINVAL (bad name, type, or a
	 * rule that does not fit the kind). Registering the same name with the
	 * same description again returns the existing handle. */
	int (*field_register)(struct ctp_ctx *ctx,
			      const struct ctp_field_desc *desc);
	/* The handle of the i-th entry of the descriptor's static table. */
	int (*field_handle)(struct ctp_ctx *ctx, size_t table_index);

	/* Set a value of the row being filled. `field` is a handle; its scope
	 * must match the row's. Returns -EINVAL on a type or scope mismatch. */
	int (*set_u64)(struct ctp_record *rec, int field, uint64_t v);
	int (*set_i64)(struct ctp_record *rec, int field, int64_t v);
	int (*set_bool)(struct ctp_record *rec, int field, int v);
	int (*set_char)(struct ctp_record *rec, int field, char v);
	int (*set_str)(struct ctp_record *rec, int field, const char *s,
		       size_t len);
	/* Bit i of words[i / 64] set means CPU i is in the set. */
	int (*set_cpuset)(struct ctp_record *rec, int field,
			  const uint64_t *words, size_t n_words);

	/* Named summary counters shown with the plugin's status. Register at
	 * init (returns a handle), add from any callback. */
	int (*summary_register)(struct ctp_ctx *ctx, const char *name);
	void (*summary_add)(struct ctp_ctx *ctx, int counter, uint64_t delta);

	/* The roots of this capture. */
	const struct ctp_roots *(*roots)(struct ctp_ctx *ctx);

	/* Fetch declared file `i` of this task now. Needed for files declared
	 * lazily ('?' prefix), which the core does not read up front; for
	 * other files it returns what task->files[i] already holds. The bytes
	 * are read at most once per task and shared with any other plugin
	 * that asks. Returns 0 and *out, or the read's negative errno (then
	 * *out describes the failure). Call only from the callback that got
	 * `task`. */
	int (*file_get)(const struct ctp_task *task, uint32_t i,
			const struct ctp_file **out);

	/* A one-line remediation hint shown with the plugin's status (e.g.
	 * "most queries failed with EPERM: run as root or grant
	 * CAP_NET_ADMIN"). Typically set from `finish` after looking at the
	 * plugin's own failure counts; the last call wins; NULL clears it.
	 * Set from init it holds for the whole run; set during a capture, for
	 * that capture only (the core clears it when the next one begins),
	 * and in that capture's snapshot it replaces init's: NULL then clears
	 * the capture's own, and init's shows again. */
	void (*set_hint)(struct ctp_ctx *ctx, const char *text);

	/* State, from init only, that declared file `file` (a name of this
	 * plugin's thread_files or process_files, '?' prefix optional; the
	 * gate covers it in both lists) exists only on kernels built with
	 * option `kconfig`, e.g. ("io", "CONFIG_TASK_IO_ACCOUNTING"). The
	 * core records the gate beside the file's read-failure tally, so a
	 * reader can tell "this kernel lacks the option" from other failures
	 * (`show` prints a hint when gated files that do not exist, ENOENT,
	 * make up half or more of all read failures). Returns 0 (also for the
	 * same gate again, from any plugin); -ENOENT when this plugin declared
	 * no such file; -EINVAL when kconfig is not "CONFIG_" followed by
	 * [A-Z0-9_], at most 64 bytes in all; -EEXIST when the file already has
	 * another gate; -EBUSY when called after init. */
	int (*file_gate)(struct ctp_ctx *ctx, const char *file,
			 const char *kconfig);

	/* Register a derived field (struct ctp_derived_desc): one whose value
	 * readers compute from other fields, so a plugin never sets it. Call
	 * after its inputs exist (the static table is registered before init).
	 * Returns the field's handle (>= 0; the setters refuse it), or -EINVAL
	 * (bad description or formula), -ENOENT (an input is not registered),
	 * -EEXIST (name taken by a different description). The same
	 * description again returns the existing handle. */
	int (*derived_register)(struct ctp_ctx *ctx,
				const struct ctp_derived_desc *desc);

	/* A row of the cgroups table for a cgroup the core does not track
	 * itself (the core's rows are cgroup v2 paths, which begin with '/'),
	 * e.g. a cgroup v1 one. `key` (len bytes) is "<ns>:<rest>", <ns> one
	 * or more of [a-z0-9_], no NUL, at most 4096 bytes in all;
	 * docs/FORMAT.md lists the namespaces in use ("v1:<controllers>:<path>"
	 * by the cgroup plugin). The first reference adds the row; after the
	 * walk the core calls the `cgroup` callback of every plugin that
	 * referenced the key, and of no other, with cg->path = key and
	 * cg->dirfd = -1 (the plugin resolves its own key). Returns the row
	 * (>= 0), -EINVAL for a malformed key, -ENOMEM. From host, process,
	 * thread and cgroup callbacks (a row first referenced from a cgroup
	 * callback is still visited; one first referenced from finish is
	 * not). */
	int (*cgroup_ref)(struct ctp_ctx *ctx, const char *key, size_t len);

	/* Appended in ABI 1: whether the core runs a long-lived recorder that
	 * takes snapshot after snapshot with this plugin loaded (false for a
	 * one-shot capture). Constant from init to fini, so a plugin decides
	 * at init whether to watch for something between snapshots (exited
	 * tasks, below). */
	bool (*recording)(struct ctp_ctx *ctx);

	/*
	 * Appended in ABI 1: the exited table. A task that started and exited
	 * between two snapshots is in no thread row; a plugin that learns of
	 * exits (taskstats exit notifications) adds one row per exited task
	 * here, and fills it with the setters, which accept only this
	 * plugin's CTP_SCOPE_EXITED fields on such a record (and refuse those
	 * fields on every other record).
	 *
	 * exited_begin adds a row: tid (0: the row sums several exited
	 * threads of tgid, readers join it to no live thread), tgid (0:
	 * unknown), comm (comm_len
	 * bytes, no NUL, at most CTP_EXITED_COMM_MAX; NULL and 0: unknown) and
	 * when the task exited, CLOCK_BOOTTIME in ns (0: unknown). Returns 0
	 * and *rec, a record valid until exited_end(*rec), the next
	 * exited_begin of this plugin or the end of the callback, whichever
	 * comes first; -EBUSY outside the plugin's host and finish callbacks
	 * (the only ones that may call it: they run on one thread); -EINVAL
	 * for a bad comm; -ENOSPC when the snapshot already holds
	 * CTP_EXITED_MAX_ROWS exited rows; -ENOMEM. A row added is kept even
	 * when no value is set on it.
	 *
	 * exited_lost adds n to the exited tasks this plugin knows it missed
	 * since the last snapshot (a full buffer, a socket overrun, a row
	 * refused by exited_begin), shown with the table; any callback.
	 */
	int (*exited_begin)(struct ctp_ctx *ctx, uint32_t tid, uint32_t tgid,
			    const char *comm, size_t comm_len,
			    uint64_t exit_boottime_ns, struct ctp_record **rec);
	void (*exited_end)(struct ctp_record *rec);
	void (*exited_lost)(struct ctp_ctx *ctx, uint64_t n);

	/*
	 * Appended in ABI 1: per-task sources (ctp_source_fill_fn). From init
	 * only, a plugin offers a thread-scope source under `name`; whoever
	 * reads it must know its byte layout, which the source's own header
	 * documents (include/ctprof/source-taskstats.h). Register only what
	 * the host can serve: askers take a failure as "use the files".
	 * Returns 0; -EINVAL (bad name, no fill), -EEXIST (name taken),
	 * -ENOSPC (CTP_MAX_SOURCES reached), -EBUSY after init. The source
	 * goes with its plugin (a failed init, a plugin left out).
	 *
	 * source_get, from a thread or process callback with the task it
	 * got: the source's bytes for this thread or process row (8-aligned,
	 * valid until the callback returns). Returns 0 with *data and *len;
	 * -ENOENT when no loaded plugin offers `name` for the caller's scope
	 * (a thread callback sees only thread sources, a process callback
	 * only process sources, struct ctp_source_desc.scope: a source of
	 * the other scope is -ENOENT like an unknown name); -EINVAL without
	 * a task of a thread or process callback; else the fill's error for
	 * this row (the same for every asker).
	 */
	int (*source_register)(struct ctp_ctx *ctx, const char *name,
			       ctp_source_fill_fn fill);
	int (*source_get)(const struct ctp_task *task, const char *name,
			  const void **data, size_t *len);

	/* Appended in ABI 1: source_register with a description, which may
	 * make the source a walk source (struct ctp_source_desc). The same
	 * rules and returns as source_register, and -EINVAL for a desc of
	 * another abi or too small a size. */
	int (*source_add)(struct ctp_ctx *ctx,
			  const struct ctp_source_desc *desc);

	/*
	 * Appended in ABI 1: values the core copies itself. field_bind, from
	 * init, says that thread field `field` (this plugin's, u64, i64, char
	 * or bool, not derived) is value `value` of the value source `source`
	 * (struct ctp_source_desc.n_values), unchanged: for every thread the
	 * source offers it for, the core sets the cell before any thread
	 * callback runs (char: the low byte; bool: nonzero), with no call into
	 * the plugin. `value` may carry CTP_BIND_GUARD(g): then where value g
	 * is offered and 0 the cell is left absent (and the binding counts as
	 * served), as for a delay's minimum before the first delay. A plugin
	 * binds values of one source. The source need not be loaded yet; a
	 * binding to a source that is absent, not a value source, or off in
	 * this capture is not served, and the plugin sets the field as it
	 * always would. Returns 0; -EINVAL (not such a field, a value past
	 * CTP_BIND_MAX_VALUE, a second source), -EBUSY after init, -ENOSPC past
	 * CTP_MAX_BINDS, -ENOMEM.
	 *
	 * thread_skip_bound, from init or the host callback (it holds until
	 * changed): on != 0 tells the core that this plugin's thread callback
	 * has nothing to add for a thread on which every one of its bindings
	 * was served, so the core does not call it then, and counts the thread
	 * in summary counter `counter` (ctp_api.summary_register; -1 for none).
	 * When some binding is not served, the core leaves every cell of the
	 * plugin's bindings empty for that thread and calls the callback as
	 * if it had bound nothing. Returns 0; -EINVAL (an unknown counter),
	 * -EBUSY outside init and the host callback.
	 */
	int (*field_bind)(struct ctp_ctx *ctx, int field, const char *source,
			  uint32_t value);
	int (*thread_skip_bound)(struct ctp_ctx *ctx, int on, int counter);

	/*
	 * Appended in ABI 1: source_prefill, from init or the host callback
	 * (it holds until changed): on != 0 says that this plugin's thread
	 * callback asks thread source `source` (another plugin's; source_get)
	 * for every thread it is called on. The core then fills the source
	 * for a run of threads before calling the plugin on them and times
	 * those fills together (the provider's time, as always), instead of
	 * reading the clock around each fill inside the callback; source_get
	 * answers the same. A thread the callback does not ask for after all
	 * has had its fill. A name that is no other plugin's thread source in
	 * a capture is not filled in it. Returns 0; -EINVAL (not a source
	 * name), -EBUSY outside init and the host callback, -ENOSPC past
	 * CTP_MAX_SOURCES names.
	 */
	int (*source_prefill)(struct ctp_ctx *ctx, const char *source, int on);

	/*
	 * Appended in ABI 1: a string interned once, set by its handle.
	 * str_intern, from any callback, gives a handle (>= 0) of len bytes
	 * (no NUL among them) for the capture under way; set_str_handle sets
	 * a string field to it, as set_str would with the bytes, without
	 * hashing and comparing them again: for a value a plugin sets on many
	 * rows (a cgroup's path on each of its threads). A handle is good for
	 * the capture it was made in only: kept for a later one,
	 * set_str_handle refuses it. str_intern returns -EINVAL (a NUL, NULL
	 * with len > 0), -ENOMEM; set_str_handle what set_str does, and
	 * -ESTALE for a handle of another capture or none at all.
	 */
	int64_t (*str_intern)(struct ctp_ctx *ctx, const char *s, size_t len);
	int (*set_str_handle)(struct ctp_record *rec, int field,
			      int64_t handle);

	/*
	 * Appended in ABI 1: set_str_handles sets n string fields of rec at
	 * once, fields[i] to handles[i], each as set_str_handle would: for a
	 * plugin that sets several interned strings on every row (cgroup's
	 * path in each v1 hierarchy), one call a row. Every cell it can set
	 * is set; it returns 0, or the first failure set_str_handle would
	 * have returned (-EINVAL also for NULL arrays with n > 0).
	 */
	int (*set_str_handles)(struct ctp_record *rec, const int *fields,
			       const int64_t *handles, uint32_t n);
};

/* Bindings (ctp_api.field_bind): at most this many per plugin, and value
 * numbers below this. */
#define CTP_MAX_BINDS	   128
#define CTP_BIND_MAX_VALUE 4096
#define CTP_BIND_GUARD(g)  ((((uint32_t)(g)) + 1) << 16)

/* The longest comm ctp_api.exited_begin takes, and the most exited rows one
 * snapshot holds. */
#define CTP_EXITED_COMM_MAX 64
#define CTP_EXITED_MAX_ROWS (1u << 20)

/* ---- The descriptor ------------------------------------------------------ */

/*
 * Threads. With several workers the process and thread callbacks run on
 * the core's worker threads, which the first capture starts and which
 * live, parked between captures, until the plugins are unloaded (they end
 * before fini): what a plugin keeps per thread is kept from capture to
 * capture. With one worker they run on the thread that asked for the
 * capture, which a host may make anew for every capture (a server's
 * connection thread). State kept per thread must therefore go, or go to
 * another thread, when its thread ends, or a long-lived host piles it up
 * (issue 29): the in-tree plugins keep theirs in blocks a thread holds
 * while it lives (plugins/common/workers.h).
 */
/* Plugin flags. */
#define CTP_PLUGIN_MT_SAFE (1u << 0) /* callbacks may run concurrently */
/*
 * Every file descriptor the process and thread callbacks open is closed
 * before that call returns (descriptors opened by init may be used
 * anywhere). When every loaded plugin with a process or thread callback
 * says so, the core gives each worker thread its own descriptor table
 * (unshare(CLONE_FILES)), a copy made when the thread starts, at the first
 * capture (a descriptor a host or finish callback opens later is not in
 * it): the
 * workers' opens and closes then stop contending on one table lock, and
 * the kernel skips the per-read file reference a shared table needs. A
 * plugin that keeps a descriptor from a task callback for later (a socket
 * per worker, a cached ELF handle) must not set it: the descriptor would
 * live in that worker's table only.
 * Ignored for plugins without process or thread callbacks.
 */
#define CTP_PLUGIN_FD_LOCAL (1u << 1)
/*
 * The thread callback needs nothing the process callback left behind on
 * the worker that ran it (per-worker or thread-local state filled by the
 * process callback and read back by the thread callbacks). When every
 * loaded plugin with a thread callback says so, the core may walk the
 * threads of a large process (config `split_threads`) on several workers,
 * each chunk on whichever worker is free, after the process callback ran
 * on one of them. Ignored for plugins without a thread callback.
 */
#define CTP_PLUGIN_SPLITTABLE (1u << 2)
/*
 * The thread callback never uses task->dirfd (it reads its files through
 * task->files and ctp_api.file_get, and calls nothing relative to the
 * thread's directory). When every loaded plugin with a thread callback
 * says so, the core does not open each thread's directory: it reads the
 * thread's files by path from the process's directory ("task/<tid>/stat"),
 * two system calls fewer per thread, and task->dirfd is -1 in thread
 * callbacks. Ignored for plugins without a thread callback.
 */
#define CTP_PLUGIN_NO_THREAD_DIR (1u << 4)
/*
 * The descriptor's options[] lists every option the plugin takes (none
 * when empty). The core then checks each configured option against it
 * before init (unknown names, values of the wrong type or out of range are
 * refused with the config file's position), `check-config` does the same
 * without loading targets, and `plugins` lists them. Without the flag the
 * options reach init unchecked, as in the first ABI 1 plugins.
 */
#define CTP_PLUGIN_OPTIONS (1u << 3)
/*
 * Appended in ABI 1: the descriptor's `capabilities` member says which
 * Linux capabilities the plugin needs to read what it reads (often none:
 * 0 with this flag is a declaration). A service that drops privileges
 * (`serve`/`record --user`) keeps for its capture process only the union
 * of its enabled plugins' declarations. A plugin without the flag (one
 * built before it existed) is taken to need CTP_CAPS_UNDECLARED.
 */
#define CTP_PLUGIN_CAPS (1u << 5)
/* The bit of capability number `cap` (CAP_SYS_PTRACE... of
 * <linux/capability.h>) in ctp_plugin.capabilities. */
#define CTP_CAP_BIT(cap) (UINT64_C(1) << (cap))
/* What a plugin without CTP_PLUGIN_CAPS is taken to need: everything the
 * shipped plugins need together, CAP_DAC_READ_SEARCH (2), CAP_SYS_PTRACE
 * (19) and CAP_NET_ADMIN (12) (docs/PLUGINS.md "Capabilities"). */
#define CTP_CAPS_UNDECLARED (CTP_CAP_BIT(2) | CTP_CAP_BIT(12) | CTP_CAP_BIT(19))

/* Option value types (ctp_option_desc.type); fixed numbers. */
enum ctp_option_type {
	CTP_OPT_STRING = 1, /* any text, or one of `choices` */
	CTP_OPT_U64 = 2,    /* as ctp_api.opt_u64 reads it; min..max */
	CTP_OPT_BOOL = 3,   /* true/false, yes/no, on/off, 1/0 */
	CTP_OPT_BYTES = 4,  /* a byte count with the config's suffixes (K,
			       MiB...), as ctp_api.opt_str gives it; min..max */
};

/* One option a plugin takes (CTP_PLUGIN_OPTIONS). */
struct ctp_option_desc {
	const char *name;
	const char *help; /* one line */
	uint8_t type;	  /* enum ctp_option_type */
	uint8_t reserved[7];
	const char *def;	    /* the default, as text (listed) */
	const char *const *choices; /* CTP_OPT_STRING: NULL-terminated, or
				       NULL for any text */
	uint64_t min, max; /* U64, BYTES: inclusive; max 0 = no bound */
	/*
	 * Appended in ABI 1 (read when option_desc_size covers it): checks
	 * what the type cannot, such as the files a value names: 0, or a
	 * negative errno with a one-line reason in why ("FILE:LINE:COL:
	 * what" when a file it names is at fault). The core calls it, after
	 * the type checks, for the values in effect: before init, and in
	 * `check-config` for each plugin enabled on the host. It keeps
	 * nothing and never blocks: open files with ctp_open_regular. NULL:
	 * the type says it all.
	 */
	int (*check)(const char *value, char *why, size_t whylen);
};

/*
 * Callbacks. `state` is what init stored. Each returns >= 0 on success or a
 * negative errno. -ENOENT and -ESRCH mean "the task vanished" and are counted,
 * never treated as plugin errors; -EMFILE, -ENFILE, -ENOMEM and -ENOBUFS
 * (ctp_err_resource) mean the collector ran short of resources and are
 * counted apart, neither. Other errors are counted; a callback that keeps
 * failing is disabled for the rest of the snapshot.
 */
/*
 * A command of a plugin: `ctprof-core NAME ARGS...` loads the plugins of
 * the default plugin directories (no init) and runs the first NAME found.
 * NAME is [a-z0-9-], 1-32 bytes, and never one of ctprof-core's own
 * commands. run gets argv[0] = NAME, prints on stdout/stderr and returns
 * the exit status (0 ok, 1 failure, 2 usage; --help prints usage).
 */
struct ctp_command {
	const char *name;
	const char *usage; /* one line: "FILE  what it does" */
	int (*run)(int argc, char **argv);
};

struct ctp_plugin {
	uint32_t abi;	     /* CTP_ABI_MAJOR */
	uint32_t size;	     /* sizeof(struct ctp_plugin) as built */
	const char *name;    /* matches the config key and the .so basename */
	const char *version; /* the plugin's own version string */
	const char *description;
	uint32_t flags; /* CTP_PLUGIN_* */

	/* Static field table, element size given so it can grow. */
	const struct ctp_field_desc *fields;
	uint32_t n_fields;
	uint32_t field_desc_size; /* sizeof(struct ctp_field_desc) */

	/* NULL-terminated names of files under /proc/<tgid>/task/<tid>/ the
	 * thread callback needs, and under /proc/<tgid>/ the process callback
	 * needs. The core reads each at most once per task, before the
	 * callback (a thread's only when fetched, when the core walks from a
	 * walk source: struct ctp_source_desc). A name starting with '?' (e.g.
	 * "?smaps_rollup") is lazy: its task->files slot has err -ENODATA until
	 * some plugin fetches it for this task with ctp_api.file_get (then the
	 * slot holds the bytes for every later plugin), so a costly file is
	 * read only when wanted. A '+' next (e.g. "?+maps") marks a file of
	 * many records that the core reads to its end (it takes a short first
	 * read of any other file for the whole, saving a read: single-record
	 * files come whole from one). Read failures of every file read are
	 * tallied by the core. */
	const char *const *thread_files;
	const char *const *process_files;

	int (*init)(struct ctp_ctx *ctx, const struct ctp_api *api,
		    void **state);
	void (*fini)(void *state);

	int (*host)(void *state, struct ctp_record *rec);
	int (*process)(void *state, const struct ctp_task *task,
		       struct ctp_record *rec);
	int (*thread)(void *state, const struct ctp_task *task,
		      struct ctp_record *rec);
	int (*cgroup)(void *state, const struct ctp_cgroup *cg,
		      struct ctp_record *rec);
	/* Called once after the walk, before the snapshot is written. */
	int (*finish)(void *state, struct ctp_record *host_rec);

	/* Appended in ABI 1: the options (with CTP_PLUGIN_OPTIONS). Use
	 * CTP_PLUGIN_OPTION_TABLE(table). */
	const struct ctp_option_desc *options;
	uint32_t n_options;
	uint32_t option_desc_size; /* sizeof(struct ctp_option_desc) */

	/* Appended in ABI 1: the names of the plugin's summary counters.
	 * The core registers them before init, in this order, so counter i
	 * of the table is summary counter i (ctp_api.summary_register with
	 * one of these names returns its index), and `plugins` lists them.
	 * Use CTP_PLUGIN_COUNTER_TABLE(names). */
	const char *const *counters;
	uint32_t n_counters;
	uint32_t reserved_end; /* 0 */

	/* Appended in ABI 1: commands the plugin adds to ctprof-core
	 * (`ctprof-core NAME ARGS...`), run without init and without a
	 * capture; use CTP_PLUGIN_COMMAND_TABLE(tbl). */
	const struct ctp_command *commands;
	uint32_t n_commands;
	uint32_t command_desc_size; /* sizeof(struct ctp_command) */

	/* Appended in ABI 1, read with CTP_PLUGIN_CAPS in flags: the
	 * capabilities the plugin needs, CTP_CAP_BIT(CAP_...) ORed (bits
	 * past the kernel's last capability are refused), e.g.
	 * `.flags = CTP_PLUGIN_CAPS, .capabilities = CTP_CAP_BIT(
	 * CAP_SYS_PTRACE)`. Declare what a capture as an unprivileged user
	 * lacks to read the files and calls of other users' tasks. */
	uint64_t capabilities;
};

/* Fill abi/size and the field table members of a descriptor. */
#define CTP_PLUGIN_HEADER                                                      \
	.abi = CTP_ABI_MAJOR, .size = sizeof(struct ctp_plugin)
#define CTP_PLUGIN_FIELDS(tbl)                                                 \
	.fields = (tbl), .n_fields = sizeof(tbl) / sizeof((tbl)[0]),           \
	.field_desc_size = sizeof(struct ctp_field_desc)
/* The summary counters' names (a const char *const array). */
#define CTP_PLUGIN_COUNTER_TABLE(tbl)                                          \
	.counters = (tbl), .n_counters = sizeof(tbl) / sizeof((tbl)[0])
/* The commands table (an array of struct ctp_command). */
#define CTP_PLUGIN_COMMAND_TABLE(tbl)                                          \
	.commands = (tbl), .n_commands = sizeof(tbl) / sizeof((tbl)[0]),       \
	.command_desc_size = sizeof(struct ctp_command)
/* The options table and CTP_PLUGIN_OPTIONS' size member (the flag itself
 * goes in .flags). */
#define CTP_PLUGIN_OPTION_TABLE(tbl)                                           \
	.options = (tbl), .n_options = sizeof(tbl) / sizeof((tbl)[0]),         \
	.option_desc_size = sizeof(struct ctp_option_desc)

#ifdef __cplusplus
}
#endif
#endif /* CTPROF_PLUGIN_H */
