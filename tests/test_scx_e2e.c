/* SPDX-License-Identifier: MIT */
/*
 * The sched_ext plugin end to end: run the built ctprof-core and decode the
 * snapshot with core/snapshot/reader.c.
 *
 *   (no argument)  tests/fixtures/scx: a loaded scheduler (every host value
 *                  and every thread's ext_enabled), none loaded, damaged
 *                  sysfs files, a kernel without sched_ext (all absent, the
 *                  sched file never read), the same with schedstat enabled
 *                  (its sched bytes are shared: read once, values present),
 *                  the ext_enabled option both ways, and 4 workers.
 *   live           this kernel has no sched_ext: every sched_ext value is
 *                  absent and nothing is an error. Skips (77) when
 *                  /sys/kernel/sched_ext exists (a kernel with it).
 */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cmocka.h>

#include "e2e_util.h"
#include "reader.h"
#include "test_psi_run.h"

#define FIX	       CTP_TEST_FIXTURES "/scx"
#define FIX_PROC       FIX "/proc"
#define SKIP	       77
#define SCX_ONLY       "  sched_ext:\n    required: true"
#define WITH_SCHEDSTAT "  schedstat:\n    required: true\n" SCX_ONLY

static int nbad;
#define CHECK(cond, ...)                                                       \
	do {                                                                   \
		if (!(cond)) {                                                 \
			nbad++;                                                \
			print_error(__VA_ARGS__);                              \
			print_error("\n");                                     \
		}                                                              \
	} while (0)

/* ---- Expectations -------------------------------------------------------- */

enum {
	H_STATE,
	H_SWITCH_ALL,
	H_NR_REJECTED,
	H_HOTPLUG_SEQ,
	H_ENABLE_SEQ,
	H_OPS,
	N_HOST
};
static const char *const host_names[N_HOST] = {
	"sched_ext.state",	 "sched_ext.switch_all",
	"sched_ext.nr_rejected", "sched_ext.hotplug_seq",
	"sched_ext.enable_seq",	 "sched_ext.ops",
};

/* One host row: a string (NULL: absent) per string field, a number
 * (-1: absent) per other field. */
struct exp_host {
	const char *state;
	int switch_all;
	int64_t nr_rejected, hotplug_seq, enable_seq;
	const char *ops;
};

static const struct exp_host host_enabled = {
	"enabled", 1, 3,
	12,	   5, "lavd_1.0.12_g2b1c7e4_x86_64_unknown_linux_gnu"};
static const struct exp_host host_disabled = {"disabled", 0, 0, 12, 5, NULL};
static const struct exp_host host_broken = {NULL, -1, -1, -1, 7, NULL};
static const struct exp_host host_absent = {NULL, -1, -1, -1, -1, NULL};

static void check_host(const struct ctp_snap *s, const struct exp_host *e)
{
	const int64_t num[N_HOST] = {
		[H_SWITCH_ALL] = e->switch_all,
		[H_NR_REJECTED] = e->nr_rejected,
		[H_HOTPLUG_SEQ] = e->hotplug_seq,
		[H_ENABLE_SEQ] = e->enable_seq,
	};

	for (int i = 0; i < N_HOST; i++) {
		const struct ctp_snap_field *f =
			ctp_snap_field_find(s, host_names[i]);
		struct ctp_value v;

		CHECK(f && f->scope == CTP_SCOPE_HOST &&
			      !strcmp(f->plugin, "sched_ext"),
		      "field %s missing or misdescribed", host_names[i]);
		if (!f)
			continue;
		v = ctp_snap_get(s, f, 0);
		if (i == H_STATE || i == H_OPS) {
			const char *want = i == H_STATE ? e->state : e->ops;

			CHECK(f->type == CTP_TYPE_STRING, "%s type %u",
			      host_names[i], f->type);
			if (!want)
				CHECK(v.type == CTP_VALUE_ABSENT,
				      "%s should be absent", host_names[i]);
			else
				CHECK(v.type == CTP_TYPE_STRING &&
					      e2e_bytes_eq(v.str, want),
				      "%s: '%.*s', expected '%s'",
				      host_names[i], (int)v.str.len,
				      v.str.ptr ? v.str.ptr : "", want);
		} else if (num[i] < 0) {
			CHECK(v.type == CTP_VALUE_ABSENT,
			      "%s should be absent (type %u)", host_names[i],
			      v.type);
		} else if (i == H_SWITCH_ALL) {
			CHECK(v.type == CTP_TYPE_BOOL && v.b == (num[i] != 0),
			      "switch_all: type %u value %d", v.type, v.b);
		} else {
			CHECK(v.type == CTP_TYPE_U64 &&
				      v.u64 == (uint64_t)num[i],
			      "%s: type %u value %" PRIu64
			      ", expected %" PRId64,
			      host_names[i], v.type, v.u64, num[i]);
		}
	}
}

/* Threads in snapshot order and their ext_enabled (-1: absent) when the
 * sched files are read; tests/fixtures/scx/README says why. */
static const struct {
	uint32_t tgid, tid;
	int ext;
} exp_threads[] = {
	{10, 10, 1},  /* SCHED_EXT task */
	{10, 11, 0},  /* fair task */
	{20, 20, -1}, /* no ext.enabled line */
	{20, 21, -1}, /* no sched file */
	{30, 30, -1}, /* ext.enabled 2 */
	{30, 31, 0},  /* forged line in the header */
};
#define N_THREADS (sizeof(exp_threads) / sizeof(exp_threads[0]))

/* read: the sched files were read (else every value absent). */
static void check_threads(const struct ctp_snap *s, bool read)
{
	const struct ctp_snap_table *tt = ctp_snap_table(s, CTP_SCOPE_THREAD);
	const struct ctp_snap_field *f =
		ctp_snap_field_find(s, "sched_ext.ext_enabled");

	CHECK(f && f->scope == CTP_SCOPE_THREAD && f->type == CTP_TYPE_BOOL &&
		      f->kind == CTP_KIND_CATEGORICAL &&
		      f->rule == CTP_RULE_MODE,
	      "sched_ext.ext_enabled missing or misdescribed");
	/* The field moved here from schedstat. */
	CHECK(!ctp_snap_field_find(s, "schedstat.ext_enabled"),
	      "schedstat.ext_enabled still registered");
	assert_non_null(tt);
	CHECK(tt->rows == N_THREADS, "%zu thread rows", tt->rows);
	for (size_t r = 0; f && r < tt->rows && r < N_THREADS; r++) {
		struct ctp_value v = ctp_snap_get(s, f, r);
		int want = read ? exp_threads[r].ext : -1;

		CHECK(tt->tid[r] == exp_threads[r].tid,
		      "row %zu is tid %" PRIu64, r, tt->tid[r]);
		if (want < 0)
			CHECK(v.type == CTP_VALUE_ABSENT,
			      "tid %u: ext_enabled should be absent",
			      exp_threads[r].tid);
		else
			CHECK(v.type == CTP_TYPE_BOOL && v.b == (want == 1),
			      "tid %u: ext_enabled type %u value %d, "
			      "expected %d",
			      exp_threads[r].tid, v.type, v.b, want);
	}
}

static void check_plugin(const struct ctp_snap *s, uint64_t sysfs_parse,
			 uint64_t sched_parse)
{
	const struct ctp_snap_plugin *p = e2e_plugin(s, "sched_ext");

	CHECK(p->status == 1 && p->errors == 0 && p->vanished == 0,
	      "status %u errors %" PRIu64 " vanished %" PRIu64, p->status,
	      p->errors, p->vanished);
	CHECK(p->n_summary == 3, "%zu summary counters", p->n_summary);
	CHECK(run_summary(p, "sysfs_read_errors") == 0,
	      "sysfs_read_errors %" PRIu64,
	      run_summary(p, "sysfs_read_errors"));
	CHECK(run_summary(p, "sysfs_parse_errors") == sysfs_parse,
	      "sysfs_parse_errors %" PRIu64 ", expected %" PRIu64,
	      run_summary(p, "sysfs_parse_errors"), sysfs_parse);
	CHECK(run_summary(p, "sched_parse_errors") == sched_parse,
	      "sched_parse_errors %" PRIu64 ", expected %" PRIu64,
	      run_summary(p, "sched_parse_errors"), sched_parse);
}

static struct ctp_snap *capture(const char *sys, unsigned workers,
				const char *plugins)
{
	struct run_cfg c = {.proc = FIX_PROC,
			    .sys = sys,
			    .workers = workers,
			    .plugins = plugins};

	return run_capture(&c);
}

/* ---- Fixture ------------------------------------------------------------- */

static void fixture_enabled(void **state)
{
	struct ctp_snap *s = capture(FIX "/sys-enabled", 1, SCX_ONLY);

	(void)state;
	nbad = 0;
	CHECK(ctp_snap_n_fields(s) == 7, "%zu fields", ctp_snap_n_fields(s));
	check_host(s, &host_enabled);
	check_threads(s, true);
	check_plugin(s, 0, 1);
	/* tid 21 has no sched file; everything else was read once. */
	CHECK(run_tally(s, "sched") == 1, "sched failures %" PRIu64,
	      run_tally(s, "sched"));
	assert_int_equal(nbad, 0);
}

static void fixture_workers(void **state)
{
	struct ctp_snap *s = capture(FIX "/sys-enabled", 4, SCX_ONLY);

	(void)state;
	nbad = 0;
	check_host(s, &host_enabled);
	check_threads(s, true);
	check_plugin(s, 0, 1);
	assert_int_equal(nbad, 0);
}

static void fixture_disabled(void **state)
{
	struct ctp_snap *s = capture(FIX "/sys-disabled", 1, SCX_ONLY);

	(void)state;
	nbad = 0;
	check_host(s, &host_disabled);
	check_threads(s, true);
	check_plugin(s, 0, 1);
	assert_int_equal(nbad, 0);
}

static void fixture_broken(void **state)
{
	struct ctp_snap *s = capture(FIX "/sys-broken", 1, SCX_ONLY);

	(void)state;
	nbad = 0;
	check_host(s, &host_broken);
	check_plugin(s, 5, 1);
	assert_int_equal(nbad, 0);
}

/* No sched_ext: host absent as a whole, and no sched file is read for the
 * plugin's sake (none is tallied, not even tid 21's). */
static void fixture_none(void **state)
{
	struct ctp_snap *s = capture(FIX "/sys-none", 1, SCX_ONLY);

	(void)state;
	nbad = 0;
	check_host(s, &host_absent);
	check_threads(s, false);
	check_plugin(s, 0, 0);
	CHECK(run_tally(s, "sched") == 0, "sched read %" PRIu64 " times",
	      run_tally(s, "sched"));
	assert_int_equal(nbad, 0);
}

/*
 * With schedstat first in the list, its fetch of the sched file serves
 * sched_ext too: values present even without the directory, and the file
 * read (and its failure tallied) once per thread.
 */
static void fixture_shared(void **state)
{
	struct ctp_snap *s = capture(FIX "/sys-none", 1, WITH_SCHEDSTAT);
	const struct ctp_snap_field *mig =
		ctp_snap_field_find(s, "schedstat.nr_migrations");
	const struct ctp_snap_plugin *sp = e2e_plugin(s, "schedstat");

	(void)state;
	nbad = 0;
	check_host(s, &host_absent);
	check_threads(s, true);
	check_plugin(s, 0, 1);
	CHECK(run_tally(s, "sched") == 1, "sched failures %" PRIu64,
	      run_tally(s, "sched"));
	/* schedstat parsed the same bytes. */
	CHECK(mig && ctp_snap_get(s, mig, 0).type == CTP_TYPE_U64 &&
		      ctp_snap_get(s, mig, 0).u64 == 9,
	      "schedstat.nr_migrations of tid 10");
	CHECK(sp->errors == 0, "schedstat errors %" PRIu64, sp->errors);
	assert_int_equal(nbad, 0);
}

static void fixture_option(void **state)
{
	struct ctp_snap *s;

	(void)state;
	nbad = 0;
	/* true: read even without the directory. */
	s = capture(FIX "/sys-none", 1,
		    SCX_ONLY "\n    options: {ext_enabled: true}");
	check_host(s, &host_absent);
	check_threads(s, true);
	check_plugin(s, 0, 1);
	CHECK(run_tally(s, "sched") == 1, "sched failures %" PRIu64,
	      run_tally(s, "sched"));
	/* false: never read; the host values stay. */
	s = capture(FIX "/sys-enabled", 1,
		    SCX_ONLY "\n    options: {ext_enabled: false}");
	check_host(s, &host_enabled);
	check_threads(s, false);
	check_plugin(s, 0, 0);
	CHECK(run_tally(s, "sched") == 0, "sched read %" PRIu64 " times",
	      run_tally(s, "sched"));
	assert_int_equal(nbad, 0);
}

/* ---- Live ---------------------------------------------------------------- */

static void live(void **state)
{
	struct run_cfg c = {.workers = 2, .plugins = SCX_ONLY};
	const struct ctp_snap_table *tt;
	const struct ctp_snap_field *f;
	char path[64], *text = NULL;
	struct ctp_snap *s;
	size_t set = 0;

	(void)state;
	/* Independently: this kernel prints no ext.enabled line. */
	snprintf(path, sizeof(path), "/proc/self/task/%ld/sched",
		 (long)syscall(SYS_gettid));
	if (e2e_read_file(path, &text, NULL) == 0) {
		CHECK(!strstr(text, "\next.enabled "),
		      "%s has an ext.enabled line", path);
		free(text);
	}

	for (int pass = 0; pass < 2; pass++) {
		/* Second pass: fetch every sched file anyway. */
		if (pass)
			c.plugins =
				SCX_ONLY "\n    options: {ext_enabled: true}";
		s = run_capture(&c);
		nbad = 0;
		set = 0;
		check_host(s, &host_absent);
		check_plugin(s, 0, 0);
		f = ctp_snap_field_find(s, "sched_ext.ext_enabled");
		tt = ctp_snap_table(s, CTP_SCOPE_THREAD);
		assert_non_null(f);
		assert_non_null(tt);
		for (size_t r = 0; r < tt->rows; r++)
			set += ctp_snap_get(s, f, r).type != CTP_VALUE_ABSENT;
		CHECK(set == 0,
		      "pass %d: ext_enabled set for %zu of %zu threads", pass,
		      set, tt->rows);
		CHECK(tt->rows > 0, "no threads");
		if (!pass)
			CHECK(run_tally(s, "sched") == 0,
			      "sched read %" PRIu64 " times without sched_ext",
			      run_tally(s, "sched"));
		assert_int_equal(nbad, 0);
	}
}

/* ---- main --------------------------------------------------------------- */

static int group_setup(void **state)
{
	(void)state;
	return run_setup("e2e-scx");
}

static int group_teardown(void **state)
{
	(void)state;
	return run_teardown();
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "fixture";
	struct stat sb;

	if (!strcmp(mode, "fixture")) {
		const struct CMUnitTest tests[] = {
			cmocka_unit_test_teardown(fixture_enabled,
						  run_free_snaps),
			cmocka_unit_test_teardown(fixture_workers,
						  run_free_snaps),
			cmocka_unit_test_teardown(fixture_disabled,
						  run_free_snaps),
			cmocka_unit_test_teardown(fixture_broken,
						  run_free_snaps),
			cmocka_unit_test_teardown(fixture_none, run_free_snaps),
			cmocka_unit_test_teardown(fixture_shared,
						  run_free_snaps),
			cmocka_unit_test_teardown(fixture_option,
						  run_free_snaps),
		};
		return cmocka_run_group_tests(tests, group_setup,
					      group_teardown);
	}
	if (!strcmp(mode, "live")) {
		const struct CMUnitTest tests[] = {
			cmocka_unit_test_teardown(live, run_free_snaps),
		};

		if (stat("/sys/kernel/sched_ext", &sb) == 0) {
			printf("SKIP: /sys/kernel/sched_ext exists: this "
			       "kernel has CONFIG_SCHED_CLASS_EXT, the live "
			       "check is for a kernel without it\n");
			return SKIP;
		}
		return cmocka_run_group_tests(tests, group_setup,
					      group_teardown);
	}
	fprintf(stderr, "usage: %s [live]\n", argv[0]);
	return 2;
}
