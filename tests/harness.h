/* SPDX-License-Identifier: MIT */
/*
 * Driving a built plugin through the real core without the walk, shared by
 * the plugin tests (tests/test_*_plugin.c). Nothing of the core is copied
 * here: a context is a real engine (ctp_engine_init) over a real capture
 * and a config naming the one plugin, and the plugin is loaded by the real
 * loader (ctp_engine_load): its declared options checked, its fields
 * registered, its files mapped, its counters declared, its init called
 * with the engine's own struct ctp_api. Every value a callback sets goes
 * through api.c's setter into a row of the capture's table of that scope;
 * the tests read back what the core stored there, and the summary
 * counters, hint, file gates, derived fields and cgroup keys from the
 * capture and the engine.
 *
 * What the harness adds, as thin wrappers in the engine's api table that
 * delegate to the core's own member: counting calls (log lines, setter
 * calls and refusals, registrations, hints, gates, cgroup references) and
 * the failures a test asks for through the members marked "set by the
 * test" (a registration refused, a handle missing, a setter failing, a
 * gate or reference failing, an older core's smaller api). One member
 * does not reach the core: file_get serves the test's bytes for a task the
 * test made (struct hx_task); the engine's own reading of task files is
 * covered by the end-to-end tests.
 *
 * Test code only; every function is safe from concurrent workers except
 * hx_ctx_init, hx_ctx_load and hx_ctx_done.
 */
#ifndef CTP_TEST_HARNESS_H
#define CTP_TEST_HARNESS_H

#include <limits.h>
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "config.h"
#include "ctprof/plugin.h"
#include "engine.h"
#include "loader.h"
#include "model.h"

#define HX_MAX_FIELDS	256
#define HX_MAX_FILES	4
#define HX_STR_MAX	512
#define HX_MAX_WORDS	128
#define HX_MAX_DISABLED 4
#define HX_MAX_OPTS	16

/* The size of a struct ctp_api that ends with member m (an older core). */
#define HX_API_SIZE_THROUGH(m)                                                 \
	(offsetof(struct ctp_api, m) + sizeof(((struct ctp_api *)0)->m))

/* One plugin in a real engine. */
struct hx_ctx {
	const struct ctp_plugin *desc;
	pthread_mutex_t lock;

	/* The core's objects: the plugin is plugin 0 of cfg, cap and eng.
	 * eng.roots is what roots() hands the plugin: "/proc", "/sys", no
	 * cgroup root, fds -1 until the test sets them (the test owns the
	 * fds it puts there). */
	struct ctp_config cfg;
	struct ctp_plugin_cfg pcfg;
	struct ctp_kv kv[HX_MAX_OPTS];
	char *dirs[1];
	char dir[PATH_MAX];
	struct ctp_capture *cap;
	struct ctp_engine eng;
	struct ctp_api core; /* the core's api table, which wrappers call */
	bool loaded;	     /* hx_ctx_load ran */
	/* Set by the test between hx_ctx_init and the load: the plugin's
	 * source_add (it may call core.source_add), e.g. to take a source
	 * the core refuses. */
	int (*source_add)(struct ctp_ctx *ctx,
			  const struct ctp_source_desc *desc);

	/* Counted by the wrappers. log: lines at or below log_max (set by
	 * the test; CTP_LOG_DEBUG); last_log is the last of them, or the
	 * loader's reason when it refused the plugin before init. */
	int log_max;
	unsigned n_log;
	char last_log[512];
	unsigned n_register;		    /* field_register calls */
	unsigned registered[HX_MAX_FIELDS]; /* ... accepted, by field id */
	unsigned n_hint;		    /* set_hint calls */
	unsigned n_gates;		    /* file_gate calls */
	unsigned n_ref_calls;		    /* cgroup_ref calls */
	/* exited_begin: calls, and the record it handed out last (the
	 * core's, and the harness's copy the plugin got, so the setters'
	 * wrappers find it). */
	unsigned n_exited_calls;
	struct ctp_record *exited_core;
	struct hx_rec *exited_rec;

	/* Set by the test: */
	int register_err;	 /* field_register fails with it when != 0 */
	const char *refuse_name; /* field_register says -EEXIST for it */
	bool forbid_register;	 /* any field_register call fails the test */
	int disabled_field[HX_MAX_DISABLED]; /* field_handle says -ENOENT
						for these table indices */
	int failing_field; /* field id whose setters fail, or -1 */
	int gate_ret;	   /* file_gate returns it when != 0 */
	int ref_err;	   /* cgroup_ref returns it when != 0 */
};

/* What a test reads of one field in a record: the core's cell. */
struct hx_cell {
	int set; /* setter calls the core accepted */
	uint8_t type;
	uint64_t u; /* U64, and BOOL as 0/1 */
	int64_t i;
	char c;
	char str[HX_STR_MAX]; /* NUL-terminated copy of the blob */
	size_t len;
	uint64_t words[HX_MAX_WORDS]; /* trailing zero words trimmed */
	size_t n_words;
};

/* A record: core is what a callback is handed (a row of the capture's
 * table of that scope); the rest is the harness's. */
struct hx_rec {
	struct ctp_record core;
	struct hx_ctx *ctx;
	unsigned n_sets;   /* setter calls, but those of failing_field */
	unsigned bad_sets; /* refused by the core; a bool not 0 or 1 */
	/* By field id: what the core stored in the row, read back after
	 * each accepted set. */
	struct hx_cell cells[HX_MAX_FIELDS];
};

/*
 * A task as a callback sees it: task.files are what the core read up front
 * (a lazy file shows err -ENODATA until fetched); bytes[i] is what
 * fetching lazy file i reads. Do not copy: task points into it.
 */
struct hx_task {
	struct ctp_task task;
	struct ctp_file files[HX_MAX_FILES];
	struct ctp_file bytes[HX_MAX_FILES];
	unsigned lazy;	   /* bit i: file i is lazy */
	unsigned sleep_ms; /* a lazy read takes this long */
	unsigned spin_ms;  /* ... and burns this much of the caller's CPU */
	unsigned gets;	   /* file_get calls */
	unsigned bad_gets; /* ... for a file that is not lazy or not there */
	/* source_get: a source the test offers (src_name, its bytes or
	 * src_err), else one the plugin registered, filled on the first ask
	 * and kept for the task as the core keeps it; asks counted. */
	const char *src_name;
	const void *src_data;
	size_t src_len;
	int src_err;
	unsigned src_gets, src_fills;
	bool src_loaded;
	int src_ret;
	_Alignas(8) char src_buf[CTP_SOURCE_MAX_BYTES];
	size_t src_buf_len;
};

/* A plugin dlopened by the test (for its descriptor) and one context. */
struct hx_fx {
	void *dl;
	const struct ctp_plugin *p;
	struct hx_ctx ctx;
	void *state; /* the plugin's state after hx_fx_load */
};

/* dlopen a plugin and find its descriptor; NULL (and a message) on failure. */
const struct ctp_plugin *hx_dlopen(const char *path, void **dl);

/* cmocka group setup/teardown: *state becomes a struct hx_fx for the
 * plugin at path, or setup returns -1. */
int hx_fx_setup(void **state, const char *path);
int hx_fx_teardown(void **state);
/* hx_ctx_init with opts, then hx_fx_load. */
int hx_fx_start(struct hx_fx *fx, size_t api_size, const char *const *opts);
/* hx_ctx_load, and fx->state the plugin's state. */
int hx_fx_load(struct hx_fx *fx, size_t api_size);
/* hx_ctx_done (the core's unload calls fini). */
void hx_fx_stop(struct hx_fx *fx);

/*
 * A fresh engine for desc (found beside path, as "<name>.so") with options
 * (key, value, ..., NULL; NULL: none). Nothing loaded yet: the test may set
 * its members, then hx_ctx_load.
 */
void hx_ctx_init(struct hx_ctx *ctx, const struct ctp_plugin *desc,
		 const char *const *opts);
/*
 * The core's loader on the plugin, with the engine's api table shortened
 * to api_size bytes (0: all of it). Returns 0, what init returned, or
 * -EINVAL when the loader refused the plugin before init (the reason in
 * last_log). Once per context.
 */
int hx_ctx_load(struct hx_ctx *ctx, size_t api_size);
void hx_ctx_done(struct hx_ctx *ctx);
/* The plugin's state, NULL unless loaded. */
void *hx_state(const struct hx_ctx *ctx);

/* An empty record of `scope`: a new row of the capture's table of it. */
void hx_rec_init(struct hx_rec *rec, struct hx_ctx *ctx, uint8_t scope);
/* The thread or process callback (by scope) on ft's task, rec made an
 * empty record of that scope first. */
int hx_fx_run(struct hx_fx *fx, struct hx_rec *rec, struct hx_task *ft,
	      uint8_t scope);

/* The plugin's finish (or host) callback on a fresh host record, inside
 * the same gate the engine opens around it: exited_begin works there, and
 * the exited record it handed out is closed after it. */
int hx_host_call(struct hx_ctx *ctx, struct hx_rec *rec, bool finish);
int hx_fx_finish(struct hx_fx *fx, struct hx_rec *rec);
int hx_fx_host(struct hx_fx *fx, struct hx_rec *rec);

/* The exited table the plugin filled: rows, the row of a tid (-1 when
 * none), a row's identity, and field `name` of a row (false: absent;
 * fails the test when the field is not registered). */
uint32_t hx_exited_rows(const struct hx_ctx *ctx);
int64_t hx_exited_row(const struct hx_ctx *ctx, uint32_t tid);
void hx_exited_ident(const struct hx_ctx *ctx, uint32_t row, uint32_t *tid,
		     uint32_t *tgid, const char **comm, uint64_t *exit_ns);
bool hx_exited_u64(const struct hx_ctx *ctx, uint32_t row, const char *name,
		   uint64_t *v);
/* The losses the plugin reported (exited_lost). */
uint64_t hx_exited_lost(const struct hx_ctx *ctx);

/* A task tgid/tid with no files, fds -1, names "test", cgroup "". */
void hx_task_init(struct hx_task *ft, int32_t tgid, int32_t tid);
/* Declare file i (n_files grows to i + 1): read up front as text (NULL:
 * no bytes) with err, or lazily so (slot -ENODATA until fetched). */
void hx_task_file(struct hx_task *ft, uint32_t i, const char *text, int err);
void hx_task_lazy(struct hx_task *ft, uint32_t i, const char *text, int err);
/* Lazy file i as another plugin left it: already fetched. */
void hx_task_prefetch(struct hx_task *ft, uint32_t i);

/* ---- What the core holds --------------------------------------------------
 */

/* The plugin's entry in the capture: status, reason, summary counters
 * (n_summary, summary_name[], summary[]), hint. */
struct ctp_plugin_info *hx_info(const struct hx_ctx *ctx);
/* A summary counter's value (fails the test when it is not registered). */
uint64_t hx_summary(const struct hx_ctx *ctx, const char *name);
/* The plugin's hint, "" when none is set. */
const char *hx_hint(const struct hx_ctx *ctx);
bool hx_hint_set(const struct hx_ctx *ctx);
/* The kernel option file `name` of the plugin is gated on, NULL when
 * none. */
const char *hx_gate(const struct hx_ctx *ctx, const char *name);
/* Fields in the registry, and field `id`. */
unsigned hx_n_fields(const struct hx_ctx *ctx);
const struct ctp_field *hx_field_at(const struct hx_ctx *ctx, unsigned id);
/* Field id of a name, -1 when not registered. */
int hx_field(const struct hx_ctx *ctx, const char *name);
/* The derived fields in registration order. */
unsigned hx_n_derived(const struct hx_ctx *ctx);
const struct ctp_field *hx_derived(const struct hx_ctx *ctx, unsigned i);
/* The keys the plugin referenced with cgroup_ref, in first-reference
 * order (rows of the capture's cgroup table); hx_key fails the test past
 * the end. */
unsigned hx_n_keys(const struct hx_ctx *ctx);
const char *hx_key(const struct hx_ctx *ctx, unsigned i);

/* Index of a field in p's static table, -1 when there is none. */
int hx_field_index(const struct ctp_plugin *p, const char *name);
/* ... failing the test when there is none. */
int hx_table_index(const struct ctp_plugin *p, const char *name);

/* The cell of a registered field; fails the test when there is none. */
const struct hx_cell *hx_cell(const struct hx_rec *rec, const char *name);
/* The cell, or NULL when the field is not registered. */
const struct hx_cell *hx_cell_or_null(const struct hx_rec *rec,
				      const char *name);
bool hx_is_set(const struct hx_rec *rec, const char *name);
/* The U64 value of a field set exactly once; fails the test otherwise. */
uint64_t hx_u64(const struct hx_rec *rec, const char *name);
/* A registered field of that type with a value want (a string set exactly
 * once); fails the test otherwise. */
void hx_expect_u64(const struct hx_rec *rec, const char *name, uint64_t want);
void hx_expect_i64(const struct hx_rec *rec, const char *name, int64_t want);
void hx_expect_str(const struct hx_rec *rec, const char *name,
		   const char *want);

/* The descriptor's fixed part: ABI number and size, name, a version and
 * a description, flags, the field table's element size and count. */
void hx_expect_descriptor(const struct ctp_plugin *p, const char *name,
			  uint32_t flags, uint32_t n_fields);

#endif
