/* SPDX-License-Identifier: MIT */
/* host-context's parsers: cpuinfo, meminfo, THP menus, sched tunables and
 * their names, online lists. */
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "host_parse.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *s = (const char *)data;
	struct ctp_hc_str t;
	struct ctp_hc_cpuinfo ci;
	struct ctp_hc_meminfo mi;
	struct ctp_hc_menu mn;
	struct ctp_hc_tunable tu;
	uint64_t words[128];
	char name[256], *z = malloc(size + 1);

	ctp_hc_trim(s, size, &t);
	ctp_hc_parse_cpuinfo(s, size, &ci);
	ctp_hc_parse_meminfo(s, size, &mi);
	ctp_hc_parse_menu(s, size, &mn);
	ctp_hc_parse_tunable(s, size, &tu);
	ctp_hc_parse_online(s, size, words, 128);
	if (z) {
		memcpy(z, data, size);
		z[size] = '\0';
		ctp_hc_sched_field_name(z, name, sizeof(name));
		ctp_hc_is_node_dir(z);
		free(z);
	}
	return 0;
}
