/* SPDX-License-Identifier: MIT */
/*
 * Walking from a walk source (struct ctp_source_desc.walk; issue 33): the
 * test collector abi-walk (tests/plugins/abi_walk.c) lists a fixture proc
 * tree as its walk source. A capture walking from it must equal the
 * capture that lists the proc root (the one abi-walk's failing walk()
 * falls back to): the same rows, names, cgroups, values of the plugins
 * that read files, read failures and vanished tasks; with one worker and
 * with large processes split among two. A walk() that fails, or a list
 * that cannot be walked, falls back to the proc root, and the snapshot
 * and `show` say why.
 */
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "e2e_util.h"
#include "reader.h"
#include "value.h"

static char tmp[PATH_MAX];

static int setup(void **state)
{
	(void)state;
	return e2e_tmpdir("walk-source", tmp, sizeof(tmp)) < 0 ? -1 : 0;
}

static int teardown(void **state)
{
	(void)state;
	return e2e_rm_rf(tmp) < 0 ? -1 : 0;
}

/* The config at cfg of a capture of the fixture tree `fixture` with the
 * walk source `src` (abi-walk or abi-walk-dir) given options `opts` (a
 * YAML flow map's body) and the plugins `more` (lines under "plugins:",
 * or ""). */
static void write_cfg(const char *cfg, const char *src, const char *fixture,
		      unsigned workers, unsigned split, const char *opts,
		      const char *more)
{
	char root[PATH_MAX];
	assert_true(E2E_PATHF(root, "%s/%s", CTP_TEST_FIXTURES, fixture) >= 0);
	FILE *f = fopen(cfg, "we");
	assert_non_null(f);
	/* sys at the fixture too, and no cgroup tree of this host. */
	fprintf(f,
		"plugin_dirs: [\"%s\", \"%s\"]\n"
		"workers: %u\n"
		"split_threads: %u\n"
		"roots:\n  proc: \"%s\"\n  sys: \"%s\"\n  cgroup: auto\n"
		"plugins:\n  %s: {options: {%s}}\n%s",
		CTP_ABI_PLUGIN_DIR, CTP_TEST_PLUGIN_DIR, workers, split, root,
		root, src, opts, more);
	assert_int_equal(fclose(f), 0);
}

/* A capture as write_cfg says, as tmp/tag.*. */
static struct ctp_snap *capture_with(const char *src, const char *tag,
				     const char *fixture, unsigned workers,
				     unsigned split, const char *opts,
				     const char *more)
{
	char cfg[PATH_MAX], out[PATH_MAX], log[PATH_MAX];
	assert_true(E2E_PATHF(cfg, "%s/%s.yaml", tmp, tag) >= 0);
	assert_true(E2E_PATHF(out, "%s/%s.ctprof.zst", tmp, tag) >= 0);
	assert_true(E2E_PATHF(log, "%s/%s.log", tmp, tag) >= 0);
	write_cfg(cfg, src, fixture, workers, split, opts, more);
	return e2e_capture(cfg, out, log);
}

static struct ctp_snap *capture(const char *tag, const char *fixture,
				unsigned workers, unsigned split,
				const char *opts, const char *more)
{
	return capture_with("abi-walk", tag, fixture, workers, split, opts,
			    more);
}

/* The name of `src`'s field `f` (src.f) in a static buffer. */
static const char *fname(const char *src, const char *f)
{
	static char buf[96];
	snprintf(buf, sizeof(buf), "%s.%s", src, f);
	return buf;
}

static const char *cgroup_of(const struct ctp_snap *s,
			     const struct ctp_snap_table *t, size_t row,
			     size_t *len)
{
	const struct ctp_snap_table *cg = ctp_snap_table(s, CTP_SCOPE_CGROUP);
	*len = 0;
	if (t->cgroup[row] < 0)
		return "";
	*len = cg->path[t->cgroup[row]].len;
	return (const char *)cg->path[t->cgroup[row]].ptr;
}

static bool bytes_eq(const struct ctp_bytes *a, const struct ctp_bytes *b)
{
	if (!a->ptr || !b->ptr)
		return !a->ptr && !b->ptr;
	return a->len == b->len && memcmp(a->ptr, b->ptr, a->len) == 0;
}

/* Every row of scope in a and b: identity and every field's value but
 * the walk sources' walked_tid (which tells the walks apart). */
static void same_table(const struct ctp_snap *a, const struct ctp_snap *b,
		       uint8_t scope)
{
	const struct ctp_snap_table *ta = ctp_snap_table(a, scope);
	const struct ctp_snap_table *tb = ctp_snap_table(b, scope);
	assert_int_equal(ta->rows, tb->rows);
	for (size_t r = 0; r < ta->rows; r++) {
		assert_int_equal(ta->tgid[r], tb->tgid[r]);
		if (scope == CTP_SCOPE_THREAD) {
			assert_int_equal(ta->tid[r], tb->tid[r]);
			size_t la, lb;
			const char *ca = cgroup_of(a, ta, r, &la);
			const char *cb = cgroup_of(b, tb, r, &lb);
			assert_int_equal(la, lb);
			assert_memory_equal(ca, cb, la);
		} else {
			assert_int_equal(ta->nthreads[r], tb->nthreads[r]);
		}
		if (!bytes_eq(&ta->comm[r], &tb->comm[r]))
			fail_msg("row %zu (tid %" PRIu64 "): comm \"%.*s\" "
				 "and \"%.*s\"",
				 r, scope == CTP_SCOPE_THREAD ? ta->tid[r] : 0,
				 (int)ta->comm[r].len,
				 ta->comm[r].ptr ? (const char *)ta->comm[r].ptr
						 : "",
				 (int)tb->comm[r].len,
				 tb->comm[r].ptr ? (const char *)tb->comm[r].ptr
						 : "");
	}
	const struct ctp_snap_field *fa = ctp_snap_fields(a);
	size_t compared = 0;
	for (size_t i = 0; i < ctp_snap_n_fields(a); i++) {
		size_t nl = strlen(fa[i].name);
		if (fa[i].scope != scope || fa[i].n_terms ||
		    (nl > 11 &&
		     strcmp(fa[i].name + nl - 11, ".walked_tid") == 0))
			continue;
		const struct ctp_snap_field *fb =
			ctp_snap_field_find(b, fa[i].name);
		if (!fb)
			fail_msg("field %s only in one snapshot", fa[i].name);
		for (size_t r = 0; r < ta->rows; r++) {
			struct ctp_value va = ctp_snap_get(a, &fa[i], r);
			struct ctp_value vb = ctp_snap_get(b, fb, r);
			compared += va.type != CTP_VALUE_ABSENT;
			if (va.type != vb.type ||
			    (va.type != CTP_VALUE_ABSENT &&
			     ctp_value_cmp(&va, &vb) != 0))
				fail_msg("%s, row %zu: the walks differ",
					 fa[i].name, r);
		}
	}
	if (scope == CTP_SCOPE_THREAD)
		assert_true(compared > 0);
}

/* Read failures by file, and the tasks walked, recorded and vanished. */
static void same_tally(const struct ctp_snap *a, const struct ctp_snap *b)
{
	const struct ctp_snap_readfail *ra = ctp_snap_readfail(a);
	const struct ctp_snap_readfail *rb = ctp_snap_readfail(b);
	assert_int_equal(ra->tids_walked, rb->tids_walked);
	assert_int_equal(ra->tids_recorded, rb->tids_recorded);
	assert_int_equal(ra->tids_vanished, rb->tids_vanished);
	assert_int_equal(ra->tgids_walked, rb->tgids_walked);
	assert_int_equal(ra->tgids_vanished, rb->tgids_vanished);
	for (size_t i = 0; i < ra->n_files; i++) {
		size_t k = 0;
		while (k < rb->n_files && strcmp(rb->file[k], ra->file[i]) != 0)
			k++;
		uint64_t fb = k < rb->n_files ? rb->failures[k] : 0;
		if (ra->failures[i] != fb)
			fail_msg("file %s: %" PRIu64 " and %" PRIu64
				 " failures",
				 ra->file[i], ra->failures[i], fb);
	}
}

/* b walked from the list of walk source src (every thread row its own
 * entry), a listed the proc root after its walk() failed; each thread
 * callback got a directory exactly when `dirs`. */
static void check_walks_of(const char *src, const struct ctp_snap *a,
			   const struct ctp_snap *b, bool dirs)
{
	const struct ctp_snap_header *ha = ctp_snap_header(a);
	const struct ctp_snap_header *hb = ctp_snap_header(b);
	assert_null(ha->walk_source);
	assert_non_null(ha->walk_fallback);
	assert_non_null(hb->walk_source);
	assert_string_equal(hb->walk_source, src);
	assert_null(hb->walk_fallback);
	assert_int_equal(hb->walk_fallbacks, 0);
	const struct ctp_snap_table *tb = ctp_snap_table(b, CTP_SCOPE_THREAD);
	assert_true(tb->rows > 0);
	for (size_t r = 0; r < tb->rows; r++) {
		assert_int_equal(e2e_u64(b, fname(src, "walked_tid"), r),
				 tb->tid[r]);
		struct ctp_value v = e2e_value(b, fname(src, "thread_dir"), r);
		assert_int_equal(v.type, CTP_TYPE_BOOL);
		assert_int_equal(v.b, dirs);
	}
	/* The thread callback fails when task->walked is not the task's own
	 * entry. */
	const struct ctp_snap_plugin *p = ctp_snap_plugins(b);
	bool seen = false;
	for (size_t i = 0; i < ctp_snap_n_plugins(b); i++) {
		if (strcmp(p[i].name, src) != 0)
			continue;
		assert_int_equal(p[i].errors, 0);
		seen = true;
	}
	assert_true(seen);
	/* Every process's read time is the pass's, taken after the start. */
	const struct ctp_snap_table *pb = ctp_snap_table(b, CTP_SCOPE_PROCESS);
	assert_non_null(pb->read_ns);
	assert_true(pb->rows > 1);
	assert_true(pb->read_ns[0] >= hb->start_boottime_ns);
	for (size_t r = 1; r < pb->rows; r++)
		assert_int_equal(pb->read_ns[r], pb->read_ns[0]);
	same_table(a, b, CTP_SCOPE_THREAD);
	same_table(a, b, CTP_SCOPE_PROCESS);
	same_tally(a, b);
}

static void check_walks(const struct ctp_snap *a, const struct ctp_snap *b)
{
	check_walks_of("abi-walk", a, b, false);
}

/* The e2e fixture (vanished threads and processes, names that do not fit
 * a list's comm[16] and are read from the comm file, hybrid cgroup files,
 * a missing status), with schedstat fetching its lazy files. */
static void test_fixture_same(void **state)
{
	(void)state;
	struct ctp_snap *a = capture("proc-a", "proc", 1, 0, "mode: fail",
				     "  schedstat: {}\n");
	struct ctp_snap *b = capture("proc-b", "proc", 1, 0, "mode: ok",
				     "  schedstat: {}\n");
	check_walks(a, b);
	/* Thread 1207 has no stat nor comm: listed, but gone. */
	assert_true(ctp_snap_readfail(b)->tids_vanished >= 1);
	assert_int_equal(
		ctp_snap_row(ctp_snap_table(b, CTP_SCOPE_THREAD), 1204, 1207),
		-1);
	ctp_snap_free(a);
	ctp_snap_free(b);
}

/* A process the list names that the proc root does not have: vanished,
 * counted, no row. */
static void test_ghost_vanished(void **state)
{
	(void)state;
	struct ctp_snap *a = capture("ghost-a", "proc", 1, 0, "mode: fail", "");
	struct ctp_snap *b =
		capture("ghost-b", "proc", 1, 0, "mode: ok, ghost: 2000", "");
	const struct ctp_snap_readfail *ra = ctp_snap_readfail(a);
	const struct ctp_snap_readfail *rb = ctp_snap_readfail(b);
	assert_int_equal(rb->tgids_walked, ra->tgids_walked + 1);
	assert_int_equal(rb->tgids_vanished, ra->tgids_vanished + 1);
	assert_int_equal(
		ctp_snap_row(ctp_snap_table(b, CTP_SCOPE_PROCESS), 2000, 0),
		-1);
	same_table(a, b, CTP_SCOPE_THREAD);
	same_table(a, b, CTP_SCOPE_PROCESS);
	ctp_snap_free(a);
	ctp_snap_free(b);
}

/* The same with every thread's name read from its comm file
 * (CTP_WALK_COMM_FILE). */
static void test_comm_file_same(void **state)
{
	(void)state;
	struct ctp_snap *a = capture("comm-a", "proc", 1, 0, "mode: fail",
				     "  schedstat: {}\n");
	struct ctp_snap *b =
		capture("comm-b", "proc", 1, 0, "mode: ok, comm: file",
			"  schedstat: {}\n");
	check_walks(a, b);
	ctp_snap_free(a);
	ctp_snap_free(b);
}

/* Two workers, processes split every 2 threads: the split threads' list
 * entries are found (walked_tid) and the snapshot is the same. */
static void test_split_same(void **state)
{
	(void)state;
	struct ctp_snap *a = capture("split-a", "proc", 2, 2, "mode: fail", "");
	struct ctp_snap *b = capture("split-b", "proc", 2, 2, "mode: ok", "");
	check_walks(a, b);
	/* 985 has 7 threads: some of its rows came from another chunk. */
	assert_true(ctp_snap_table(b, CTP_SCOPE_THREAD)->rows >= 7);
	ctp_snap_free(a);
	ctp_snap_free(b);
}

/* A plugin that needs each thread's directory (abi-walk-dir, without
 * CTP_PLUGIN_NO_THREAD_DIR) gets it from a walk source's walk too, and the
 * lazy files are read from it. */
static void test_thread_dir_same(void **state)
{
	(void)state;
	struct ctp_snap *a = capture_with("abi-walk-dir", "dir-a", "proc", 1, 0,
					  "mode: fail", "");
	struct ctp_snap *b = capture_with("abi-walk-dir", "dir-b", "proc", 1, 0,
					  "mode: ok", "");
	check_walks_of("abi-walk-dir", a, b, true);
	ctp_snap_free(a);
	ctp_snap_free(b);
}

/* `show`'s header of a snapshot at tmp/tag.ctprof.zst into a buffer. */
static char *show_header(const char *tag)
{
	char snap[PATH_MAX], out[PATH_MAX];
	assert_true(E2E_PATHF(snap, "%s/%s.ctprof.zst", tmp, tag) >= 0);
	assert_true(E2E_PATHF(out, "%s/%s.show", tmp, tag) >= 0);
	const char *args[] = {"show", snap, "--summary", NULL};
	assert_int_equal(e2e_run(args, out, NULL), 0);
	char *text = NULL;
	size_t len = 0;
	assert_int_equal(e2e_read_file(out, &text, &len), 0);
	return text;
}

/* A failing walk() and unusable lists: the proc root is walked, the
 * snapshot says why and `show` prints it. */
static void test_fallback(void **state)
{
	(void)state;
	static const struct {
		const char *mode, *why;
	} cases[] = {
		{"fail", "walk source abi-walk: walk() failed: Operation not "
			 "permitted"},
		{"unsorted", "walk source abi-walk: its list is not sorted by "
			     "tgid then tid (tgid 1204 tid 1207 after tgid "
			     "3333 tid 3333)"},
		{"zero", "walk source abi-walk: its list names task 0 as tgid "
			 "1 tid 0"},
		{"empty", "walk source abi-walk: its list is empty"},
	};
	struct ctp_snap *ref = capture("ref", "proc", 1, 0, "mode: fail", "");
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char opts[64], tag[32], log[PATH_MAX], line[256];
		snprintf(opts, sizeof(opts), "mode: %s", cases[i].mode);
		snprintf(tag, sizeof(tag), "fb-%s", cases[i].mode);
		struct ctp_snap *s = capture(tag, "proc", 1, 0, opts, "");
		const struct ctp_snap_header *h = ctp_snap_header(s);
		assert_null(h->walk_source);
		assert_non_null(h->walk_fallback);
		assert_string_equal(h->walk_fallback, cases[i].why);
		assert_int_equal(h->walk_fallbacks, 1);
		/* The proc root's walk: no task has a list entry. */
		const struct ctp_snap_table *t =
			ctp_snap_table(s, CTP_SCOPE_THREAD);
		assert_int_equal(t->rows,
				 ctp_snap_table(ref, CTP_SCOPE_THREAD)->rows);
		for (size_t r = 0; r < t->rows; r++)
			assert_int_equal(e2e_u64(s, "abi-walk.walked_tid", r),
					 0);
		same_table(ref, s, CTP_SCOPE_THREAD);
		/* Logged, and shown. */
		assert_true(E2E_PATHF(log, "%s/%s.log", tmp, tag) >= 0);
		char *text = NULL;
		size_t len = 0;
		assert_int_equal(e2e_read_file(log, &text, &len), 0);
		if (!strstr(text, cases[i].why))
			fail_msg("%s: the log does not say why: %s", tag, text);
		free(text);
		text = show_header(tag);
		snprintf(line, sizeof(line),
			 "Walk:      %s/proc (%s; 1 captures so far)",
			 CTP_TEST_FIXTURES, cases[i].why);
		if (!e2e_has_line(text, line))
			fail_msg("show has no line \"%s\":\n%s", line, text);
		free(text);
		ctp_snap_free(s);
	}
	ctp_snap_free(ref);
}

/* `show` says which walk a capture took, and nothing on a snapshot of no
 * walk source (the reporting goldens stay). */
static void test_show_source(void **state)
{
	(void)state;
	struct ctp_snap *s = capture("shown", "proc", 1, 0, "mode: ok", "");
	char line[PATH_MAX + 96];
	/* The fixture's list lacks no process of its proc root: no count
	 * (test_complete_list has a list that lacks one). */
	assert_int_equal(ctp_snap_header(s)->walk_unlisted, 0);
	snprintf(line, sizeof(line), "Walk:      from walk source abi-walk");
	ctp_snap_free(s);
	char *text = show_header("shown");
	if (!e2e_has_line(text, line))
		fail_msg("show has no line \"%s\":\n%s", line, text);
	free(text);
}

/* The threads of process tgid in the thread table. */
static size_t threads_of(const struct ctp_snap *s, uint64_t tgid)
{
	const struct ctp_snap_table *t = ctp_snap_table(s, CTP_SCOPE_THREAD);
	size_t n = 0;
	for (size_t r = 0; r < t->rows; r++)
		n += t->tgid[r] == tgid;
	return n;
}

/*
 * A list that lacks a process the proc root has (985, five threads,
 * left out of the list: one the pass did not see). Without a word on
 * its completeness, or with walk() calling it not complete, the proc
 * root is listed too and 985 is walked from its files (no list entry),
 * counted in walk_unlisted: the snapshot is the proc root's. With walk()
 * calling it complete the list is walked alone: 985, which only a listing
 * of the proc root could find, is in no row, and nothing is unlisted.
 */
static void test_complete_list(void **state)
{
	(void)state;
	struct ctp_snap *ref = capture("cl-ref", "proc", 1, 0, "mode: fail",
				       "  schedstat: {}\n");
	size_t mine = threads_of(ref, 985);
	assert_true(mine >= 2);
	static const char *const partial[] = {"none", "no"};
	for (size_t i = 0; i < 2; i++) {
		char opts[64], tag[32];
		snprintf(opts, sizeof(opts), "omit: 985, complete: %s",
			 partial[i]);
		snprintf(tag, sizeof(tag), "cl-%s", partial[i]);
		struct ctp_snap *s =
			capture(tag, "proc", 1, 0, opts, "  schedstat: {}\n");
		const struct ctp_snap_header *h = ctp_snap_header(s);
		assert_string_equal(h->walk_source, "abi-walk");
		assert_int_equal(h->walk_unlisted, 1);
		const struct ctp_snap_table *t =
			ctp_snap_table(s, CTP_SCOPE_THREAD);
		assert_int_equal(threads_of(s, 985), mine);
		for (size_t r = 0; r < t->rows; r++)
			assert_int_equal(e2e_u64(s, "abi-walk.walked_tid", r),
					 t->tgid[r] == 985 ? 0 : t->tid[r]);
		same_table(ref, s, CTP_SCOPE_THREAD);
		same_table(ref, s, CTP_SCOPE_PROCESS);
		ctp_snap_free(s);
	}
	/* A source that counts what its list lacks and says none
	 * (CTP_WALK_MISSING(0), which is CTP_WALK_COMPLETE) is taken at its
	 * word too, without the other flag. */
	struct ctp_snap *m =
		capture("cl-counted", "proc", 1, 0,
			"omit: 985, complete: counted", "  schedstat: {}\n");
	assert_int_equal(ctp_snap_header(m)->walk_unlisted, 0);
	assert_int_equal(threads_of(m, 985), 0);
	ctp_snap_free(m);
	struct ctp_snap *c =
		capture("cl-yes", "proc", 1, 0, "omit: 985, complete: yes",
			"  schedstat: {}\n");
	const struct ctp_snap_header *h = ctp_snap_header(c);
	assert_string_equal(h->walk_source, "abi-walk");
	assert_null(h->walk_fallback);
	assert_int_equal(h->walk_unlisted, 0);
	assert_int_equal(threads_of(c, 985), 0);
	assert_int_equal(
		ctp_snap_row(ctp_snap_table(c, CTP_SCOPE_PROCESS), 985, 0), -1);
	assert_int_equal(ctp_snap_table(c, CTP_SCOPE_THREAD)->rows,
			 ctp_snap_table(ref, CTP_SCOPE_THREAD)->rows - mine);
	assert_int_equal(ctp_snap_table(c, CTP_SCOPE_PROCESS)->rows,
			 ctp_snap_table(ref, CTP_SCOPE_PROCESS)->rows - 1);
	ctp_snap_free(c);
	/* show names no processes from the proc root it did not list, and
	 * the one the proc root's listing added where it listed it. */
	char *text = show_header("cl-yes");
	if (!e2e_has_line(text, "Walk:      from walk source abi-walk"))
		fail_msg("show has no plain walk line:\n%s", text);
	free(text);
	char line[PATH_MAX + 96];
	snprintf(line, sizeof(line),
		 "Walk:      from walk source abi-walk (1 more processes "
		 "from %s/proc)",
		 CTP_TEST_FIXTURES);
	text = show_header("cl-no");
	if (!e2e_has_line(text, line))
		fail_msg("show has no line \"%s\":\n%s", line, text);
	free(text);
	/* A complete list that lacks nothing: the proc root's snapshot. */
	c = capture("cl-all", "proc", 1, 0, "complete: yes",
		    "  schedstat: {}\n");
	assert_int_equal(ctp_snap_header(c)->walk_unlisted, 0);
	check_walks(ref, c);
	ctp_snap_free(c);
	ctp_snap_free(ref);
}

/* Each recorded snapshot's unlisted processes and 985's threads. */
struct missing_seen {
	uint64_t unlisted[4];
	size_t threads[4];
	size_t k;
};

static size_t threads_of(const struct ctp_snap *s, uint64_t tgid);

static void note_missing(const struct ctp_snap *s, const char *path, void *arg)
{
	struct missing_seen *m = arg;
	(void)path;
	if (m->k < 4) {
		m->unlisted[m->k] = ctp_snap_header(s)->walk_unlisted;
		m->threads[m->k++] = threads_of(s, 985);
	}
}

/* Lines of text holding needle. */
static size_t lines_with(const char *text, const char *needle)
{
	size_t k = 0;
	for (const char *p = text; (p = strstr(p, needle)); p++)
		k++;
	return k;
}

/*
 * A list that lacks process 985 and whose walk() says how many tasks it
 * lacks (CTP_SOURCE_WALK_SAYS_MISSING), over a recording of three
 * captures: the first lists the proc root and walks 985 from its files;
 * while 985's task directory holds as many tasks as walk() says are
 * missing, the later ones walk it again without listing the proc root
 * (the debug log says which); with one more or one less said missing,
 * every capture lists it. 985 is in every snapshot either way.
 */
static void test_missing_list(void **state)
{
	(void)state;
	char root[PATH_MAX], task[PATH_MAX];
	assert_true(E2E_PATHF(root, "%s/proc", CTP_TEST_FIXTURES) >= 0);
	assert_true(E2E_PATHF(task, "%s/985/task", root) >= 0);
	size_t want = 0;
	DIR *d = opendir(task);
	assert_non_null(d);
	for (struct dirent *e; (e = readdir(d));)
		want += e->d_name[0] >= '0' && e->d_name[0] <= '9';
	closedir(d);
	assert_true(want >= 2);
	struct ctp_snap *ref = capture("ml-ref", "proc", 1, 0, "mode: ok",
				       "  schedstat: {}\n");
	size_t mine = threads_of(ref, 985);
	ctp_snap_free(ref);
	const size_t said[] = {want, want + 1, want - 1};
	for (size_t i = 0; i < 3; i++) {
		char cfg[PATH_MAX], dir[PATH_MAX], log[PATH_MAX];
		assert_true(E2E_PATHF(cfg, "%s/ml%zu.yaml", tmp, i) >= 0);
		assert_true(E2E_PATHF(dir, "%s/ml%zu", tmp, i) >= 0);
		assert_true(E2E_PATHF(log, "%s/ml%zu.log", tmp, i) >= 0);
		char opts[64];
		snprintf(opts, sizeof(opts), "omit: 985, missing: %zu",
			 said[i]);
		write_cfg(cfg, "abi-walk", "proc", 1, 0, opts,
			  "  schedstat: {}\n");
		const char *args[] = {"record", "--config", cfg,  "-o",
				      dir,	"--count",  "3",  "--interval",
				      "100ms",	"-v",	    "-v", NULL};
		int rc = e2e_run_within(args, NULL, log, 120);
		char *text = NULL;
		size_t len = 0;
		assert_int_equal(e2e_read_file(log, &text, &len), 0);
		if (rc != 0)
			fail_msg("record exited with %d:\n%s", rc, text);
		struct missing_seen m = {0};
		char err[256];
		assert_int_equal(e2e_each_snapshot(dir, note_missing, &m, err,
						   sizeof(err)),
				 3);
		for (size_t c = 0; c < 3; c++) {
			assert_int_equal(m.unlisted[c], 1);
			assert_int_equal(m.threads[c], mine);
		}
		size_t listed = lines_with(text, "1 more processes under");
		size_t kept = lines_with(text, "the last listing found beside "
					       "it: ");
		if (i == 0 ? listed != 1 || kept != 2 : listed != 3 || kept)
			fail_msg("said %zu missing of %zu: %zu listings, %zu "
				 "without:\n%s",
				 said[i], want, listed, kept, text);
		free(text);
	}
}

/* Each recorded snapshot's walk_fallbacks, in order. */
struct seen {
	uint64_t n[3];
	size_t k;
};

static void note_fallbacks(const struct ctp_snap *s, const char *path,
			   void *arg)
{
	struct seen *seen = arg;
	(void)path;
	if (seen->k < 3)
		seen->n[seen->k++] = ctp_snap_header(s)->walk_fallbacks;
}

/* `record`: each capture that falls back is counted, the reason logged
 * once. */
static void test_record_counts(void **state)
{
	(void)state;
	char cfg[PATH_MAX], dir[PATH_MAX], log[PATH_MAX];
	assert_true(E2E_PATHF(cfg, "%s/rec.yaml", tmp) >= 0);
	assert_true(E2E_PATHF(dir, "%s/rec", tmp) >= 0);
	assert_true(E2E_PATHF(log, "%s/rec.log", tmp) >= 0);
	write_cfg(cfg, "abi-walk", "proc", 1, 0, "mode: fail", "");
	const char *args[] = {"record", "--config", cfg, "-o",
			      dir,	"--count",  "3", "--interval",
			      "100ms",	NULL};
	int rc = e2e_run_within(args, NULL, log, 120);
	if (rc != 0) {
		e2e_show_file("record's log", log);
		fail_msg("record exited with %d", rc);
	}
	struct seen seen = {{0}, 0};
	char err[256];
	assert_int_equal(
		e2e_each_snapshot(dir, note_fallbacks, &seen, err, sizeof(err)),
		3);
	assert_int_equal(seen.n[0], 1);
	assert_int_equal(seen.n[1], 2);
	assert_int_equal(seen.n[2], 3);
	char *text = NULL;
	size_t len = 0;
	assert_int_equal(e2e_read_file(log, &text, &len), 0);
	const char *p = strstr(text, "walk() failed");
	if (!p || strstr(p + 1, "walk() failed"))
		fail_msg("the reason is not logged once:\n%s", text);
	free(text);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fixture_same),
		cmocka_unit_test(test_comm_file_same),
		cmocka_unit_test(test_ghost_vanished),
		cmocka_unit_test(test_complete_list),
		cmocka_unit_test(test_missing_list),
		cmocka_unit_test(test_split_same),
		cmocka_unit_test(test_thread_dir_same),
		cmocka_unit_test(test_fallback),
		cmocka_unit_test(test_show_source),
		cmocka_unit_test(test_record_counts),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
