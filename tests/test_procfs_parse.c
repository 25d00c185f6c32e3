/* SPDX-License-Identifier: MIT */
/* Unit tests for the procfs-stat parsers (plugins/procfs-stat/procfs_parse.c)
 * on literal kernel text. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "procfs_parse.h"
#include "procfs_text.h"

#define BIT(n) (1ull << (n))
/* The stat fields the code names; the parser keeps these and whatever
 * else the list (CTP_STAT_FIELDS) has. */
#define NAMED_STAT                                                             \
	(BIT(CTP_STAT_PID) | BIT(CTP_STAT_COMM) | BIT(CTP_STAT_STATE) |        \
	 BIT(CTP_STAT_MINFLT) | BIT(CTP_STAT_CMINFLT) | BIT(CTP_STAT_MAJFLT) | \
	 BIT(CTP_STAT_CMAJFLT) | BIT(CTP_STAT_UTIME) | BIT(CTP_STAT_STIME) |   \
	 BIT(CTP_STAT_CUTIME) | BIT(CTP_STAT_CSTIME) |                         \
	 BIT(CTP_STAT_PRIORITY) | BIT(CTP_STAT_NICE) |                         \
	 BIT(CTP_STAT_NUM_THREADS) | BIT(CTP_STAT_STARTTIME) |                 \
	 BIT(CTP_STAT_PROCESSOR) | BIT(CTP_STAT_RT_PRIORITY) |                 \
	 BIT(CTP_STAT_POLICY))
/* Every stat field the parser keeps. */
#define ALL_STAT (BIT(CTP_STAT_PID) | BIT(CTP_STAT_COMM) | CTP_STAT_KINDS_ALL)
_Static_assert((NAMED_STAT & ALL_STAT) == NAMED_STAT,
	       "a named stat field the list does not keep");
#define ALL_STATUS                                                             \
	(CTP_STATUS_STATE | CTP_STATUS_VOLUNTARY_CSW |                         \
	 CTP_STATUS_NONVOLUNTARY_CSW | CTP_STATUS_CPUS_ALLOWED_LIST)

static int parse(const char *s, struct ctp_stat *st)
{
	return ctp_parse_stat(s, strlen(s), st);
}

/*
 * Copy `line` with space-separated token n (1-based, comm without blanks
 * counts as one) replaced by `tok`.
 */
static const char *with_field(char *out, size_t cap, const char *line,
			      unsigned n, const char *tok)
{
	const char *p = line, *q;
	unsigned i;

	for (i = 1; i < n; i++) {
		p = strchr(p, ' ');
		assert_non_null(p);
		p++;
	}
	q = p + strcspn(p, " \n");
	assert_true(snprintf(out, cap, "%.*s%s%s", (int)(p - line), line, tok,
			     q) < (int)cap);
	return out;
}

static void expect_comm(const struct ctp_stat *st, const char *comm)
{
	assert_true(ctp_stat_has(st, CTP_STAT_COMM));
	assert_int_equal(st->comm_len, strlen(comm));
	assert_memory_equal(st->comm, comm, st->comm_len);
}

/* The values measured with awk on the literal lines of procfs_text.h. */
static void stat_self(void **state)
{
	struct ctp_stat st;

	(void)state;
	assert_int_equal(parse(STAT_SELF, &st), 0);
	assert_true(st.present == ALL_STAT);
	assert_int_equal(st.pid, 4424);
	expect_comm(&st, "cat");
	assert_int_equal(st.w[CTP_STAT_STATE].c, 'R');
	assert_int_equal(st.w[CTP_STAT_MINFLT].u, 116);
	assert_int_equal(st.w[CTP_STAT_MAJFLT].u, 0);
	assert_int_equal(st.w[CTP_STAT_UTIME].u, 0);
	assert_int_equal(st.w[CTP_STAT_STIME].u, 0);
	assert_int_equal(st.w[CTP_STAT_CMINFLT].u, 0);
	assert_int_equal(st.w[CTP_STAT_CMAJFLT].u, 0);
	assert_int_equal(st.w[CTP_STAT_CUTIME].u, 0);
	assert_int_equal(st.w[CTP_STAT_CSTIME].u, 0);
	assert_int_equal(st.w[CTP_STAT_PRIORITY].i, 20);
	assert_int_equal(st.w[CTP_STAT_NICE].i, 0);
	assert_int_equal(st.w[CTP_STAT_NUM_THREADS].u, 1);
	assert_int_equal(st.w[CTP_STAT_STARTTIME].u, 48017);
	assert_int_equal(st.w[CTP_STAT_PROCESSOR].i, 0);
	assert_int_equal(st.w[CTP_STAT_RT_PRIORITY].u, 0);
	assert_int_equal(st.w[CTP_STAT_POLICY].u, 0);
}

static void stat_pid1_and_thread(void **state)
{
	struct ctp_stat st;

	(void)state;
	assert_int_equal(parse(STAT_PID1, &st), 0);
	assert_true(st.present == ALL_STAT);
	assert_int_equal(st.pid, 1);
	expect_comm(&st, "process_api");
	assert_int_equal(st.w[CTP_STAT_STATE].c, 'S');
	assert_int_equal(st.w[CTP_STAT_MINFLT].u, 41298);
	assert_int_equal(st.w[CTP_STAT_MAJFLT].u, 0);
	assert_int_equal(st.w[CTP_STAT_UTIME].u, 41);
	assert_int_equal(st.w[CTP_STAT_STIME].u, 153);
	assert_int_equal(st.w[CTP_STAT_CMINFLT].u, 372013);
	assert_int_equal(st.w[CTP_STAT_CMAJFLT].u, 237);
	assert_int_equal(st.w[CTP_STAT_CUTIME].u, 1291);
	assert_int_equal(st.w[CTP_STAT_CSTIME].u, 306);
	assert_int_equal(st.w[CTP_STAT_NUM_THREADS].u, 13);
	assert_int_equal(st.w[CTP_STAT_STARTTIME].u, 12);

	/* exit_signal (38) is -1 here; unkept fields are not checked. */
	assert_int_equal(parse(STAT_T59, &st), 0);
	assert_true(st.present == ALL_STAT);
	expect_comm(&st, "vsock-console");
	assert_int_equal(st.w[CTP_STAT_MINFLT].u, 266);
	assert_int_equal(st.w[CTP_STAT_STIME].u, 2);
	assert_int_equal(st.w[CTP_STAT_STARTTIME].u, 29);
	assert_int_equal(st.w[CTP_STAT_PROCESSOR].i, 1);
}

static void stat_sched_classes(void **state)
{
	struct ctp_stat st;

	(void)state;
	assert_int_equal(parse(STAT_FIFO, &st), 0);
	assert_true(st.present == ALL_STAT);
	assert_int_equal(st.w[CTP_STAT_PRIORITY].i, -51);
	assert_int_equal(st.w[CTP_STAT_NICE].i, 0);
	assert_int_equal(st.w[CTP_STAT_MAJFLT].u, 1);
	assert_int_equal(st.w[CTP_STAT_PROCESSOR].i, 1);
	assert_int_equal(st.w[CTP_STAT_RT_PRIORITY].u, 50);
	assert_int_equal(st.w[CTP_STAT_POLICY].u, 1);

	assert_int_equal(parse(STAT_NICE, &st), 0);
	assert_int_equal(st.w[CTP_STAT_PRIORITY].i, 15);
	assert_int_equal(st.w[CTP_STAT_NICE].i, -5);
	assert_int_equal(st.w[CTP_STAT_POLICY].u, 0);

	assert_int_equal(parse(STAT_IDLE, &st), 0);
	assert_int_equal(st.w[CTP_STAT_POLICY].u, 5);
	assert_int_equal(parse(STAT_BATCH, &st), 0);
	assert_int_equal(st.w[CTP_STAT_POLICY].u, 3);
	assert_int_equal(parse(STAT_DEADLINE, &st), 0);
	assert_int_equal(st.w[CTP_STAT_PRIORITY].i, -101);
	assert_int_equal(st.w[CTP_STAT_POLICY].u, 6);
}

static void stat_comm_odd(void **state)
{
	char line[1024];
	struct ctp_stat st;

	(void)state;
	/* comm "(a) b (c))": spaces and parentheses, ends at the last ')'. */
	assert_int_equal(parse(with_field(line, sizeof(line), STAT_FIFO, 2,
					  "((a) b (c)))"),
			       &st),
			 0);
	assert_true(st.present == ALL_STAT);
	expect_comm(&st, "(a) b (c))");
	assert_int_equal(st.pid, 4491);
	assert_int_equal(st.w[CTP_STAT_STATE].c, 'R');
	assert_int_equal(st.w[CTP_STAT_PRIORITY].i, -51);
	assert_int_equal(st.w[CTP_STAT_RT_PRIORITY].u, 50);
	assert_int_equal(st.w[CTP_STAT_POLICY].u, 1);

	/* Empty comm. */
	assert_int_equal(
		parse(with_field(line, sizeof(line), STAT_SELF, 2, "()"), &st),
		0);
	assert_true(st.present == ALL_STAT);
	expect_comm(&st, "");
	assert_int_equal(st.w[CTP_STAT_MINFLT].u, 116);

	/* A comm that looks like the fields that follow. */
	assert_int_equal(parse(with_field(line, sizeof(line), STAT_SELF, 2,
					  "(x) R 1 2)"),
			       &st),
			 0);
	expect_comm(&st, "x) R 1 2");
	assert_int_equal(st.w[CTP_STAT_STARTTIME].u, 48017);

	/* A newline in comm (prctl allows it) does not end the line. */
	assert_int_equal(
		parse(with_field(line, sizeof(line), STAT_SELF, 2, "(a\nb)"),
		      &st),
		0);
	expect_comm(&st, "a\nb");
	assert_int_equal(st.w[CTP_STAT_POLICY].u, 0);
	assert_true(ctp_stat_has(&st, CTP_STAT_POLICY));
}

/* The list is the parser: every row with a stat source is parsed into the
 * member its source names (w[n] as its type), and nothing else is kept.
 * Word n of the line is a value of its own (n * 1000 + 7; negative for a
 * signed word, the state a letter). */
static void stat_list_is_the_parser(void **state)
{
	char line[2048];
	size_t len = (size_t)snprintf(line, sizeof(line), "4242 (a b) ");
	struct ctp_stat st;

	(void)state;
	for (unsigned n = 3; n <= 52; n++)
		len += (size_t)snprintf(line + len, sizeof(line) - len,
					CTP_STAT_KINDS_C >> n & 1   ? "%s%c"
					: CTP_STAT_KINDS_I >> n & 1 ? "%s-%u"
								    : "%s%u",
					n == 3 ? "" : " ",
					CTP_STAT_KINDS_C >> n & 1
						? 'A' + n % 26
						: n * 1000 + 7);
	len += (size_t)snprintf(line + len, sizeof(line) - len, "\n");
	assert_int_equal(ctp_parse_stat(line, len, &st), 0);
	assert_true(st.present == ALL_STAT);
	assert_int_equal(CTP_STAT_WORDS,
			 64 - __builtin_clzll(CTP_STAT_KINDS_ALL));
	for (size_t i = 0; i < CTP_STAT_N_FIELDS; i++) {
		const struct ctp_field_src *r = &ctp_stat_src[i];
		const char *at = (const char *)&st + r->off;
		uint64_t u;
		int64_t v;
		char c;

		if (!r->pos)
			continue;
		assert_true(ctp_stat_has(&st, r->pos));
		assert_true(r->off == offsetof(struct ctp_stat, w) +
					      r->pos * sizeof(union ctp_word));
		switch (r->type) {
		case CTP_TYPE_U64:
			memcpy(&u, at, sizeof(u));
			assert_int_equal(u, r->pos * 1000 + 7);
			break;
		case CTP_TYPE_I64:
			memcpy(&v, at, sizeof(v));
			assert_true(v == -(int64_t)(r->pos * 1000 + 7));
			break;
		default:
			assert_int_equal(r->type, CTP_TYPE_CHAR);
			memcpy(&c, at, 1);
			assert_int_equal(c, 'A' + r->pos % 26);
		}
	}
}

static void stat_no_paren(void **state)
{
	struct ctp_stat st;

	(void)state;
	assert_int_equal(parse("123 (abc S 1 2 3 4\n", &st), -EINVAL);
	assert_true(st.present == BIT(CTP_STAT_PID));
	assert_int_equal(st.pid, 123);
	assert_int_equal(parse("123 abc) S 1\n", &st), -EINVAL);
	assert_false(ctp_stat_has(&st, CTP_STAT_COMM));
	assert_false(ctp_stat_has(&st, CTP_STAT_STATE));
	assert_int_equal(parse("", &st), -EMSGSIZE);
	assert_true(st.present == 0);
	assert_int_equal(parse("\n", &st), -EINVAL);
	assert_true(st.present == 0);
	/* Garbage right after ')' */
	assert_int_equal(parse("1 (x)S 1\n", &st), -EINVAL);
	assert_true(st.present == (BIT(CTP_STAT_PID) | BIT(CTP_STAT_COMM)));
}

static void stat_truncated(void **state)
{
	char line[1024];
	const char *cut;
	struct ctp_stat st;

	(void)state;
	/* Cut inside (22) starttime "48017" -> "480". */
	cut = strstr(STAT_SELF, " 48017 ");
	assert_non_null(cut);
	memcpy(line, STAT_SELF, (size_t)(cut - STAT_SELF) + 4);
	assert_int_equal(
		ctp_parse_stat(line, (size_t)(cut - STAT_SELF) + 4, &st),
		-EMSGSIZE);
	assert_true(st.present ==
		    (BIT(CTP_STAT_PID) | BIT(CTP_STAT_COMM) |
		     BIT(CTP_STAT_STATE) | BIT(CTP_STAT_MINFLT) |
		     BIT(CTP_STAT_CMINFLT) | BIT(CTP_STAT_MAJFLT) |
		     BIT(CTP_STAT_CMAJFLT) | BIT(CTP_STAT_UTIME) |
		     BIT(CTP_STAT_STIME) | BIT(CTP_STAT_CUTIME) |
		     BIT(CTP_STAT_CSTIME) | BIT(CTP_STAT_PRIORITY) |
		     BIT(CTP_STAT_NICE) | BIT(CTP_STAT_NUM_THREADS)));
	assert_int_equal(st.w[CTP_STAT_NUM_THREADS].u, 1);

	/* Cut right after the separator that ends (22). */
	assert_int_equal(
		ctp_parse_stat(STAT_SELF, (size_t)(cut - STAT_SELF) + 7, &st),
		-EMSGSIZE);
	assert_true(ctp_stat_has(&st, CTP_STAT_STARTTIME));
	assert_int_equal(st.w[CTP_STAT_STARTTIME].u, 48017);
	assert_false(ctp_stat_has(&st, CTP_STAT_PROCESSOR));

	/* Only the final '\n' missing: the last token might be cut, but no
	 * kept field is last. */
	assert_int_equal(ctp_parse_stat(STAT_SELF, strlen(STAT_SELF) - 1, &st),
			 -EMSGSIZE);
	assert_true(st.present == ALL_STAT);

	/* A complete line from an older kernel ending after (20). */
	assert_int_equal(parse("7 (old) S 1 1 1 0 -1 0 5 0 6 0 7 8 0 0 20 0 "
			       "3\n",
			       &st),
			 0);
	assert_int_equal(st.w[CTP_STAT_NUM_THREADS].u, 3);
	assert_int_equal(st.w[CTP_STAT_UTIME].u, 7);
	assert_false(ctp_stat_has(&st, CTP_STAT_STARTTIME));
	assert_false(ctp_stat_has(&st, CTP_STAT_POLICY));
}

/*
 * Every prefix of a real line: a field present in the prefix has its full
 * value (never a cut-short number), presence only grows with the prefix,
 * and only the whole line parses cleanly. A cut inside a comm that holds a
 * ')' of its own ("sh (x) y)") ends the comm early: nothing tells that
 * ')' from the real one, so the comm is short, but no number is taken
 * from the comm's bytes.
 */
static void stat_every_prefix(void **state)
{
	const char *lines[] = {STAT_SELF, STAT_FIFO, STAT_NICE, STAT_PID1,
			       STAT_TGID_REAPED};
	size_t i, k, len;

	(void)state;
	for (i = 0; i < sizeof(lines) / sizeof(lines[0]); i++) {
		struct ctp_stat full, st;
		uint64_t prev = 0;

		len = strlen(lines[i]);
		assert_int_equal(ctp_parse_stat(lines[i], len, &full), 0);
		/* Offset of the comm's real ')'. */
		size_t close = (size_t)(full.comm - lines[i]) + full.comm_len;
		for (k = 0; k < len; k++) {
			assert_int_not_equal(ctp_parse_stat(lines[i], k, &st),
					     0);
			assert_true((st.present & ~full.present) == 0);
			assert_true((st.present & prev) == prev);
			prev = st.present;
#define SAME(f, m)                                                             \
	do {                                                                   \
		if (ctp_stat_has(&st, f))                                      \
			assert_true(st.m == full.m);                           \
	} while (0)
			SAME(CTP_STAT_PID, pid);
			SAME(CTP_STAT_STATE, w[CTP_STAT_STATE].c);
			SAME(CTP_STAT_MINFLT, w[CTP_STAT_MINFLT].u);
			SAME(CTP_STAT_MAJFLT, w[CTP_STAT_MAJFLT].u);
			SAME(CTP_STAT_UTIME, w[CTP_STAT_UTIME].u);
			SAME(CTP_STAT_STIME, w[CTP_STAT_STIME].u);
			SAME(CTP_STAT_CMINFLT, w[CTP_STAT_CMINFLT].u);
			SAME(CTP_STAT_CMAJFLT, w[CTP_STAT_CMAJFLT].u);
			SAME(CTP_STAT_CUTIME, w[CTP_STAT_CUTIME].u);
			SAME(CTP_STAT_CSTIME, w[CTP_STAT_CSTIME].u);
			SAME(CTP_STAT_PRIORITY, w[CTP_STAT_PRIORITY].i);
			SAME(CTP_STAT_NICE, w[CTP_STAT_NICE].i);
			SAME(CTP_STAT_NUM_THREADS, w[CTP_STAT_NUM_THREADS].u);
			SAME(CTP_STAT_STARTTIME, w[CTP_STAT_STARTTIME].u);
			SAME(CTP_STAT_PROCESSOR, w[CTP_STAT_PROCESSOR].i);
			SAME(CTP_STAT_RT_PRIORITY, w[CTP_STAT_RT_PRIORITY].u);
			SAME(CTP_STAT_POLICY, w[CTP_STAT_POLICY].u);
#undef SAME
			if (k <= close)
				assert_true((st.present &
					     ~(BIT(CTP_STAT_PID) |
					       BIT(CTP_STAT_COMM))) == 0);
			else if (ctp_stat_has(&st, CTP_STAT_COMM))
				assert_int_equal(st.comm_len, full.comm_len);
		}
	}
}

static void stat_overflow(void **state)
{
	char line[1024];
	struct ctp_stat st;

	(void)state;
	/* (10) minflt = UINT64_MAX + 1 */
	assert_int_equal(parse(with_field(line, sizeof(line), STAT_SELF, 10,
					  "18446744073709551616"),
			       &st),
			 -ERANGE);
	assert_true(st.present == (ALL_STAT & ~BIT(CTP_STAT_MINFLT)));
	assert_int_equal(st.w[CTP_STAT_MAJFLT].u, 0);
	assert_int_equal(st.w[CTP_STAT_STARTTIME].u, 48017);

	/* (14) utime = UINT64_MAX exactly is a value. */
	assert_int_equal(parse(with_field(line, sizeof(line), STAT_SELF, 14,
					  "18446744073709551615"),
			       &st),
			 0);
	assert_true(st.w[CTP_STAT_UTIME].u == UINT64_MAX);

	/* (18) priority = INT64_MIN - 1 */
	assert_int_equal(parse(with_field(line, sizeof(line), STAT_SELF, 18,
					  "-9223372036854775809"),
			       &st),
			 -ERANGE);
	assert_false(ctp_stat_has(&st, CTP_STAT_PRIORITY));
	assert_true(ctp_stat_has(&st, CTP_STAT_NICE));

	/* (19) nice = INT64_MIN is a value. */
	assert_int_equal(parse(with_field(line, sizeof(line), STAT_SELF, 19,
					  "-9223372036854775808"),
			       &st),
			 0);
	assert_true(st.w[CTP_STAT_NICE].i == INT64_MIN);

	/* (41) policy, a long run of digits. */
	assert_int_equal(parse(with_field(line, sizeof(line), STAT_SELF, 41,
					  "999999999999999999999999999999"),
			       &st),
			 -ERANGE);
	assert_true(st.present == (ALL_STAT & ~BIT(CTP_STAT_POLICY)));
}

static void stat_garbage(void **state)
{
	char line[1024];
	struct ctp_stat st;

	(void)state;
	/* (14) utime "12x" */
	assert_int_equal(
		parse(with_field(line, sizeof(line), STAT_PID1, 14, "12x"),
		      &st),
		-EINVAL);
	assert_true(st.present == (ALL_STAT & ~BIT(CTP_STAT_UTIME)));
	assert_int_equal(st.w[CTP_STAT_STIME].u, 153);

	/* (10) minflt negative: unsigned in the kernel. */
	assert_int_equal(
		parse(with_field(line, sizeof(line), STAT_PID1, 10, "-1"), &st),
		-EINVAL);
	assert_false(ctp_stat_has(&st, CTP_STAT_MINFLT));

	/* (15) stime empty (two spaces in a row). */
	assert_int_equal(
		parse(with_field(line, sizeof(line), STAT_PID1, 15, ""), &st),
		-EINVAL);
	assert_true(st.present == (ALL_STAT & ~BIT(CTP_STAT_STIME)));
	assert_int_equal(st.w[CTP_STAT_PRIORITY].i, 20);

	/* (3) state of two letters, (19) nice "--5" */
	with_field(line, sizeof(line), STAT_NICE, 3, "RS");
	assert_int_equal(parse(line, &st), -EINVAL);
	assert_false(ctp_stat_has(&st, CTP_STAT_STATE));
	assert_int_equal(st.w[CTP_STAT_NICE].i, -5);
	assert_int_equal(
		parse(with_field(line, sizeof(line), STAT_NICE, 19, "--5"),
		      &st),
		-EINVAL);
	assert_false(ctp_stat_has(&st, CTP_STAT_NICE));
	assert_int_equal(st.w[CTP_STAT_PRIORITY].i, 15);

	/* (1) pid garbage keeps the rest. */
	assert_int_equal(
		parse(with_field(line, sizeof(line), STAT_SELF, 1, "x"), &st),
		-EINVAL);
	assert_true(st.present == (ALL_STAT & ~BIT(CTP_STAT_PID)));

	/* Garbage in a field not kept, (21) itrealvalue, is not looked at. */
	assert_int_equal(
		parse(with_field(line, sizeof(line), STAT_SELF, 21, "zz"), &st),
		0);
	assert_true(st.present == ALL_STAT);
}

/*
 * Process-level lines (/proc/<tgid>/stat): the fields of exited tasks. The
 * comm "sh (x) y)" has spaces and a ')' of its own; what follows its last
 * ')' is still field 3 onwards.
 */
static void stat_tgid_reaped(void **state)
{
	struct ctp_stat st;

	(void)state;
	assert_int_equal(parse(STAT_TGID_REAPED, &st), 0);
	assert_true(st.present == ALL_STAT);
	assert_int_equal(st.pid, 32680);
	expect_comm(&st, "sh (x) y)");
	assert_int_equal(st.w[CTP_STAT_STATE].c, 'R');
	assert_int_equal(st.w[CTP_STAT_MINFLT].u, 251);	   /* (10) */
	assert_int_equal(st.w[CTP_STAT_CMINFLT].u, 38568); /* (11) */
	assert_int_equal(st.w[CTP_STAT_MAJFLT].u, 0);	   /* (12) */
	assert_int_equal(st.w[CTP_STAT_CMAJFLT].u, 0);	   /* (13) */
	assert_int_equal(st.w[CTP_STAT_UTIME].u, 0);	   /* (14) */
	assert_int_equal(st.w[CTP_STAT_STIME].u, 0);	   /* (15) */
	assert_int_equal(st.w[CTP_STAT_CUTIME].u, 190);	   /* (16) */
	assert_int_equal(st.w[CTP_STAT_CSTIME].u, 18);	   /* (17) */
	assert_int_equal(st.w[CTP_STAT_PRIORITY].i, 20);
	assert_int_equal(st.w[CTP_STAT_NUM_THREADS].u, 1);
	assert_int_equal(st.w[CTP_STAT_STARTTIME].u, 1228137);
}

static void stat_tgid_dead_thread(void **state)
{
	struct ctp_stat st;

	(void)state;
	assert_int_equal(parse(STAT_TGID_DEAD_THREAD, &st), 0);
	assert_true(st.present == ALL_STAT);
	expect_comm(&st, "python3");
	assert_int_equal(st.w[CTP_STAT_MINFLT].u, 2864);
	assert_int_equal(st.w[CTP_STAT_CMINFLT].u, 6539);
	assert_int_equal(st.w[CTP_STAT_MAJFLT].u, 0);
	assert_int_equal(st.w[CTP_STAT_CMAJFLT].u, 0);
	assert_int_equal(st.w[CTP_STAT_UTIME].u, 20);
	assert_int_equal(st.w[CTP_STAT_STIME].u, 1);
	assert_int_equal(st.w[CTP_STAT_CUTIME].u, 3);
	assert_int_equal(st.w[CTP_STAT_CSTIME].u, 3);
	assert_int_equal(st.w[CTP_STAT_NUM_THREADS].u, 2);
	/* The live threads' own times add up to less than the process's. */
	assert_int_equal(parse(STAT_TID_808, &st), 0);
	assert_int_equal(st.w[CTP_STAT_UTIME].u, 5);
	assert_int_equal(st.w[CTP_STAT_CUTIME].u, 3);
	assert_int_equal(parse(STAT_TID_874, &st), 0);
	assert_int_equal(st.w[CTP_STAT_UTIME].u, 0);
	assert_int_equal(st.w[CTP_STAT_MINFLT].u, 3);
}

/* A short read of a process line: what the cut leaves whole is kept. */
static void stat_tgid_truncated(void **state)
{
	const char *cut;
	struct ctp_stat st;
	size_t at;

	(void)state;
	/* Cut inside (16) cutime "190" -> "19". */
	cut = strstr(STAT_TGID_REAPED, " 190 18 ");
	assert_non_null(cut);
	at = (size_t)(cut - STAT_TGID_REAPED);
	assert_int_equal(ctp_parse_stat(STAT_TGID_REAPED, at + 3, &st),
			 -EMSGSIZE);
	expect_comm(&st, "sh (x) y)");
	assert_true(ctp_stat_has(&st, CTP_STAT_CMINFLT));
	assert_int_equal(st.w[CTP_STAT_CMINFLT].u, 38568);
	assert_true(ctp_stat_has(&st, CTP_STAT_STIME));
	assert_false(ctp_stat_has(&st, CTP_STAT_CUTIME));
	assert_false(ctp_stat_has(&st, CTP_STAT_CSTIME));
	assert_false(ctp_stat_has(&st, CTP_STAT_NUM_THREADS));

	/* Cut inside (17) cstime "18" -> "1": cutime whole, cstime not. */
	assert_int_equal(ctp_parse_stat(STAT_TGID_REAPED, at + 6, &st),
			 -EMSGSIZE);
	assert_int_equal(st.w[CTP_STAT_CUTIME].u, 190);
	assert_false(ctp_stat_has(&st, CTP_STAT_CSTIME));

	/* Cut inside the comm: nothing after the pid. */
	cut = strstr(STAT_TGID_REAPED, " y)");
	assert_non_null(cut);
	assert_int_not_equal(ctp_parse_stat(STAT_TGID_REAPED,
					    (size_t)(cut - STAT_TGID_REAPED),
					    &st),
			     0);
	assert_false(ctp_stat_has(&st, CTP_STAT_CUTIME));
	assert_false(ctp_stat_has(&st, CTP_STAT_CMINFLT));
	/* A ')' inside the comm is not its end: cut after "sh (x)", the
	 * fields that seem to follow are comm bytes, not values. */
	cut = strstr(STAT_TGID_REAPED, "(x)");
	assert_non_null(cut);
	assert_int_not_equal(
		ctp_parse_stat(STAT_TGID_REAPED,
			       (size_t)(cut - STAT_TGID_REAPED) + 3, &st),
		0);
	assert_false(ctp_stat_has(&st, CTP_STAT_STATE));
}

/* Hostile children fields: each is left absent, the rest is kept. */
static void stat_children_hostile(void **state)
{
	char line[1024];
	struct ctp_stat st;

	(void)state;
	/* (16) cutime negative: the kernel's counts are unsigned. */
	assert_int_equal(
		parse(with_field(line, sizeof(line), STAT_PID1, 16, "-5"), &st),
		-EINVAL);
	assert_true(st.present == (ALL_STAT & ~BIT(CTP_STAT_CUTIME)));
	assert_int_equal(st.w[CTP_STAT_CSTIME].u, 306);
	assert_int_equal(st.w[CTP_STAT_UTIME].u, 41);

	/* (17) cstime one past UINT64_MAX; UINT64_MAX itself is a value. */
	assert_int_equal(parse(with_field(line, sizeof(line), STAT_PID1, 17,
					  "18446744073709551616"),
			       &st),
			 -ERANGE);
	assert_true(st.present == (ALL_STAT & ~BIT(CTP_STAT_CSTIME)));
	assert_int_equal(st.w[CTP_STAT_CUTIME].u, 1291);
	assert_int_equal(parse(with_field(line, sizeof(line), STAT_PID1, 17,
					  "18446744073709551615"),
			       &st),
			 0);
	assert_true(st.w[CTP_STAT_CSTIME].u == UINT64_MAX);

	/* (11) cminflt and (13) cmajflt garbage. */
	assert_int_equal(
		parse(with_field(line, sizeof(line), STAT_PID1, 11, "3e5"),
		      &st),
		-EINVAL);
	assert_true(st.present == (ALL_STAT & ~BIT(CTP_STAT_CMINFLT)));
	assert_int_equal(st.w[CTP_STAT_MINFLT].u, 41298);
	assert_int_equal(st.w[CTP_STAT_MAJFLT].u, 0);
	assert_int_equal(
		parse(with_field(line, sizeof(line), STAT_PID1, 13, "+237"),
		      &st),
		-EINVAL);
	assert_true(st.present == (ALL_STAT & ~BIT(CTP_STAT_CMAJFLT)));
	assert_int_equal(st.w[CTP_STAT_CMINFLT].u, 372013);

	/* A line that ends after (17), as a hostile or broken file might:
	 * complete, so no error, and nothing past it. */
	assert_int_equal(
		parse("9 (a) b) S 1 1 1 0 -1 0 1 2 3 4 5 6 7 8\n", &st), 0);
	expect_comm(&st, "a) b");
	assert_int_equal(st.w[CTP_STAT_CMINFLT].u, 2);
	assert_int_equal(st.w[CTP_STAT_CMAJFLT].u, 4);
	assert_int_equal(st.w[CTP_STAT_CUTIME].u, 7);
	assert_int_equal(st.w[CTP_STAT_CSTIME].u, 8);
	assert_false(ctp_stat_has(&st, CTP_STAT_PRIORITY));
}

static void status_all_keys(void **state)
{
	struct ctp_status s;

	(void)state;
	assert_int_equal(ctp_parse_status(STATUS_T59, strlen(STATUS_T59), &s),
			 0);
	assert_true(s.present == ALL_STATUS);
	assert_int_equal(s.state, 'S');
	assert_int_equal(s.voluntary_csw, 1341);
	assert_int_equal(s.nonvoluntary_csw, 14);
	assert_int_equal(s.cpus_allowed_list_len, 3);
	assert_memory_equal(s.cpus_allowed_list, "0-1", 3);
}

static void status_missing_keys(void **state)
{
	static const char txt[] = "Name:\tx\n"
				  "State:\tI (idle)\n"
				  "voluntary_ctxt_switches:\t5\n";
	static const char only_lists[] = "Cpus_allowed:\tf\n"
					 "Cpus_allowed_list:\t0-3\n";
	struct ctp_status s;

	(void)state;
	assert_int_equal(ctp_parse_status(txt, strlen(txt), &s), -ENODATA);
	assert_true(s.present == (CTP_STATUS_STATE | CTP_STATUS_VOLUNTARY_CSW));
	assert_int_equal(s.state, 'I');
	assert_int_equal(s.voluntary_csw, 5);

	assert_int_equal(ctp_parse_status(only_lists, strlen(only_lists), &s),
			 -ENODATA);
	assert_true(s.present == CTP_STATUS_CPUS_ALLOWED_LIST);
	assert_memory_equal(s.cpus_allowed_list, "0-3", 3);

	assert_int_equal(ctp_parse_status("", 0, &s), -ENODATA);
	assert_true(s.present == 0);
}

/* The parser reads forward to State and backward for the rest: any order
 * and trailing lines after the counters must give the same result. */
static void status_layouts(void **state)
{
	static const char features[] = "Name:\tx\nUmask:\t0022\n"
				       "State:\tR (running)\n"
				       "Tgid:\t1\n"
				       "Cpus_allowed:\tf\n"
				       "Cpus_allowed_list:\t0-3\n"
				       "voluntary_ctxt_switches:\t7\n"
				       "nonvoluntary_ctxt_switches:\t9\n"
				       "x86_Thread_features:\tshstk wrss\n"
				       "x86_Thread_features_locked:\t\n";
	static const char reversed[] = "nonvoluntary_ctxt_switches:\t3\n"
				       "voluntary_ctxt_switches:\t2\n"
				       "Cpus_allowed_list:\t1\n"
				       "Name:\ty\n"
				       "State:\tD (disk sleep)\n";
	static const char blank_lines[] = "State:\tS (sleeping)\n\n"
					  "voluntary_ctxt_switches:\t4\n\n"
					  "Cpus_allowed_list:\t0\n\n"
					  "nonvoluntary_ctxt_switches:\t5\n\n";
	struct ctp_status s;

	(void)state;
	assert_int_equal(ctp_parse_status(features, strlen(features), &s), 0);
	assert_true(s.present == ALL_STATUS);
	assert_int_equal(s.state, 'R');
	assert_int_equal(s.voluntary_csw, 7);
	assert_int_equal(s.nonvoluntary_csw, 9);
	assert_int_equal(s.cpus_allowed_list_len, 3);
	assert_memory_equal(s.cpus_allowed_list, "0-3", 3);

	assert_int_equal(ctp_parse_status(reversed, strlen(reversed), &s), 0);
	assert_true(s.present == ALL_STATUS);
	assert_int_equal(s.state, 'D');
	assert_int_equal(s.voluntary_csw, 2);
	assert_int_equal(s.nonvoluntary_csw, 3);
	assert_memory_equal(s.cpus_allowed_list, "1", 1);

	assert_int_equal(ctp_parse_status(blank_lines, strlen(blank_lines), &s),
			 0);
	assert_true(s.present == ALL_STATUS);
	assert_int_equal(s.voluntary_csw, 4);
	assert_int_equal(s.nonvoluntary_csw, 5);
}

static void status_truncated(void **state)
{
	const char *cut;
	struct ctp_status s;
	size_t len;

	(void)state;
	/* Cut inside "1341" of voluntary_ctxt_switches. */
	cut = strstr(STATUS_T59, "1341");
	assert_non_null(cut);
	len = (size_t)(cut - STATUS_T59) + 2;
	assert_int_equal(ctp_parse_status(STATUS_T59, len, &s), -EMSGSIZE);
	assert_true(s.present ==
		    (CTP_STATUS_STATE | CTP_STATUS_CPUS_ALLOWED_LIST));

	/* The final '\n' missing: the last value may be cut. */
	len = strlen(STATUS_T59) - 1;
	assert_int_equal(ctp_parse_status(STATUS_T59, len, &s), -EMSGSIZE);
	assert_true(s.present == (ALL_STATUS & ~CTP_STATUS_NONVOLUNTARY_CSW));
	assert_int_equal(s.voluntary_csw, 1341);

	/* Every prefix: what is present has its full value. */
	for (len = 0; len < strlen(STATUS_T59); len++) {
		assert_int_not_equal(ctp_parse_status(STATUS_T59, len, &s), 0);
		if (s.present & CTP_STATUS_STATE)
			assert_int_equal(s.state, 'S');
		if (s.present & CTP_STATUS_VOLUNTARY_CSW)
			assert_int_equal(s.voluntary_csw, 1341);
		if (s.present & CTP_STATUS_NONVOLUNTARY_CSW)
			assert_int_equal(s.nonvoluntary_csw, 14);
		if (s.present & CTP_STATUS_CPUS_ALLOWED_LIST)
			assert_int_equal(s.cpus_allowed_list_len, 3);
	}
}

static void status_garbage(void **state)
{
	static const char txt[] = "State:\t\n"
				  "voluntary_ctxt_switches:\t12abc\n"
				  "nonvoluntary_ctxt_switches:\t"
				  "18446744073709551616\n"
				  "Cpus_allowed_list:\t0-1\n";
	static const char neg[] = "State:\tR (running)\n"
				  "voluntary_ctxt_switches:\t-3\n"
				  "nonvoluntary_ctxt_switches:\t0\n"
				  "Cpus_allowed_list:\t0\n";
	struct ctp_status s;

	(void)state;
	assert_int_equal(ctp_parse_status(txt, strlen(txt), &s), -EINVAL);
	assert_true(s.present == CTP_STATUS_CPUS_ALLOWED_LIST);

	assert_int_equal(ctp_parse_status(neg, strlen(neg), &s), -EINVAL);
	assert_true(s.present == (ALL_STATUS & ~CTP_STATUS_VOLUNTARY_CSW));
	assert_int_equal(s.state, 'R');
	assert_int_equal(s.nonvoluntary_csw, 0);
}

static void cpulist_cases(void **state)
{
	uint64_t w[16];
	size_t n = 99;
	size_t i;

	(void)state;
	assert_int_equal(ctp_parse_cpulist("0", 1, w, 16, &n), 1);
	assert_int_equal(n, 1);
	assert_true(w[0] == 1);
	for (i = 1; i < 16; i++)
		assert_true(w[i] == 0);

	assert_int_equal(ctp_parse_cpulist("0-3,8-11", 8, w, 16, &n), 8);
	assert_int_equal(n, 1);
	assert_true(w[0] == 0xf0f);

	assert_int_equal(ctp_parse_cpulist("0-1023", 6, w, 16, &n), 1024);
	assert_int_equal(n, 16);
	for (i = 0; i < 16; i++)
		assert_true(w[i] == UINT64_MAX);

	/* Across a word boundary, and a lone high CPU. */
	assert_int_equal(ctp_parse_cpulist("63-64,130", 9, w, 16, &n), 3);
	assert_int_equal(n, 3);
	assert_true(w[0] == 1ull << 63);
	assert_true(w[1] == 1);
	assert_true(w[2] == 1ull << 2);

	/* Overlaps count once. */
	assert_int_equal(ctp_parse_cpulist("0-3,2-5", 7, w, 16, &n), 6);
	assert_true(w[0] == 0x3f);

	/* Only [s, s + len) is read. */
	assert_int_equal(ctp_parse_cpulist("5-7\n", 3, w, 16, &n), 3);
	assert_true(w[0] == 0xe0);

	/* Empty: the empty set, and stale words are cleared. */
	memset(w, 0xff, sizeof(w));
	n = 99;
	assert_int_equal(ctp_parse_cpulist("", 0, w, 16, &n), 0);
	assert_int_equal(n, 0);
	for (i = 0; i < 16; i++)
		assert_true(w[i] == 0);
}

static void cpulist_bad(void **state)
{
	static const char *const garbage[] = {
		"a",	"0-",	 "-3", "1,", ",1",	"1,,2", "0-3x",
		"0 -3", "1-2-3", " 0", "0 ", "0-3:1/2", "\n",
	};
	uint64_t w[2];
	size_t n = 99, i;

	(void)state;
	for (i = 0; i < sizeof(garbage) / sizeof(garbage[0]); i++) {
		assert_int_equal(ctp_parse_cpulist(garbage[i],
						   strlen(garbage[i]), w, 2,
						   &n),
				 -EINVAL);
		assert_int_equal(n, 99); /* untouched */
	}
	/* Reversed range. */
	assert_int_equal(ctp_parse_cpulist("5-3", 3, w, 2, &n), -EINVAL);
	/* Beyond nwords words: 127 is the last that fits in two. */
	assert_int_equal(ctp_parse_cpulist("127", 3, w, 2, &n), 1);
	assert_int_equal(n, 2);
	n = 99;
	assert_int_equal(ctp_parse_cpulist("128", 3, w, 2, &n), -ERANGE);
	assert_int_equal(ctp_parse_cpulist("0-128", 5, w, 2, &n), -ERANGE);
	assert_int_equal(ctp_parse_cpulist("0,4096", 6, w, 2, &n), -ERANGE);
	assert_int_equal(
		ctp_parse_cpulist("18446744073709551615", 20, w, 2, &n),
		-ERANGE);
	assert_int_equal(
		ctp_parse_cpulist("18446744073709551616", 20, w, 2, &n),
		-ERANGE);
	assert_int_equal(n, 99);
	assert_int_equal(ctp_parse_cpulist("0", 1, w, 0, &n), -ERANGE);
}

static void policy_names(void **state)
{
	(void)state;
	assert_string_equal(ctp_sched_policy_name(0), "SCHED_OTHER");
	assert_string_equal(ctp_sched_policy_name(1), "SCHED_FIFO");
	assert_string_equal(ctp_sched_policy_name(2), "SCHED_RR");
	assert_string_equal(ctp_sched_policy_name(3), "SCHED_BATCH");
	assert_null(ctp_sched_policy_name(4));
	assert_string_equal(ctp_sched_policy_name(5), "SCHED_IDLE");
	assert_string_equal(ctp_sched_policy_name(6), "SCHED_DEADLINE");
	assert_string_equal(ctp_sched_policy_name(7), "SCHED_EXT");
	assert_null(ctp_sched_policy_name(8));
	assert_null(ctp_sched_policy_name(UINT64_MAX));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(stat_self),
		cmocka_unit_test(stat_pid1_and_thread),
		cmocka_unit_test(stat_sched_classes),
		cmocka_unit_test(stat_comm_odd),
		cmocka_unit_test(stat_list_is_the_parser),
		cmocka_unit_test(stat_no_paren),
		cmocka_unit_test(stat_truncated),
		cmocka_unit_test(stat_every_prefix),
		cmocka_unit_test(stat_overflow),
		cmocka_unit_test(stat_garbage),
		cmocka_unit_test(stat_tgid_reaped),
		cmocka_unit_test(stat_tgid_dead_thread),
		cmocka_unit_test(stat_tgid_truncated),
		cmocka_unit_test(stat_children_hostile),
		cmocka_unit_test(status_all_keys),
		cmocka_unit_test(status_missing_keys),
		cmocka_unit_test(status_layouts),
		cmocka_unit_test(status_truncated),
		cmocka_unit_test(status_garbage),
		cmocka_unit_test(cpulist_cases),
		cmocka_unit_test(cpulist_bad),
		cmocka_unit_test(policy_names),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
