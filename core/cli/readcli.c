/* SPDX-License-Identifier: MIT */
/* Command-line pieces shared by show, dump and compare (readcli.h). */
#include "readcli.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "config.h"
#include "paths.h"
#include "render.h"

int ctp_readcli_try_help(const char *cmd)
{
	fprintf(stderr, "Try 'ctprof-core %s --help'.\n", cmd);
	return CTP_EXIT_USAGE;
}

int ctp_readcli_operands(const char *cmd, int argc, char **argv, int first,
			 int want, const char *const *names)
{
	int have = argc - first;
	char list[128] = "", esc[256];

	if (have == want)
		return 0;
	for (int i = 0; i < want; i++)
		snprintf(list + strlen(list), sizeof(list) - strlen(list),
			 "%s%s", i ? (i + 1 == want ? " and " : ", ") : "",
			 names[i]);
	if (have < want) {
		fprintf(stderr, "ctprof-core %s: missing %s (%s takes %s)\n",
			cmd, names[have], cmd, list);
	} else {
		const char *a = argv[first + want];
		fprintf(stderr,
			"ctprof-core %s: unexpected argument '%s' (%s takes %s"
			"%s)\n",
			cmd,
			ctp_render_escape(a, strlen(a), 80, esc, sizeof(esc)),
			cmd, want == 1 ? "one " : "", list);
	}
	return ctp_readcli_try_help(cmd);
}

int ctp_readcli_cap(const char *cmd, const char *config, const char *cap_arg,
		    uint64_t *cap)
{
	struct ctp_config *cfg = NULL;
	char path[4096], err[512];
	int r;

	if (!config && !cap_arg) {
		ctp_paths_config_file(path, sizeof(path));
		if (access(path, F_OK) == 0)
			config = path;
	}
	if (config) {
		r = ctp_config_load(config, &cfg, err, sizeof(err));
		if (r < 0) {
			fprintf(stderr, "ctprof-core %s: %s\n", cmd, err);
			return CTP_EXIT_USAGE;
		}
	} else if (ctp_config_defaults(&cfg) < 0) {
		fprintf(stderr, "ctprof-core %s: out of memory\n", cmd);
		return CTP_EXIT_USAGE;
	}
	*cap = cfg->max_decompressed_bytes;
	ctp_config_free(cfg);
	if (!cap_arg)
		return 0;
	r = ctp_config_parse_bytes(cap_arg, cap);
	if (r < 0) {
		fprintf(stderr,
			"ctprof-core %s: --max-decompressed wants a byte count "
			"of at least 1 below 2^64 (an integer, optionally "
			"followed by K, M, G, KiB, MiB or GiB), not '%s'\n",
			cmd,
			ctp_render_escape(cap_arg, strlen(cap_arg), 80, err,
					  sizeof(err)));
		return CTP_EXIT_USAGE;
	}
	return 0;
}
