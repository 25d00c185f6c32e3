/* SPDX-License-Identifier: MIT */
/*
 * Every public header, included by a program of a user's (issue 28 point
 * 16): tests/public_headers.sh compiles this as C and as C++, with GCC
 * and Clang, at each optimization level, -Wall -Wextra -Werror. Field
 * names are short literals (a strnlen bound past a 4-byte literal was a
 * -Wstringop-overread at -O1, a look past the end an -Warray-bounds at
 * -O3). It prints the registry's layout, which the C and C++ builds must
 * agree on, and exits 0 when every field was declared.
 */
#include <ctprof/appstats.h>
#include <ctprof/plugin-util.h>
#include <ctprof/plugin.h>
#include <ctprof/source-taskstats.h>
#include <stdio.h>

static int f[3];

/* Declared outside main, as a program would at its start: GCC's warnings
 * came with this inlining, not with the calls in main. */
int declare(void);
int declare(void)
{
	f[0] = ctp_app_field("a", CTP_UNIT_COUNT, CTP_KIND_COUNTER,
			     CTP_RULE_SUM);
	f[1] = ctp_app_field("req", CTP_UNIT_BYTES, CTP_KIND_GAUGE,
			     CTP_RULE_MAX);
	f[2] = ctp_app_field("x.y", CTP_UNIT_COUNT, CTP_KIND_GAUGE,
			     CTP_RULE_MIN);
	return f[0] == 0 && f[1] == 1 && f[2] == 2;
}

int main(void)
{
	int ok = declare();

	ctp_app_add(f[0], 1);
	ctp_app_set(f[1], 2);
	ctp_app_set(f[2], 3);
	printf("size %zu fields %zu slots %zu slot %zu values %zu dropped "
	       "%zu\n",
	       sizeof(struct ctprof_appstats),
	       offsetof(struct ctprof_appstats, fields),
	       offsetof(struct ctprof_appstats, slots),
	       sizeof(struct ctprof_appstats_slot),
	       offsetof(struct ctprof_appstats_slot, values),
	       offsetof(struct ctprof_appstats, dropped));
	return !ok;
}
