/* SPDX-License-Identifier: MIT */
/*
 * The ctprof-core plugin toolkit: what every collector needs besides the
 * ABI in <ctprof/plugin.h>, as a small static library a plugin links in
 * (libctprof-plugin-util.a; `pkg-config --libs ctprof-plugin` names it).
 * The shipped plugins and the example in docs/examples/hello-plugin use it.
 *
 * - one-line field descriptions (CTP_FIELD and friends), field tables (a
 *   field's source beside its description, parsed and set from one row)
 *   and the checked setter;
 * - attaching to the core in init: the ABI check, the static table's field
 *   handles and the declared summary counters' handles (ctp_attach);
 * - a task's declared files, and telling a vanished task from a failure;
 * - bounded scanners over kernel text: pure functions over [p, end), no
 *   allocation, no locale, no errno, no NUL terminator needed;
 * - reading a small host file (sysfs, procfs, cgroupfs) safely.
 *
 * The library is built with hidden visibility: nothing of it is exported
 * from a plugin, which still exports only its descriptor. Every function
 * here is safe to call from concurrent workers. Return convention as in
 * plugin.h: >= 0 on success, a negative errno on failure.
 */
#ifndef CTPROF_PLUGIN_UTIL_H
#define CTPROF_PLUGIN_UTIL_H

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ctprof/plugin.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- Field descriptions in one line --------------------------------------
 *
 * CTP_FIELD(name, SCOPE, TYPE, UNIT, KIND, RULE, help) with the enum
 * suffixes, e.g.
 *   CTP_FIELD("io.rchar", THREAD, U64, BYTES, COUNTER, SUM, "bytes read")
 */
#define CTP_FIELD(nm, sc, ty, un, ki, ru, hlp)                                 \
	{                                                                      \
		.name = (nm), .help = (hlp), .scope = CTP_SCOPE_##sc,          \
		.type = CTP_TYPE_##ty, .unit = CTP_UNIT_##un,                  \
		.kind = CTP_KIND_##ki, .rule = CTP_RULE_##ru                   \
	}
/* The same with flags (CTP_FIELD_START_TIME, CTP_FIELD_REAPED, ...). */
#define CTP_FIELD_ROLE(nm, sc, ty, un, ki, ru, role, hlp)                      \
	{                                                                      \
		.name = (nm), .help = (hlp), .scope = CTP_SCOPE_##sc,          \
		.type = CTP_TYPE_##ty, .unit = CTP_UNIT_##un,                  \
		.kind = CTP_KIND_##ki, .rule = CTP_RULE_##ru, .flags = (role)  \
	}
/* The same with a section and labelled dimensions ("key=value,..."). */
#define CTP_FIELD_DIMS(nm, sc, ty, un, ki, ru, sec, dm, hlp)                   \
	{                                                                      \
		.name = (nm), .help = (hlp), .scope = CTP_SCOPE_##sc,          \
		.type = CTP_TYPE_##ty, .unit = CTP_UNIT_##un,                  \
		.kind = CTP_KIND_##ki, .rule = CTP_RULE_##ru,                  \
		.flags = CTP_FIELD_META, .section = (sec), .dims = (dm)        \
	}
/* The common shapes. */
#define CTP_FIELD_COUNTER(nm, sc, un, hlp)                                     \
	CTP_FIELD(nm, sc, U64, un, COUNTER, SUM, hlp)
#define CTP_FIELD_PEAK(nm, sc, un, hlp)                                        \
	CTP_FIELD(nm, sc, U64, un, PEAK, MAX, hlp)
#define CTP_FIELD_GAUGE(nm, sc, un, ru, hlp)                                   \
	CTP_FIELD(nm, sc, U64, un, GAUGE, ru, hlp)
#define CTP_FIELD_LABEL(nm, sc, hlp)                                           \
	CTP_FIELD(nm, sc, STRING, NONE, CATEGORICAL, MODE, hlp)

/* The number of elements of a static array. */
#define CTP_ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))

/* ---- Setting values: the checked setter ----------------------------------
 *
 * Every value of a callback goes through one setter: it skips a field whose
 * handle the core refused (< 0: ctp_attach keeps it so) and keeps the first
 * set_* failure (a type or scope mismatch: a bug of the plugin), which the
 * callback returns, while the other values are still set:
 *
 *   struct ctp_setter set = CTP_SETTER(st->api, rec);
 *   ctp_set_u64(&set, st->fh[F_RCHAR], v);
 *   ...
 *   return set.err;
 */
struct ctp_setter {
	const struct ctp_api *api;
	struct ctp_record *rec;
	int err; /* the first set_* failure, 0 while none */
};

#define CTP_SETTER(api_, rec_)                                                 \
	((struct ctp_setter){.api = (api_), .rec = (rec_), .err = 0})

/* Set one value through api->set_*. Return 0 (also for a handle < 0, which
 * is skipped) or the setter's negative errno, also kept in s->err when it
 * is the first. Inline: a capture sets every field of every thread. */
static inline int ctp_set_keep(struct ctp_setter *s, int r)
{
	if (r < 0 && s->err == 0)
		s->err = r;
	return r < 0 ? r : 0;
}

static inline int ctp_set_u64(struct ctp_setter *s, int field, uint64_t v)
{
	return field < 0 ? 0
			 : ctp_set_keep(s, s->api->set_u64(s->rec, field, v));
}

static inline int ctp_set_i64(struct ctp_setter *s, int field, int64_t v)
{
	return field < 0 ? 0
			 : ctp_set_keep(s, s->api->set_i64(s->rec, field, v));
}

static inline int ctp_set_bool(struct ctp_setter *s, int field, bool v)
{
	return field < 0 ? 0
			 : ctp_set_keep(s, s->api->set_bool(s->rec, field, v));
}

static inline int ctp_set_char(struct ctp_setter *s, int field, char v)
{
	return field < 0 ? 0
			 : ctp_set_keep(s, s->api->set_char(s->rec, field, v));
}

static inline int ctp_set_str(struct ctp_setter *s, int field, const char *str,
			      size_t len)
{
	return field < 0 ? 0
			 : ctp_set_keep(
				   s, s->api->set_str(s->rec, field, str, len));
}

/* Only where CTP_API_HAS(api, set_str_handles); every field >= 0. */
static inline int ctp_set_str_handles(struct ctp_setter *s, const int *fields,
				      const int64_t *handles, uint32_t n)
{
	return n ? ctp_set_keep(s, s->api->set_str_handles(s->rec, fields,
							   handles, n))
		 : 0;
}

/* Only where CTP_API_HAS(api, set_str_handle). */
static inline int ctp_set_str_handle(struct ctp_setter *s, int field,
				     int64_t handle)
{
	return field < 0 ? 0
			 : ctp_set_keep(s, s->api->set_str_handle(s->rec, field,
								  handle));
}

static inline int ctp_set_cpuset(struct ctp_setter *s, int field,
				 const uint64_t *words, size_t n_words)
{
	return field < 0 ? 0
			 : ctp_set_keep(s, s->api->set_cpuset(s->rec, field,
							      words, n_words));
}

/* ---- Field tables -----------------------------------------------------------
 *
 * A field read from a file is one row: where its value is in the file (a
 * key of a "Key: value" file, or the position of a word in a line such as
 * stat), where the parser keeps it (a member of the parser's output struct
 * and a presence bit), and its description. The descriptions are the
 * descriptor's static table; the rest is a parallel table of struct
 * ctp_field_src. Written once as a list macro, one line per field, both
 * tables come out of the same lines:
 *
 *   #define IO_FIELDS(X)                                                    \
 *	X(F_RCHAR, CTP_SRC_KEY("rchar", struct io, rchar, 0),                 \
 *	  CTP_FIELD_COUNTER("x.rchar", THREAD, BYTES, "bytes read"))        \
 *	X(F_NAME, CTP_SRC_NONE, CTP_FIELD_LABEL("x.name", THREAD, "name"))
 *   enum { IO_FIELDS(CTP_FT_ID) N_FIELDS };
 *   static const struct ctp_field_desc fields[] = {IO_FIELDS(CTP_FT_DESC)};
 *   static const struct ctp_field_src srcs[] = {IO_FIELDS(CTP_FT_SRC)};
 *
 * The parser fills its struct through the sources (ctp_fields_scan_keys,
 * ctp_fields_scan_words: pure functions over a buffer), ctp_attach checks
 * the sources against the descriptions (struct ctp_attach.field_src), and
 * ctp_fields_set sets every parsed value of a scope through the checked
 * setter. docs/PLUGINS.md "Field tables" has the whole walk.
 */
struct ctp_field_src {
	const char *key; /* a key of a "Key:<blanks>value" file; NULL: none */
	uint16_t off;	 /* the value's offset in the parser's output */
	uint8_t klen;	 /* strlen(key) (CTP_SRC_KEY: its literal's); 0: the
			    scanner counts it */
	uint8_t pos;	 /* the word's position in a line, counted from 1 as
			    proc(5) counts stat's fields; 0: none */
	uint8_t type;	 /* the member's type: CTP_TYPE_U64 (uint64_t),
			    CTP_TYPE_I64 (int64_t) or CTP_TYPE_CHAR (char);
			    0: the field has no source (CTP_SRC_NONE) */
	uint8_t bit;	 /* its bit in the output's uint64_t presence mask */
	uint8_t flags;	 /* CTP_SRC_CODE, else 0 */
};

/* The value is parsed, but the plugin's code sets the field (a conversion:
 * a number recorded as its name); ctp_fields_set leaves it alone. */
#define CTP_SRC_CODE (1u << 0)
/* Positions a line may hold (a presence bit each). */
#define CTP_SRC_POS_MAX 63

/* The field type of member m of struct type S (a compile error for a
 * member of another type). */
#define CTP_SRC_TYPE(S, m)                                                     \
	_Generic(((S *)0)->m, CTP_SRC_IS(uint64_t, CTP_TYPE_U64),              \
		 CTP_SRC_IS(int64_t, CTP_TYPE_I64),                            \
		 CTP_SRC_IS(char, CTP_TYPE_CHAR))
/* One association of the _Generic above (a type, its field type). */
#define CTP_SRC_IS(t, ty)                                                      \
	t:                                                                     \
	(ty)
/* The value of key k kept in member m of S (an array element works too:
 * v[3]), presence bit b. */
#define CTP_SRC_KEY(k, S, m, b) CTP_SRC_ROW(k, sizeof("" k) - 1, 0, S, m, b, 0)
/* Word p of a line kept in member m of S; its presence bit is p. */
#define CTP_SRC_POS(p, S, m) CTP_SRC_ROW(NULL, 0, p, S, m, p, 0)
/* The same, for a field the plugin's code sets from the value. */
#define CTP_SRC_POS_CODE(p, S, m) CTP_SRC_ROW(NULL, 0, p, S, m, p, CTP_SRC_CODE)
/* A value some other parse keeps in member m of S, presence bit b. */
#define CTP_SRC_SLOT(S, m, b) CTP_SRC_ROW(NULL, 0, 0, S, m, b, 0)
/* A field whose value the plugin finds and sets in code. */
#define CTP_SRC_NONE                                                           \
	{                                                                      \
		.key = NULL, .off = 0, .klen = 0, .pos = 0, .type = 0,         \
		.bit = 0, .flags = 0                                           \
	}
/* Every member, for the shapes above. */
#define CTP_SRC_ROW(k, kl, p, S, m, b, fl)                                     \
	{                                                                      \
		.key = (k), .off = offsetof(S, m), .klen = (kl), .pos = (p),   \
		.type = CTP_SRC_TYPE(S, m), .bit = (b), .flags = (fl)          \
	}

/* Expanders of a list macro of rows X(id, src, desc). */
#define CTP_FT_ID(id, src, desc)   id,
#define CTP_FT_DESC(id, src, desc) desc,
#define CTP_FT_SRC(id, src, desc)  src,
/* + 1 a row: (0 LIST(CTP_FT_COUNT)) is the number of rows. */
#define CTP_FT_COUNT(id, src, desc) +1

/*
 * Whether src (n rows) fits desc (n rows): a source has a key or a position
 * but not both, a position up to CTP_SRC_POS_MAX, a bit under 64, a member
 * type the scanners know, and, but with CTP_SRC_CODE, the field's type.
 * Returns 0, or -EINVAL with *bad the first row at fault and *why what its
 * source has wrong ("both a key and a position"). ctp_attach runs it when
 * struct ctp_attach.field_src is set.
 */
int ctp_fields_check(const struct ctp_field_desc *desc,
		     const struct ctp_field_src *src, size_t n, size_t *bad,
		     const char **why);

/*
 * Parse a "Key:<blanks>value" file (/proc/<pid>/io, status) through the n
 * rows of src that have a key: the first line of each key counts, its
 * value is the rest of the line after the blanks, all of it a decimal
 * (CTP_TYPE_U64; -/+ allowed for CTP_TYPE_I64) or one byte
 * (CTP_TYPE_CHAR). Each value that parses is stored at out + off and its
 * bit set in *present; nothing else of out is touched. Returns 0 when every
 * key is there and parses; otherwise the problem of the first row (in
 * table order) that has one: -ENODATA (no such line), -EINVAL (garbage),
 * -ERANGE (overflow), -EMSGSIZE (the line runs into the end of the buffer
 * without '\n': a short read may have cut it, so it is left absent). At
 * most 64 rows; keys unique. Pure: no I/O, no allocation.
 */
int ctp_fields_scan_keys(const char *buf, size_t len,
			 const struct ctp_field_src *src, size_t n, void *out,
			 uint64_t *present);

/*
 * Parse a line of single-space separated words ending in '\n' (stat,
 * schedstat) through the n rows of src that have a position: [p, end)
 * starts with word `first`. Each kept word must be the whole value (as for
 * ctp_fields_scan_keys); words no row keeps are not checked. Stored and
 * marked as ctp_fields_scan_keys does. A line that ends ('\n') before a
 * kept word leaves it absent without an error (an older kernel). Returns 0,
 * or the problem at the lowest position: -EINVAL, -ERANGE, or -EMSGSIZE
 * (the buffer ends inside a word, or without the line's '\n' past the last
 * kept word: that word and the ones after it are absent). Pure.
 */
int ctp_fields_scan_words(const char *p, const char *end, unsigned first,
			  const struct ctp_field_src *src, size_t n, void *out,
			  uint64_t *present);

/*
 * A line's words kept by position, for a parser whose output is an array
 * indexed by it (procfs-stat's struct ctp_stat): the kinds are masks known
 * at compile time, so the scan walks the words once, with no table to
 * search and no row to look up per word.
 */
union ctp_word {
	uint64_t u; /* CTP_TYPE_U64 */
	int64_t i;  /* CTP_TYPE_I64 */
	char c;	    /* CTP_TYPE_CHAR */
};
/* Bit p of a mask: word p is kept as that type (u first, then i, then c,
 * when a bit is in more than one). */
struct ctp_word_kinds {
	uint64_t u, i, c;
};

/*
 * ctp_fields_scan_words over kinds instead of rows: word p of the line
 * (first <= p <= 63; [p, end) starts with word `first`) that a mask keeps
 * is stored in w[p] and bit p set in *present; nothing else of w is
 * touched (w: at least the highest kept position + 1 elements). The same
 * checks, errors and absences as ctp_fields_scan_words, which is this scan
 * under a table's rows. Pure.
 */
int ctp_fields_scan_line(const char *p, const char *end, unsigned first,
			 const struct ctp_word_kinds *k, union ctp_word *w,
			 uint64_t *present);

/*
 * Set every field of `scope` (0: every scope) whose source has a value in
 * vals (the parser's output) with its bit in `present`, through s: by the
 * member's type, under its handle fh[i]; a handle < 0 is skipped, rows
 * without a source or with CTP_SRC_CODE are the code's. Returns s->err.
 */
int ctp_fields_set(struct ctp_setter *s, const struct ctp_field_desc *desc,
		   const struct ctp_field_src *src, const int *fh, size_t n,
		   uint8_t scope, const void *vals, uint64_t present);

/*
 * The same, resolved once (in init, after the handles are known) for a
 * callback that sets one scope for every task: the rows ctp_fields_set
 * would set, with their handles, offsets and types, so setting them walks
 * only those rows and looks at nothing else.
 */
#define CTP_FIELDS_PLAN_MAX 64
struct ctp_fields_step {
	int fh;	      /* the field's handle, >= 0 */
	uint16_t off; /* the value's offset in the parser's output */
	uint8_t type; /* CTP_TYPE_U64, CTP_TYPE_I64 or CTP_TYPE_CHAR */
	uint8_t bit;  /* its presence bit */
};
struct ctp_fields_plan {
	size_t n;
	struct ctp_fields_step step[CTP_FIELDS_PLAN_MAX];
};

/*
 * Fill p with the rows of `scope` (0: every scope) ctp_fields_set would set
 * (a source, no CTP_SRC_CODE, a handle >= 0), in table order. Returns 0, or
 * -E2BIG past CTP_FIELDS_PLAN_MAX rows.
 */
int ctp_fields_plan(struct ctp_fields_plan *p,
		    const struct ctp_field_desc *desc,
		    const struct ctp_field_src *src, const int *fh, size_t n,
		    uint8_t scope);

/* ctp_fields_set through a plan: each of its rows whose bit is in `present`
 * is set from vals. Inline: it runs for every task. Returns s->err. */
static inline int ctp_fields_apply(struct ctp_setter *s,
				   const struct ctp_fields_plan *p,
				   const void *vals, uint64_t present)
{
	const char *base = (const char *)vals;

	for (size_t i = 0; i < p->n; i++) {
		const struct ctp_fields_step *r = &p->step[i];
		uint64_t u;
		int64_t v;

		if (!(present >> r->bit & 1))
			continue;
		switch (r->type) {
		case CTP_TYPE_U64:
			memcpy(&u, base + r->off, sizeof(u));
			ctp_set_u64(s, r->fh, u);
			break;
		case CTP_TYPE_I64:
			memcpy(&v, base + r->off, sizeof(v));
			ctp_set_i64(s, r->fh, v);
			break;
		default:
			ctp_set_char(s, r->fh, base[r->off]);
			break;
		}
	}
	return s->err;
}

/* ---- Attaching to the core in init --------------------------------------- */

/* The plugin's one exported symbol, defined at the end of its source as
 * `CTP_EXPORT const struct ctp_plugin ctp_plugin_v1 = {...};` and declared
 * here so that init, above it, can hand it to ctp_attach. */
CTP_EXPORT extern const struct ctp_plugin ctp_plugin_v1;

/* The size of a struct ctp_api that ends with member m: what a plugin
 * needs when m is the last member it calls. */
#define CTP_API_THROUGH(m)                                                     \
	(offsetof(struct ctp_api, m) + sizeof(((struct ctp_api *)0)->m))
/* Whether this core's api table has member m (and it is set). */
#define CTP_API_HAS(api, m) (CTP_HAS(api, struct ctp_api, m) && (api)->m)

struct ctp_attach {
	/* CTP_API_THROUGH(the last member the plugin cannot do without). */
	size_t api_need;
	/* Out: the handle of each entry of the descriptor's static field
	 * table, in table order (n_fields entries). A handle the core
	 * refuses is stored as its negative errno and logged at debug: the
	 * plugin skips that field, the others are recorded. */
	int *field_handles;
	size_t n_fields;
	/* Out: the handle of each declared summary counter (the descriptor's
	 * counters[], n_counters entries), in table order. */
	int *counter_handles;
	size_t n_counters;
	/* Optional: the sources of the static table's fields (n_fields rows,
	 * "Field tables" below), checked against their descriptions with
	 * ctp_fields_check: a mismatch fails the attach with -EINVAL, logged
	 * with the field's name. NULL: nothing to check. */
	const struct ctp_field_src *field_src;
};

/*
 * The first step of every init: refuse a core of another ABI or one too old
 * for `a->api_need` (-ENOTSUP, logged when the core can log), then fill the
 * field and counter handles from the core's registry. A counter the core
 * cannot register fails the attach with its error (logged); more handles
 * asked for than the descriptor declares is -EINVAL.
 */
int ctp_attach(struct ctp_ctx *ctx, const struct ctp_api *api,
	       const struct ctp_plugin *desc, const struct ctp_attach *a);

/*
 * The usual init in one line: `fields` and `counters` are the state's
 * handle arrays, sized exactly like the descriptor's field table and
 * counter table, e.g.
 *   r = CTP_ATTACH(ctx, api, CTP_API_THROUGH(roots), st->fh, st->counter);
 */
#define CTP_ATTACH(ctx, api, need, fields, counters)                           \
	CTP_ATTACH_TABLE(ctx, api, need, NULL, fields, counters)
/* The same for a plugin whose static table has sources (src: n_fields
 * rows, "Field tables" above), checked as it attaches. */
#define CTP_ATTACH_TABLE(ctx, api, need, src, fields, counters)                \
	ctp_attach((ctx), (api), &ctp_plugin_v1,                               \
		   &(const struct ctp_attach){                                 \
			   .api_need = (need),                                 \
			   .field_handles = (fields),                          \
			   .n_fields = CTP_ARRAY_LEN(fields),                  \
			   .counter_handles = (counters),                      \
			   .n_counters = CTP_ARRAY_LEN(counters),              \
			   .field_src = (src)})
/* The same for a plugin that declares no summary counters. */
#define CTP_ATTACH_FIELDS(ctx, api, need, fields)                              \
	ctp_attach(                                                            \
		(ctx), (api), &ctp_plugin_v1,                                  \
		&(const struct ctp_attach){.api_need = (need),                 \
					   .field_handles = (fields),          \
					   .n_fields = CTP_ARRAY_LEN(fields)})

/* ---- A task's declared files --------------------------------------------- */

/*
 * Declared file i of a task (the i-th name of the plugin's thread_files or
 * process_files) when the core read it: its bytes, NUL-terminated, in
 * (*data, *len). Returns 0, or the read's negative errno (-ENODATA for a
 * lazy file nobody fetched: use ctp_api.file_get), or -EPROTO when the
 * task carries fewer files (a core older than the plugin).
 */
int ctp_task_file(const struct ctp_task *task, uint32_t i, const char **data,
		  size_t *len);

/*
 * The same for a lazy file ('?' prefix): when nobody fetched it for this
 * task yet, fetch it now through ctp_api.file_get (read once per task,
 * shared with every other plugin that asks). Call only from the callback
 * that got `task`.
 */
int ctp_task_fetch(const struct ctp_api *api, const struct ctp_task *task,
		   uint32_t i, const char **data, size_t *len);

/* ---- Value sources: "task" (<ctprof/source-task.h>) and "process"
 * (<ctprof/source-process.h>) ----------------------------------------- */

/*
 * One value a collector can take from a value source: value number
 * `value` (enum ctp_src_task_value, ctp_src_process_value) stored at byte
 * `off` of the
 * collector's parser output as `type` (CTP_TYPE_U64, CTP_TYPE_I64: the
 * two's complement, CTP_TYPE_CHAR: the low byte), presence bit `bit` of
 * that output. A collector lists the values it shares with its file.
 */
struct ctp_src_take {
	uint8_t value;
	uint8_t type;
	uint8_t bit;
	uint16_t off;
};

/*
 * The source "task" of a task (ctp_api.source_get; the core fills it once
 * per task, shared by every plugin that asks) into the rows of `map` whose
 * bit is in `want`: each value the source offers is stored in `vals` as
 * its row says. Returns the bits taken; 0 when the core has no sources,
 * no plugin offers "task", or its fill failed for this task. Call only
 * from the callback that got `task`.
 */
uint64_t ctp_src_task_take(const struct ctp_api *api,
			   const struct ctp_task *task,
			   const struct ctp_src_take *map, size_t n,
			   uint64_t want, void *vals);

/*
 * The same from any value source of the task's scope: `source`, laid out
 * with `valid_words` presence words (source-values.h), e.g. the source
 * "process" (CTP_SOURCE_PROCESS, 1) from a process callback, which the
 * core fills once per process row. ctp_src_task_take is this with "task"
 * and 2.
 */
uint64_t ctp_src_values_take(const struct ctp_api *api,
			     const struct ctp_task *task, const char *source,
			     unsigned valid_words,
			     const struct ctp_src_take *map, size_t n,
			     uint64_t want, void *vals);

/*
 * Bind (ctp_api.field_bind) every field of plan p (a thread plan, in init)
 * whose presence bit a row of `map` names to that row's value of the source
 * "task", so the core copies it for every thread the source offers it for.
 * Returns the bits bound (0 with an older core or when nothing is), or a
 * negative errno from field_bind.
 */
int64_t ctp_src_task_bind(const struct ctp_api *api, struct ctp_ctx *ctx,
			  const struct ctp_fields_plan *p,
			  const struct ctp_src_take *map, size_t n);

/* Whether a read error means the task exited under us (the core counts
 * those as vanished tasks, never as failures). */
static inline bool ctp_err_vanished(int err)
{
	return err == -ENOENT || err == -ESRCH;
}

/* Whether an error means the collector ran short of resources: its
 * descriptor limit (EMFILE), the system's file table (ENFILE), memory
 * (ENOMEM) or socket buffers (ENOBUFS). The core counts those apart from
 * failures and vanished tasks: they say nothing about the task, only
 * that the capture could not read it. */
static inline bool ctp_err_resource(int err)
{
	return err == -EMFILE || err == -ENFILE || err == -ENOMEM ||
	       err == -ENOBUFS;
}

/* ---- Bounded scanners over kernel text ---------------------------------- */

/*
 * Parse an unsigned decimal starting exactly at *p (no leading blanks, no
 * sign). On success advance *p past the digits and return 0. Return -EINVAL
 * when there is no digit, -ERANGE when the value does not fit (then *p is
 * advanced past the digits all the same so callers can resynchronize).
 */
int ctp_scan_u64(const char **p, const char *end, uint64_t *out);

/* Same for an optionally '-' or '+' signed decimal. */
int ctp_scan_i64(const char **p, const char *end, int64_t *out);

/* A whole NUL-terminated string that is an unsigned decimal (command-line
 * arguments, option values): 0, -EINVAL (empty, sign, trailing garbage) or
 * -ERANGE. */
int ctp_parse_u64_str(const char *s, uint64_t *out);

/* A tgid or tid as /proc names its directories: a whole decimal string of
 * at most INT32_MAX (a pid_t). 0, -EINVAL or -ERANGE. */
int ctp_parse_pid(const char *s, uint32_t *out);

/* Skip ' ' and '\t'. */
const char *ctp_skip_blanks(const char *p, const char *end);

/* Pointer to the byte after the next '\n' at or after p (end if none). */
const char *ctp_next_line(const char *p, const char *end);

/*
 * In a "Key:<blanks>value" file (status, /proc/<pid>/io ...), find the line
 * whose key equals `key` exactly (the text before the first ':'). Returns
 * the first non-blank byte of the value and sets *value_end to the end of
 * that line (excluding '\n'), or NULL when there is no such line.
 */
const char *ctp_kv_find(const char *buf, size_t len, const char *key,
			const char **value_end);

/*
 * The unsigned decimal value of `key` in a "Key:<blanks>value" file, e.g.
 * ("voluntary_ctxt_switches", status text). A unit or other text after the
 * number (" kB") is allowed. Returns 0, -ENOENT (no such key), -EINVAL (no
 * number) or -ERANGE.
 */
int ctp_kv_u64(const char *buf, size_t len, const char *key, uint64_t *out);

/* One key of a file whose keys are not known in advance (cgroup's
 * memory.stat, smaps_rollup): the key points into the parsed buffer and
 * is not terminated. */
struct ctp_keyval {
	const char *key;
	size_t key_len;
	uint64_t value;
};

/* Where ctp_keyval_lines keeps what it parses: kv[0..n) of cap, in file
 * order, each key once. */
struct ctp_keyval_lines {
	struct ctp_keyval *kv;
	size_t cap, n;
	unsigned malformed; /* lines skipped: line() refused it, its key came
			       before, or the buffer ends inside it */
	unsigned dropped;   /* good lines past cap */
};

/*
 * Split [buf, buf + len) into '\n'-ended lines and hand each to line(p,
 * eol, &kv): 0 with kv filled (kept unless its key came before, which is
 * -EINVAL), 1 to pass the line over silently (a header), or a negative
 * errno (malformed). A last line without '\n' may be cut by a short read:
 * it is malformed (-EMSGSIZE). Returns 0 when nothing was skipped, else
 * the first problem (-E2BIG for a line past cap); what did parse is in
 * *out either way (n, malformed and dropped start at 0). Pure.
 */
int ctp_keyval_lines(const char *buf, size_t len,
		     int (*line)(const char *p, const char *eol,
				 struct ctp_keyval *kv),
		     struct ctp_keyval_lines *out);

/* ---- Fields registered as their names appear ------------------------------
 *
 * Fields a plugin registers at run time, when a name first shows up (a
 * cgroup v1 hierarchy, a smaps_rollup key): one table of name -> handle
 * per plugin, embedded in its state. Every worker looks names up without
 * a lock (the hot path: a scan of the slots); a miss takes the table's
 * lock, looks again, registers and appends.
 */
#define CTP_HANDLE_NAME_MAX  128 /* bytes of a name, less than this */
#define CTP_HANDLE_CACHE_MAX 128 /* names a table holds at most */

struct ctp_handle_slot {
	char name[CTP_HANDLE_NAME_MAX]; /* not terminated */
	size_t len;
	int handle; /* reg's answer, kept also when < 0 (refused) */
};

struct ctp_handle_cache {
	pthread_mutex_t lock; /* held to append */
	size_t n;	      /* slot[0 .. n) are set and never change;
				 published with a release store */
	size_t cap;	      /* at most CTP_HANDLE_CACHE_MAX */
	struct ctp_handle_slot slot[CTP_HANDLE_CACHE_MAX];
};

/* An empty table of at most cap names (CTP_HANDLE_CACHE_MAX if more). */
void ctp_handle_cache_init(struct ctp_handle_cache *c, size_t cap);
/* Release the lock; NULL is fine. */
void ctp_handle_cache_done(struct ctp_handle_cache *c);

/*
 * The handle of name (len bytes, not terminated): the kept one, or, the
 * first time, reg(arg, name, len)'s answer, kept whatever it is (a handle,
 * or a negative errno for a field the core refused: reg runs once per
 * name, from one thread at a time). -ENAMETOOLONG for a new name of
 * CTP_HANDLE_NAME_MAX bytes or more, -ENOSPC for a new name past cap
 * (reg is not called). Safe from concurrent workers.
 */
int ctp_handle_cache_get(struct ctp_handle_cache *c, const char *name,
			 size_t len,
			 int (*reg)(void *arg, const char *name, size_t len),
			 void *arg);

/* ---- Small host files ---------------------------------------------------- */

/* The most a plugin reads of one host file through these helpers; past it
 * the read fails with -EFBIG. */
#define CTP_HOST_READ_MAX (4u << 20)

/*
 * Open dirfd/path to read, never blocking (O_NONBLOCK: a FIFO planted
 * under a fake root must not hang the capture) and only if it is a regular
 * file (-EISDIR for a directory, -EINVAL for a FIFO, device or socket).
 * Returns the descriptor or a negative errno. Every plugin read of a host
 * file (sysfs, procfs, cgroupfs) opens through it.
 */
int ctp_open_regular(int dirfd, const char *path);

/*
 * Read dirfd/path into buf: at most cap - 1 bytes, then a NUL. Returns 0
 * with the byte count in *len, or a negative errno: -EBADF for dirfd < 0,
 * open's error, or read's (psi files say EOPNOTSUPP from read, not open);
 * after a read error *len is what came before it. A file of cap - 1 bytes
 * or more may have been cut: callers that need it whole test
 * *len + 1 >= cap. Not for the per-task walk (the core reads task files).
 */
int ctp_read_small(int dirfd, const char *path, char *buf, size_t cap,
		   size_t *len);

/*
 * Read dirfd/path whole into *buf, a malloc'ed buffer of *cap bytes that
 * grows by doubling from 64 KiB (a compressed kernel config in one read)
 * and is kept for the next call (start with NULL and 0; the caller frees
 * it, also after an error), then a NUL. Returns 0 with
 * the byte count in *len, or a negative errno: -EBADF for dirfd < 0,
 * ctp_open_regular's, read's, -ENOMEM, or -EFBIG for a file of max bytes
 * or more. For host files of no known bound (mountinfo, config.gz);
 * not for the per-task walk.
 */
int ctp_read_grow(int dirfd, const char *path, size_t max, char **buf,
		  size_t *cap, size_t *len);

/*
 * Whether proc_fd is a procfs whose "self" is this process: the running
 * kernel's /proc in our pid namespace, not a fixture tree nor another
 * namespace's mount. Tids (for taskstats queries, ptrace, process_vm_readv)
 * mean something only then.
 */
bool ctp_proc_is_live(int proc_fd);

/* Whether fd is a procfs (any: live, or another pid namespace's mount). */
bool ctp_proc_is_procfs(int fd);

/*
 * Whether this process is in the initial namespace of kind ns ("pid" or
 * "cgroup"), as the proc root proc_fd says: 1 where self/ns/<ns> is the
 * initial namespace's inode (include/linux/proc_ns.h, the same since
 * 3.8), 0 where it is another's, a negative errno where it cannot be
 * looked at (-EINVAL: a kind not known here).
 */
int ctp_proc_ns_initial(int proc_fd, const char *ns);

/* ---- Growing arrays ---------------------------------------------------------
 *
 * The one growth helper of the core, the toolkit and the plugins
 * (systemd's GREEDY_REALLOC): capacity doubles from a first size, overflow
 * checked.
 */
/*
 * Make *p, an array of *cap items of `elem` bytes, hold at least `need`
 * items: the capacity doubles from `first` until it does. Returns 0, or
 * -ENOMEM (allocation failed or the size overflows) with *p and *cap
 * untouched. Use CTP_GROW.
 */
static inline int ctp_grow(void **p, size_t *cap, size_t need, size_t elem,
			   size_t first)
{
	if (need <= *cap && *p)
		return 0;
	size_t n = *cap ? *cap : (first ? first : 1);
	while (n < need) {
		if (n > SIZE_MAX / 2)
			return -ENOMEM;
		n *= 2;
	}
	if (elem && n > SIZE_MAX / elem)
		return -ENOMEM;
	void *q = realloc(*p, n * elem);
	if (!q)
		return -ENOMEM;
	*p = q;
	*cap = n;
	return 0;
}

/* Grow array `ptr` (any pointer type) of capacity `cap` (a size_t lvalue)
 * to hold `need` items, doubling from `first`. */
#define CTP_GROW(ptr, cap, need, first)                                        \
	ctp_grow((void **)&(ptr), &(cap), (need), sizeof(*(ptr)), (first))

/* ---- cgroup trees ---------------------------------------------------------
 *
 * What a cgroup lists of its own tasks (v1 `tasks`, v2 `cgroup.procs` and
 * `cgroup.threads`): one id per line, read once per cgroup instead of one
 * file per task.
 */

/* The '\n' count of buf: the most ids a listing of len bytes holds. */
size_t ctp_count_lines(const char *buf, size_t len);

/*
 * Parse a listing: one decimal id in 1..INT32_MAX per line, each line
 * ending in '\n' (cgroup_procs_show()). Writes at most cap ids to out, in
 * the kernel's order, and sets *n. Returns 0; -EINVAL when a line is not
 * such an id or the text does not end in '\n' (*n ids parsed before it);
 * -E2BIG when more than cap are listed (the first cap are in out). Pure.
 */
int ctp_parse_id_list(const char *buf, size_t len, uint32_t *out, size_t cap,
		      size_t *n);

/* A listing read with ctp_read_id_list: ids[0 .. n), and the buffers it
 * reuses (zero-initialize; free with ctp_id_list_free). */
struct ctp_id_list {
	uint32_t *ids;
	size_t n, cap;
	char *buf;
	size_t buf_cap;
};

/* Read and parse listing `name` under dirfd (a regular file, at most
 * 64 MiB, read to its end). 0, or a negative errno (the open's or
 * read's, -EFBIG, -ENOMEM, -EINVAL as ctp_parse_id_list). */
int ctp_read_id_list(int dirfd, const char *name, struct ctp_id_list *l);
void ctp_id_list_free(struct ctp_id_list *l);

/* An id a listing named (a tid, a tgid) and what it maps to (say, the
 * index of the cgroup that listed it). */
struct ctp_id_pair {
	uint32_t id, val;
};
/* The val of an id listed with different vals (moved while listed). */
#define CTP_ID_AMBIGUOUS UINT32_MAX

/* Sort pairs[0 .. *n) by id and keep one pair per id: its val, or
 * CTP_ID_AMBIGUOUS when the id came with several; *n is the new count. */
void ctp_id_pairs_sort(struct ctp_id_pair *pairs, size_t *n);
/* The pair of `id` in sorted pairs[0 .. n), or NULL. */
const struct ctp_id_pair *ctp_id_pairs_find(const struct ctp_id_pair *pairs,
					    size_t n, uint32_t id);

/*
 * Walk the cgroup tree whose root directory is dirfd (borrowed): fn is
 * called for each cgroup, the root first with path "/", then depth first
 * ("/a", "/a/b"; path NUL-terminated, plen bytes, dirfd that cgroup's
 * directory, valid during the call). A cgroup removed while walked is
 * skipped. Returns 0, fn's first negative return, -E2BIG past max_dirs
 * cgroups, max_depth levels or PATH_MAX, or an open/read error.
 */
int ctp_cgroup_walk(int dirfd, size_t max_dirs, unsigned max_depth,
		    int (*fn)(void *arg, int dirfd, const char *path,
			      size_t plen, unsigned depth),
		    void *arg);

#ifdef __cplusplus
}
#endif
#endif /* CTPROF_PLUGIN_UTIL_H */
