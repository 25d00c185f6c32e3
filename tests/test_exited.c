/* SPDX-License-Identifier: MIT */
/*
 * The exited table (docs/FORMAT.md §7.4): the writer and the reader on
 * hand-built captures (tests/snapbuild.h), hostile variants of the table,
 * and the core's exited_begin / exited_end / exited_lost / recording
 * (core/capture/api.c) on a plugin loaded into a real engine
 * (tests/harness.h, tests/plugins/abi_exited.c).
 *
 * `test_exited --write-sample PATH` writes the round trip's capture (for
 * tests/decode_snapshot.py and the fuzz seeds); `--dump PATH` is `dump`.
 */
#include <errno.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <msgpack.h>
#include <zstd.h>

#include "cli.h"
#include "e2e_util.h"
#include "engine.h"
#include "harness.h"
#include "reader.h"
#include "snapbuild.h"

#define CAP (64u << 20)

static char tmpdir[PATH_MAX];

/* ---- The capture ------------------------------------------------------- */

enum { X_UTIME, X_CPU, X_CODE, X_STATE, X_NEVER, X_N };

static const struct ctp_field_desc xfields[X_N] = {
	[X_UTIME] = {.name = "alpha.utime",
		     .scope = CTP_SCOPE_THREAD,
		     .type = CTP_TYPE_U64,
		     .unit = CTP_UNIT_TICKS,
		     .kind = CTP_KIND_COUNTER,
		     .rule = CTP_RULE_SUM},
	[X_CPU] = {.name = "alpha.exited.cpu",
		   .help = "CPU time",
		   .scope = CTP_SCOPE_EXITED,
		   .type = CTP_TYPE_U64,
		   .unit = CTP_UNIT_US,
		   .kind = CTP_KIND_COUNTER,
		   .rule = CTP_RULE_SUM},
	[X_CODE] = {.name = "alpha.exited.code",
		    .scope = CTP_SCOPE_EXITED,
		    .type = CTP_TYPE_I64,
		    .kind = CTP_KIND_CATEGORICAL,
		    .rule = CTP_RULE_MODE},
	[X_STATE] = {.name = "alpha.exited.state",
		     .scope = CTP_SCOPE_EXITED,
		     .type = CTP_TYPE_CHAR,
		     .kind = CTP_KIND_ORDINAL,
		     .rule = CTP_RULE_MODE},
	[X_NEVER] = {.name = "alpha.exited.never",
		     .scope = CTP_SCOPE_EXITED,
		     .type = CTP_TYPE_U64,
		     .unit = CTP_UNIT_COUNT,
		     .kind = CTP_KIND_COUNTER,
		     .rule = CTP_RULE_SUM},
};

/* alpha.exited.cpu2 = 2 * alpha.exited.cpu, computed by readers. */
static const struct ctp_derived_desc cpu2 = {
	.abi = CTP_ABI_MAJOR,
	.size = sizeof(struct ctp_derived_desc),
	.field = {.name = "alpha.exited.cpu2",
		  .scope = CTP_SCOPE_EXITED,
		  .type = CTP_TYPE_U64,
		  .unit = CTP_UNIT_US,
		  .kind = CTP_KIND_COUNTER,
		  .rule = CTP_RULE_SUM},
	.n_terms = 1,
	.terms = {{.field = "alpha.exited.cpu", .coef = 2}},
};

/*
 * One process with one thread, and three exited tasks: 1001 "cc1" of 1000
 * (cpu 20000, code 0, state Z), 1002 with nothing known but its tid (code
 * -9), 1003 "as" of 1000 (cpu a measured 0, state X); 7 exits lost.
 */
static struct ctp_capture *build(bool exited)
{
	struct ctp_capture *cap = sb_capture("alpha");
	int id[X_N] = {-1, -1, -1, -1, -1};
	const char *why;
	int term;

	for (int i = 0; i < X_N; i++)
		if (exited || xfields[i].scope != CTP_SCOPE_EXITED)
			assert_true((id[i] = ctp_registry_add(
					     &cap->reg, 0, &xfields[i])) >= 0);
	if (exited)
		assert_true(ctp_registry_add_derived(&cap->reg, 0, &cpu2, &why,
						     &term) >= 0);
	sb_process(cap, 100, "p");
	sb_put_u64(cap, &cap->threads[0], sb_thread(cap, 100, "p", -1),
		   CTP_THREAD_IDENT, id[X_UTIME], 5);
	if (!exited)
		return cap;
	struct ctp_table *t = &cap->exited;
	uint32_t r = sb_exited(cap, 1001, 1000, "cc1", 5000000001ull);
	sb_put_u64(cap, t, r, CTP_EXITED_IDENT, id[X_CPU], 20000);
	sb_put_u64(cap, t, r, CTP_EXITED_IDENT, id[X_CODE], 0);
	sb_put_u64(cap, t, r, CTP_EXITED_IDENT, id[X_STATE], 'Z');
	r = sb_exited(cap, 1002, 0, NULL, 0);
	sb_put_u64(cap, t, r, CTP_EXITED_IDENT, id[X_CODE], (uint64_t)-9);
	r = sb_exited(cap, 1003, 1000, "as", 6000000000ull);
	sb_put_u64(cap, t, r, CTP_EXITED_IDENT, id[X_CPU], 0);
	sb_put_u64(cap, t, r, CTP_EXITED_IDENT, id[X_STATE], 'X');
	cap->plugins[0].exited_lost = 7;
	cap->plugins[0].exited = true;
	return cap;
}

static void write_cap(struct ctp_capture *cap, const char *name, char *path)
{
	char err[512];

	if (e2e_pathf(path, PATH_MAX, "%s/%s", tmpdir, name) < 0)
		fail_msg("path too long");
	if (sb_write(cap, path, err, sizeof(err)) < 0)
		fail_msg("write: %s", err);
	ctp_capture_free(cap);
}

static struct ctp_snap *open_path(const char *path)
{
	struct ctp_snap *snap;
	char err[512];

	if (ctp_snap_open(path, CAP, &snap, err, sizeof(err)) < 0)
		fail_msg("%s", err);
	return snap;
}

static const msgpack_object *mget(const msgpack_object *m, const char *k)
{
	for (uint32_t i = 0;
	     m->type == MSGPACK_OBJECT_MAP && i < m->via.map.size; i++) {
		const msgpack_object *key = &m->via.map.ptr[i].key;
		if (key->type == MSGPACK_OBJECT_STR &&
		    key->via.str.size == strlen(k) &&
		    memcmp(key->via.str.ptr, k, key->via.str.size) == 0)
			return &m->via.map.ptr[i].val;
	}
	return NULL;
}

/* Map m's keys are exactly keys[], in that order. */
static void assert_keys(const msgpack_object *m, const char *const *keys,
			size_t n)
{
	assert_int_equal(m->type, MSGPACK_OBJECT_MAP);
	assert_int_equal(m->via.map.size, n);
	for (size_t i = 0; i < n; i++) {
		const msgpack_object *k = &m->via.map.ptr[i].key;
		if (k->via.str.size != strlen(keys[i]) ||
		    memcmp(k->via.str.ptr, keys[i], k->via.str.size) != 0)
			fail_msg("key %zu is \"%.*s\", want \"%s\"", i,
				 (int)k->via.str.size, k->via.str.ptr, keys[i]);
	}
}

/* ---- Round trip -------------------------------------------------------- */

static void check_file_layout(const struct ctp_snap *snap)
{
	const msgpack_object *root = ctp_snap_root(snap);
	static const char *const ex_keys[] = {
		"fields",	    "rows", "tid",    "tgid", "comm",
		"exit_boottime_ns", "lost", "columns"};
	static const char *const cols[] = {
		"alpha.exited.cpu", "alpha.exited.code", "alpha.exited.state"};

	/* exited is the last top-level key; the top-level fields list holds
	 * only the thread field, so a reader that knows no exited table
	 * reads every other part as before. */
	assert_int_equal(root->via.map.size, 12);
	assert_true(mget(root, "exited") == &root->via.map.ptr[11].val);
	assert_int_equal(mget(root, "fields")->via.array.size, 1);
	const msgpack_object *ex = mget(root, "exited");
	assert_keys(ex, ex_keys, 8);
	/* never is absent everywhere and cpu2 is derived: no column. */
	assert_keys(mget(ex, "columns"), cols, 3);
	assert_int_equal(mget(ex, "fields")->via.array.size, 5);
}

static void test_roundtrip(void **state)
{
	(void)state;
	char path[PATH_MAX];
	write_cap(build(true), "rt.ctprof", path);
	struct ctp_snap *snap = open_path(path);
	check_file_layout(snap);

	assert_int_equal(ctp_snap_n_fields(snap), 6);
	const struct ctp_snap_field *cpu =
		ctp_snap_field_find(snap, "alpha.exited.cpu");
	const struct ctp_snap_field *d =
		ctp_snap_field_find(snap, "alpha.exited.cpu2");
	assert_non_null(cpu);
	assert_non_null(d);
	assert_int_equal(cpu->scope, CTP_SCOPE_EXITED);
	assert_string_equal(cpu->help, "CPU time");
	assert_string_equal(cpu->plugin, "alpha");
	assert_int_equal(d->n_terms, 1);
	assert_int_equal(d->terms[0].input, cpu->index);
	assert_int_equal(ctp_snap_field_find(snap, "alpha.utime")->index, 0);

	const struct ctp_snap_table *t = ctp_snap_table(snap, CTP_SCOPE_EXITED);
	assert_non_null(t);
	assert_int_equal(t->scope, CTP_SCOPE_EXITED);
	assert_int_equal(t->rows, 3);
	static const uint64_t tid[] = {1001, 1002, 1003},
			      tgid[] = {1000, 0, 1000},
			      ns[] = {5000000001ull, 0, 6000000000ull};
	static const char *const comm[] = {"cc1", NULL, "as"};
	for (size_t i = 0; i < 3; i++) {
		assert_int_equal(t->tid[i], tid[i]);
		assert_int_equal(t->tgid[i], tgid[i]);
		assert_int_equal(t->exit_ns[i], ns[i]);
		if (comm[i])
			assert_true(e2e_bytes_eq(t->comm[i], comm[i]));
		else
			assert_null(t->comm[i].ptr);
	}
	assert_int_equal(e2e_u64(snap, "alpha.exited.cpu", 0), 20000);
	assert_int_equal(e2e_value(snap, "alpha.exited.cpu", 1).type,
			 CTP_VALUE_ABSENT);
	assert_int_equal(e2e_u64(snap, "alpha.exited.cpu", 2), 0);
	assert_int_equal(e2e_i64(snap, "alpha.exited.code", 1), -9);
	assert_int_equal(e2e_value(snap, "alpha.exited.state", 2).c, 'X');
	assert_int_equal(e2e_value(snap, "alpha.exited.never", 0).type,
			 CTP_VALUE_ABSENT);
	/* Exited fields have no value in the thread table and back. */
	assert_int_equal(e2e_u64(snap, "alpha.utime", 0), 5);
	assert_null(ctp_snap_table(snap, CTP_SCOPE_THREAD)->col[cpu->index]);
	assert_null(ctp_snap_table(snap, CTP_SCOPE_EXITED + 1));

	const struct ctp_snap_plugin *p = ctp_snap_plugins(snap);
	assert_true(p[0].exited);
	assert_int_equal(p[0].exited_lost, 7);
	ctp_snap_free(snap);
}

/* No exited row, field or loss: no table in the file (the bytes of every
 * capture before it existed); any one of them: a table. */
static void test_absent_unless_used(void **state)
{
	(void)state;
	char path[PATH_MAX];
	write_cap(build(false), "none.ctprof", path);
	struct ctp_snap *snap = open_path(path);
	assert_null(mget(ctp_snap_root(snap), "exited"));
	assert_int_equal(ctp_snap_root(snap)->via.map.size, 11);
	assert_int_equal(ctp_snap_table(snap, CTP_SCOPE_EXITED)->rows, 0);
	assert_false(ctp_snap_plugins(snap)[0].exited);
	ctp_snap_free(snap);

	/* Only a loss reported. */
	struct ctp_capture *cap = build(false);
	cap->plugins[0].exited = true;
	cap->plugins[0].exited_lost = 3;
	write_cap(cap, "lost.ctprof", path);
	snap = open_path(path);
	assert_int_equal(ctp_snap_table(snap, CTP_SCOPE_EXITED)->rows, 0);
	assert_true(ctp_snap_plugins(snap)[0].exited);
	assert_int_equal(ctp_snap_plugins(snap)[0].exited_lost, 3);
	ctp_snap_free(snap);

	/* Only a field registered: its plugin is listed with 0 lost. */
	cap = build(false);
	assert_true(ctp_registry_add(&cap->reg, 0, &xfields[X_CPU]) >= 0);
	write_cap(cap, "field.ctprof", path);
	snap = open_path(path);
	const msgpack_object *ex = mget(ctp_snap_root(snap), "exited");
	assert_non_null(ex);
	assert_int_equal(mget(ex, "columns")->via.map.size, 0);
	assert_true(ctp_snap_plugins(snap)[0].exited);
	assert_int_equal(ctp_snap_plugins(snap)[0].exited_lost, 0);
	ctp_snap_free(snap);
}

/* What the binary prints for `args` on the file at path. */
static void output(const char *path, const char *args, char *out, size_t len)
{
	char cmd[2 * PATH_MAX];
	snprintf(cmd, sizeof(cmd), "'%s' show '%s' %s 2>&1", CTP_TEST_BINARY,
		 path, args);
	FILE *p = popen(cmd, "r");
	assert_non_null(p);
	size_t n = fread(out, 1, len - 1, p);
	out[n] = '\0';
	pclose(p);
}

/* show: the line of --view all, the rows of --table exited. */
static void test_show(void **state)
{
	(void)state;
	char path[PATH_MAX], out[4096];
	write_cap(build(true), "show.ctprof", path);
	output(path, "--view all", out, sizeof(out));
	assert_non_null(strstr(out, "\nExited: 3 tasks exited since the last "
				    "snapshot; lost: alpha 7\n"));
	output(path, "--format csv --table exited --sort alpha.exited.cpu", out,
	       sizeof(out));
	assert_string_equal(
		out, "tid,tgid,comm,exit_boottime_ns,alpha.exited.cpu,alpha."
		     "exited.code,alpha.exited.state,alpha.exited.never,alpha."
		     "exited.cpu2\n"
		     "1001,1000,cc1,5000000001,20000,0,Z,,40000\n"
		     "1003,1000,as,6000000000,0,,X,,0\n"
		     "1002,,,,,-9,,,\n");
	output(path, "--format csv --table exited --group-by comm", out,
	       sizeof(out));
	assert_non_null(strstr(out, "--table exited is not grouped"));
	output(path, "--format csv --table exited --sort alpha.utime", out,
	       sizeof(out));
	assert_non_null(strstr(out, "a thread field, not of the exited table"));
}

/* ---- Hostile tables ---------------------------------------------------- */

static void pk_str(msgpack_packer *pk, const char *s)
{
	msgpack_pack_str(pk, strlen(s));
	msgpack_pack_str_body(pk, s, strlen(s));
}

/* A field map of §4 (no derive). */
static void pk_field(msgpack_packer *pk, const char *name, const char *scope)
{
	msgpack_pack_map(pk, 8);
	pk_str(pk, "name");
	pk_str(pk, name);
	pk_str(pk, "plugin");
	pk_str(pk, "alpha");
	pk_str(pk, "scope");
	pk_str(pk, scope);
	pk_str(pk, "type");
	pk_str(pk, "u64");
	pk_str(pk, "unit");
	pk_str(pk, "us");
	pk_str(pk, "kind");
	pk_str(pk, "counter");
	pk_str(pk, "rule");
	pk_str(pk, "sum");
	pk_str(pk, "help");
	pk_str(pk, "");
}

/* What replaces one key: its value is written by fn (old: the value it
 * replaces, NULL for a new key); fn NULL drops the key. */
typedef void (*val_fn)(msgpack_packer *pk, const msgpack_object *old);

/* Map m re-packed with key `key` replaced (or appended). */
static void pk_map_with(msgpack_packer *pk, const msgpack_object *m,
			const char *key, val_fn fn)
{
	bool found = mget(m, key) != NULL;
	msgpack_pack_map(pk, m->via.map.size + !found - (!fn && found));
	for (uint32_t i = 0; i < m->via.map.size; i++) {
		const msgpack_object_kv *kv = &m->via.map.ptr[i];
		bool hit = &kv->val == mget(m, key);
		if (hit && !fn)
			continue;
		msgpack_pack_object(pk, kv->key);
		if (hit)
			fn(pk, &kv->val);
		else
			msgpack_pack_object(pk, kv->val);
	}
	if (!found && fn) {
		pk_str(pk, key);
		fn(pk, NULL);
	}
}

static const char *ex_key;
static val_fn ex_fn;

static void in_exited(msgpack_packer *pk, const msgpack_object *old)
{
	pk_map_with(pk, old, ex_key, ex_fn);
}

/* The round trip's file with top-level key `top` changed by fn (for
 * "exited", key `key` of it by kfn), opened: refused with a message
 * holding `want`, or accepted when want is NULL. */
static void expect(const char *top, val_fn fn, const char *key, val_fn kfn,
		   const char *want)
{
	char path[PATH_MAX], err[512] = "";
	write_cap(build(true), "good.ctprof", path);
	struct ctp_snap *good = open_path(path), *snap = NULL;
	msgpack_sbuffer sb;
	msgpack_packer pk;
	msgpack_sbuffer_init(&sb);
	msgpack_packer_init(&pk, &sb, msgpack_sbuffer_write);
	ex_key = key;
	ex_fn = kfn;
	pk_map_with(&pk, ctp_snap_root(good), top, key ? in_exited : fn);
	size_t bound = ZSTD_compressBound(sb.size), zl;
	void *z = malloc(bound);
	ZSTD_CCtx *c = ZSTD_createCCtx();
	assert_non_null(z);
	assert_false(ZSTD_isError(
		ZSTD_CCtx_setParameter(c, ZSTD_c_checksumFlag, 1)));
	zl = ZSTD_compress2(c, z, bound, sb.data, sb.size);
	assert_false(ZSTD_isError(zl));
	ZSTD_freeCCtx(c);
	int r = ctp_snap_open_buf("bad", z, zl, CAP, &snap, err, sizeof(err));
	if (want && r >= 0)
		fail_msg("accepted; want \"%s\"", want);
	if (!want && r < 0)
		fail_msg("refused: %s", err);
	if (want && !strstr(err, want))
		fail_msg("\"%s\" does not say \"%s\"", err, want);
	ctp_snap_free(snap);
	ctp_snap_free(good);
	free(z);
	msgpack_sbuffer_destroy(&sb);
}

/* Top-level key `top` replaced by fn; key `key` of the exited table
 * replaced by fn (NULL: dropped). */
static void expect_top(const char *top, val_fn fn, const char *want)
{
	expect(top, fn, NULL, NULL, want);
}

static void expect_ex(const char *key, val_fn fn, const char *want)
{
	expect("exited", NULL, key, fn, want);
}

static void v_nil(msgpack_packer *pk, const msgpack_object *o)
{
	(void)o;
	msgpack_pack_nil(pk);
}

static void v_five(msgpack_packer *pk, const msgpack_object *o)
{
	(void)o;
	msgpack_pack_uint64(pk, 5);
}

static void v_huge(msgpack_packer *pk, const msgpack_object *o)
{
	(void)o;
	msgpack_pack_uint64(pk, 1ull << 40);
}

static void v_thread_field(msgpack_packer *pk, const msgpack_object *o)
{
	(void)o;
	msgpack_pack_array(pk, 1);
	pk_field(pk, "alpha.exited.cpu", "thread");
}

static void v_dup_field(msgpack_packer *pk, const msgpack_object *o)
{
	(void)o;
	msgpack_pack_array(pk, 1);
	pk_field(pk, "alpha.utime", "exited");
}

/* The top-level fields with an exited-scope one appended. */
static void v_top_exited(msgpack_packer *pk, const msgpack_object *o)
{
	msgpack_pack_array(pk, o->via.array.size + 1);
	for (uint32_t i = 0; i < o->via.array.size; i++)
		msgpack_pack_object(pk, o->via.array.ptr[i]);
	pk_field(pk, "alpha.elsewhere", "exited");
}

static void v_tgid_str(msgpack_packer *pk, const msgpack_object *o)
{
	(void)o;
	msgpack_pack_array(pk, 3);
	pk_str(pk, "x");
	msgpack_pack_uint64(pk, 1);
	msgpack_pack_nil(pk);
}

static void v_tid_nil(msgpack_packer *pk, const msgpack_object *o)
{
	(void)o;
	msgpack_pack_array(pk, 3);
	msgpack_pack_uint64(pk, 1);
	msgpack_pack_nil(pk);
	msgpack_pack_uint64(pk, 3);
}

static void v_comm_nul(msgpack_packer *pk, const msgpack_object *o)
{
	(void)o;
	msgpack_pack_array(pk, 3);
	msgpack_pack_str(pk, 3);
	msgpack_pack_str_body(pk, "a\0b", 3);
	msgpack_pack_nil(pk);
	msgpack_pack_nil(pk);
}

static void v_lost_stranger(msgpack_packer *pk, const msgpack_object *o)
{
	(void)o;
	msgpack_pack_map(pk, 1);
	pk_str(pk, "nobody");
	msgpack_pack_uint64(pk, 1);
}

static void v_lost_twice(msgpack_packer *pk, const msgpack_object *o)
{
	(void)o;
	msgpack_pack_map(pk, 2);
	pk_str(pk, "alpha");
	msgpack_pack_uint64(pk, 1);
	pk_str(pk, "alpha");
	msgpack_pack_uint64(pk, 2);
}

static void v_lost_negative(msgpack_packer *pk, const msgpack_object *o)
{
	(void)o;
	msgpack_pack_map(pk, 1);
	pk_str(pk, "alpha");
	msgpack_pack_int64(pk, -1);
}

static void v_thread_column(msgpack_packer *pk, const msgpack_object *o)
{
	(void)o;
	msgpack_pack_map(pk, 1);
	pk_str(pk, "alpha.utime");
	msgpack_pack_array(pk, 3);
	for (int i = 0; i < 3; i++)
		msgpack_pack_uint64(pk, 1);
}

static void v_short_column(msgpack_packer *pk, const msgpack_object *o)
{
	(void)o;
	msgpack_pack_map(pk, 1);
	pk_str(pk, "alpha.exited.cpu");
	msgpack_pack_array(pk, 2);
	msgpack_pack_uint64(pk, 1);
	msgpack_pack_uint64(pk, 2);
}

static void test_hostile(void **state)
{
	(void)state;
	expect_top("exited", v_nil, "exited: expected a map, found nil");
	expect_ex("fields", v_nil, "exited.fields: expected");
	expect_ex("fields", v_thread_field,
		  "exited.fields[0]: scope thread belongs in fields");
	expect_ex("fields", v_dup_field, "\"alpha.utime\" is listed twice");
	expect_top("fields", v_top_exited,
		   "fields[1]: scope exited belongs in exited.fields");
	expect_ex("rows", v_five, "exited.tid has 3 entries but rows is 5");
	expect_ex("rows", v_huge, "larger than the file");
	expect_ex("tgid", v_tgid_str,
		  "exited.tgid[0]: expected an unsigned integer or nil");
	expect_ex("tid", v_tid_nil,
		  "exited.tid[1]: expected an unsigned integer");
	expect_ex("exit_boottime_ns", NULL,
		  "exited: missing key \"exit_boottime_ns\"");
	expect_ex("comm", v_comm_nul, "holds a NUL byte");
	expect_ex("lost", v_lost_stranger,
		  "exited.lost: \"nobody\" is not in plugins");
	expect_ex("lost", v_lost_twice,
		  "exited.lost: \"alpha\" is listed twice");
	expect_ex("lost", v_lost_negative, "exited.lost: entries must map");
	expect_ex("lost", NULL, "exited: missing key \"lost\"");
	expect_ex("columns", v_thread_column,
		  "exited.columns: field alpha.utime has scope thread");
	expect_ex("columns", v_short_column,
		  "exited.columns.alpha.exited.cpu has 2 values but rows is 3");
	/* Keys a reader does not know are ignored, in the table too; a file
	 * without the table (an older writer's) reads. */
	expect_ex("future", v_five, NULL);
	expect_top("exited", NULL, NULL);
}

/* ---- The core's API ---------------------------------------------------- */

/* abi-exited loaded into a real engine; *c its context. */
static void load(struct hx_fx *fx, bool recording, struct ctp_ctx **c)
{
	hx_ctx_init(&fx->ctx, fx->p, NULL);
	fx->ctx.eng.recording = recording;
	assert_int_equal(hx_fx_load(fx, 0), 0);
	*c = &hx_info(&fx->ctx)->rt->ctx;
}

static void test_api(void **state)
{
	struct hx_fx *fx = *state;
	const struct ctp_api *core = &fx->ctx.core;
	struct ctp_record *rec = NULL;
	struct ctp_ctx *c;
	load(fx, true, &c);
	struct ctp_plugin_rt *rt = hx_info(&fx->ctx)->rt;
	int cpu = hx_field(&fx->ctx, "abi-exited.cpu");
	int seen = hx_field(&fx->ctx, "abi-exited.seen");

	assert_true(core->recording(c));
	/* Outside a host or finish callback. */
	assert_int_equal(core->exited_begin(c, 1, 1, "a", 1, 1, &rec), -EBUSY);
	rt->in_host_cb = true;
	assert_int_equal(core->exited_begin(c, 1, 1, NULL, 1, 1, &rec),
			 -EINVAL);
	assert_int_equal(core->exited_begin(c, 1, 1, "a", 1, 1, NULL), -EINVAL);
	assert_int_equal(hx_exited_rows(&fx->ctx), 0);
	assert_int_equal(core->exited_begin(c, 7, 6, "x", 1, 5, &rec), 0);
	assert_int_equal(core->set_u64(rec, cpu, 3), 0);
	assert_int_equal(core->set_u64(rec, seen, 3), -EINVAL);
	/* The next row takes the record over; the last row keeps its
	 * values. */
	assert_int_equal(core->exited_begin(c, 8, 6, "y", 1, 5, &rec), 0);
	assert_int_equal(core->set_u64(rec, cpu, 4), 0);
	rt->in_host_cb = false;
	ctp_api_exited_close(rt);
	assert_int_equal(core->set_u64(rec, cpu, 5), -EINVAL);
	uint64_t v;
	assert_true(hx_exited_u64(&fx->ctx, 0, "abi-exited.cpu", &v));
	assert_int_equal(v, 3);
	assert_true(hx_exited_u64(&fx->ctx, 1, "abi-exited.cpu", &v));
	assert_int_equal(v, 4);
	core->exited_lost(c, 4);
	core->exited_lost(c, 1);
	assert_int_equal(hx_exited_lost(&fx->ctx), 5);
	hx_fx_stop(fx);

	load(fx, false, &c);
	assert_false(fx->ctx.core.recording(c));
	hx_fx_stop(fx);
}

/* CTP_EXITED_MAX_ROWS rows, then -ENOSPC and no row more. */
static void test_api_cap(void **state)
{
	struct hx_fx *fx = *state;
	struct ctp_record *rec;
	struct ctp_ctx *c;
	load(fx, false, &c);
	hx_info(&fx->ctx)->rt->in_host_cb = true;
	for (uint32_t i = 0; i < CTP_EXITED_MAX_ROWS; i++)
		if (fx->ctx.core.exited_begin(c, i, 0, NULL, 0, 0, &rec) < 0)
			fail_msg("row %u refused", i);
	assert_int_equal(fx->ctx.core.exited_begin(c, 1, 0, NULL, 0, 0, &rec),
			 -ENOSPC);
	assert_int_equal(hx_exited_rows(&fx->ctx), CTP_EXITED_MAX_ROWS);
	hx_info(&fx->ctx)->rt->in_host_cb = false;
	hx_fx_stop(fx);
}

static int setup(void **state)
{
	if (e2e_tmpdir("exited", tmpdir, sizeof(tmpdir)) < 0)
		return -1;
	return hx_fx_setup(state, CTP_ABI_PLUGIN_DIR "/abi-exited.so");
}

static int teardown(void **state)
{
	e2e_rm_rf(tmpdir);
	return hx_fx_teardown(state);
}

int main(int argc, char **argv)
{
	if (argc == 3 && strcmp(argv[1], "--write-sample") == 0) {
		char err[512];
		struct ctp_capture *cap = build(true);
		int r = sb_write(cap, argv[2], err, sizeof(err));
		ctp_capture_free(cap);
		if (r < 0)
			fprintf(stderr, "%s\n", err);
		return r < 0;
	}
	if (argc == 3 && strcmp(argv[1], "--dump") == 0) {
		char *av[] = {"dump", argv[2], NULL};
		return ctp_cmd_dump(2, av);
	}
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_roundtrip),
		cmocka_unit_test(test_absent_unless_used),
		cmocka_unit_test(test_show),
		cmocka_unit_test(test_hostile),
		cmocka_unit_test(test_api),
		cmocka_unit_test(test_api_cap),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
