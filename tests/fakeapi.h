/* SPDX-License-Identifier: MIT */
/*
 * Driving a built plugin without the walk, shared by the plugin tests
 * (tests/test_*_plugin.c). What the core decides is the core's own code,
 * linked from ctpcore: the field registry and its checks (static table
 * first, in order, then runtime and derived registrations), the declared
 * options checked before init and their values parsed, the summary
 * counters (declared ones first), what a setter accepts, the syntax of a
 * cgroup_ref key. This file adds what a unit test needs around it: it
 * records every value a setter accepted in the record, counts log lines,
 * hints, file gates and cgroup references, serves a task's declared files
 * from the test's bytes (lazy ones through file_get), and injects failures
 * a test asks for through the members of struct ctp_ctx marked "set by the
 * test". (The engine's own file reading and the other members are covered
 * by the end-to-end tests.)
 * Test code only; every function is safe from concurrent workers except
 * fake_ctx_init/fake_ctx_done.
 */
#ifndef CTP_TEST_FAKEAPI_H
#define CTP_TEST_FAKEAPI_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "config.h"
#include "ctprof/plugin.h"
#include "model.h"

#define FAKE_MAX_FIELDS	  256
#define FAKE_NAME_MAX	  160
#define FAKE_MAX_SUMMARY  64
#define FAKE_MAX_DERIVED  8
#define FAKE_MAX_REFS	  256
#define FAKE_MAX_FILES	  4
#define FAKE_STR_MAX	  512
#define FAKE_MAX_WORDS	  128
#define FAKE_MAX_DISABLED 4

/* The size of a struct ctp_api that ends with member m (an older core). */
#define FAKE_API_SIZE_THROUGH(m)                                               \
	(offsetof(struct ctp_api, m) + sizeof(((struct ctp_api *)0)->m))

struct ctp_ctx {
	const struct ctp_plugin *desc;
	const char *const *opts; /* key, value, ..., NULL; set by the test */
	struct ctp_roots roots;	 /* "/proc", "/sys", fds -1; the test's */
	pthread_mutex_t lock;

	/* log: messages above log_max (set by the test; CTP_LOG_DEBUG) are
	 * dropped. */
	int log_max;
	unsigned n_log;
	char last_log[512];

	/* A capture of the core's own, with this plugin as plugin 0: its
	 * registry, its summary counters (cap->plugins[0]) and the tables
	 * the records' rows are in; and the configuration the options come
	 * from. */
	struct ctp_capture *cap;
	struct ctp_plugin_cfg pcfg;
	struct ctp_kv kv[16];
	int static_ids[FAKE_MAX_FIELDS]; /* handle of static field i */

	/* A view of the registry: handle i is fields[i]. */
	unsigned n_fields;
	struct ctp_field_desc fields[FAKE_MAX_FIELDS]; /* name: names[i] */
	char names[FAKE_MAX_FIELDS][FAKE_NAME_MAX];
	unsigned registered[FAKE_MAX_FIELDS]; /* accepted registrations */
	unsigned n_register;		      /* field_register calls */
	/* Set by the test: */
	int register_err;	 /* field_register fails with it when != 0 */
	const char *refuse_name; /* field_register says -EEXIST for it */
	bool forbid_register;	 /* any field_register call fails the test */
	int disabled_field[FAKE_MAX_DISABLED]; /* field_handle says -ENOENT
						  for these table indices */
	int failing_field; /* registry index whose setters fail, or -1 */

	unsigned n_summary;
	char summary_name[FAKE_MAX_SUMMARY][64];
	uint64_t summary[FAKE_MAX_SUMMARY];

	unsigned n_hint;
	bool hint_set;	/* the last set_hint had text */
	char hint[512]; /* "" when cleared or never set */

	unsigned n_gates;
	char gate_file[64], gate_kconfig[64];
	int gate_ret; /* what file_gate returns; set by the test */

	unsigned n_derived;
	char derived[FAKE_MAX_DERIVED][FAKE_NAME_MAX];
	/* What was registered (names point into the plugin's memory). */
	struct ctp_derived_desc derived_desc[FAKE_MAX_DERIVED];

	int ref_err; /* cgroup_ref returns it when != 0; set by the test */
	unsigned n_ref_calls;
	unsigned n_keys; /* distinct keys referenced, in order */
	char keys[FAKE_MAX_REFS][FAKE_NAME_MAX];
};

struct fake_cell {
	int set; /* times set */
	uint8_t type;
	uint64_t u; /* U64, and BOOL as 0/1 */
	int64_t i;
	char c;
	char str[FAKE_STR_MAX]; /* NUL-terminated copy */
	size_t len;
	uint64_t words[FAKE_MAX_WORDS]; /* trailing zero words trimmed */
	size_t n_words;
};

struct ctp_record {
	struct ctp_ctx *ctx;
	uint8_t scope;
	uint32_t row;	   /* in the capture's table of that scope */
	unsigned n_sets;   /* setter calls, but those of failing_field */
	unsigned bad_sets; /* with a wrong handle, type, scope or value */
	/* By registry index: what the core's setter stored in the row, read
	 * back from the table, and how often it accepted a value. */
	struct fake_cell cells[FAKE_MAX_FIELDS];
};

/*
 * A task as a callback sees it: task.files are what the core read up front
 * (a lazy file shows err -ENODATA until fetched); bytes[i] is what
 * fetching lazy file i reads. Do not copy: task points into it.
 */
struct fake_task {
	struct ctp_task task;
	struct ctp_file files[FAKE_MAX_FILES];
	struct ctp_file bytes[FAKE_MAX_FILES];
	unsigned lazy;	   /* bit i: file i is lazy */
	unsigned sleep_ms; /* a lazy read takes this long */
	unsigned gets;	   /* file_get calls */
	unsigned bad_gets; /* ... for a file that is not lazy or not there */
};

/* Every member, at the current size. Copy it to make an older core. */
extern const struct ctp_api fake_api;

/* A loaded plugin and one context for it. */
struct fake_fx {
	void *dl;
	const struct ctp_plugin *p;
	struct ctp_ctx ctx;
	void *state;
};

/* dlopen a plugin and find its descriptor; NULL (and a message) on failure. */
const struct ctp_plugin *fake_dlopen(const char *path, void **dl);

/* cmocka group setup/teardown: *state becomes a struct fake_fx for the
 * plugin at path, or setup returns -1. */
int fake_fx_setup(void **state, const char *path);
int fake_fx_teardown(void **state);
/* fake_ctx_init with opts, then init through api. */
int fake_fx_start(struct fake_fx *fx, const struct ctp_api *api,
		  const char *const *opts);
/* fini (when init left a state), then fake_ctx_done. */
void fake_fx_stop(struct fake_fx *fx);
/* The thread or process callback (by scope) on ft's task, rec made an
 * empty record of that scope first. */
int fake_fx_run(struct fake_fx *fx, struct ctp_record *rec,
		struct fake_task *ft, uint8_t scope);

/* A fresh context for desc with options (NULL: none), roots as above,
 * desc's static table registered in order. */
void fake_ctx_init(struct ctp_ctx *ctx, const struct ctp_plugin *desc,
		   const char *const *opts);
void fake_ctx_done(struct ctp_ctx *ctx);

/* An empty record of `scope`. */
void fake_rec_init(struct ctp_record *rec, struct ctp_ctx *ctx, uint8_t scope);

/* A task tgid/tid with no files, fds -1, names "test", cgroup "". */
void fake_task_init(struct fake_task *ft, int32_t tgid, int32_t tid);
/* Declare file i (n_files grows to i + 1): read up front as text (NULL:
 * no bytes) with err, or lazily so (slot -ENODATA until fetched). */
void fake_task_file(struct fake_task *ft, uint32_t i, const char *text,
		    int err);
void fake_task_lazy(struct fake_task *ft, uint32_t i, const char *text,
		    int err);
/* Lazy file i as another plugin left it: already fetched. */
void fake_task_prefetch(struct fake_task *ft, uint32_t i);

/* Index of a field in p's static table, -1 when there is none. */
int fake_field_index(const struct ctp_plugin *p, const char *name);
/* ... failing the test when there is none. */
int fake_table_index(const struct ctp_plugin *p, const char *name);
/* Registry index of a field, -1 when not registered. */
int fake_field(struct ctp_ctx *ctx, const char *name);

/* The cell of a registered field; fails the test when there is none. */
const struct fake_cell *fake_cell(const struct ctp_record *rec,
				  const char *name);
/* The cell, or NULL when the field is not registered. */
const struct fake_cell *fake_cell_or_null(const struct ctp_record *rec,
					  const char *name);
bool fake_is_set(const struct ctp_record *rec, const char *name);
/* The U64 value of a field set exactly once; fails the test otherwise. */
uint64_t fake_u64(const struct ctp_record *rec, const char *name);
/* A registered field of that type with a value want (a string set exactly
 * once); fails the test otherwise. */
void fake_expect_u64(const struct ctp_record *rec, const char *name,
		     uint64_t want);
void fake_expect_i64(const struct ctp_record *rec, const char *name,
		     int64_t want);
void fake_expect_str(const struct ctp_record *rec, const char *name,
		     const char *want);

/* The descriptor's fixed part: ABI number and size, name, a version and
 * a description, flags, the field table's element size and count. */
void fake_expect_descriptor(const struct ctp_plugin *p, const char *name,
			    uint32_t flags, uint32_t n_fields);
/* One static field's description, no field flag but CTP_FIELD_META (with
 * a section or dimensions), and a help of one non-empty line. */
void fake_expect_field(const struct ctp_field_desc *f, uint8_t scope,
		       uint8_t type, uint8_t unit, uint8_t kind, uint8_t rule);

/* A summary counter's value (fails the test when it is not registered). */
uint64_t fake_summary(const struct ctp_ctx *ctx, const char *name);

#endif
