/* SPDX-License-Identifier: MIT */
/*
 * The YAML config loader on arbitrary text, then what check-config does
 * with a config it accepts: apply the host rules for a host that matches
 * everything the rules can name and for one that matches nothing, and
 * print the effective configuration.
 */
#include <stdio.h>

#include "config.h"
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const struct ctp_host_facts facts[] = {
		{.hostname = "web-01.example", .release = "6.18.0"},
		{.hostname = NULL, .release = NULL},
	};
	struct ctp_config *cfg;
	char err[1024];

	if (ctp_config_load_buf("fuzz.yaml", (const char *)data, size, &cfg,
				err, sizeof(err)) < 0)
		return 0;
	for (size_t i = 0; i < sizeof(facts) / sizeof(facts[0]); i++) {
		FILE *out = fopen("/dev/null", "w");
		if (ctp_config_apply_hosts(cfg, &facts[i]) == 0 && out)
			ctp_config_print(cfg, out);
		if (out)
			fclose(out);
	}
	ctp_config_free(cfg);
	return 0;
}
