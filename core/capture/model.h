/* SPDX-License-Identifier: MIT */
/*
 * The in-memory capture: field registry, interned blobs, column tables,
 * plugin status and the read-failure tally. Filled by the engine (engine.c),
 * read by the snapshot writer (writer.c). Private to the core.
 *
 * Values are stored as uint64_t cells with a presence bit:
 *   U64  the value          I64    the value, two's complement
 *   BOOL 0 or 1             CHAR   the byte
 *   STRING / CPUSET  a blob id in capture->blobs (a CPUSET blob is an array
 *        of little-endian uint64_t words, bit i = CPU i, trailing zero words
 *        trimmed).
 * A cell whose presence bit is clear is absent; its value is meaningless.
 */
#ifndef CTP_CORE_MODEL_H
#define CTP_CORE_MODEL_H

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ctprof/plugin.h"

/* ---- Interned blobs (strings, cpu sets) ---------------------------------- */

struct ctp_blobpool;

int ctp_blobpool_new(struct ctp_blobpool **ret);
void ctp_blobpool_free(struct ctp_blobpool *pool);
/* Intern bytes; returns the id (>= 0) or -ENOMEM. Thread-safe. Equal bytes
 * give equal ids. */
int64_t ctp_blobpool_intern(struct ctp_blobpool *pool, const void *data,
			    size_t len);
/* Same, first looking in a small per-thread cache of recent short blobs,
 * so repeated values (policy names, affinity masks) skip the pool's lock. */
int64_t ctp_blobpool_intern_cached(struct ctp_blobpool *pool, const void *data,
				   size_t len);
/* ctp_blobpool_intern_cached of a string's len bytes, -EINVAL when they
 * hold a NUL: the cache remembers the answer with the bytes, so only bytes
 * it has not are searched for one. */
int64_t ctp_blobpool_intern_text(struct ctp_blobpool *pool, const char *s,
				 size_t len);
/* A handle of blob `id` of this pool (ctp_api.str_intern): the pool's
 * generation above the id, so that a handle of another pool (an earlier
 * capture's) is told apart. */
int64_t ctp_blobpool_handle(const struct ctp_blobpool *pool, int64_t id);
/* The blob id of a handle of this pool, or -ESTALE (another pool's, or no
 * such blob). */
int64_t ctp_blobpool_handle_id(const struct ctp_blobpool *pool, int64_t handle);
/* The same test for many handles: one of this pool's blobs now is a handle
 * h with (uint64_t)h >> 32 == *gen and (uint32_t)h < *n. */
void ctp_blobpool_handle_span(const struct ctp_blobpool *pool, uint64_t *gen,
			      uint32_t *n);
/* Bytes of blob `id` (NUL-terminated copy), length in *len. Thread-safe
 * against concurrent interning. */
const char *ctp_blobpool_get(const struct ctp_blobpool *pool, uint64_t id,
			     size_t *len);
size_t ctp_blobpool_count(const struct ctp_blobpool *pool);

/* ---- Field registry -------------------------------------------------------
 */

/* One term of a derived field's formula (ctp_api.derived_register). */
struct ctp_field_term {
	uint32_t input; /* field id, always lower than the derived field's */
	int32_t coef;
	uint8_t max_set;
};

struct ctp_field {
	char *name;
	char *help;	 /* "" when none */
	char *section;	 /* NULL when none (CTP_FIELD_META) */
	char *dims;	 /* "k=v,k=v", NULL when none */
	uint32_t plugin; /* index into capture->plugins */
	uint8_t scope, type, unit, kind, rule;
	/* CTP_FIELD_START_TIME, _ELAPSED, _REAPED and _KIB_STEP as given */
	uint8_t flags;
	uint32_t col; /* column index in its scope's tables */
	/* Derived fields: n_terms > 0 and no values of their own. */
	uint8_t n_terms;
	struct ctp_field_term terms[CTP_DERIVE_MAX_TERMS];
	/* What a setter must match to set the field (ctp_field_set_key of
	 * its scope, type and plugin; CTP_FIELD_UNSETTABLE for a derived
	 * one): every check of a set in one compare. */
	uint64_t set_key;
	/* A hash of name: a lookup by name compares it first. */
	uint32_t name_hash;
};

#define CTP_FIELD_UNSETTABLE UINT64_MAX

static inline uint64_t ctp_field_set_key(uint8_t scope, uint8_t type,
					 uint32_t plugin)
{
	return (uint64_t)plugin << 16 | (uint64_t)scope << 8 | type;
}

#define CTP_FIELD_PAGE	256
#define CTP_FIELD_PAGES 256 /* at most 65536 fields */

struct ctp_registry {
	pthread_mutex_t lock;
	/* Pages never move, so readers index without the lock. */
	struct ctp_field *pages[CTP_FIELD_PAGES];
	_Atomic uint32_t n;
	uint32_t ncols[CTP_SCOPE_EXITED + 1]; /* next column per scope */
};

int ctp_registry_init(struct ctp_registry *reg);
void ctp_registry_done(struct ctp_registry *reg);
/* Check a description: name syntax, enum ranges, type/kind/rule fit.
 * Returns 0 or -EINVAL with a reason in why. Pure. */
int ctp_field_desc_check(const struct ctp_field_desc *d, const char **why);
/* A field's name syntax (also a per-task source's): 1-128 of [a-z0-9_.-],
 * dot-separated, no empty component. */
bool ctp_name_ok(const char *name);
/* Add a field (after ctp_field_desc_check). Returns the field id, or
 * -EEXIST when the name is taken by a different description (same
 * description and plugin: returns the existing id). */
int ctp_registry_add(struct ctp_registry *reg, uint32_t plugin,
		     const struct ctp_field_desc *d);
static inline uint32_t ctp_registry_count(const struct ctp_registry *reg)
{
	return atomic_load_explicit(&((struct ctp_registry *)reg)->n,
				    memory_order_acquire);
}
static inline struct ctp_field *ctp_registry_get(const struct ctp_registry *reg,
						 uint32_t id)
{
	return &reg->pages[id / CTP_FIELD_PAGE][id % CTP_FIELD_PAGE];
}
int ctp_registry_find(const struct ctp_registry *reg, const char *name);
/* The id of scope's field with `role` (CTP_FIELD_START_TIME or
 * CTP_FIELD_ELAPSED, each at most once per scope), or -ENOENT. */
int ctp_registry_role(const struct ctp_registry *reg, uint8_t scope,
		      uint8_t role);
/* Forget every field from id n on and give their columns back: the undo of a
 * plugin's registrations when its loading fails. Only while no other thread
 * reads the registry (plugin loading, before the walk). */
void ctp_registry_truncate(struct ctp_registry *reg, uint32_t n);
/* Add a derived field: the field checks of ctp_field_desc_check, then the
 * formula's (docs/PLUGINS.md); inputs are looked up by name under the
 * registry's lock. Returns the field id, or -EINVAL with a reason in *why
 * (and the faulty term's index in *term, else -1), -ENOENT (input *term is
 * not registered), -EEXIST as ctp_registry_add. */
int ctp_registry_add_derived(struct ctp_registry *reg, uint32_t plugin,
			     const struct ctp_derived_desc *d, const char **why,
			     int *term);

/* ---- Column tables ---------------------------------------------------------
 */

#define CTP_BLOCK_ROWS 1024u

struct ctp_block {
	uint32_t ncols; /* allocated column slots */
	/* vals[c]: CTP_BLOCK_ROWS cells of 1 << lg[c] bytes each, NULL when
	 * the column was never set in this block. A column starts at the
	 * width its first value needs and widens (1, 2, 4, 8 bytes) when a
	 * value does not fit: most cells of a host are small (states,
	 * priorities, counts, times of sleeping threads), and the tables are
	 * most of a capture's memory. */
	void **vals;
	uint8_t *lg;
	uint64_t **present; /* bitmaps, CTP_BLOCK_ROWS bits each */
};

/* Whether v fits a cell of 1 << lg bytes. */
static inline bool ctp_cell_fits(uint8_t lg, uint64_t v)
{
	return lg >= 3 || v >> (8u << lg) == 0;
}

static inline uint64_t ctp_cell_load(const void *cells, uint8_t lg, uint32_t i)
{
	switch (lg) {
	case 0:
		return ((const uint8_t *)cells)[i];
	case 1:
		return ((const uint16_t *)cells)[i];
	case 2:
		return ((const uint32_t *)cells)[i];
	default:
		return ((const uint64_t *)cells)[i];
	}
}

/* Only where ctp_cell_fits(lg, v). */
static inline void ctp_cell_store(void *cells, uint8_t lg, uint32_t i,
				  uint64_t v)
{
	switch (lg) {
	case 0:
		((uint8_t *)cells)[i] = (uint8_t)v;
		break;
	case 1:
		((uint16_t *)cells)[i] = (uint16_t)v;
		break;
	case 2:
		((uint32_t *)cells)[i] = (uint32_t)v;
		break;
	default:
		((uint64_t *)cells)[i] = v;
	}
}

/*
 * Rows grow in blocks of CTP_BLOCK_ROWS so a row append allocates only once
 * per block. Columns are allocated lazily, on the first set in a block, and
 * widened on the first value that does not fit.
 * A table is used by one thread at a time.
 */
struct ctp_table {
	uint32_t nrows;
	uint32_t nblocks;
	size_t capblocks;
	struct ctp_block *blocks;
};

void ctp_table_init(struct ctp_table *t);
void ctp_table_done(struct ctp_table *t);
/* Append an all-absent row; returns its index or -ENOMEM. */
int64_t ctp_table_add_row(struct ctp_table *t);
/* Drop the last `n` rows (a task that vanished mid-collection). */
void ctp_table_truncate(struct ctp_table *t, uint32_t nrows);
/* ctp_table_set() when the cell's column is not allocated in its block, or
 * too narrow for v. */
int ctp_table_set_slow(struct ctp_table *t, uint32_t row, uint32_t col,
		       uint64_t v);
void ctp_table_clear(struct ctp_table *t, uint32_t row, uint32_t col);
/* Make row `to` a copy of row `from` (every cell, absent ones absent; from
 * is left as it is): rows after a dropped one moved down. 0, -EINVAL (no
 * such row) or -ENOMEM. */
int ctp_table_move_row(struct ctp_table *t, uint32_t from, uint32_t to);

/*
 * Many cells of one row (a plugin's bound values, a row's string handles):
 * the row's block found once and its column arrays held in the cursor,
 * which the compiler keeps in registers where it stays local. A byte-wide
 * cell store may alias anything, so ctp_table_set() has the compiler load
 * them again for every cell. ctp_table_set() is one ctp_row_set(); a slow set
 * (a column not yet allocated in the block, or too narrow) may move the
 * arrays, which it reads again after one.
 */
struct ctp_row_cur {
	struct ctp_table *t;
	struct ctp_block *blk;
	uint32_t row, i, word, ncols;
	uint64_t bit;
	void **cells;
	uint8_t *lg;
	uint64_t **present;
};

/* Only where row < t->nrows. */
static inline struct ctp_row_cur ctp_row_cur(struct ctp_table *t, uint32_t row)
{
	struct ctp_block *blk = &t->blocks[row / CTP_BLOCK_ROWS];
	uint32_t i = row % CTP_BLOCK_ROWS;
	return (struct ctp_row_cur){
		.t = t,
		.blk = blk,
		.row = row,
		.i = i,
		.word = i / 64,
		.ncols = blk->ncols,
		.bit = 1ull << (i % 64),
		.cells = blk->vals,
		.lg = blk->lg,
		.present = blk->present,
	};
}

static inline int ctp_row_set(struct ctp_row_cur *c, uint32_t col, uint64_t v)
{
	if (col < c->ncols && c->cells[col] && ctp_cell_fits(c->lg[col], v)) {
		ctp_cell_store(c->cells[col], c->lg[col], c->i, v);
		c->present[col][c->word] |= c->bit;
		return 0;
	}
	int r = ctp_table_set_slow(c->t, c->row, col, v);
	c->ncols = c->blk->ncols;
	c->cells = c->blk->vals;
	c->lg = c->blk->lg;
	c->present = c->blk->present;
	return r;
}

/* Set a cell (present). 0, -EINVAL (no such row) or -ENOMEM. Inline: the
 * per-thread path sets a dozen cells per plugin; a cursor of one cell,
 * whose unused members the compiler drops. */
static inline int ctp_table_set(struct ctp_table *t, uint32_t row, uint32_t col,
				uint64_t v)
{
	if (row >= t->nrows)
		return -EINVAL;
	struct ctp_row_cur c = ctp_row_cur(t, row);
	return ctp_row_set(&c, col, v);
}

/* true and *v when present. */
static inline bool ctp_table_get(const struct ctp_table *t, uint32_t row,
				 uint32_t col, uint64_t *v)
{
	if (row >= t->nrows)
		return false;
	const struct ctp_block *blk = &t->blocks[row / CTP_BLOCK_ROWS];
	uint32_t i = row % CTP_BLOCK_ROWS;
	if (col >= blk->ncols || !blk->present[col] ||
	    !(blk->present[col][i / 64] & (1ull << (i % 64))))
		return false;
	*v = ctp_cell_load(blk->vals[col], blk->lg[col], i);
	return true;
}

/* ---- Plugin status ---------------------------------------------------------
 */

enum ctp_plugin_status {
	CTP_PST_LOADED = 1,
	CTP_PST_FAILED = 2,
	CTP_PST_DISABLED = 3,
};

#define CTP_MAX_SUMMARY 64

struct ctp_plugin_rt; /* engine-private runtime part */

struct ctp_plugin_info {
	char *name;
	char *path;	 /* NULL when not found */
	char *version;	 /* NULL unless loaded */
	char *reason;	 /* why failed/disabled, NULL when loaded */
	char *hint;	 /* the hint set during this capture, or NULL */
	char *init_hint; /* the hint init set: for every capture of the run */
	uint8_t status;	 /* enum ctp_plugin_status */
	bool required;
	_Atomic uint64_t time_ns; /* CPU-agnostic wall time in callbacks */
	_Atomic uint64_t calls, errors, vanished;
	/* Calls that failed for lack of resources (ctp_err_resource: EMFILE,
	 * ENFILE, ENOMEM, ENOBUFS): neither errors nor vanished tasks; the
	 * first such errno (negative), 0 none. */
	_Atomic uint64_t resource;
	_Atomic int resource_err;
	/* Exited tasks the plugin said it missed (ctp_api.exited_lost), and
	 * whether it took part in the exited table at all (a row, a loss). */
	_Atomic uint64_t exited_lost;
	_Atomic bool exited;
	uint32_t n_summary;
	char *summary_name[CTP_MAX_SUMMARY];
	_Atomic uint64_t summary[CTP_MAX_SUMMARY];
	struct ctp_plugin_rt *rt;
};

/* The hint a snapshot shows for p: this capture's, else init's; NULL. */
static inline const char *ctp_plugin_hint(const struct ctp_plugin_info *p)
{
	return p->hint ? p->hint : p->init_hint;
}

/* A summary counter of the plugin named `name`: its index, the existing
 * one when the name is registered, -ENOSPC past CTP_MAX_SUMMARY, -EINVAL
 * for an empty name, -ENOMEM. */
int ctp_summary_register(struct ctp_plugin_info *info, const char *name);
/* What every setter checks: plugin `plugin` may set `field` of reg in a
 * row of `scope` with a value of `type` (its own, not derived). 0 or
 * -EINVAL. */
int ctp_field_settable(const struct ctp_registry *reg, int field, uint8_t scope,
		       uint8_t type, uint32_t plugin);
/* The same check for the setters, inline: the field when it may be set
 * so, else NULL. */
static inline const struct ctp_field *
ctp_field_for_set(const struct ctp_registry *reg, int field, uint8_t scope,
		  uint8_t type, uint32_t plugin)
{
	if (field < 0 || (uint32_t)field >= ctp_registry_count(reg))
		return NULL;
	const struct ctp_field *f = ctp_registry_get(reg, (uint32_t)field);
	return f->set_key == ctp_field_set_key(scope, type, plugin) ? f : NULL;
}

/* ---- The capture ------------------------------------------------------------
 */

/* Identity columns at the start of the thread and process tables; field
 * columns follow at CTP_*_IDENT + field->col. */
enum {
	CTP_TCOL_TID = 0,
	CTP_TCOL_TGID = 1,
	CTP_TCOL_COMM = 2,   /* blob id */
	CTP_TCOL_CGROUP = 3, /* row index into capture->cgroups */
	CTP_THREAD_IDENT = 4,
};
enum {
	CTP_PCOL_TGID = 0,
	CTP_PCOL_COMM = 1,     /* blob id */
	CTP_PCOL_NTHREADS = 2, /* threads recorded for this process */
	CTP_PCOL_READ_NS = 3,  /* CLOCK_BOOTTIME as its threads' walk began */
	CTP_PROCESS_IDENT = 4,
};
enum {
	CTP_CCOL_PATH = 0, /* blob id */
	CTP_CGROUP_IDENT = 1,
};
enum {
	CTP_XCOL_TID = 0,
	CTP_XCOL_TGID = 1,    /* absent when unknown */
	CTP_XCOL_COMM = 2,    /* blob id; absent when unknown */
	CTP_XCOL_EXIT_NS = 3, /* CLOCK_BOOTTIME at exit; absent when unknown */
	CTP_EXITED_IDENT = 4,
};
#define CTP_HOST_IDENT 0

/* Where one process's rows live: processes are recorded by whichever worker
 * took them; spans list them in (tgid) order for the writer. */
struct ctp_span {
	uint32_t tgid;
	uint16_t worker;
	uint32_t proc_row;
	uint32_t thread_row; /* first thread row in that worker's table */
	uint32_t nthreads;
};

#define CTP_MAX_FILES 64

struct ctp_readfail {
	uint64_t tids_walked; /* thread directories seen */
	uint64_t tids_recorded;
	uint64_t tids_vanished; /* dropped: directory or comm gone */
	uint64_t tgids_walked;
	uint64_t tgids_vanished;
	/* Tasks left unread for lack of resources (ctp_err_resource): a
	 * directory, name or cgroup the open or read of which failed with
	 * EMFILE, ENFILE, ENOMEM or ENOBUFS. Neither recorded nor vanished:
	 * tids_walked = tids_recorded + tids_vanished +
	 * tids_unread_resource, and processes the same with the recorded
	 * ones (n_spans). A process whose directory could not be opened
	 * lists no threads, which are not walked. */
	uint64_t tids_unread_resource;
	uint64_t tgids_unread_resource;
	/* Cgroup rows whose directory could not be opened for lack of
	 * resources: their cgroup callbacks were not called. */
	uint64_t cgroups_unread_resource;
	/* The first resource errno of the capture (negative; the core's own
	 * reads first, then the plugins' in order), 0 none. */
	int resource_err;
	/* RLIMIT_NOFILE's soft limit as the capture began; 0 unknown or
	 * unlimited. */
	uint64_t nofile_limit;
	uint32_t n_files;
	char *file[CTP_MAX_FILES];	  /* names, e.g. "stat", "status" */
	uint64_t failures[CTP_MAX_FILES]; /* failures on threads that stayed */
	/* The part of failures[] that was ENOENT: the file does not exist,
	 * as when the kernel lacks the option that provides it. */
	uint64_t missing[CTP_MAX_FILES];
	/* The part that was EACCES or EPERM: permission denied, as for
	 * another user's io or smaps_rollup without CAP_SYS_PTRACE. */
	uint64_t denied[CTP_MAX_FILES];
	/* The part that was a resource error (ctp_err_resource): the file
	 * exists but could not be opened or read, for lack of descriptors or
	 * memory. */
	uint64_t resource[CTP_MAX_FILES];
	/* Kernel config option a file exists only with (ctp_api.file_gate),
	 * e.g. "CONFIG_TASK_IO_ACCOUNTING"; NULL when ungated. */
	char *gate[CTP_MAX_FILES];
};

struct ctp_capture {
	struct ctp_registry reg;
	struct ctp_blobpool *blobs;

	struct ctp_plugin_info *plugins;
	uint32_t n_plugins;

	struct ctp_table host; /* exactly one row after a capture */
	struct ctp_table cgroups;
	/* Tasks that exited since the last snapshot, in the order plugins
	 * added them (ctp_api.exited_begin), at most CTP_EXITED_MAX_ROWS. */
	struct ctp_table exited;
	uint32_t n_workers;
	struct ctp_table *threads; /* per worker */
	struct ctp_table *procs;   /* per worker */
	struct ctp_span *spans;
	size_t n_spans;
	/* More thread rows of split processes (config split_threads): each
	 * a run of rows of one tgid in some worker's table, with proc_row
	 * unused; the writer merges them into their process. */
	struct ctp_span *xspans;
	size_t n_xspans;

	struct ctp_readfail rf;

	/* Header facts. */
	uint64_t start_realtime_ns, end_realtime_ns;
	uint64_t start_mono_ns, end_mono_ns;
	/* CLOCK_BOOTTIME at the start (the clock of tasks' start times);
	 * 0: not recorded. */
	uint64_t start_boottime_ns;
	/* CLOCK_BOOTTIME when the cgroups' rows were read (after the walk);
	 * 0: not recorded. */
	uint64_t cgroups_boottime_ns;
	char *hostname; /* NULL unless the config asks */
	char *proc_root, *sys_root, *cgroup_root; /* cgroup_root may be NULL */
	char *config_path;
	char *kernel_release;
	/* Whether the collector held CAP_SYS_PTRACE (root has it): 1 yes,
	 * 0 no, -1 not recorded (ctp_capture_new). Readers use it to tell a
	 * missing privilege from a process refusing even a privileged one. */
	int8_t ptrace_capable;
	/* The capturing processes as the proc root numbers them (this one,
	 * and its supervisor): readers leave them out of views. */
	uint32_t self_tgid[3];
	uint8_t n_self;
	/* How the tasks were listed (FORMAT.md capture.walk_source): the
	 * name of the walk source the capture walked from (struct
	 * ctp_source_desc.walk), "" when the core listed the proc root;
	 * walk_fallback, why a loaded walk source was not used ("" when
	 * there was none or it was); walk_fallbacks, the captures of this
	 * engine that fell back so far, this one included. */
	char walk_source[CTP_SOURCE_NAME_MAX + 1];
	char walk_fallback[160];
	uint64_t walk_fallbacks;
	/* With walk_source: processes the proc root had and the source's
	 * list did not, walked from their files. */
	uint64_t walk_unlisted;
};

int ctp_capture_new(uint32_t n_workers, struct ctp_capture **ret);
/* Ready cap for another capture by the same loaded plugins (`record`):
 * every row, blob, tally and per-capture counter goes; the registry, the
 * plugins and their counter names, the roots, the files read and their
 * gates stay. 0 or -ENOMEM (cap unchanged). */
int ctp_capture_reset(struct ctp_capture *cap);
void ctp_capture_free(struct ctp_capture *cap);

/*
 * Whether resource errors (EMFILE, ENFILE, ENOMEM, ENOBUFS) spoiled the
 * capture: tasks or cgroups left unread, file reads or plugin calls that
 * failed for lack of resources. When true and why is not NULL, writes one
 * line (at most n bytes, NUL-terminated) saying how much and why, e.g.
 * "14 of 212 processes unread: Too many open files (EMFILE); descriptor
 * limit 1024". A spoiled capture is incomplete in a way that says nothing
 * about the host: serve answers it with 503, record writes it and says so.
 */
bool ctp_capture_spoiled(const struct ctp_capture *cap, char *why, size_t n);

/* The name of a resource errno ("EMFILE", "ENFILE", "ENOMEM", "ENOBUFS";
 * either sign), or NULL for any other. */
const char *ctp_resource_errname(int err);

#endif
