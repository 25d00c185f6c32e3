/* SPDX-License-Identifier: MIT */
/*
 * Commands plugins add (ctp_plugin.commands): `ctprof-core NAME ARGS` for a
 * NAME that is not one of the core's own. The plugins of the default
 * configuration's directories are opened as `plugins` opens them (dlopen
 * and the descriptor's checks, no init), in directory order and by name;
 * the first that offers NAME runs it.
 */
#include <dirent.h>
#include <dlfcn.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "config.h"
#include "engine.h"
#include "loader.h"

int ctp_cli_each_plugin(const struct ctp_config *cfg,
			int (*fn)(const char *path, void *arg), void *arg)
{
	char **dirs;
	size_t ndirs;
	int r = 0;
	if (ctp_plugin_dirs(cfg, &dirs, &ndirs) < 0)
		return -1;
	for (size_t i = 0; i < ndirs; i++) {
		struct dirent **ents;
		int n = scandir(dirs[i], &ents, NULL, alphasort);
		for (int e = 0; e < n; e++) {
			size_t len = strlen(ents[e]->d_name);
			char path[PATH_MAX];
			if (!r && len > 3 &&
			    strcmp(ents[e]->d_name + len - 3, ".so") == 0 &&
			    snprintf(path, sizeof(path), "%s/%s", dirs[i],
				     ents[e]->d_name) < (int)sizeof(path))
				r = fn(path, arg);
			free(ents[e]);
		}
		if (n >= 0)
			free(ents);
		free(dirs[i]);
	}
	free(dirs);
	return r;
}

/* fn(d, c, arg) for every command of every plugin of the default
 * directories, in order, until fn returns true. */
struct each_cmd {
	bool allow_insecure;
	bool (*fn)(const struct ctp_plugin *d, const struct ctp_command *c,
		   void *arg);
	void *arg;
	bool stop;
};

static int one_plugin(const char *path, void *arg)
{
	struct each_cmd *e = arg;
	void *h = NULL;
	const struct ctp_plugin *d = NULL;
	char why[1024];
	if (ctp_plugin_open(path, e->allow_insecure, &h, &d, why, sizeof(why)) <
	    0)
		return 0;
	for (uint32_t i = 0; i < ctp_plugin_n_commands(d) && !e->stop; i++)
		e->stop = e->fn(d, ctp_plugin_command(d, i), e->arg);
	dlclose(h);
	return e->stop;
}

static void each_command(bool (*fn)(const struct ctp_plugin *d,
				    const struct ctp_command *c, void *arg),
			 void *arg)
{
	struct ctp_config *cfg = NULL;
	if (ctp_config_defaults(&cfg) < 0)
		return;
	struct each_cmd e = {.allow_insecure = cfg->allow_insecure_plugins,
			     .fn = fn,
			     .arg = arg};
	ctp_cli_each_plugin(cfg, one_plugin, &e);
	ctp_config_free(cfg);
}

struct find {
	int argc;
	char **argv;
	bool ran;
	int rc; /* the command's exit status, once ran */
};

static bool try_command(const struct ctp_plugin *d, const struct ctp_command *c,
			void *arg)
{
	struct find *f = arg;
	(void)d;
	if (strcmp(c->name, f->argv[0]) != 0)
		return false;
	fflush(stdout);
	int rc = c->run(f->argc, f->argv);
	fflush(stdout);
	/* An exit status; a negative errno is a failure. */
	f->rc = rc < 0 || rc > 255 ? CTP_EXIT_FAILURE : rc;
	f->ran = true;
	return true;
}

int ctp_cli_plugin_command(int argc, char **argv)
{
	struct find f = {.argc = argc, .argv = argv};
	if (argc < 1 || !argv[0][0] || argv[0][0] == '-')
		return -1;
	each_command(try_command, &f);
	return f.ran ? f.rc : -1;
}

struct list {
	FILE *out;
	bool any;
};

static bool list_command(const struct ctp_plugin *d,
			 const struct ctp_command *c, void *arg)
{
	struct list *l = arg;
	if (!l->any)
		fprintf(l->out, "\nCommands of plugins:\n");
	l->any = true;
	fprintf(l->out, "  %s %s (%s)\n", c->name, c->usage ? c->usage : "",
		d->name);
	return false;
}

void ctp_cli_print_plugin_commands(FILE *out)
{
	struct list l = {.out = out};
	each_command(list_command, &l);
}
