/* SPDX-License-Identifier: MIT */
/*
 * The toolkit's field tables and checked setter (toolkit/fields.c): the
 * setter skips a refused handle and keeps the first failure; a table's
 * sources are checked against its descriptions (also by ctp_attach); the
 * two scanners on literal kernel text (an io file, stat lines): whole,
 * cut at every byte, garbage, overflow, missing keys, short lines; and
 * ctp_fields_set by scope, presence, type and handle. The api table here
 * records the setter calls; the plugins run the same code against the real
 * core in their own tests.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "ctprof/plugin-util.h"

/* ---- A core that records the setters ------------------------------------- */

struct call {
	char what; /* 'u', 'i', 'b', 'c', 's', 'm' (cpu set) */
	int field;
	uint64_t v;
	char str[32];
};

static struct {
	struct call call[64];
	int n;
	int fail_field; /* setters of it return -EINVAL */
	char log[256];
	int n_log;
} seen;

static int record(char what, int field, uint64_t v)
{
	assert_true(seen.n < 64);
	seen.call[seen.n++] =
		(struct call){.what = what, .field = field, .v = v};
	return field == seen.fail_field ? -EINVAL : 0;
}

static int t_set_u64(struct ctp_record *r, int f, uint64_t v)
{
	(void)r;
	return record('u', f, v);
}

static int t_set_i64(struct ctp_record *r, int f, int64_t v)
{
	(void)r;
	return record('i', f, (uint64_t)v);
}

static int t_set_bool(struct ctp_record *r, int f, int v)
{
	(void)r;
	return record('b', f, (uint64_t)v);
}

static int t_set_char(struct ctp_record *r, int f, char v)
{
	(void)r;
	return record('c', f, (uint64_t)(unsigned char)v);
}

static int t_set_str(struct ctp_record *r, int f, const char *s, size_t len)
{
	int ret = record('s', f, len);

	(void)r;
	snprintf(seen.call[seen.n - 1].str, 32, "%.*s", (int)len, s);
	return ret;
}

static int t_set_cpuset(struct ctp_record *r, int f, const uint64_t *w,
			size_t n)
{
	(void)r;
	return record('m', f, n ? w[0] : 0);
}

static void __attribute__((format(printf, 3, 4)))
t_log(struct ctp_ctx *ctx, int level, const char *fmt, ...)
{
	va_list ap;

	(void)ctx;
	(void)level;
	va_start(ap, fmt);
	vsnprintf(seen.log, sizeof(seen.log), fmt, ap);
	va_end(ap);
	seen.n_log++;
}

static int t_field_handle(struct ctp_ctx *ctx, size_t i)
{
	(void)ctx;
	return 10 + (int)i;
}

static int t_summary_register(struct ctp_ctx *ctx, const char *name)
{
	(void)ctx;
	(void)name;
	return 0;
}

static const struct ctp_api api = {
	.abi = CTP_ABI_MAJOR,
	.size = sizeof(struct ctp_api),
	.log = t_log,
	.field_handle = t_field_handle,
	.set_u64 = t_set_u64,
	.set_i64 = t_set_i64,
	.set_bool = t_set_bool,
	.set_char = t_set_char,
	.set_str = t_set_str,
	.set_cpuset = t_set_cpuset,
	.summary_register = t_summary_register,
};

static int setup(void **state)
{
	(void)state;
	memset(&seen, 0, sizeof(seen));
	seen.fail_field = -1000;
	return 0;
}

/* ---- A table like a plugin's --------------------------------------------- */

/* The values of an io file and of a stat line, as a parser keeps them. */
struct io {
	uint64_t present;
	uint64_t v[3];
};
struct line {
	uint64_t present;
	char state;
	uint64_t minflt, utime, utime_again;
	int64_t nice;
};

#define TEXT_IO                                                                \
	"rchar: 273215\n"                                                      \
	"wchar: 12132\n"                                                       \
	"syscr: 67210\n"                                                       \
	"syscw: 490\n"                                                         \
	"read_bytes: 0\n"                                                      \
	"write_bytes: 286720\n"                                                \
	"cancelled_write_bytes: 0\n"
/* A stat line past "pid (comm) ": word 3 first. */
#define TEXT_STAT                                                              \
	"S 1 4424 4424 34816 4424 4194304 116 0 0 0 11 7 0 0 20 -5 1 0 48017 " \
	"5783552 237 18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 17 0 0 0 0 "   \
	"0 0 0 0 0 0 0 0 0\n"

#define TEST_FIELDS(X)                                                         \
	X(F_RCHAR, CTP_SRC_KEY("rchar", struct io, v[0], 0),                   \
	  CTP_FIELD_COUNTER("t.rchar", THREAD, BYTES, "rchar"))                \
	X(F_SYSCW, CTP_SRC_KEY("syscw", struct io, v[1], 1),                   \
	  CTP_FIELD_COUNTER("t.syscw", THREAD, COUNT, "syscw"))                \
	X(F_WRITE, CTP_SRC_KEY("write_bytes", struct io, v[2], 2),             \
	  CTP_FIELD_COUNTER("t.write_bytes", PROCESS, BYTES, "write"))         \
	X(F_NAME, CTP_SRC_NONE, CTP_FIELD_LABEL("t.name", THREAD, "name"))

enum { TEST_FIELDS(CTP_FT_ID) N_FIELDS };
static const struct ctp_field_desc fields[] = {TEST_FIELDS(CTP_FT_DESC)};
static const struct ctp_field_src srcs[] = {TEST_FIELDS(CTP_FT_SRC)};

/* stat's rows: a kept word of each type, one of them read twice. */
static const struct ctp_field_desc stat_fields[] = {
	CTP_FIELD("t.state", THREAD, CHAR, NONE, CATEGORICAL, MODE, "3"),
	CTP_FIELD_COUNTER("t.minflt", THREAD, COUNT, "10"),
	CTP_FIELD_COUNTER("t.utime", THREAD, TICKS, "14"),
	CTP_FIELD("t.nice", THREAD, I64, NONE, ORDINAL, RANGE, "19"),
	CTP_FIELD_COUNTER("t.process.utime", PROCESS, TICKS, "14"),
	CTP_FIELD_COUNTER("t.process.utime2", PROCESS, TICKS, "14"),
};
static const struct ctp_field_src stat_srcs[] = {
	CTP_SRC_POS(3, struct line, state),
	CTP_SRC_POS(10, struct line, minflt),
	CTP_SRC_POS(14, struct line, utime),
	CTP_SRC_POS(19, struct line, nice),
	CTP_SRC_POS(14, struct line, utime),
	CTP_SRC_POS(14, struct line, utime_again),
};
#define ALL_STAT (1ull << 3 | 1ull << 10 | 1ull << 14 | 1ull << 19)

static int scan_io(const char *text, size_t len, struct io *io)
{
	memset(io, 0, sizeof(*io));
	return ctp_fields_scan_keys(text, len, srcs, N_FIELDS, io,
				    &io->present);
}

static int scan_stat(const char *text, size_t len, struct line *st)
{
	memset(st, 0, sizeof(*st));
	return ctp_fields_scan_words(text, text + len, 3, stat_srcs,
				     CTP_ARRAY_LEN(stat_srcs), st,
				     &st->present);
}

/* ---- The checked setter -------------------------------------------------- */

static void setter_skips_and_keeps(void **state)
{
	struct ctp_setter set = CTP_SETTER(&api, NULL);
	const uint64_t words[1] = {5};

	(void)state;
	assert_int_equal(ctp_set_u64(&set, 1, 7), 0);
	/* A refused handle is never handed to the core. */
	assert_int_equal(ctp_set_u64(&set, -ENOENT, 8), 0);
	assert_int_equal(ctp_set_str(&set, -EINVAL, "x", 1), 0);
	assert_int_equal(seen.n, 1);
	/* The first failure is kept, the values after it are still set. */
	seen.fail_field = 2;
	assert_int_equal(ctp_set_i64(&set, 2, -3), -EINVAL);
	assert_int_equal(set.err, -EINVAL);
	seen.fail_field = 3;
	assert_int_equal(ctp_set_char(&set, 3, 'R'), -EINVAL);
	assert_int_equal(set.err, -EINVAL);
	seen.fail_field = -1000;
	assert_int_equal(ctp_set_bool(&set, 4, true), 0);
	assert_int_equal(ctp_set_str(&set, 5, "abc", 3), 0);
	assert_int_equal(ctp_set_cpuset(&set, 6, words, 1), 0);
	assert_int_equal(seen.n, 6);
	for (int i = 0; i < 6; i++)
		assert_int_equal(seen.call[i].what, "uicbsm"[i]);
	assert_true((int64_t)seen.call[1].v == -3);
	assert_int_equal(seen.call[2].v, 'R');
	assert_string_equal(seen.call[4].str, "abc");
	assert_int_equal(seen.call[5].v, 5);
	assert_int_equal(set.err, -EINVAL);
}

/* ---- Checking a table ---------------------------------------------------- */

static void check_tables(void **state)
{
	struct ctp_field_src bad[CTP_ARRAY_LEN(srcs)];
	const char *why = NULL;
	size_t at = 99;

	(void)state;
	assert_int_equal(ctp_fields_check(fields, srcs, N_FIELDS, &at, &why),
			 0);
	assert_int_equal(ctp_fields_check(stat_fields, stat_srcs,
					  CTP_ARRAY_LEN(stat_srcs), &at, &why),
			 0);
	/* Each fault, in row 1. */
	const struct {
		struct ctp_field_src r;
		const char *says;
	} faults[] = {
		{{.key = "syscw", .type = CTP_TYPE_U64, .pos = 2}, "both"},
		{{.pos = CTP_SRC_POS_MAX + 1, .type = CTP_TYPE_U64},
		 "position"},
		{{.key = "syscw", .type = CTP_TYPE_U64, .bit = 64}, "bit"},
		{{.key = "", .type = CTP_TYPE_U64}, "empty"},
		{{.key = "syscw", .type = CTP_TYPE_STRING}, "do not know"},
		{{.key = "syscw"}, "no member type"},
		{{.key = "syscw", .type = CTP_TYPE_I64}, "another type"},
		{{.key = "syscw", .type = CTP_TYPE_U64, .flags = 2}, "flags"},
		{{.key = "syscw", .klen = 4, .type = CTP_TYPE_U64}, "length"},
	};
	for (size_t i = 0; i < CTP_ARRAY_LEN(faults); i++) {
		memcpy(bad, srcs, sizeof(bad));
		bad[1] = faults[i].r;
		at = 99;
		assert_int_equal(
			ctp_fields_check(fields, bad, N_FIELDS, &at, &why),
			-EINVAL);
		assert_int_equal(at, 1);
		assert_non_null(strstr(why, faults[i].says));
	}
	/* A conversion the code makes is said with CTP_SRC_CODE. */
	memcpy(bad, srcs, sizeof(bad));
	bad[F_NAME] =
		(struct ctp_field_src)CTP_SRC_POS_CODE(3, struct line, minflt);
	assert_int_equal(ctp_fields_check(fields, bad, N_FIELDS, &at, &why), 0);
}

/* The descriptor ctp_attach checks against. */
static const char *const counters[] = {"c"};
const struct ctp_plugin ctp_plugin_v1 = {
	CTP_PLUGIN_HEADER,
	.name = "t",
	CTP_PLUGIN_FIELDS(fields),
	CTP_PLUGIN_COUNTER_TABLE(counters),
};

static void attach_checks_sources(void **state)
{
	struct ctp_field_src bad[CTP_ARRAY_LEN(srcs)];
	int fh[N_FIELDS] = {0};
	struct ctp_attach a = {
		.field_handles = fh,
		.n_fields = N_FIELDS,
		.field_src = srcs,
	};

	(void)state;
	assert_int_equal(ctp_attach(NULL, &api, &ctp_plugin_v1, &a), 0);
	assert_int_equal(fh[F_NAME], 10 + F_NAME);
	assert_int_equal(seen.n_log, 0);
	memcpy(bad, srcs, sizeof(bad));
	bad[F_WRITE].type = CTP_TYPE_I64;
	a.field_src = bad;
	fh[0] = -1;
	assert_int_equal(ctp_attach(NULL, &api, &ctp_plugin_v1, &a), -EINVAL);
	assert_int_equal(seen.n_log, 1);
	assert_non_null(strstr(seen.log, "t.write_bytes"));
	assert_int_equal(fh[0], -1); /* nothing attached */
	/* The one-line form. */
	int fh2[N_FIELDS], ch[1];
	assert_int_equal(CTP_ATTACH_TABLE(NULL, &api, 0, srcs, fh2, ch), 0);
	assert_int_equal(fh2[F_WRITE], 10 + F_WRITE);
}

/* ---- Keyed files --------------------------------------------------------- */

static void keys_whole(void **state)
{
	struct io io;

	(void)state;
	assert_int_equal(scan_io(TEXT_IO, strlen(TEXT_IO), &io), 0);
	assert_int_equal(io.present, 7);
	assert_int_equal(io.v[0], 273215);
	assert_int_equal(io.v[1], 490);
	assert_int_equal(io.v[2], 286720);
	/* Any line order; the first line of a key counts; a key that only
	 * starts like a kept one is another key. */
	const char *text = "write_bytes: 5\nsyscw: 6\nsyscw: 9\n"
			   "rchars: 1\nrchar: 7\n";
	assert_int_equal(scan_io(text, strlen(text), &io), 0);
	assert_int_equal(io.v[0], 7);
	assert_int_equal(io.v[1], 6);
	assert_int_equal(io.v[2], 5);
	/* CTP_SRC_KEY counts its key at compile time; a row made by hand
	 * (klen 0) is counted as it is scanned. */
	assert_int_equal(srcs[F_WRITE].klen, 11);
	struct ctp_field_src hand[CTP_ARRAY_LEN(srcs)];
	memcpy(hand, srcs, sizeof(hand));
	for (size_t i = 0; i < CTP_ARRAY_LEN(hand); i++)
		hand[i].klen = 0;
	memset(&io, 0, sizeof(io));
	assert_int_equal(ctp_fields_scan_keys(text, strlen(text), hand,
					      N_FIELDS, &io, &io.present),
			 0);
	assert_int_equal(io.v[0], 7);
	assert_int_equal(io.v[2], 5);
}

/* Cut after every byte: a value is there exactly when its line is whole. */
static void keys_cut_everywhere(void **state)
{
	size_t len = strlen(TEXT_IO);
	const char *at[3] = {strstr(TEXT_IO, "rchar"), strstr(TEXT_IO, "syscw"),
			     strstr(TEXT_IO, "write_bytes")};
	struct io io;

	(void)state;
	for (size_t cut = 0; cut <= len; cut++) {
		int r = scan_io(TEXT_IO, cut, &io), n_whole = 0;

		for (int k = 0; k < 3; k++) {
			const char *nl = strchr(at[k], '\n');
			bool whole = (size_t)(nl - TEXT_IO) < cut;

			assert_int_equal(!!(io.present >> k & 1), whole);
			n_whole += whole;
		}
		if (n_whole == 3)
			assert_int_equal(r, 0);
		else
			assert_true(r == -ENODATA || r == -EMSGSIZE);
	}
	/* Inside the last kept number: suspect, not wrong. */
	const char *w = strstr(TEXT_IO, "286720");
	assert_int_equal(scan_io(TEXT_IO, (size_t)(w - TEXT_IO) + 3, &io),
			 -EMSGSIZE);
	assert_int_equal(io.present, 3);
}

static void keys_garbage(void **state)
{
	static const char *const bad[] = {"syscw: 4x9\n", "syscw: -5\n",
					  "syscw:\n",	  "syscw: 1 2\n",
					  "syscw: 5 \n",  "syscw: +5\n"};
	char buf[256];
	struct io io;

	(void)state;
	for (size_t i = 0; i < CTP_ARRAY_LEN(bad); i++) {
		snprintf(buf, sizeof(buf), "rchar: 1\n%swrite_bytes: 3\n",
			 bad[i]);
		assert_int_equal(scan_io(buf, strlen(buf), &io), -EINVAL);
		/* Only the bad value is lost. */
		assert_int_equal(io.present, 5);
		assert_int_equal(io.v[2], 3);
	}
	snprintf(buf, sizeof(buf),
		 "rchar: 18446744073709551616\nsyscw: 2\n"
		 "write_bytes: x\n");
	assert_int_equal(scan_io(buf, strlen(buf), &io), -ERANGE);
	assert_int_equal(io.present, 2);
	/* Problems are said in table order, whatever the line order. */
	snprintf(buf, sizeof(buf), "write_bytes: x\nrchar: 1\n");
	assert_int_equal(scan_io(buf, strlen(buf), &io), -ENODATA);
	snprintf(buf, sizeof(buf), "syscw: 1\nwrite_bytes: 2\nrchar: x\n");
	assert_int_equal(scan_io(buf, strlen(buf), &io), -EINVAL);
	/* Blanks after the colon are the kernel's to pick. */
	snprintf(buf, sizeof(buf), "rchar:\t \t9\nsyscw:1\nwrite_bytes: 2\n");
	assert_int_equal(scan_io(buf, strlen(buf), &io), 0);
	assert_int_equal(io.v[0], 9);
	assert_int_equal(scan_io("", 0, &io), -ENODATA);
	assert_int_equal(io.present, 0);
}

/* ---- Lines of words ------------------------------------------------------ */

static void words_whole(void **state)
{
	struct line st;

	(void)state;
	assert_int_equal(scan_stat(TEXT_STAT, strlen(TEXT_STAT), &st), 0);
	assert_true(st.present == ALL_STAT);
	assert_int_equal(st.state, 'S');
	assert_int_equal(st.minflt, 116);
	assert_int_equal(st.utime, 11);
	assert_true(st.nice == -5);
	/* A word kept twice in one member is read once; in another member,
	 * it is stored there too. */
	assert_int_equal(st.utime_again, 11);
	/* An older kernel's shorter line: what it has, no error. */
	const char *old = "R 4 5 6 7 8 9 10 11 12 13\n";
	assert_int_equal(scan_stat(old, strlen(old), &st), 0);
	assert_true(st.present == (1ull << 3 | 1ull << 10));
	assert_int_equal(st.minflt, 10);
}

/* Cut after every byte: a kept word is there exactly when the separator
 * after it is, and the line must end past the last kept word. */
static void words_cut_everywhere(void **state)
{
	size_t len = strlen(TEXT_STAT);
	struct line st;

	(void)state;
	for (size_t cut = 0; cut <= len; cut++) {
		int r = scan_stat(TEXT_STAT, cut, &st);
		unsigned words = 0; /* words whole before the cut */

		for (size_t k = 0; k < cut; k++)
			words += TEXT_STAT[k] == ' ' || TEXT_STAT[k] == '\n';
		for (unsigned pos = 3; pos <= 19; pos++)
			if (ALL_STAT >> pos & 1)
				assert_int_equal(!!(st.present >> pos & 1),
						 pos - 3 < words);
		if (cut == len)
			assert_int_equal(r, 0);
		else
			assert_int_equal(r, -EMSGSIZE);
	}
}

/* The kinds of stat_srcs as masks, for ctp_fields_scan_line. */
static const struct ctp_word_kinds stat_kinds = {
	.u = 1ull << 10 | 1ull << 14,
	.i = 1ull << 19,
	.c = 1ull << 3,
};

/* ctp_fields_scan_line stores word p in w[p] and says what the rows'
 * scan says, on every cut of a line and on garbage. */
static void words_by_kinds(void **state)
{
	const char *lines[] = {
		TEXT_STAT,
		"R 4 5 6 7 8 9 10 11 12 13\n",
		"S 4 5 6 7 8 9 11x 11 12 13 14 15 16 17 18 -5\n",
		"S 4 5 6 7 8 9 18446744073709551616 11 12 13 -14 15 16 17 18 "
		"19\n",
		"SS 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19\n",
		"S 4 5 6 7 8 9  11 12 13 14 15 16 17 18 19\n",
		"S 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 "
		"-9223372036854775809\n",
		"S 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19",
	};

	(void)state;
	for (size_t i = 0; i < CTP_ARRAY_LEN(lines); i++) {
		size_t len = strlen(lines[i]);

		for (size_t cut = 0; cut <= len; cut++) {
			union ctp_word w[20];
			uint64_t got = 0;
			struct line st;
			int r = scan_stat(lines[i], cut, &st);

			memset(w, 0xa5, sizeof(w));
			assert_int_equal(
				ctp_fields_scan_line(lines[i], lines[i] + cut,
						     3, &stat_kinds, w, &got),
				r);
			assert_true(got == st.present);
			if (got >> 3 & 1)
				assert_int_equal(w[3].c, st.state);
			if (got >> 10 & 1)
				assert_int_equal(w[10].u, st.minflt);
			if (got >> 14 & 1)
				assert_int_equal(w[14].u, st.utime);
			if (got >> 19 & 1)
				assert_true(w[19].i == st.nice);
			/* Words nobody keeps are not touched. */
			assert_int_equal(w[4].u, 0xa5a5a5a5a5a5a5a5ull);
		}
	}
	/* Nothing kept from `first` on: nothing read. */
	static const char one[] = "x";
	uint64_t got = 0;
	union ctp_word w[1];
	assert_int_equal(
		ctp_fields_scan_line(one, one + 1, 20, &stat_kinds, w, &got),
		0);
	assert_true(got == 0);
}

static void words_garbage(void **state)
{
	char buf[512];
	struct line st;

	(void)state;
	/* Garbage in a kept word: that word is absent, the others kept. */
	/* (Each word is its own position here.) */
	snprintf(buf, sizeof(buf),
		 "S 4 5 6 7 8 9 11x 11 12 13 14 15 16 17 "
		 "18 -5\n");
	assert_int_equal(scan_stat(buf, strlen(buf), &st), -EINVAL);
	assert_true(st.present == (ALL_STAT & ~(1ull << 10)));
	assert_true(st.nice == -5);
	/* In a word nobody keeps: not checked. */
	snprintf(buf, sizeof(buf),
		 "S x 5 6 7 8 9 10 11 12 13 14 15 16 17 "
		 "18 -5\n");
	assert_int_equal(scan_stat(buf, strlen(buf), &st), 0);
	/* The lowest position's problem is said: overflow at 10 before the
	 * sign at 14, whatever the table's order. */
	snprintf(buf, sizeof(buf),
		 "S 4 5 6 7 8 9 18446744073709551616 11 12 "
		 "13 -14 15 16 17 18 19\n");
	assert_int_equal(scan_stat(buf, strlen(buf), &st), -ERANGE);
	assert_true(st.present == (1ull << 3 | 1ull << 19));
	/* A state is one byte; two blanks make an empty word. */
	snprintf(buf, sizeof(buf),
		 "SS 4 5 6 7 8 9 10 11 12 13 14 15 16 17 "
		 "18 19\n");
	assert_int_equal(scan_stat(buf, strlen(buf), &st), -EINVAL);
	assert_false(st.present >> 3 & 1);
	snprintf(buf, sizeof(buf),
		 "S 4 5 6 7 8 9  11 12 13 14 15 16 17 18 "
		 "19\n");
	assert_int_equal(scan_stat(buf, strlen(buf), &st), -EINVAL);
	/* No '\n' anywhere past the last kept word: it may be cut. */
	snprintf(buf, sizeof(buf),
		 "S 4 5 6 7 8 9 10 11 12 13 14 15 16 17 "
		 "18 19 20 21");
	assert_int_equal(scan_stat(buf, strlen(buf), &st), -EMSGSIZE);
	assert_true(st.present == ALL_STAT);
}

/* ---- Setting through a table --------------------------------------------- */

static void set_by_scope_and_presence(void **state)
{
	const int fh[N_FIELDS] = {[F_RCHAR] = 1,
				  [F_SYSCW] = -ENOENT,
				  [F_WRITE] = 3,
				  [F_NAME] = 4};
	struct ctp_setter set = CTP_SETTER(&api, NULL);
	struct io io;

	(void)state;
	assert_int_equal(scan_io(TEXT_IO, strlen(TEXT_IO), &io), 0);
	/* Thread rows: rchar; syscw's handle was refused; the name is the
	 * code's. */
	assert_int_equal(ctp_fields_set(&set, fields, srcs, fh, N_FIELDS,
					CTP_SCOPE_THREAD, &io, io.present),
			 0);
	assert_int_equal(seen.n, 1);
	assert_int_equal(seen.call[0].field, 1);
	assert_int_equal(seen.call[0].v, 273215);
	/* Process rows; an absent value is not set. */
	assert_int_equal(ctp_fields_set(&set, fields, srcs, fh, N_FIELDS,
					CTP_SCOPE_PROCESS, &io, io.present),
			 0);
	assert_int_equal(seen.n, 2);
	assert_int_equal(seen.call[1].field, 3);
	assert_int_equal(ctp_fields_set(&set, fields, srcs, fh, N_FIELDS, 0,
					&io, io.present & ~1ull),
			 0);
	assert_int_equal(seen.n, 3);
	/* A failure is kept and returned; the other rows are still set. */
	seen.fail_field = 1;
	assert_int_equal(ctp_fields_set(&set, fields, srcs, fh, N_FIELDS, 0,
					&io, io.present),
			 -EINVAL);
	assert_int_equal(seen.n, 5);
}

static void set_by_member_type(void **state)
{
	const int fh[6] = {0, 1, 2, 3, 4, 5};
	struct ctp_field_src coded[6];
	struct ctp_setter set = CTP_SETTER(&api, NULL);
	struct line st;

	(void)state;
	assert_int_equal(scan_stat(TEXT_STAT, strlen(TEXT_STAT), &st), 0);
	assert_int_equal(ctp_fields_set(&set, stat_fields, stat_srcs, fh, 6,
					CTP_SCOPE_THREAD, &st, st.present),
			 0);
	assert_int_equal(seen.n, 4);
	assert_int_equal(seen.call[0].what, 'c');
	assert_int_equal(seen.call[0].v, 'S');
	assert_int_equal(seen.call[1].what, 'u');
	assert_int_equal(seen.call[2].v, 11);
	assert_int_equal(seen.call[3].what, 'i');
	assert_true((int64_t)seen.call[3].v == -5);
	/* A row the code sets is left to it. */
	memcpy(coded, stat_srcs, sizeof(coded));
	coded[1] =
		(struct ctp_field_src)CTP_SRC_POS_CODE(10, struct line, minflt);
	seen.n = 0;
	assert_int_equal(ctp_fields_set(&set, stat_fields, coded, fh, 6,
					CTP_SCOPE_THREAD, &st, st.present),
			 0);
	assert_int_equal(seen.n, 3);
	assert_int_equal(seen.call[1].field, 2);
}

/* A plan sets what ctp_fields_set sets, call for call, in every scope and
 * for every presence: the same rows, handles, types and values. */
static void plan_is_set(void **state)
{
	const int fh[6] = {0, -ENOENT, 2, 3, 4, 5};
	const uint8_t scopes[] = {0, CTP_SCOPE_THREAD, CTP_SCOPE_PROCESS};
	struct ctp_fields_plan plan;
	struct call by_set[64];
	struct line st;

	(void)state;
	assert_int_equal(scan_stat(TEXT_STAT, strlen(TEXT_STAT), &st), 0);
	for (size_t k = 0; k < CTP_ARRAY_LEN(scopes); k++) {
		assert_int_equal(ctp_fields_plan(&plan, stat_fields, stat_srcs,
						 fh, 6, scopes[k]),
				 0);
		for (uint64_t drop = 0; drop < 1u << 4; drop++) {
			uint64_t present = st.present;
			const unsigned bits[4] = {3, 10, 14, 19};
			struct ctp_setter a = CTP_SETTER(&api, NULL);
			struct ctp_setter b = CTP_SETTER(&api, NULL);
			int n;

			for (unsigned j = 0; j < 4; j++)
				if (drop >> j & 1)
					present &= ~(1ull << bits[j]);
			seen.n = 0;
			ctp_fields_set(&a, stat_fields, stat_srcs, fh, 6,
				       scopes[k], &st, present);
			n = seen.n;
			memcpy(by_set, seen.call, sizeof(by_set));
			seen.n = 0;
			assert_int_equal(
				ctp_fields_apply(&b, &plan, &st, present), 0);
			assert_int_equal(seen.n, n);
			assert_memory_equal(seen.call, by_set,
					    (size_t)n * sizeof(struct call));
		}
	}
	/* The minflt row's handle was refused: not in the plan. */
	assert_int_equal(ctp_fields_plan(&plan, stat_fields, stat_srcs, fh, 6,
					 CTP_SCOPE_THREAD),
			 0);
	assert_int_equal(plan.n, 3);
	assert_int_equal(plan.step[1].fh, 2);
	/* More rows than a plan holds. */
	struct ctp_field_src many[CTP_FIELDS_PLAN_MAX + 1];
	struct ctp_field_desc many_d[CTP_FIELDS_PLAN_MAX + 1];
	int many_fh[CTP_FIELDS_PLAN_MAX + 1] = {0};
	for (size_t i = 0; i < CTP_ARRAY_LEN(many); i++) {
		many[i] = stat_srcs[1];
		many_d[i] = stat_fields[1];
	}
	assert_int_equal(ctp_fields_plan(&plan, many_d, many, many_fh,
					 CTP_FIELDS_PLAN_MAX, 0),
			 0);
	assert_int_equal(plan.n, CTP_FIELDS_PLAN_MAX);
	assert_int_equal(ctp_fields_plan(&plan, many_d, many, many_fh,
					 CTP_FIELDS_PLAN_MAX + 1, 0),
			 -E2BIG);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(setter_skips_and_keeps, setup),
		cmocka_unit_test_setup(check_tables, setup),
		cmocka_unit_test_setup(attach_checks_sources, setup),
		cmocka_unit_test_setup(keys_whole, setup),
		cmocka_unit_test_setup(keys_cut_everywhere, setup),
		cmocka_unit_test_setup(keys_garbage, setup),
		cmocka_unit_test_setup(words_whole, setup),
		cmocka_unit_test_setup(words_cut_everywhere, setup),
		cmocka_unit_test_setup(words_garbage, setup),
		cmocka_unit_test_setup(words_by_kinds, setup),
		cmocka_unit_test_setup(set_by_scope_and_presence, setup),
		cmocka_unit_test_setup(set_by_member_type, setup),
		cmocka_unit_test_setup(plan_is_set, setup),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
