/* SPDX-License-Identifier: MIT */
/* Unit tests for the schedstat plugin's parsers
 * (plugins/schedstat/schedstat_parse.c) on literal kernel text. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "schedstat_parse.h"
#include "schedstat_text.h"

#define BIT(k)	 (1ull << (k))
#define ALL_KEYS (BIT(CTP_SCHED_N_KEYS) - 1)
#define ALL_SCHEDSTAT                                                          \
	(CTP_SCHEDSTAT_RUN | CTP_SCHEDSTAT_WAIT | CTP_SCHEDSTAT_TIMESLICES)
#define DASHES                                                                 \
	"-------------------------------------------------------------------"  \
	"\n"
#define HEADER "t (1, #threads: 1)\n" DASHES

static int sched(const char *s, struct ctp_sched *out)
{
	return ctp_parse_sched(s, strlen(s), out);
}

static int schedstat(const char *s, struct ctp_schedstat *out)
{
	return ctp_parse_schedstat(s, strlen(s), out);
}

/* One key's expected value; the keys not listed must be absent. */
struct kv {
	enum ctp_sched_key k;
	uint64_t v;
};

static void expect_keys(const struct ctp_sched *s, const struct kv *kv,
			size_t n)
{
	uint64_t want = 0;
	size_t i;

	for (i = 0; i < n; i++) {
		want |= BIT(kv[i].k);
		if (!ctp_sched_has(s, kv[i].k))
			fail_msg("%s absent", ctp_sched_key_name(kv[i].k));
		if (s->v[kv[i].k] != kv[i].v)
			fail_msg("%s = %llu, expected %llu",
				 ctp_sched_key_name(kv[i].k),
				 (unsigned long long)s->v[kv[i].k],
				 (unsigned long long)kv[i].v);
	}
	for (i = 0; i < CTP_SCHED_N_KEYS; i++)
		if ((s->present & BIT(i)) && !(want & BIT(i)))
			fail_msg("%s present (%llu), expected absent",
				 ctp_sched_key_name((enum ctp_sched_key)i),
				 (unsigned long long)s->v[i]);
}
#define EXPECT_KEYS(s, ...)                                                    \
	do {                                                                   \
		static const struct kv kv_[] = {__VA_ARGS__};                  \
		expect_keys(s, kv_, sizeof(kv_) / sizeof(kv_[0]));             \
	} while (0)

static void expect_header(const struct ctp_sched *s, const char *comm,
			  uint64_t pid, uint64_t threads)
{
	assert_true(s->header);
	assert_int_equal(s->comm_len, strlen(comm));
	assert_memory_equal(s->comm, comm, s->comm_len);
	assert_int_equal(s->pid, pid);
	assert_int_equal(s->nr_threads, threads);
}

/* Copy of `text` with the value of `key`'s line replaced by `value`, or the
 * line dropped when value is NULL. The key must be there once. */
static char *edit(const char *text, const char *key, const char *value)
{
	size_t klen = strlen(key), cap = strlen(text) + 256;
	char *out = malloc(cap), *o = out;
	const char *l, *nl;
	int found = 0;

	assert_non_null(out);
	for (l = text; *l; l = nl + 1) {
		nl = strchr(l, '\n');
		assert_non_null(nl);
		if (strncmp(l, key, klen) == 0 &&
		    (l[klen] == ' ' || l[klen] == ':')) {
			found++;
			if (value)
				o += sprintf(o, "%-45s:%s\n", key, value);
			continue;
		}
		memcpy(o, l, (size_t)(nl + 1 - l));
		o += nl + 1 - l;
	}
	*o = '\0';
	assert_int_equal(found, 1);
	return out;
}

/* ---- schedstat ---------------------------------------------------------- */

static void schedstat_host(void **state)
{
	struct ctp_schedstat ss;

	(void)state;
	assert_int_equal(schedstat(SCHEDSTAT_HOST, &ss), 0);
	assert_int_equal(ss.present, ALL_SCHEDSTAT);
	assert_int_equal(ss.run_ns, 116177358);
	assert_int_equal(ss.wait_ns, 12166374);
	assert_int_equal(ss.timeslices, 414);

	/* Zeros are values (a kernel with sched_info off prints these). */
	assert_int_equal(schedstat("0 0 0\n", &ss), 0);
	assert_int_equal(ss.present, ALL_SCHEDSTAT);
	assert_int_equal(ss.run_ns + ss.wait_ns + ss.timeslices, 0);

	assert_int_equal(schedstat("18446744073709551615 1 2\n", &ss), 0);
	assert_true(ss.run_ns == UINT64_MAX);
	/* A future fourth field is ignored. */
	assert_int_equal(schedstat("5 6 7 8\n", &ss), 0);
	assert_int_equal(ss.present, ALL_SCHEDSTAT);
	assert_int_equal(ss.timeslices, 7);
}

static void schedstat_hostile(void **state)
{
	static const struct {
		const char *text;
		int ret;
		uint32_t present;
		uint64_t run, wait, slices;
	} cases[] = {
		{"", -EMSGSIZE, 0, 0, 0, 0},
		{"\n", -EINVAL, 0, 0, 0, 0},
		{"1 2 3", -EMSGSIZE, CTP_SCHEDSTAT_RUN | CTP_SCHEDSTAT_WAIT, 1,
		 2, 0},
		{"1 2 ", -EMSGSIZE, CTP_SCHEDSTAT_RUN | CTP_SCHEDSTAT_WAIT, 1,
		 2, 0},
		{"1 2", -EMSGSIZE, CTP_SCHEDSTAT_RUN, 1, 0, 0},
		{"12", -EMSGSIZE, 0, 0, 0, 0},
		{"1 2\n", -EINVAL, CTP_SCHEDSTAT_RUN, 1, 0, 0},
		{"abc\n", -EINVAL, 0, 0, 0, 0},
		{"123 abc 5\n", -EINVAL, CTP_SCHEDSTAT_RUN, 123, 0, 0},
		{"1 2 3x\n", -EINVAL, CTP_SCHEDSTAT_RUN | CTP_SCHEDSTAT_WAIT, 1,
		 2, 0},
		{"1x 2 3\n", -EINVAL, 0, 0, 0, 0},
		{"1  2 3\n", -EINVAL, CTP_SCHEDSTAT_RUN, 1, 0, 0},
		{"1\t2 3\n", -EINVAL, 0, 0, 0, 0},
		{"-1 2 3\n", -EINVAL, 0, 0, 0, 0},
		{" 1 2 3\n", -EINVAL, 0, 0, 0, 0},
		{"18446744073709551616 5 6\n", -ERANGE,
		 CTP_SCHEDSTAT_WAIT | CTP_SCHEDSTAT_TIMESLICES, 0, 5, 6},
		{"1 99999999999999999999999 3\n", -ERANGE,
		 CTP_SCHEDSTAT_RUN | CTP_SCHEDSTAT_TIMESLICES, 1, 0, 3},
	};
	struct ctp_schedstat ss;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int r = schedstat(cases[i].text, &ss);

		if (r != cases[i].ret || ss.present != cases[i].present ||
		    ss.run_ns != cases[i].run || ss.wait_ns != cases[i].wait ||
		    ss.timeslices != cases[i].slices)
			fail_msg("'%s': ret %d present %#x (%llu %llu %llu)",
				 cases[i].text, r, ss.present,
				 (unsigned long long)ss.run_ns,
				 (unsigned long long)ss.wait_ns,
				 (unsigned long long)ss.timeslices);
	}
}

/* A cut can only make values absent, never wrong. */
static void schedstat_every_prefix(void **state)
{
	static const char text[] = "15302448102 2210612345 61874\n";
	struct ctp_schedstat full, ss;
	size_t n;

	(void)state;
	assert_int_equal(schedstat(text, &full), 0);
	for (n = 0; n < sizeof(text) - 1; n++) {
		char *cut = malloc(n ? n : 1);

		assert_non_null(cut);
		memcpy(cut, text, n);
		assert_int_equal(ctp_parse_schedstat(cut, n, &ss), -EMSGSIZE);
		free(cut);
		assert_int_equal(ss.present & ~full.present, 0);
		if (ss.present & CTP_SCHEDSTAT_RUN)
			assert_true(ss.run_ns == full.run_ns);
		if (ss.present & CTP_SCHEDSTAT_WAIT)
			assert_true(ss.wait_ns == full.wait_ns);
		assert_false(ss.present & CTP_SCHEDSTAT_TIMESLICES);
	}
}

/* ---- sched: whole files ------------------------------------------------- */

static void sched_full(void **state)
{
	struct ctp_sched s;
	uint64_t v = 0;

	(void)state;
	assert_int_equal(sched(SCHED_FULL, &s), 0);
	expect_header(&s, "db-server", 100, 3);
	assert_int_equal(s.negative, 0);
	assert_int_equal(s.present, ALL_KEYS);
	EXPECT_KEYS(
		&s, {CTP_SCHED_NR_WAKEUPS, 60791},
		{CTP_SCHED_NR_WAKEUPS_LOCAL, 41022},
		{CTP_SCHED_NR_WAKEUPS_REMOTE, 19769},
		{CTP_SCHED_NR_WAKEUPS_SYNC, 2210},
		{CTP_SCHED_NR_WAKEUPS_MIGRATE, 390},
		{CTP_SCHED_NR_WAKEUPS_AFFINE, 803},
		{CTP_SCHED_NR_WAKEUPS_AFFINE_ATTEMPTS, 5120},
		{CTP_SCHED_NR_MIGRATIONS, 412},
		{CTP_SCHED_NR_FORCED_MIGRATIONS, 7},
		{CTP_SCHED_NR_FAILED_MIGRATIONS_AFFINE, 3},
		{CTP_SCHED_NR_FAILED_MIGRATIONS_RUNNING, 118},
		{CTP_SCHED_NR_FAILED_MIGRATIONS_HOT, 45},
		{CTP_SCHED_WAIT_SUM, 2210540012ull},
		{CTP_SCHED_WAIT_COUNT, 61204}, {CTP_SCHED_WAIT_MAX, 17998004},
		{CTP_SCHED_SLEEP_MAX, 600012233001ull},
		{CTP_SCHED_SUM_SLEEP_RUNTIME, 4391822019275ull},
		{CTP_SCHED_SUM_BLOCK_RUNTIME, 20533871007ull},
		{CTP_SCHED_BLOCK_MAX, 103004560},
		{CTP_SCHED_IOWAIT_SUM, 8830000017ull},
		{CTP_SCHED_IOWAIT_COUNT, 1270}, {CTP_SCHED_EXEC_MAX, 4000812},
		{CTP_SCHED_SLICE_MAX, 11250331},
		{CTP_SCHED_CORE_FORCEIDLE_SUM, 1500250},
		{CTP_SCHED_SLICE, 2800000}, {CTP_SCHED_EXT_ENABLED, 0});
	assert_int_equal(ctp_sched_voluntary_sleep(&s, &v), 0);
	assert_true(v == 4391822019275ull - 20533871007ull);
}

static void sched_ext_task(void **state)
{
	struct ctp_sched s;
	uint64_t v = 1;

	(void)state;
	assert_int_equal(sched(SCHED_EXT_TASK, &s), 0);
	/* The header's comm holds " (" and ")". */
	expect_header(&s, "my (x) t)", 101, 3);
	/* Zeros are values; no CONFIG_SCHED_CORE, so no forceidle line. */
	EXPECT_KEYS(&s, {CTP_SCHED_NR_WAKEUPS, 130},
		    {CTP_SCHED_NR_WAKEUPS_LOCAL, 100},
		    {CTP_SCHED_NR_WAKEUPS_REMOTE, 30},
		    {CTP_SCHED_NR_WAKEUPS_SYNC, 0},
		    {CTP_SCHED_NR_WAKEUPS_MIGRATE, 4},
		    {CTP_SCHED_NR_WAKEUPS_AFFINE, 0},
		    {CTP_SCHED_NR_WAKEUPS_AFFINE_ATTEMPTS, 0},
		    {CTP_SCHED_NR_MIGRATIONS, 9},
		    {CTP_SCHED_NR_FORCED_MIGRATIONS, 0},
		    {CTP_SCHED_NR_FAILED_MIGRATIONS_AFFINE, 0},
		    {CTP_SCHED_NR_FAILED_MIGRATIONS_RUNNING, 0},
		    {CTP_SCHED_NR_FAILED_MIGRATIONS_HOT, 0},
		    {CTP_SCHED_WAIT_SUM, 0}, {CTP_SCHED_WAIT_COUNT, 0},
		    {CTP_SCHED_WAIT_MAX, 0}, {CTP_SCHED_SLEEP_MAX, 1000000000},
		    {CTP_SCHED_SUM_SLEEP_RUNTIME, 66000000000ull},
		    {CTP_SCHED_SUM_BLOCK_RUNTIME, 0}, {CTP_SCHED_BLOCK_MAX, 0},
		    {CTP_SCHED_IOWAIT_SUM, 0}, {CTP_SCHED_IOWAIT_COUNT, 0},
		    {CTP_SCHED_EXEC_MAX, 3999999}, {CTP_SCHED_SLICE_MAX, 0},
		    {CTP_SCHED_SLICE, 3000000}, {CTP_SCHED_EXT_ENABLED, 1});
	assert_int_equal(ctp_sched_voluntary_sleep(&s, &v), 0);
	assert_true(v == 66000000000ull);
}

static void sched_deadline(void **state)
{
	struct ctp_sched s;
	uint64_t v = 1;

	(void)state;
	assert_int_equal(sched(SCHED_DL_TASK, &s), 0);
	expect_header(&s, "dl-worker", 102, 3);
	/* No se.slice for a deadline task; sub-millisecond values. */
	EXPECT_KEYS(
		&s, {CTP_SCHED_NR_WAKEUPS, 2}, {CTP_SCHED_NR_WAKEUPS_LOCAL, 1},
		{CTP_SCHED_NR_WAKEUPS_REMOTE, 1},
		{CTP_SCHED_NR_WAKEUPS_SYNC, 0},
		{CTP_SCHED_NR_WAKEUPS_MIGRATE, 1},
		{CTP_SCHED_NR_WAKEUPS_AFFINE, 0},
		{CTP_SCHED_NR_WAKEUPS_AFFINE_ATTEMPTS, 0},
		{CTP_SCHED_NR_MIGRATIONS, 1},
		{CTP_SCHED_NR_FORCED_MIGRATIONS, 0},
		{CTP_SCHED_NR_FAILED_MIGRATIONS_AFFINE, 0},
		{CTP_SCHED_NR_FAILED_MIGRATIONS_RUNNING, 0},
		{CTP_SCHED_NR_FAILED_MIGRATIONS_HOT, 0},
		{CTP_SCHED_WAIT_SUM, 345}, {CTP_SCHED_WAIT_COUNT, 3},
		{CTP_SCHED_WAIT_MAX, 12}, {CTP_SCHED_SLEEP_MAX, 500000},
		{CTP_SCHED_SUM_SLEEP_RUNTIME, 1000000},
		{CTP_SCHED_SUM_BLOCK_RUNTIME, 1000000},
		{CTP_SCHED_BLOCK_MAX, 500000}, {CTP_SCHED_IOWAIT_SUM, 1000000},
		{CTP_SCHED_IOWAIT_COUNT, 2}, {CTP_SCHED_EXEC_MAX, 999},
		{CTP_SCHED_SLICE_MAX, 0}, {CTP_SCHED_CORE_FORCEIDLE_SUM, 0},
		{CTP_SCHED_EXT_ENABLED, 0});
	assert_int_equal(ctp_sched_voluntary_sleep(&s, &v), 0);
	assert_true(v == 0);
}

static void sched_old_kernel(void **state)
{
	struct ctp_sched s;
	uint64_t v = 7;

	(void)state;
	/* se.statistics. prefixes; no sum_block_runtime, se.slice, ext. */
	assert_int_equal(sched(SCHED_OLD, &s), 0);
	expect_header(&s, "legacy", 200, 2);
	EXPECT_KEYS(&s, {CTP_SCHED_NR_WAKEUPS, 600},
		    {CTP_SCHED_NR_WAKEUPS_LOCAL, 500},
		    {CTP_SCHED_NR_WAKEUPS_REMOTE, 100},
		    {CTP_SCHED_NR_WAKEUPS_SYNC, 5},
		    {CTP_SCHED_NR_WAKEUPS_MIGRATE, 6},
		    {CTP_SCHED_NR_WAKEUPS_AFFINE, 7},
		    {CTP_SCHED_NR_WAKEUPS_AFFINE_ATTEMPTS, 8},
		    {CTP_SCHED_NR_MIGRATIONS, 77},
		    {CTP_SCHED_NR_FORCED_MIGRATIONS, 4},
		    {CTP_SCHED_NR_FAILED_MIGRATIONS_AFFINE, 1},
		    {CTP_SCHED_NR_FAILED_MIGRATIONS_RUNNING, 2},
		    {CTP_SCHED_NR_FAILED_MIGRATIONS_HOT, 3},
		    {CTP_SCHED_WAIT_SUM, 6000004}, {CTP_SCHED_WAIT_COUNT, 700},
		    {CTP_SCHED_WAIT_MAX, 5000003},
		    {CTP_SCHED_SLEEP_MAX, 30000000001ull},
		    {CTP_SCHED_SUM_SLEEP_RUNTIME, 500600700800ull},
		    {CTP_SCHED_BLOCK_MAX, 2000000},
		    {CTP_SCHED_IOWAIT_SUM, 8000005},
		    {CTP_SCHED_IOWAIT_COUNT, 90}, {CTP_SCHED_EXEC_MAX, 3000001},
		    {CTP_SCHED_SLICE_MAX, 4000002});
	assert_int_equal(ctp_sched_voluntary_sleep(&s, &v), -ENODATA);
	assert_int_equal(v, 7);

	assert_int_equal(sched(SCHED_STATS_PREFIX, &s), 0);
	expect_header(&s, "stats-prefix", 201, 2);
	EXPECT_KEYS(
		&s, {CTP_SCHED_NR_WAKEUPS, 10}, {CTP_SCHED_NR_WAKEUPS_LOCAL, 8},
		{CTP_SCHED_NR_WAKEUPS_REMOTE, 2},
		{CTP_SCHED_NR_WAKEUPS_SYNC, 1},
		{CTP_SCHED_NR_WAKEUPS_MIGRATE, 2},
		{CTP_SCHED_NR_WAKEUPS_AFFINE, 1},
		{CTP_SCHED_NR_WAKEUPS_AFFINE_ATTEMPTS, 3},
		{CTP_SCHED_NR_MIGRATIONS, 2},
		{CTP_SCHED_NR_FORCED_MIGRATIONS, 0},
		{CTP_SCHED_NR_FAILED_MIGRATIONS_AFFINE, 0},
		{CTP_SCHED_NR_FAILED_MIGRATIONS_RUNNING, 0},
		{CTP_SCHED_NR_FAILED_MIGRATIONS_HOT, 0},
		{CTP_SCHED_WAIT_SUM, 900000}, {CTP_SCHED_WAIT_COUNT, 4},
		{CTP_SCHED_WAIT_MAX, 500000}, {CTP_SCHED_SLEEP_MAX, 7000000},
		{CTP_SCHED_SUM_SLEEP_RUNTIME, 10000000},
		{CTP_SCHED_SUM_BLOCK_RUNTIME, 4000000},
		{CTP_SCHED_BLOCK_MAX, 3000000}, {CTP_SCHED_IOWAIT_SUM, 0},
		{CTP_SCHED_IOWAIT_COUNT, 0}, {CTP_SCHED_EXEC_MAX, 1000000},
		{CTP_SCHED_SLICE_MAX, 2000000});
	assert_int_equal(ctp_sched_voluntary_sleep(&s, &v), 0);
	assert_int_equal(v, 6000000);
}

/* This host: CONFIG_SCHEDSTATS off, so only se.nr_migrations and se.slice;
 * se.sum_exec_runtime, nr_switches and the rest are not ours. */
static void sched_host_partial(void **state)
{
	struct ctp_sched s;
	uint64_t v = 7;

	(void)state;
	assert_int_equal(sched(SCHED_HOST, &s), 0);
	expect_header(&s, "process_api", 1, 13);
	EXPECT_KEYS(&s, {CTP_SCHED_NR_MIGRATIONS, 54},
		    {CTP_SCHED_SLICE, 1400000});
	assert_int_equal(s.negative, 0);
	assert_int_equal(ctp_sched_voluntary_sleep(&s, &v), -ENODATA);
	assert_int_equal(v, 7);

	assert_int_equal(sched(SCHED_HOST_CAT, &s), 0);
	assert_true(s.header);
	assert_int_equal(s.comm_len, 3);
	assert_memory_equal(s.comm, "cat", 3);
	EXPECT_KEYS(&s, {CTP_SCHED_NR_MIGRATIONS, 1},
		    {CTP_SCHED_SLICE, 1400000});
}

/* ---- sched: keys -------------------------------------------------------- */

static void sched_ignored_keys(void **state)
{
	static const char text[] =
		HEADER "se.sum_exec_runtime                          :    "
		       "       116.177358\n"
		       "nr_switches                                  :    "
		       "              414\n"
		       "nr_voluntary_switches                        :    "
		       "              358\n"
		       "nr_involuntary_switches                      :    "
		       "               56\n"
		       "nr_migrations_cold                           :    "
		       "                3\n"
		       "se.statistics.nr_wakeups_passive             :    "
		       "                4\n"
		       "nr_wakeups_idle                              :    "
		       "                5\n"
		       "avg_atom                                     :    "
		       "         0.247320\n"
		       "se.avg.util_est                              :    "
		       "               58\n"
		       "se.load.weight                               :    "
		       "          1048576\n"
		       "nr_wakeup                                    :    "
		       "                6\n"
		       "nr_wakeups_localx                            :    "
		       "                7\n"
		       "xnr_wakeups                                  :    "
		       "                8\n"
		       "se.se.nr_wakeups                             :    "
		       "                9\n"
		       "stats.se.wait_sum                            :    "
		       "         1.000000\n"
		       "slice_max_                                   :    "
		       "         1.000000\n"
		       "ext.enabledx                                 :    "
		       "                1\n"
		       "dl.runtime                                   :    "
		       "         10000000\n"
		       "clock-delta                                  :    "
		       "               91\n"
		       "current_node=0, numa_group_id=0\n"
		       "numa_faults node=0 task_private=0 task_shared=0\n"
		       ":                   12\n"
		       "\n"
		       "se.                                          :    "
		       "               10\n";
	struct ctp_sched s;

	(void)state;
	assert_int_equal(sched(text, &s), 0);
	assert_true(s.present == 0);
	assert_int_equal(s.negative, 0);
}

static void sched_prefixes(void **state)
{
	static const char *const prefixes[] = {"", "se.", "stats.",
					       "se.statistics."};
	char text[512];
	struct ctp_sched s;
	size_t i;

	(void)state;
	for (i = 0; i < 4; i++) {
		snprintf(text, sizeof(text),
			 HEADER "%sexec_max : 4.000812\n"
				"%snr_wakeups : 5\n"
				"%sslice : 1400000\n",
			 prefixes[i], prefixes[i], prefixes[i]);
		assert_int_equal(sched(text, &s), 0);
		EXPECT_KEYS(&s, {CTP_SCHED_EXEC_MAX, 4000812},
			    {CTP_SCHED_NR_WAKEUPS, 5},
			    {CTP_SCHED_SLICE, 1400000});
	}
	/* ext.enabled is the whole key, not a prefix. */
	assert_int_equal(sched(HEADER "ext.enabled : 1\n", &s), 0);
	EXPECT_KEYS(&s, {CTP_SCHED_EXT_ENABLED, 1});
}

/* One line's value for a key of each format. */
static void sched_values(void **state)
{
	static const struct {
		const char *key;
		const char *value;
		int ret;      /* of the parse */
		int present;  /* 1 when stored */
		uint64_t v;   /* the value stored */
		int negative; /* counted as negative */
	} cases[] = {
		/* PN: ms.frac -> ns */
		{"wait_sum", "0.000000", 0, 1, 0, 0},
		{"wait_sum", "0.000001", 0, 1, 1, 0},
		{"wait_sum", "1.000000", 0, 1, 1000000, 0},
		{"wait_sum", "     2210.540012", 0, 1, 2210540012ull, 0},
		{"wait_sum", "1.5", 0, 1, 1500000, 0},
		{"wait_sum", "1.05", 0, 1, 1050000, 0},
		{"wait_sum", "1.1234567", 0, 1, 1123456, 0},
		{"wait_sum", "1.123456999999999999999", 0, 1, 1123456, 0},
		{"wait_sum", "1.000000 ", 0, 1, 1000000, 0},
		{"wait_sum", "00012.000001", 0, 1, 12000001, 0},
		{"wait_sum", "18446744073709.551615", 0, 1, UINT64_MAX, 0},
		{"wait_sum", "18446744073709.5516159", 0, 1, UINT64_MAX, 0},
		{"wait_sum", "18446744073709.551616", -ERANGE, 0, 0, 0},
		{"wait_sum", "18446744073710.000000", -ERANGE, 0, 0, 0},
		{"wait_sum", "18446744073709552.000000", -ERANGE, 0, 0, 0},
		{"wait_sum", "99999999999999999999999.000000", -ERANGE, 0, 0,
		 0},
		{"wait_sum", "12", -EINVAL, 0, 0, 0},
		{"wait_sum", "12.", -EINVAL, 0, 0, 0},
		{"wait_sum", ".5", -EINVAL, 0, 0, 0},
		{"wait_sum", "1.5x", -EINVAL, 0, 0, 0},
		{"wait_sum", "1.5.3", -EINVAL, 0, 0, 0},
		{"wait_sum", "1 .5", -EINVAL, 0, 0, 0},
		{"wait_sum", "1. 5", -EINVAL, 0, 0, 0},
		{"wait_sum", "+1.000000", -EINVAL, 0, 0, 0},
		{"wait_sum", "--1.000000", -EINVAL, 0, 0, 0},
		{"wait_sum", "1,000000", -EINVAL, 0, 0, 0},
		{"wait_sum", "0x10.000000", -EINVAL, 0, 0, 0},
		{"wait_sum", "", -EINVAL, 0, 0, 0},
		{"wait_sum", "   ", -EINVAL, 0, 0, 0},
		{"wait_sum", "nan", -EINVAL, 0, 0, 0},
		/* A leading '-': absent and counted, not an error. */
		{"wait_sum", "-5.000000", 0, 0, 0, 1},
		{"wait_sum", "            -5.000000", 0, 0, 0, 1},
		{"wait_sum", "-0.000001", 0, 0, 0, 1},
		{"wait_sum", "-99999999999999999999999.000000", 0, 0, 0, 1},
		{"wait_sum", "-1.5x", -EINVAL, 0, 0, 0},
		{"wait_sum", "-", -EINVAL, 0, 0, 0},
		{"wait_sum", "-.5", -EINVAL, 0, 0, 0},
		/* P: plain integers */
		{"nr_wakeups", "0", 0, 1, 0, 0},
		{"nr_wakeups", "                60791", 0, 1, 60791, 0},
		{"nr_wakeups", "18446744073709551615", 0, 1, UINT64_MAX, 0},
		{"nr_wakeups", "18446744073709551616", -ERANGE, 0, 0, 0},
		{"nr_wakeups", "-1", -EINVAL, 0, 0, 0},
		{"nr_wakeups", "12x", -EINVAL, 0, 0, 0},
		{"nr_wakeups", "1.000000", -EINVAL, 0, 0, 0},
		{"nr_wakeups", "1 2", -EINVAL, 0, 0, 0},
		{"nr_wakeups", "", -EINVAL, 0, 0, 0},
		{"se.slice", "2800000", 0, 1, 2800000, 0},
		{"se.slice", "2.5", -EINVAL, 0, 0, 0},
		/* bool */
		{"ext.enabled", "0", 0, 1, 0, 0},
		{"ext.enabled", "                    1", 0, 1, 1, 0},
		{"ext.enabled", "2", -EINVAL, 0, 0, 0},
		{"ext.enabled", "-1", -EINVAL, 0, 0, 0},
		{"ext.enabled", "true", -EINVAL, 0, 0, 0},
	};
	char text[512];
	struct ctp_sched s;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int r;

		snprintf(text, sizeof(text), HEADER "%-45s:%s\n", cases[i].key,
			 cases[i].value);
		r = sched(text, &s);
		if (r != cases[i].ret ||
		    (s.present != 0) != (cases[i].present != 0) ||
		    (s.present && (s.present & (s.present - 1))) ||
		    (cases[i].present &&
		     s.v[__builtin_ctzll(s.present)] != cases[i].v) ||
		    s.negative != (uint32_t)cases[i].negative)
			fail_msg("%s '%s': ret %d present %#llx negative %u",
				 cases[i].key, cases[i].value, r,
				 (unsigned long long)s.present, s.negative);
	}
}

/* Every kept key, in each of its formats, lands in its own slot. */
static void sched_each_key(void **state)
{
	char text[512];
	struct ctp_sched s;
	int k;

	(void)state;
	for (k = 0; k < CTP_SCHED_N_KEYS; k++) {
		enum ctp_sched_key key = (enum ctp_sched_key)k;
		const char *name = ctp_sched_key_name(key);
		const char *val;
		uint64_t want;

		assert_non_null(name);
		switch (ctp_sched_key_fmt(key)) {
		case CTP_SCHED_FMT_NS:
			val = "7.000042";
			want = 7000042;
			break;
		case CTP_SCHED_FMT_INT:
			val = "4242";
			want = 4242;
			break;
		case CTP_SCHED_FMT_BOOL:
			val = "1";
			want = 1;
			break;
		default:
			fail_msg("key %s has no format", name);
			return;
		}
		snprintf(text, sizeof(text), HEADER "%s%-45s:%21s\n",
			 k == CTP_SCHED_EXT_ENABLED ? "" : "se.statistics.",
			 name, val);
		assert_int_equal(sched(text, &s), 0);
		assert_true(s.present == BIT(k));
		assert_true(s.v[k] == want);
	}
	assert_null(ctp_sched_key_name(CTP_SCHED_N_KEYS));
	assert_int_equal(ctp_sched_key_fmt(CTP_SCHED_WAIT_SUM),
			 CTP_SCHED_FMT_NS);
	assert_int_equal(ctp_sched_key_fmt(CTP_SCHED_WAIT_COUNT),
			 CTP_SCHED_FMT_INT);
	assert_int_equal(ctp_sched_key_fmt(CTP_SCHED_SLICE), CTP_SCHED_FMT_INT);
	assert_int_equal(ctp_sched_key_fmt(CTP_SCHED_EXT_ENABLED),
			 CTP_SCHED_FMT_BOOL);
}

/* ---- sched: hostile files ----------------------------------------------- */

static void sched_negative_dotted(void **state)
{
	char *a, *b, *c, *d;
	struct ctp_sched s;
	uint64_t v = 7;

	(void)state;
	a = edit(SCHED_FULL, "wait_sum", "            -5.000000");
	b = edit(a, "sleep_max", "            -1.250000");
	c = edit(b, "sum_block_runtime", "           -12.000000");
	/* Not a kept key: not counted. */
	d = edit(c, "wait_start", "            -7.000000");
	assert_int_equal(sched(d, &s), 0);
	assert_int_equal(s.negative, 3);
	assert_true(s.present ==
		    (ALL_KEYS &
		     ~(BIT(CTP_SCHED_WAIT_SUM) | BIT(CTP_SCHED_SLEEP_MAX) |
		       BIT(CTP_SCHED_SUM_BLOCK_RUNTIME))));
	assert_true(s.v[CTP_SCHED_WAIT_MAX] == 17998004);
	/* Half of voluntary sleep is gone: no value. */
	assert_int_equal(ctp_sched_voluntary_sleep(&s, &v), -ENODATA);
	assert_int_equal(v, 7);
	free(a);
	free(b);
	free(c);
	free(d);
}

static void sched_garbage_keeps_the_rest(void **state)
{
	static const struct {
		const char *key, *value;
		enum ctp_sched_key k;
		int ret;
	} bad[] = {
		{"nr_wakeups", "                 12x", CTP_SCHED_NR_WAKEUPS,
		 -EINVAL},
		{"wait_count", "                  abc", CTP_SCHED_WAIT_COUNT,
		 -EINVAL},
		{"exec_max", "             4.00a812", CTP_SCHED_EXEC_MAX,
		 -EINVAL},
		{"slice_max", "                   11", CTP_SCHED_SLICE_MAX,
		 -EINVAL},
		{"se.slice", "                  2.5", CTP_SCHED_SLICE, -EINVAL},
		{"ext.enabled", "                    2", CTP_SCHED_EXT_ENABLED,
		 -EINVAL},
		{"wait_max", "18446744073709552.000000", CTP_SCHED_WAIT_MAX,
		 -ERANGE},
		{"nr_wakeups_local", "18446744073709551616",
		 CTP_SCHED_NR_WAKEUPS_LOCAL, -ERANGE},
		{"iowait_sum", "99999999999999999999999.000000",
		 CTP_SCHED_IOWAIT_SUM, -ERANGE},
	};
	struct ctp_sched s, full;
	char *text = strdup(SCHED_FULL), *next;
	uint64_t want = ALL_KEYS;
	size_t i;

	(void)state;
	assert_non_null(text);
	assert_int_equal(sched(SCHED_FULL, &full), 0);
	/* One at a time: each is reported, alone. */
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char *one = edit(SCHED_FULL, bad[i].key, bad[i].value);

		assert_int_equal(sched(one, &s), bad[i].ret);
		assert_true(s.present == (ALL_KEYS & ~BIT(bad[i].k)));
		free(one);
	}
	/* All at once: the first problem is reported, every good value
	 * is kept as it was. */
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		next = edit(text, bad[i].key, bad[i].value);
		free(text);
		text = next;
		want &= ~BIT(bad[i].k);
	}
	/* exec_max comes first in the file. */
	assert_int_equal(sched(text, &s), -EINVAL);
	assert_true(s.present == want);
	for (i = 0; i < CTP_SCHED_N_KEYS; i++)
		if (want & BIT(i))
			assert_true(s.v[i] == full.v[i]);
	assert_int_equal(s.negative, 0);
	free(text);
}

static void sched_duplicate_key(void **state)
{
	struct ctp_sched s;

	(void)state;
	/* The first one counts, whatever its prefix. */
	assert_int_equal(sched(HEADER "se.statistics.wait_sum : 1.000000\n"
				      "wait_sum : 2.000000\n"
				      "nr_wakeups : 3\n",
			       &s),
			 -EINVAL);
	EXPECT_KEYS(&s, {CTP_SCHED_WAIT_SUM, 1000000},
		    {CTP_SCHED_NR_WAKEUPS, 3});
	/* Even when the first one was garbage. */
	assert_int_equal(sched(HEADER "wait_sum : x\n"
				      "wait_sum : 2.000000\n",
			       &s),
			 -EINVAL);
	assert_true(s.present == 0);
	/* And a negative first one. */
	assert_int_equal(sched(HEADER "wait_sum : -1.000000\n"
				      "wait_sum : 2.000000\n",
			       &s),
			 -EINVAL);
	assert_true(s.present == 0);
	assert_int_equal(s.negative, 1);
}

/* A cut anywhere can only make values absent, never wrong. */
static void sched_every_prefix(void **state)
{
	const size_t len = strlen(SCHED_FULL);
	struct ctp_sched full, s;
	size_t n, i;

	(void)state;
	assert_int_equal(sched(SCHED_FULL, &full), 0);
	for (n = 0; n < len; n++) {
		/* An exact-size copy without NUL, so a sanitizer build
		 * catches any read past the end. */
		char *cut = malloc(n ? n : 1);
		int r;

		assert_non_null(cut);
		memcpy(cut, SCHED_FULL, n);
		r = ctp_parse_sched(cut, n, &s);
		free(cut);

		assert_true((s.present & ~full.present) == 0);
		for (i = 0; i < CTP_SCHED_N_KEYS; i++)
			if (s.present & BIT(i))
				assert_true(s.v[i] == full.v[i]);
		if (n == 0 || SCHED_FULL[n - 1] != '\n')
			assert_true(r == -EMSGSIZE || r == -EINVAL);
		else if (r != 0)
			/* cut between lines: only the header can be wrong */
			assert_int_equal(r, -EINVAL);
	}
}

static void sched_truncated_mid_line(void **state)
{
	const char *p = strstr(SCHED_FULL, "nr_wakeups_affine_attempts");
	struct ctp_sched s;
	uint64_t v = 0;
	size_t n;

	(void)state;
	assert_non_null(p);
	/* "...attempts        :                 5120\n" cut after "51". */
	n = (size_t)(strchr(p, '\n') - SCHED_FULL) - 2;
	assert_int_equal(ctp_parse_sched(SCHED_FULL, n, &s), -EMSGSIZE);
	assert_false(ctp_sched_has(&s, CTP_SCHED_NR_WAKEUPS_AFFINE_ATTEMPTS));
	assert_false(ctp_sched_has(&s, CTP_SCHED_CORE_FORCEIDLE_SUM));
	assert_false(ctp_sched_has(&s, CTP_SCHED_SLICE));
	assert_false(ctp_sched_has(&s, CTP_SCHED_EXT_ENABLED));
	assert_true(s.v[CTP_SCHED_NR_WAKEUPS_AFFINE] == 803);
	assert_int_equal(ctp_sched_voluntary_sleep(&s, &v), 0);
	assert_true(v == 4391822019275ull - 20533871007ull);
	assert_true(s.present ==
		    (ALL_KEYS &
		     ~(BIT(CTP_SCHED_NR_WAKEUPS_AFFINE_ATTEMPTS) |
		       BIT(CTP_SCHED_CORE_FORCEIDLE_SUM) |
		       BIT(CTP_SCHED_SLICE) | BIT(CTP_SCHED_EXT_ENABLED))));
}

static void sched_missing_lines(void **state)
{
	char *a = edit(SCHED_FULL, "wait_sum", NULL);
	char *b = edit(a, "sum_sleep_runtime", NULL);
	struct ctp_sched s;
	uint64_t v = 7;

	(void)state;
	assert_int_equal(sched(b, &s), 0);
	assert_true(s.present ==
		    (ALL_KEYS & ~(BIT(CTP_SCHED_WAIT_SUM) |
				  BIT(CTP_SCHED_SUM_SLEEP_RUNTIME))));
	assert_int_equal(ctp_sched_voluntary_sleep(&s, &v), -ENODATA);
	assert_int_equal(v, 7);
	free(a);
	free(b);

	/* Nothing but the header: all absent, nothing wrong. */
	assert_int_equal(sched(HEADER, &s), 0);
	assert_true(s.present == 0);
	assert_true(s.header);
}

static void sched_no_header(void **state)
{
	const char *body = strstr(SCHED_FULL, DASHES);
	char text[8192];
	struct ctp_sched s;

	(void)state;
	assert_non_null(body);
	body += strlen(DASHES);
	/* No header at all: the lines are still keys, the file is wrong. */
	assert_int_equal(sched(body, &s), -EINVAL);
	assert_false(s.header);
	assert_true(s.present == ALL_KEYS);
	assert_true(s.v[CTP_SCHED_WAIT_SUM] == 2210540012ull);

	/* A header but no dashes: the header line holds a ':' but is no key
	 * we know. */
	snprintf(text, sizeof(text), "db-server (100, #threads: 3)\n%s", body);
	assert_int_equal(sched(text, &s), -EINVAL);
	assert_false(s.header);
	assert_true(s.present == ALL_KEYS);

	/* Fifteen dashes are not the separator. */
	snprintf(text, sizeof(text), "x (1, #threads: 1)\n---------------\n%s",
		 body);
	assert_int_equal(sched(text, &s), -EINVAL);
	assert_false(s.header);

	/* Dashes first: no header line before them. */
	snprintf(text, sizeof(text), DASHES "%s", body);
	assert_int_equal(sched(text, &s), -EINVAL);
	assert_false(s.header);
	assert_true(s.present == ALL_KEYS);

	assert_int_equal(sched("", &s), -EINVAL);
	assert_true(s.present == 0);
}

static void sched_header_comm(void **state)
{
	static const struct {
		const char *header;
		const char *comm;
		uint64_t pid, threads;
	} good[] = {
		{"a (1, #threads: 2) b) (4242, #threads: 7)",
		 "a (1, #threads: 2) b)", 4242, 7},
		{"my (weird) name) (1204, #threads: 4)", "my (weird) name)",
		 1204, 4},
		{" (5, #threads: 1)", "", 5, 1},
		{"( (0, #threads: 1)", "(", 0, 1},
		{"a:b : 3 (9, #threads: 1)", "a:b : 3", 9, 1},
		/* A comm with a newline and a fake key line: still header. */
		{"x\nwait_max : 1.000000 (5, #threads: 1)",
		 "x\nwait_max : 1.000000", 5, 1},
		{"\n--------------- (6, #threads: 1)", "\n---------------", 6,
		 1},
	};
	static const char *const bad[] = {
		"x (5, #threads: )",   "x (5 #threads: 1)",
		"x(5, #threads: 1)",   "x (5, #threads: 1) ",
		"x (, #threads: 1)",   "x (5, #threads: 1",
		"(5, #threads: 1)",    "x (5, #Threads: 1)",
		"x (-5, #threads: 1)", "",
	};
	char text[512];
	struct ctp_sched s;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		snprintf(text, sizeof(text),
			 "%s\n" DASHES "wait_sum : 2.000000\n", good[i].header);
		assert_int_equal(sched(text, &s), 0);
		expect_header(&s, good[i].comm, good[i].pid, good[i].threads);
		/* Only the line under the dashes is a key. */
		EXPECT_KEYS(&s, {CTP_SCHED_WAIT_SUM, 2000000});
	}
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		snprintf(text, sizeof(text),
			 "%s\n" DASHES "wait_sum : 2.000000\n", bad[i]);
		if (sched(text, &s) != -EINVAL || s.header)
			fail_msg("header '%s' accepted", bad[i]);
		EXPECT_KEYS(&s, {CTP_SCHED_WAIT_SUM, 2000000});
	}
}

static void sched_odd_bytes(void **state)
{
	static const char nul[] = HEADER "wait_sum\0 : 1.000000\n"
					 "nr_wakeups : 1\0\n"
					 "wait_count : 2\r\n"
					 "wait_max\t: 3.000000\n"
					 "exec_max : 4.000000\n";
	struct ctp_sched s;

	(void)state;
	/* A NUL ends no key; '\r' and a tab-padded key are not the kernel's
	 * layout: none of those values is taken. */
	assert_int_equal(ctp_parse_sched(nul, sizeof(nul) - 1, &s), -EINVAL);
	EXPECT_KEYS(&s, {CTP_SCHED_EXEC_MAX, 4000000});
}

static void voluntary_sleep(void **state)
{
	struct ctp_sched s;
	uint64_t v = 7;

	(void)state;
	memset(&s, 0, sizeof(s));
	assert_int_equal(ctp_sched_voluntary_sleep(&s, &v), -ENODATA);
	s.present = BIT(CTP_SCHED_SUM_SLEEP_RUNTIME);
	s.v[CTP_SCHED_SUM_SLEEP_RUNTIME] = 10;
	assert_int_equal(ctp_sched_voluntary_sleep(&s, &v), -ENODATA);
	s.present |= BIT(CTP_SCHED_SUM_BLOCK_RUNTIME);
	s.v[CTP_SCHED_SUM_BLOCK_RUNTIME] = 11;
	/* Block over sleep (a torn read): no value, never a negative. */
	assert_int_equal(ctp_sched_voluntary_sleep(&s, &v), -ERANGE);
	assert_int_equal(v, 7);
	s.v[CTP_SCHED_SUM_BLOCK_RUNTIME] = 10;
	assert_int_equal(ctp_sched_voluntary_sleep(&s, &v), 0);
	assert_int_equal(v, 0);
	s.v[CTP_SCHED_SUM_SLEEP_RUNTIME] = UINT64_MAX;
	s.v[CTP_SCHED_SUM_BLOCK_RUNTIME] = 1;
	assert_int_equal(ctp_sched_voluntary_sleep(&s, &v), 0);
	assert_true(v == UINT64_MAX - 1);
	s.present = BIT(CTP_SCHED_SUM_BLOCK_RUNTIME);
	assert_int_equal(ctp_sched_voluntary_sleep(&s, &v), -ENODATA);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(schedstat_host),
		cmocka_unit_test(schedstat_hostile),
		cmocka_unit_test(schedstat_every_prefix),
		cmocka_unit_test(sched_full),
		cmocka_unit_test(sched_ext_task),
		cmocka_unit_test(sched_deadline),
		cmocka_unit_test(sched_old_kernel),
		cmocka_unit_test(sched_host_partial),
		cmocka_unit_test(sched_ignored_keys),
		cmocka_unit_test(sched_prefixes),
		cmocka_unit_test(sched_values),
		cmocka_unit_test(sched_each_key),
		cmocka_unit_test(sched_negative_dotted),
		cmocka_unit_test(sched_garbage_keeps_the_rest),
		cmocka_unit_test(sched_duplicate_key),
		cmocka_unit_test(sched_every_prefix),
		cmocka_unit_test(sched_truncated_mid_line),
		cmocka_unit_test(sched_missing_lines),
		cmocka_unit_test(sched_no_header),
		cmocka_unit_test(sched_header_comm),
		cmocka_unit_test(sched_odd_bytes),
		cmocka_unit_test(voluntary_sleep),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
