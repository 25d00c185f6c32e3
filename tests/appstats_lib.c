/* SPDX-License-Identifier: MIT */
/*
 * A shared object that includes appstats.h too, for test_appstats: the
 * process must still have one registry, and a thread publishing from this
 * object and from the executable one slot.
 */
#include "ctprof/appstats.h"

__attribute__((visibility("default"))) void *appstats_lib_registry(void)
{
	return &ctprof_appstats_v1;
}

__attribute__((visibility("default"))) int appstats_lib_add(const char *name,
							    uint64_t delta)
{
	int f = ctp_app_field(name, CTP_UNIT_COUNT, CTP_KIND_COUNTER,
			      CTP_RULE_SUM);
	if (f >= 0)
		ctp_app_add(f, delta);
	return f;
}
