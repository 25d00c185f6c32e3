/* SPDX-License-Identifier: MIT */
/*
 * A fake core for driving a built plugin without the engine, shared by
 * tests/test_psi_plugin.c and tests/test_scx_plugin.c: a struct ctp_api
 * whose setters record every value in the record (checking handle, scope
 * and type), whose file_get serves one lazy file per task the way the
 * engine does, and whose roots are whatever the test puts in the context.
 * Test code only.
 */
#ifndef CTP_TEST_PSI_FAKE_H
#define CTP_TEST_PSI_FAKE_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ctprof/plugin.h"

/* Handles are offset from table indices so that a plugin passing an index
 * where a handle belongs is caught. */
#define FAKE_HANDLE_BASE 100
#define FAKE_MAX_FIELDS	 64
#define FAKE_MAX_SUMMARY 16

struct ctp_ctx {
	const struct ctp_plugin *desc;
	const char *const *opts; /* key, value, ..., NULL */
	int disabled_field;	 /* table index field_handle refuses, or -1 */
	int failing_field;	 /* table index whose setter fails, or -1 */
	struct ctp_roots roots;
	unsigned n_summary;
	const char *summary_name[FAKE_MAX_SUMMARY];
	uint64_t summary[FAKE_MAX_SUMMARY];
	pthread_mutex_t lock;
	unsigned n_log;
	char last_log[512];
	unsigned n_hint;
	char hint[512]; /* "" when cleared or never set */
};

struct fake_cell {
	int set; /* times set */
	uint8_t type;
	uint64_t u;
	char s[256]; /* STRING values, NUL-terminated copy */
	size_t slen;
};

struct ctp_record {
	const struct ctp_plugin *desc;
	struct ctp_ctx *ctx;
	uint8_t scope;
	unsigned bad_sets; /* set calls with a wrong handle, type or scope */
	unsigned n_sets;
	struct fake_cell cells[FAKE_MAX_FIELDS];
};

/*
 * What file_get serves for a task with one declared lazy file (index 0):
 * `slot` is what task->files[0] shows (err -ENODATA until fetched),
 * `bytes` what a read gives; file_get copies bytes into slot.
 */
struct fake_task {
	struct ctp_file slot;
	struct ctp_file bytes;
	unsigned gets;	   /* file_get calls */
	unsigned bad_gets; /* calls for another index than 0 */
};

extern const struct ctp_api fake_api;

/* dlopen a plugin and find its descriptor; NULL (and a message) on failure. */
const struct ctp_plugin *fake_dlopen(const char *path, void **dl);

/* A fresh context for `desc` with options (key, value, ..., NULL or NULL);
 * roots all -1 ("/proc", "/sys", no cgroup). */
void fake_ctx_init(struct ctp_ctx *ctx, const struct ctp_plugin *desc,
		   const char *const *opts);
void fake_ctx_done(struct ctp_ctx *ctx);

/* An empty record of `scope` for ctx's plugin. */
void fake_rec_init(struct ctp_record *rec, struct ctp_ctx *ctx, uint8_t scope);

/* Table index of a field, -1 when the plugin has none by that name. */
int fake_field_index(const struct ctp_plugin *p, const char *name);
/* The cell of a named field (fails the test when there is no such field). */
const struct fake_cell *fake_cell(const struct ctp_record *rec,
				  const char *name);
/* A summary counter's value (fails the test when it is not registered). */
uint64_t fake_summary(const struct ctp_ctx *ctx, const char *name);

/* A task whose declared lazy file 0 reads as `text` (NULL: fails with
 * err); files/core point into ft. */
void fake_task_init(struct ctp_task *task, struct fake_task *ft,
		    const char *text, int err);

#endif
