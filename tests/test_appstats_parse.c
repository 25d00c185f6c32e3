// SPDX-License-Identifier: MIT
/*
 * appstats' registry checks (plugins/appstats/aps_parse.c) on images made
 * here byte by byte as docs/APPSTATS.md lays them out: a good registry,
 * then each header number, field and slot broken on its own; and the
 * table of names a collector run keeps (who owns a name, how many one
 * process may own).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "aps.h"

/* Version 1 as the header makes it: 32 fields, 1,024 slots. */
#define SIZE	   272192u
#define FIELDS_OFF 64u
#define SLOTS_OFF  1856u
#define SLOT_SIZE  264u

/* Three copies as the reader takes them: img, then imgv (the values'),
 * then img2. */
static unsigned char img[SIZE], imgv[SIZE], img2[SIZE];

static void put32(unsigned char *p, size_t off, uint32_t v)
{
	memcpy(p + off, &v, 4);
}

static void put64(unsigned char *p, size_t off, uint64_t v)
{
	memcpy(p + off, &v, 8);
}

static void field(unsigned char *p, uint32_t i, const char *name, uint8_t unit,
		  uint8_t kind, uint8_t rule)
{
	unsigned char *f = p + FIELDS_OFF + i * 56u;

	memset(f, 0, 56);
	memcpy(f, name, strlen(name));
	f[48] = unit;
	f[49] = kind;
	f[50] = rule;
}

static void slot(unsigned char *p, uint32_t j, int32_t tid, uint32_t seq,
		 uint64_t v0)
{
	size_t off = SLOTS_OFF + (size_t)j * SLOT_SIZE;

	put32(p, off, (uint32_t)tid);
	put32(p, off + 4, seq);
	put64(p, off + 8, v0);
}

/* A good registry with 2 fields and 3 owned slots, in img and img2. */
static int good(void **state)
{
	(void)state;
	memset(img, 0, sizeof(img));
	put64(img, 0, CTP_APS_MAGIC);
	put32(img, 8, 1);
	put32(img, 12, SIZE);
	put32(img, 16, 32);
	put32(img, 20, 1024);
	put32(img, 24, 56);
	put32(img, 28, SLOT_SIZE);
	put32(img, 32, FIELDS_OFF);
	put32(img, 36, SLOTS_OFF);
	put32(img, 40, 2);
	put64(img, 48, 7);
	field(img, 0, "requests", 1, 1, 1);
	field(img, 1, "arena.bytes_2", 5, 3, 2);
	slot(img, 0, 100, 2, 11);
	slot(img, 5, 101, 4, 12);
	slot(img, 1023, 102, 6, 13);
	memcpy(img2, img, sizeof(img));
	memcpy(imgv, img, sizeof(img));
	return 0;
}

static enum ctp_aps_tag header(void)
{
	struct ctp_aps_hdr h;
	const char *why;

	return ctp_aps_header(img, sizeof(img), SIZE, &h, &why);
}

static void test_header_good(void **state)
{
	struct ctp_aps_hdr h;
	const char *why;

	(void)state;
	assert_int_equal(ctp_aps_header(img, sizeof(img), SIZE, &h, &why),
			 CTP_APS_OK);
	assert_int_equal(h.n_fields, 2);
	assert_int_equal(h.dropped, 7);
	/* The header alone is enough to check it; no symbol size: 16 MiB. */
	assert_int_equal(ctp_aps_header(img, 64, 0, &h, &why), CTP_APS_OK);
	assert_int_equal(ctp_aps_header(img, 63, 0, &h, &why),
			 CTP_APS_BAD_LAYOUT);
	put64(img, 0, 0);
	assert_int_equal(header(), CTP_APS_UNSET);
}

/* Each number of the header wrong on its own. */
static void test_header_bad(void **state)
{
	static const struct {
		size_t off;
		uint32_t v;
		enum ctp_aps_tag want;
	} cases[] = {
		{8, 2, CTP_APS_BAD_VERSION},
		{12, SIZE + 8, CTP_APS_BAD_LAYOUT}, /* past the symbol */
		{12, 63, CTP_APS_BAD_LAYOUT},
		{12, 0xffffffffu, CTP_APS_BAD_LAYOUT},
		{16, 0, CTP_APS_BAD_LAYOUT},
		{16, 257, CTP_APS_BAD_LAYOUT},
		{20, 0, CTP_APS_BAD_LAYOUT},
		{20, 1u << 30, CTP_APS_BAD_LAYOUT},
		{24, 55, CTP_APS_BAD_LAYOUT},
		{28, 263, CTP_APS_BAD_LAYOUT},
		{32, 0, CTP_APS_BAD_LAYOUT},	    /* inside the header */
		{32, 68, CTP_APS_BAD_LAYOUT},	    /* misaligned */
		{32, 1u << 31, CTP_APS_BAD_LAYOUT}, /* outside */
		{36, SIZE, CTP_APS_BAD_LAYOUT},	    /* slots past the end */
		{36, 1800, CTP_APS_BAD_LAYOUT},	    /* overlapping fields */
		{36, 0xfffffff8u,
		 CTP_APS_BAD_LAYOUT}, /* would wrap in 32 bits */
		{40, 33, CTP_APS_BAD_LAYOUT},
		{36, 8, CTP_APS_BAD_LAYOUT}, /* slots inside the header */
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		good(state);
		put32(img, cases[i].off, cases[i].v);
		if (header() != cases[i].want)
			fail_msg("offset %zu = %u: tag %s", cases[i].off,
				 cases[i].v, ctp_aps_tag_name(header()));
	}
	good(state);
	put64(img, 0, 0x1122334455667788ull);
	assert_int_equal(header(), CTP_APS_BAD_MAGIC);
	/* A symbol smaller than the registry claims to be. */
	struct ctp_aps_hdr h;
	const char *why;
	good(state);
	assert_int_equal(ctp_aps_header(img, sizeof(img), SIZE - 8, &h, &why),
			 CTP_APS_BAD_LAYOUT);
	/* A symbol smaller than the header: not a registry. */
	assert_int_equal(ctp_aps_header(img, sizeof(img), 63, &h, &why),
			 CTP_APS_BAD_LAYOUT);
}

static enum ctp_aps_tag fields(uint32_t *bad)
{
	struct ctp_aps_hdr h;
	struct ctp_aps_field f[CTP_APS_MAX_FIELDS];
	const char *why;

	assert_int_equal(ctp_aps_header(img, sizeof(img), SIZE, &h, &why),
			 CTP_APS_OK);
	return ctp_aps_fields(img, sizeof(img), &h, f, bad, &why);
}

static void test_fields(void **state)
{
	static const struct {
		const char *name;
		uint8_t unit, kind, rule;
	} bad[] = {
		{"", 1, 1, 1},	       {"Upper", 1, 1, 1}, {"a-b", 1, 1, 1},
		{".a", 1, 1, 1},       {"a.", 1, 1, 1},	   {"a..b", 1, 1, 1},
		{"ok", 7, 1, 1},       {"ok", 1, 0, 1},	   {"ok", 1, 6, 6},
		{"ok", 1, 1, 0},       {"ok", 1, 1, 6},	   {"ok", 5, 3, 1},
		{"requests", 1, 1, 1}, /* twice */
	};
	uint32_t at;

	good(state);
	assert_int_equal(fields(&at), CTP_APS_OK);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		good(state);
		field(img, 1, bad[i].name, bad[i].unit, bad[i].kind,
		      bad[i].rule);
		if (fields(&at) != CTP_APS_BAD_FIELD || at != 1)
			fail_msg("case %zu accepted", i);
	}
	/* 48 bytes of name, no NUL. */
	good(state);
	memset(img + FIELDS_OFF + 56, 'a', 48);
	assert_int_equal(fields(&at), CTP_APS_BAD_FIELD);
	/* 47 bytes: the longest. */
	good(state);
	memset(img + FIELDS_OFF + 56, 'a', 47);
	assert_int_equal(fields(&at), CTP_APS_OK);
}

struct seen {
	int n;
	int32_t tid[8];
	uint64_t v0[8];
};

static void on_slot(void *arg, int32_t tid, const uint64_t *values)
{
	struct seen *s = arg;

	if (s->n < 8) {
		s->tid[s->n] = tid;
		s->v0[s->n] = values[0];
	}
	s->n++;
}

static struct seen slots(struct ctp_aps_slot_stats *st)
{
	struct ctp_aps_hdr h;
	const char *why;
	struct seen s = {0};

	assert_int_equal(ctp_aps_header(img, sizeof(img), SIZE, &h, &why),
			 CTP_APS_OK);
	ctp_aps_slots(img, imgv, img2, sizeof(img), &h, on_slot, &s, st);
	return s;
}

static void test_slots(void **state)
{
	struct ctp_aps_slot_stats st;
	struct seen s;

	good(state);
	s = slots(&st);
	assert_int_equal(s.n, 3);
	assert_int_equal(st.kept, 3);
	assert_int_equal(s.tid[0], 100);
	assert_int_equal(s.v0[0], 11);
	assert_int_equal(s.tid[2], 102); /* the last slot too */
	/* Changing hands between the copies (seq moved), odd in both, the
	 * tid swapped, or -1: not kept, counted as torn. */
	put32(img2, SLOTS_OFF + 4, 4);
	slot(img, 5, 101, 5, 12);
	slot(img2, 5, 101, 5, 12);
	slot(img2, 1023, 103, 6, 13);
	slot(img, 7, -1, 3, 0);
	slot(img2, 7, -1, 3, 0);
	s = slots(&st);
	assert_int_equal(s.n, 0);
	assert_int_equal(st.torn, 4);
	/* Two stable slots of one tid: neither. */
	good(state);
	slot(img, 9, 101, 2, 99);
	slot(img2, 9, 101, 2, 99);
	s = slots(&st);
	assert_int_equal(s.n, 2);
	assert_int_equal(st.dup, 2);
	/* Values come from the middle copy (wholly between the two seqs'). */
	good(state);
	put64(img, SLOTS_OFF + 8, 44);
	put64(imgv, SLOTS_OFF + 8, 77);
	put64(img2, SLOTS_OFF + 8, 55);
	s = slots(&st);
	assert_int_equal(s.v0[0], 77);
}

static void test_same_shape(void **state)
{
	struct ctp_aps_hdr h;
	const char *why;

	good(state);
	assert_int_equal(ctp_aps_header(img, sizeof(img), SIZE, &h, &why),
			 CTP_APS_OK);
	assert_true(ctp_aps_same_shape(img, img2, SIZE, &h));
	/* A field declared meanwhile, a drop counted: still the shape. */
	put32(img2, 40, 3);
	put64(img2, 48, 8);
	assert_true(ctp_aps_same_shape(img, img2, SIZE, &h));
	/* Fewer fields, a number moved, a field renamed: changed. */
	put32(img2, 40, 1);
	assert_false(ctp_aps_same_shape(img, img2, SIZE, &h));
	memcpy(img2, img, SIZE);
	put32(img2, 20, 1000);
	assert_false(ctp_aps_same_shape(img, img2, SIZE, &h));
	memcpy(img2, img, SIZE);
	img2[FIELDS_OFF + 56] = 'b';
	assert_false(ctp_aps_same_shape(img, img2, SIZE, &h));
	assert_false(ctp_aps_same_shape(img, img, SIZE - 1, &h));
}

/* Append f owned by owner, as the collector does on CTP_APS_CLAIM_NEW. */
static enum ctp_aps_claim claim(struct ctp_aps_name *t, size_t *n, size_t cap,
				const struct ctp_aps_field *f, int32_t owner,
				uint32_t max_names, size_t *idx)
{
	enum ctp_aps_claim c =
		ctp_aps_name_claim(t, *n, cap, f, owner, max_names, idx);

	if (c == CTP_APS_CLAIM_NEW) {
		t[*n].f = *f;
		t[*n].owner = owner;
		*idx = (*n)++;
	}
	return c;
}

/* The squatter: app.requests declared count/counter/sum by its
 * first declarer, then bytes/gauge/max by another process: refused as a
 * conflict naming the owner's entry, the owner's own declaration still
 * its field; the same description from a third process shares it. */
static void test_name_conflict(void **state)
{
	static struct ctp_aps_name t[8];
	struct ctp_aps_field legit = {
		.name = "requests", .unit = 1, .kind = 1, .rule = 1};
	struct ctp_aps_field squat = {
		.name = "requests", .unit = 5, .kind = 3, .rule = 2};
	struct ctp_aps_field other = legit;
	size_t n = 0, i = 99;
	char buf[40];

	(void)state;
	assert_int_equal(claim(t, &n, 8, &legit, 100, 64, &i),
			 CTP_APS_CLAIM_NEW);
	assert_int_equal(claim(t, &n, 8, &squat, 200, 64, &i),
			 CTP_APS_CLAIM_CONFLICT);
	assert_int_equal(i, 0);
	assert_int_equal(t[i].owner, 100);
	assert_int_equal(claim(t, &n, 8, &legit, 100, 64, &i),
			 CTP_APS_CLAIM_KNOWN);
	assert_int_equal(claim(t, &n, 8, &legit, 300, 64, &i),
			 CTP_APS_CLAIM_KNOWN);
	other.rule = 2; /* one member differing is another description */
	assert_int_equal(claim(t, &n, 8, &other, 300, 64, &i),
			 CTP_APS_CLAIM_CONFLICT);
	assert_int_equal(n, 1);
	ctp_aps_desc(&squat, buf, sizeof(buf));
	assert_string_equal(buf, "bytes/gauge/max");
	ctp_aps_desc(&legit, buf, sizeof(buf));
	assert_string_equal(buf, "count/counter/sum");
}

/* One process declaring 1,025 names gets max_names of them; another's new
 * names still fit, and the table's own bound holds. */
static void test_name_caps(void **state)
{
	static struct ctp_aps_name t[1024];
	struct ctp_aps_field f = {.unit = 1, .kind = 1, .rule = 1};
	size_t n = 0, i, mine = 0;

	(void)state;
	for (int k = 0; k < 1025; k++) {
		snprintf(f.name, sizeof(f.name), "hog%d", k);
		mine += claim(t, &n, 1024, &f, 100, 64, &i) ==
			CTP_APS_CLAIM_NEW;
	}
	assert_int_equal(mine, 64);
	snprintf(f.name, sizeof(f.name), "hog%d", 2000);
	assert_int_equal(claim(t, &n, 1024, &f, 100, 64, &i),
			 CTP_APS_CLAIM_MAX_NAMES);
	/* A name the hog owns stays known to it past its cap. */
	snprintf(f.name, sizeof(f.name), "hog%d", 3);
	assert_int_equal(claim(t, &n, 1024, &f, 100, 64, &i),
			 CTP_APS_CLAIM_KNOWN);
	snprintf(f.name, sizeof(f.name), "requests");
	assert_int_equal(claim(t, &n, 1024, &f, 200, 64, &i),
			 CTP_APS_CLAIM_NEW);
	assert_int_equal(t[i].owner, 200);
	/* 15 more owners of 64 names fill the table: the next is refused
	 * whoever asks. */
	for (int o = 0; o < 16; o++)
		for (int k = 0; k < 64; k++) {
			snprintf(f.name, sizeof(f.name), "o%d_%d", o, k);
			claim(t, &n, 1024, &f, 1000 + o, 64, &i);
		}
	assert_int_equal(n, 1024);
	snprintf(f.name, sizeof(f.name), "late");
	assert_int_equal(claim(t, &n, 1024, &f, 5000, 64, &i),
			 CTP_APS_CLAIM_FULL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(test_header_good, good),
		cmocka_unit_test_setup(test_header_bad, good),
		cmocka_unit_test_setup(test_fields, good),
		cmocka_unit_test_setup(test_slots, good),
		cmocka_unit_test_setup(test_same_shape, good),
		cmocka_unit_test(test_name_conflict),
		cmocka_unit_test(test_name_caps),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
