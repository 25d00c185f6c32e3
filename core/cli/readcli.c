/* SPDX-License-Identifier: MIT */
/* Command-line pieces shared by show, dump and compare (readcli.h). */
#include "readcli.h"

#include <errno.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "cli.h"
#include "grow.h"
#include "config.h"
#include "paths.h"
#include "render.h"
#include "term.h"
#include "ctprof/plugin-util.h"

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

/* Keep a copy of a list argument, to be split in place; NULL: no memory. */
static char *keep_copy(struct ctp_readopts *r, const char *arg)
{
	char *copy = strdup(arg);
	if (!copy ||
	    CTP_GROW(r->copies, r->copies_cap, r->n_copies + 1, 4) < 0) {
		free(copy);
		return NULL;
	}
	r->copies[r->n_copies++] = copy;
	return copy;
}

/* Split a comma list (a kept copy) onto r->globs. */
static int add_globs(struct ctp_readopts *r, char *list)
{
	for (char *save = NULL, *g = strtok_r(list, ",", &save); g;
	     g = strtok_r(NULL, ",", &save)) {
		if (CTP_GROW(r->globs, r->globs_cap, r->n_globs + 1, 8) < 0)
			return -ENOMEM;
		r->globs[r->n_globs++] = g;
	}
	return 0;
}

int ctp_readopts_option(const char *cmd, struct ctp_readopts *r, int c,
			const char *arg)
{
	char *copy;
	enum ctp_color color;

	switch (c) {
	case CTP_READOPT_GROUP_BY:
		r->group_by = arg;
		return -1;
	case CTP_READOPT_NO_NORMALIZE:
		r->spec.no_normalize = true;
		return -1;
	case CTP_READOPT_FLATTEN:
		if (CTP_GROW(r->flatten, r->flatten_cap, r->n_flatten + 1, 4) <
		    0)
			break;
		r->flatten[r->n_flatten++] = arg;
		return -1;
	case CTP_READOPT_FIELDS:
		if (!(copy = keep_copy(r, arg)) || add_globs(r, copy) < 0)
			break;
		return -1;
	case CTP_READOPT_LIMIT:
		if (ctp_parse_u64_str(arg, &r->limit) == 0)
			return -1;
		fprintf(stderr,
			"ctprof-core %s: --limit wants a number, not '%s'\n",
			cmd, arg);
		return CTP_EXIT_USAGE;
	case CTP_READOPT_SORT:
		r->sort = arg;
		return -1;
	case CTP_READOPT_CAP:
		r->cap_arg = arg;
		return -1;
	case CTP_READOPT_COLOR:
		if (ctp_color_parse(arg, &color) == 0) {
			ctp_color_set(color);
			return -1;
		}
		fprintf(stderr,
			"ctprof-core %s: --color wants auto, always or never, "
			"not '%s'\n",
			cmd, arg);
		return CTP_EXIT_USAGE;
	case 'c':
		r->config = arg;
		return -1;
	default:
		return CTP_READOPT_NOT_MINE;
	}
	fprintf(stderr, "ctprof-core %s: out of memory\n", cmd);
	return CTP_EXIT_FAILURE;
}

_Static_assert(CTP_READOPT_COLOR - CTP_READOPT_GROUP_BY < 32,
	       "a bit of ctp_readopts.given for each shared option");

int ctp_readopts_parse(const char *cmd, struct ctp_readopts *r, int argc,
		       char **argv, const char *shortopts,
		       const struct option *lopts, ctp_readopts_own_fn own,
		       void *ctx)
{
	int c, rc;

	optind = 0; /* main() or a test may have used getopt */
	while ((c = getopt_long(argc, argv, shortopts, lopts, NULL)) != -1) {
		if (c >= CTP_READOPT_GROUP_BY && c <= CTP_READOPT_COLOR)
			r->given |= 1u << (c - CTP_READOPT_GROUP_BY);
		rc = ctp_readopts_option(cmd, r, c, optarg);
		if (rc == CTP_READOPT_NOT_MINE)
			rc = own(ctx, c, optarg);
		if (rc >= 0)
			return rc;
	}
	return -1;
}

int ctp_readopts_finish(const char *cmd, struct ctp_readopts *r, int argc,
			char **argv, int want, const char *const *names)
{
	char e[256];
	int rc;

	if ((rc = ctp_readcli_operands(cmd, argc, argv, optind, want, names)) !=
		    0 ||
	    (rc = ctp_readcli_cap(cmd, r->config, r->cap_arg, &r->cap)) != 0)
		return rc;
	if (!r->group_by) {
		if (!r->spec.no_normalize && !r->n_flatten)
			return -1;
		fprintf(stderr,
			"ctprof-core %s: --no-normalize and --flatten need "
			"--group-by\n",
			cmd);
		return CTP_EXIT_USAGE;
	}
	r->axes = strdup(r->group_by);
	if (!r->axes) {
		fprintf(stderr, "ctprof-core %s: out of memory\n", cmd);
		return CTP_EXIT_FAILURE;
	}
	if (ctp_group_spec_parse(r->axes, &r->spec, e, sizeof(e)) < 0) {
		fprintf(stderr, "ctprof-core %s: --group-by %s: %s\n", cmd,
			r->group_by, e);
		return CTP_EXIT_USAGE;
	}
	r->spec.flatten = r->flatten;
	r->spec.n_flatten = r->n_flatten;
	return -1;
}

void ctp_readopts_done(struct ctp_readopts *r)
{
	for (size_t i = 0; i < r->n_copies; i++)
		free(r->copies[i]);
	free(r->copies);
	free(r->globs);
	free(r->flatten);
	free(r->axes);
}

void ctp_readcli_term(size_t *w, size_t *h)
{
	struct winsize ws = {0};
	const char *c = getenv("COLUMNS"), *l = getenv("LINES");
	uint64_t v;
	bool tty = ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0;
	*w = c && ctp_parse_u64_str(c, &v) == 0 && v ? v
	     : tty && ws.ws_col			     ? ws.ws_col
						     : 80;
	*h = l && ctp_parse_u64_str(l, &v) == 0 && v ? v : tty ? ws.ws_row : 0;
}

FILE *ctp_readcli_screen(void)
{
	FILE *screen = stdout, *s = ctp_term_stream(screen);
	if (s)
		stdout = s;
	return screen;
}

int ctp_readcli_screen_done(FILE *screen)
{
	if (stdout == screen)
		return 0;
	int r = fclose(stdout);
	stdout = screen;
	return r;
}
