/* SPDX-License-Identifier: MIT */
/*
 * The kernel-config gate of read-failure tallies (ctp_api.file_gate, which
 * the io plugin uses for CONFIG_TASK_IO_ACCOUNTING) and the ENOENT part of
 * each tally (read_failures.missing): the writer always emits both maps
 * (gates empty when no file is gated), the reader exposes them per file,
 * refuses malformed ones and still reads files without them, and `show`
 * prints the hint exactly when *missing* failures of gated files are half
 * or more of all failures, naming the options of the gated files that had
 * missing failures. Other failures of a gated file (EACCES, EISDIR) say
 * nothing about the kernel's configuration and never count.
 */
#include <errno.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <msgpack.h>
#include <zstd.h>

#include "e2e_util.h"
#include "model.h"
#include "reader.h"
#include "writer.h"

#define MAX_SNAP (1ull << 30)

static char tmp[PATH_MAX];
static unsigned seq;

struct tally {
	const char *file;
	uint64_t failures;
	uint64_t missing; /* of failures, ENOENT */
	const char *gate; /* NULL: not gated */
	uint64_t denied;  /* of failures, EACCES or EPERM */
};

/* When set, write_capture adds one loaded plugin "io" with this hint. */
static const char *next_hint;
/* The capture's ptrace_capable for write_capture (-1: not recorded). */
static int next_ptrace = -1;

/* Write an otherwise empty capture with this tally; path in `path`. */
static void write_capture(const struct tally *t, size_t n, char *path,
			  size_t len)
{
	struct ctp_capture *cap = NULL;
	char err[512];
	size_t i;

	assert_int_equal(ctp_capture_new(1, &cap), 0);
	if (next_hint) {
		cap->plugins = calloc(1, sizeof(*cap->plugins));
		assert_non_null(cap->plugins);
		cap->n_plugins = 1;
		cap->plugins[0].name = strdup("io");
		cap->plugins[0].hint = strdup(next_hint);
		cap->plugins[0].status = CTP_PST_LOADED;
		assert_non_null(cap->plugins[0].name);
		assert_non_null(cap->plugins[0].hint);
	}
	cap->ptrace_capable = (int8_t)next_ptrace;
	cap->rf.tids_walked = cap->rf.tids_recorded = 10;
	cap->rf.tgids_walked = 2;
	for (i = 0; i < n; i++) {
		cap->rf.file[i] = strdup(t[i].file);
		cap->rf.failures[i] = t[i].failures;
		cap->rf.missing[i] = t[i].missing;
		cap->rf.denied[i] = t[i].denied;
		cap->rf.gate[i] = t[i].gate ? strdup(t[i].gate) : NULL;
		assert_non_null(cap->rf.file[i]);
	}
	cap->rf.n_files = (uint32_t)n;
	assert_int_equal(e2e_pathf(path, len, "%s/snap-%u.ctprof", tmp, ++seq),
			 0);
	if (ctp_writer_write(cap, path, 1, "test", NULL, NULL, err,
			     sizeof(err)) < 0)
		fail_msg("write: %s", err);
	ctp_capture_free(cap);
}

static struct ctp_snap *open_snap(const char *path)
{
	struct ctp_snap *s = NULL;
	char err[512];

	if (ctp_snap_open(path, MAX_SNAP, &s, err, sizeof(err)) < 0)
		fail_msg("read: %s", err);
	return s;
}

/* `ctprof-core show --summary FILE`'s stdout, malloc'ed. */
static char *show(const char *path)
{
	char out[PATH_MAX], err[PATH_MAX], *text = NULL;
	const char *args[] = {"show", "--summary", path, NULL};
	int rc;

	assert_int_equal(E2E_PATHF(out, "%s/show-%u.out", tmp, seq), 0);
	assert_int_equal(E2E_PATHF(err, "%s/show-%u.err", tmp, seq), 0);
	rc = e2e_run(args, out, err);
	if (rc != 0) {
		e2e_show_file("show stderr", err);
		fail_msg("show exited with %d", rc);
	}
	assert_int_equal(e2e_read_file(out, &text, NULL), 0);
	return text;
}

/* The "hint:" line of show's output, or NULL. */
static char *hint_line(const char *text, char *buf, size_t len)
{
	const char *h = strstr(text, "hint: ");
	size_t n;

	if (!h)
		return NULL;
	n = strcspn(h, "\n");
	assert_true(n < len);
	memcpy(buf, h, n);
	buf[n] = '\0';
	return buf;
}

/* Decompressed snapshot bytes (the writer streams: no content size). */
static char *raw_of(const char *path, size_t *len)
{
	char *z = NULL, *raw;
	size_t zlen, cap = 1 << 20, n;

	assert_int_equal(e2e_read_file(path, &z, &zlen), 0);
	raw = malloc(cap);
	assert_non_null(raw);
	n = ZSTD_decompress(raw, cap, z, zlen);
	free(z);
	assert_false(ZSTD_isError(n));
	*len = n;
	return raw;
}

static const char *find_bytes(const char *hay, size_t n, const char *needle,
			      size_t m)
{
	const char *p = memmem(hay, n, needle, m);

	assert_non_null(p);
	return p;
}

/* Raw snapshot bytes again without plugins[].hint, read_failures.missing
 * and read_failures.gates: what a writer from before them made. */
static bool drop_key(const msgpack_object_kv *kv)
{
	static const char *const late[] = {"hint", "missing", "denied",
					   "gates"};
	if (kv->key.type != MSGPACK_OBJECT_STR)
		return false;
	for (size_t i = 0; i < sizeof(late) / sizeof(late[0]); i++)
		if (kv->key.via.str.size == strlen(late[i]) &&
		    !memcmp(kv->key.via.str.ptr, late[i], strlen(late[i])))
			return true;
	return false;
}

static void pack_without_late(msgpack_packer *pk, const msgpack_object *o)
{
	if (o->type == MSGPACK_OBJECT_ARRAY) {
		msgpack_pack_array(pk, o->via.array.size);
		for (uint32_t i = 0; i < o->via.array.size; i++)
			pack_without_late(pk, &o->via.array.ptr[i]);
		return;
	}
	if (o->type != MSGPACK_OBJECT_MAP) {
		msgpack_pack_object(pk, *o);
		return;
	}
	uint32_t n = 0;
	for (uint32_t i = 0; i < o->via.map.size; i++)
		n += !drop_key(&o->via.map.ptr[i]);
	msgpack_pack_map(pk, n);
	for (uint32_t i = 0; i < o->via.map.size; i++) {
		if (drop_key(&o->via.map.ptr[i]))
			continue;
		msgpack_pack_object(pk, o->via.map.ptr[i].key);
		pack_without_late(pk, &o->via.map.ptr[i].val);
	}
}

/* zstd level 1 with the content checksum the reader insists on. */
static size_t zcompress(char *z, size_t zcap, const char *raw, size_t len)
{
	ZSTD_CCtx *c = ZSTD_createCCtx();
	assert_non_null(c);
	assert_false(ZSTD_isError(
		ZSTD_CCtx_setParameter(c, ZSTD_c_checksumFlag, 1)));
	size_t zn = ZSTD_compress2(c, z, zcap, raw, len);
	ZSTD_freeCCtx(c);
	return zn;
}

/* Write raw (uncompressed) bytes as a snapshot file at `path`. */
static void write_raw(const char *path, const char *raw, size_t len)
{
	size_t zcap = ZSTD_compressBound(len), zn;
	char *z = malloc(zcap);

	assert_non_null(z);
	zn = zcompress(z, zcap, raw, len);
	assert_false(ZSTD_isError(zn));
	assert_int_equal(e2e_write_file(path, z, zn), 0);
	free(z);
}

/* Re-compress mutated bytes and open them: the reader's verdict. */
static int open_raw(const char *raw, size_t len, char *err, size_t errlen)
{
	size_t zcap = ZSTD_compressBound(len), zn;
	char *z = malloc(zcap);
	struct ctp_snap *s = NULL;
	int r;

	assert_non_null(z);
	zn = zcompress(z, zcap, raw, len);
	assert_false(ZSTD_isError(zn));
	r = ctp_snap_open_buf("mutated", z, zn, MAX_SNAP, &s, err, errlen);
	free(z);
	ctp_snap_free(s);
	return r;
}

/* ---- Tests -------------------------------------------------------------- */

static void gates_round_trip(void **state)
{
	/* stat's 3 failures were not ENOENT (say EACCES); one of schedstat's
	 * 5 was not either. */
	static const struct tally t[] = {
		{"stat", 3, 0, NULL},
		{"io", 10, 10, "CONFIG_TASK_IO_ACCOUNTING"},
		{"schedstat", 5, 4, "CONFIG_SCHED_INFO"},
		{"process/smaps_rollup", 0, 0, NULL},
		{"sched", 0, 0, "CONFIG_SCHED_DEBUG"},
	};
	char path[PATH_MAX], buf[512];
	const struct ctp_snap_readfail *rf;
	struct ctp_snap *s;
	char *raw, *text;
	size_t len, i;

	(void)state;
	write_capture(t, 5, path, sizeof(path));
	s = open_snap(path);
	rf = ctp_snap_readfail(s);
	assert_int_equal(rf->n_files, 5);
	for (i = 0; i < 5; i++) {
		assert_string_equal(rf->file[i], t[i].file);
		assert_int_equal(rf->failures[i], t[i].failures);
		assert_int_equal(rf->missing[i], t[i].missing);
		if (t[i].gate)
			assert_string_equal(rf->gate[i], t[i].gate);
		else
			assert_null(rf->gate[i]);
	}
	assert_string_equal(rf->dominant_file, "io");
	ctp_snap_free(s);

	/* files, then missing (every file, files order), dominant_file, and
	 * gates last (gated files only, files order); then the next
	 * top-level key. */
	raw = raw_of(path, &len);
	static const char want[] = "\xa5"
				   "files\x85"
				   "\xa4stat\x03"
				   "\xa2io\x0a"
				   "\xa9schedstat\x05"
				   "\xb4process/smaps_rollup\x00"
				   "\xa5sched\x00"
				   "\xa7missing\x85"
				   "\xa4stat\x00"
				   "\xa2io\x0a"
				   "\xa9schedstat\x04"
				   "\xb4process/smaps_rollup\x00"
				   "\xa5sched\x00"
				   "\xa6"
				   "denied\x85"
				   "\xa4stat\x00"
				   "\xa2io\x00"
				   "\xa9schedstat\x00"
				   "\xb4process/smaps_rollup\x00"
				   "\xa5sched\x00"
				   "\xad"
				   "dominant_file\xa2io\xa5gates\x83"
				   "\xa2io\xb9"
				   "CONFIG_TASK_IO_ACCOUNTING"
				   "\xa9schedstat\xb1"
				   "CONFIG_SCHED_INFO"
				   "\xa5sched\xb2"
				   "CONFIG_SCHED_DEBUG"
				   "\xa4host";
	find_bytes(raw, len, want, sizeof(want) - 1);
	free(raw);

	/* 14 of 18 failures are missing gated files: the options of the two
	 * gated files with missing failures, not the one without. */
	text = show(path);
	assert_non_null(hint_line(text, buf, sizeof(buf)));
	assert_string_equal(
		buf, "hint: 14 of 18 read failures are missing files that "
		     "exist only with CONFIG_TASK_IO_ACCOUNTING (io) / "
		     "CONFIG_SCHED_INFO (schedstat); this kernel was probably "
		     "built without them");
	assert_non_null(strstr(text, "per file: stat 3, io 10 (10 missing), "
				     "schedstat 5 (4 missing), "
				     "process/smaps_rollup 0, sched 0; "
				     "dominant: io\n"));
	free(text);
}

/*
 * No gated file: `gates` is still written, as an empty map, and `missing`
 * lists every file. A file without the two keys and without plugins[].hint
 * (a writer from before them) still reads: nothing gated, nothing
 * missing, no hint.
 */
static void gates_always_present(void **state)
{
	static const struct tally t[] = {{"stat", 1, 1, NULL},
					 {"io", 4, 4, NULL}};
	char path[PATH_MAX], old[PATH_MAX], buf[512];
	const struct ctp_snap_readfail *rf;
	struct ctp_snap *s;
	char *raw, *text;
	size_t len;

	(void)state;
	next_hint = "grant CAP_SYS_PTRACE";
	write_capture(t, 2, path, sizeof(path));
	next_hint = NULL;
	raw = raw_of(path, &len);
	static const char want[] = "\xa7missing\x82"
				   "\xa4stat\x01"
				   "\xa2io\x04"
				   "\xa6"
				   "denied\x82"
				   "\xa4stat\x00"
				   "\xa2io\x00"
				   "\xad"
				   "dominant_file\xa2io\xa5gates\x80\xa4host";
	find_bytes(raw, len, want, sizeof(want) - 1);
	find_bytes(raw, len, "\xa4hint\xb4grant CAP_SYS_PTRACE", 26);
	s = open_snap(path);
	rf = ctp_snap_readfail(s);
	assert_null(rf->gate[0]);
	assert_null(rf->gate[1]);
	assert_int_equal(rf->missing[0], 1);
	assert_int_equal(rf->missing[1], 4);
	assert_int_equal(ctp_snap_n_plugins(s), 1);
	assert_string_equal(ctp_snap_plugins(s)[0].hint,
			    "grant CAP_SYS_PTRACE");
	ctp_snap_free(s);
	/* Every failure missing, but nothing gated: no kernel-config hint
	 * (the plugin's own hint is another line). */
	text = show(path);
	assert_null(strstr(text, "read failures are missing"));
	assert_non_null(strstr(text, "  hint: grant CAP_SYS_PTRACE\n"));
	free(text);

	/* The same without the late keys. */
	{
		msgpack_unpacked u;
		msgpack_sbuffer sb;
		msgpack_packer pk;
		size_t off = 0;

		msgpack_unpacked_init(&u);
		assert_int_equal(msgpack_unpack_next(&u, raw, len, &off),
				 MSGPACK_UNPACK_SUCCESS);
		msgpack_sbuffer_init(&sb);
		msgpack_packer_init(&pk, &sb, msgpack_sbuffer_write);
		pack_without_late(&pk, &u.data);
		assert_null(memmem(sb.data, sb.size, "gates", 5));
		assert_null(memmem(sb.data, sb.size, "missing", 7));
		assert_null(memmem(sb.data, sb.size, "hint", 4));
		assert_int_equal(E2E_PATHF(old, "%s/old-%u.ctprof", tmp, seq),
				 0);
		write_raw(old, sb.data, sb.size);
		msgpack_sbuffer_destroy(&sb);
		msgpack_unpacked_destroy(&u);
	}
	free(raw);
	s = open_snap(old);
	rf = ctp_snap_readfail(s);
	assert_int_equal(rf->n_files, 2);
	assert_int_equal(rf->failures[1], 4);
	for (size_t i = 0; i < 2; i++) {
		assert_null(rf->gate[i]);
		assert_int_equal(rf->missing[i], 0);
	}
	assert_null(ctp_snap_plugins(s)[0].hint);
	ctp_snap_free(s);
	text = show(old);
	assert_null(hint_line(text, buf, sizeof(buf)));
	assert_non_null(strstr(text, "per file: stat 1, io 4; dominant: io\n"));
	free(text);

	/* The golden snapshot of an older writer has none of them either. */
	s = open_snap(CTP_TEST_FIXTURES "/snapshots/sample-v1.ctprof");
	rf = ctp_snap_readfail(s);
	assert_true(rf->n_files > 0);
	for (size_t i = 0; i < rf->n_files; i++) {
		assert_null(rf->gate[i]);
		assert_int_equal(rf->missing[i], 0);
	}
	for (size_t i = 0; i < ctp_snap_n_plugins(s); i++)
		assert_null(ctp_snap_plugins(s)[i].hint);
	ctp_snap_free(s);
}

/*
 * Permission denials (read_failures.denied): the reader exposes them, show
 * counts them per file and hints when they are half or more of all
 * failures (93 of 94 io reads as `nobody`), naming each file; they never
 * count as missing, and a file cannot have more missing and denied than
 * failures.
 */
static void denied_hint(void **state)
{
	static const struct {
		struct tally t[3];
		const char *hint; /* NULL: none */
	} cases[] = {
		{{{"stat", 0, 0, NULL, 0},
		  {"io", 94, 0, "CONFIG_TASK_IO_ACCOUNTING", 93},
		  {"process/smaps_rollup", 1, 0, NULL, 1}},
		 "hint: 94 of 95 read failures were permission denied (io 93, "
		 "process/smaps_rollup 1): reading other users' tasks' files "
		 "such as io and smaps_rollup needs root or CAP_SYS_PTRACE; "
		 "run the capture as root"},
		/* Exactly half. */
		{{{"stat", 3, 0, NULL, 0},
		  {"io", 3, 0, "CONFIG_TASK_IO_ACCOUNTING", 3},
		  {"status", 0, 0, NULL, 0}},
		 "hint: 3 of 6 read failures were permission denied (io 3)"},
		/* Just under. */
		{{{"stat", 4, 0, NULL, 0},
		  {"io", 3, 0, "CONFIG_TASK_IO_ACCOUNTING", 3},
		  {"status", 0, 0, NULL, 0}},
		 NULL},
		/* Missing and denied parts of one gated file: the missing
		 * part is the kernel's, the denied part permissions. */
		{{{"stat", 0, 0, NULL, 0},
		  {"io", 10, 7, "CONFIG_TASK_IO_ACCOUNTING", 3},
		  {"status", 0, 0, NULL, 0}},
		 "hint: 7 of 10 read failures are missing files"},
	};
	char path[PATH_MAX], buf[512];
	(void)state;
	next_ptrace = 0; /* the collector lacked CAP_SYS_PTRACE */
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		write_capture(cases[i].t, 3, path, sizeof(path));
		struct ctp_snap *s = open_snap(path);
		const struct ctp_snap_readfail *rf = ctp_snap_readfail(s);
		for (size_t f = 0; f < 3; f++)
			assert_int_equal(rf->denied[f], cases[i].t[f].denied);
		ctp_snap_free(s);
		char *text = show(path);
		char *h = hint_line(text, buf, sizeof(buf));
		if (!cases[i].hint && strstr(text, "permission denied"))
			fail_msg("case %zu: unexpected hint in\n%s", i, text);
		if (cases[i].hint && (!h || !strstr(h, cases[i].hint)))
			fail_msg("case %zu: want \"%s\" in\n%s", i,
				 cases[i].hint, text);
		free(text);
	}
	write_capture(cases[0].t, 3, path, sizeof(path));
	char *text = show(path);
	assert_non_null(strstr(text, "io 94 (93 denied), process/smaps_rollup "
				     "1 (1 denied)"));
	free(text);

	/* A collector that held CAP_SYS_PTRACE (root) is not told to run as
	 * root: the processes refuse it. Not recorded: both causes named. */
	next_ptrace = 1;
	write_capture(cases[0].t, 3, path, sizeof(path));
	text = show(path);
	assert_non_null(strstr(text, "the capture held CAP_SYS_PTRACE, so "
				     "these processes refuse access"));
	assert_null(strstr(text, "run the capture as root"));
	free(text);
	next_ptrace = -1;
	write_capture(cases[0].t, 3, path, sizeof(path));
	text = show(path);
	assert_non_null(strstr(text, "need root or CAP_SYS_PTRACE (or their "
				     "processes refuse even those)"));
	free(text);

	/* More missing and denied than failures: refused. */
	static const struct tally over[] = {
		{"io", 5, 3, NULL, 3},
	};
	write_capture(over, 1, path, sizeof(path));
	size_t len;
	char *raw = raw_of(path, &len), err[512];
	assert_int_equal(open_raw(raw, len, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "read_failures: \"io\" has more missing "
				    "and denied than failures"));
	free(raw);
}

/* The threshold: missing gated failures half or more of all failures. */
static void hint_threshold(void **state)
{
	static const struct {
		struct tally t[3];
		const char *hint; /* NULL: none */
	} cases[] = {
		/* Exactly half. */
		{{{"stat", 3, 0, NULL},
		  {"io", 3, 3, "CONFIG_TASK_IO_ACCOUNTING"},
		  {"status", 0, 0, NULL}},
		 "hint: 3 of 6 read failures are missing files that exist "
		 "only with CONFIG_TASK_IO_ACCOUNTING (io); this kernel was "
		 "probably built without it"},
		/* Just under. */
		{{{"stat", 3, 0, NULL},
		  {"io", 3, 3, "CONFIG_TASK_IO_ACCOUNTING"},
		  {"status", 1, 0, NULL}},
		 NULL},
		/* Every failure in a gated file, none of them ENOENT (EACCES,
		 * EISDIR): the file exists, so the kernel has the option. */
		{{{"stat", 0, 0, NULL},
		  {"io", 9, 0, "CONFIG_TASK_IO_ACCOUNTING"},
		  {"status", 0, 0, NULL}},
		 NULL},
		/* Only the missing part of a gated file's failures counts:
		 * 3 of 8, not 6 of 8. */
		{{{"stat", 2, 2, NULL},
		  {"io", 6, 3, "CONFIG_TASK_IO_ACCOUNTING"},
		  {"status", 0, 0, NULL}},
		 NULL},
		/* ... and it is what the hint counts: 3 of 5. */
		{{{"stat", 2, 2, NULL},
		  {"io", 3, 3, "CONFIG_TASK_IO_ACCOUNTING"},
		  {"status", 0, 0, NULL}},
		 "hint: 3 of 5 read failures are missing files that exist "
		 "only with CONFIG_TASK_IO_ACCOUNTING (io); this kernel was "
		 "probably built without it"},
		{{{"stat", 1, 0, NULL},
		  {"io", 5, 3, "CONFIG_TASK_IO_ACCOUNTING"},
		  {"status", 0, 0, NULL}},
		 "hint: 3 of 6 read failures are missing files that exist "
		 "only with CONFIG_TASK_IO_ACCOUNTING (io); this kernel was "
		 "probably built without it"},
		/* Missing files that are not gated never count. */
		{{{"stat", 4, 4, NULL},
		  {"io", 3, 3, "CONFIG_TASK_IO_ACCOUNTING"},
		  {"status", 0, 0, NULL}},
		 NULL},
		/* Gated files without failures. */
		{{{"stat", 0, 0, NULL},
		  {"io", 0, 0, "CONFIG_TASK_IO_ACCOUNTING"},
		  {"status", 2, 2, NULL}},
		 NULL},
		/* No failures at all. */
		{{{"stat", 0, 0, NULL},
		  {"io", 0, 0, "CONFIG_TASK_IO_ACCOUNTING"},
		  {"status", 0, 0, NULL}},
		 NULL},
		/* Only gated failures; one option gating two files is named
		 * once, with both; a gated file whose failures are not
		 * missing is not named. */
		{{{"schedstat", 7, 7, "CONFIG_SCHED_INFO"},
		  {"io", 2, 0, "CONFIG_TASK_IO_ACCOUNTING"},
		  {"sched", 2, 2, "CONFIG_SCHED_INFO"}},
		 "hint: 9 of 11 read failures are missing files that exist "
		 "only with CONFIG_SCHED_INFO (schedstat, sched); this kernel "
		 "was probably built without it"},
	};
	char path[PATH_MAX], buf[512];
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *text;

		write_capture(cases[i].t, 3, path, sizeof(path));
		text = show(path);
		if (!cases[i].hint) {
			if (hint_line(text, buf, sizeof(buf)))
				fail_msg("case %zu: unexpected %s", i, buf);
		} else {
			if (!hint_line(text, buf, sizeof(buf)))
				fail_msg("case %zu: no hint in\n%s", i, text);
			assert_string_equal(buf, cases[i].hint);
		}
		free(text);
	}
}

/* What a reader refuses in read_failures.gates and .missing. */
static void malformed_gates(void **state)
{
	static const struct tally t[] = {
		{"io", 1, 1, "CONFIG_TASK_IO_ACCOUNTING"},
		{"xo", 1, 0, "A"},
	};
	static const struct tally empty[] = {{"io", 1, 0, ""}};
	/* More missing than failures: no engine tallies that. */
	static const struct tally over[] = {{"stat", 0, 0, NULL},
					    {"io", 4, 5, NULL}};
	char path[PATH_MAX], err[512];
	char *raw, *gates, *p;
	size_t len;

	(void)state;
	write_capture(t, 2, path, sizeof(path));
	raw = raw_of(path, &len);
	gates = (char *)find_bytes(raw, len, "\xa5gates\x82", 7);
	assert_int_equal(open_raw(raw, len, err, sizeof(err)), 0);

	/* A gate for a file that is not tallied. */
	p = (char *)find_bytes(gates, len - (size_t)(gates - raw), "\xa2io", 3);
	p[1] = 'z';
	assert_int_equal(open_raw(raw, len, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "read_failures.gates: \"zo\" is not in "
				    "files"));
	/* The same file twice. */
	p[1] = 'x';
	assert_int_equal(open_raw(raw, len, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "\"xo\" is listed twice"));
	p[1] = 'i';
	/* A value that is not a string: "A" (a1 41) becomes uint8 0x41. */
	p = (char *)find_bytes(gates, len - (size_t)(gates - raw), "\xa1\x41",
			       2);
	p[0] = (char)0xcc;
	assert_int_equal(open_raw(raw, len, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "entries must map a file name to a "
				    "non-empty string"));
	p[0] = (char)0xa1;
	/* Not a map: the same four objects as an array. */
	gates[6] = (char)0x94;
	assert_int_equal(open_raw(raw, len, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "read_failures.gates: expected a map"));
	gates[6] = (char)0x82;
	assert_int_equal(open_raw(raw, len, err, sizeof(err)), 0);

	/* missing (io 1, xo 0): a file that is not tallied, then a count
	 * over the failures (io 1 becomes 2). */
	p = (char *)find_bytes(raw, len, "\xa7missing\x82\xa2io\x01", 13);
	p[10] = 'z';
	assert_int_equal(open_raw(raw, len, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "read_failures.missing: \"zo\" is not in "
				    "files"));
	p[10] = 'i';
	p[12] = 0x02;
	assert_int_equal(open_raw(raw, len, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "read_failures.missing: \"io\" has more "
				    "missing (2) than failures (1)"));
	p[12] = 0x01;
	assert_int_equal(open_raw(raw, len, err, sizeof(err)), 0);
	free(raw);

	/* An empty option name. */
	write_capture(empty, 1, path, sizeof(path));
	raw = raw_of(path, &len);
	assert_int_equal(open_raw(raw, len, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "non-empty string"));
	free(raw);

	/* The writer writes what it is given; the reader refuses it. */
	write_capture(over, 2, path, sizeof(path));
	raw = raw_of(path, &len);
	assert_int_equal(open_raw(raw, len, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "read_failures.missing: \"io\" has more "
				    "missing (5) than failures (4)"));
	free(raw);
}

static int group_setup(void **state)
{
	(void)state;
	return e2e_tmpdir("hint", tmp, sizeof(tmp));
}

static int group_teardown(void **state)
{
	(void)state;
	return e2e_rm_rf(tmp);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(gates_round_trip),
		cmocka_unit_test(gates_always_present),
		cmocka_unit_test(hint_threshold),
		cmocka_unit_test(denied_hint),
		cmocka_unit_test(malformed_gates),
	};

	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
