/* SPDX-License-Identifier: MIT */
/* ctprof-core: command line entry point and the capture command. */
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/capability.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "ctprof/plugin-util.h"
#include "build_config.h"
#include "capture_util.h"
#include "cli.h"
#include "config.h"
#include "engine.h"
#include "format.h"
#include "loader.h"
#include "log.h"
#include "options.h"
#include "priv.h"
#include "suggest.h"
#include "supervise.h"
#include "supervisor.h"
#include "table.h"
#include "writer.h"

static volatile sig_atomic_t stop_requested;

/* SIGINT/SIGTERM: ask the walk and the writer to stop, and give them one
 * second; the first signal arms the alarm below. The supervisor passes
 * them on to the capture's process. */
static void on_signal(int sig)
{
	/* In the supervisor: the capture is the child's to stop. */
	if (ctp_supervised_child > 0) {
		kill((pid_t)ctp_supervised_child, sig);
		stop_requested = sig;
		return;
	}
	if (!stop_requested)
		alarm(1);
	stop_requested = sig;
}

/*
 * A capture still running a second after SIGINT/SIGTERM (a plugin callback
 * that does not return, a worker stuck in the kernel) ends here. Nothing
 * named is left: the snapshot is still an unnamed O_TMPFILE, or the writer
 * already named it whole.
 */
static void on_alarm(int sig)
{
	static const char msg[] =
		"ctprof-core: interrupted; no snapshot written\n";
	(void)sig;
	if (write(STDERR_FILENO, msg, sizeof(msg) - 1) < 0) {
		/* nothing more to do */
	}
	_exit(CTP_EXIT_INTERRUPTED);
}

/* An enum's format name for printing, "?" when it has none. */
static const char *name_of(enum ctp_enum e, unsigned v)
{
	const char *n = ctp_enum_name(e, v);
	return n ? n : "?";
}

static void usage_main(FILE *out)
{
	fprintf(out,
		"Usage: ctprof-core [--config FILE] [-o OUT] [--workers N] "
		"[-q|-v]\n"
		"       ctprof-core COMMAND [ARGS]\n"
		"\n"
		"Take a per-thread resource profile of this host (the default "
		"command), or:\n"
		"  show FILE            the top processes and threads "
		"(--view NAME, --view all)\n"
		"  views [NAME]         the views show prints, or one view's "
		"columns\n"
		"  record -o DIR        keep the plugins loaded and write a "
		"snapshot every interval\n"
		"  dump FILE            print a whole snapshot as JSON\n"
		"  compare BASE CAND    join two snapshots' groups and show "
		"what changed\n"
		"  export FILE          OpenMetrics for Prometheus, or CSV/"
		"NDJSON rows for SQL\n"
		"  serve                answer Prometheus' scrapes with fresh "
		"captures (HTTP)\n"
		"  trend DIR            per task over a recording: first, "
		"last, min, max, change\n"
		"  top                  a live full-screen view of the last "
		"interval, with keys\n"
		"  replay DIR           the same screen over a recording "
		"(top --replay DIR)\n"
		"  selftest             per-task sources (BPF, taskstats) "
		"against the files, here\n"
		"  plugins [--config F] list plugins with their fields\n"
		"  check-config FILE [--as-host NAME]   (or --config FILE)\n"
		"                       validate a config and print the "
		"effective plugin set\n"
		"\n"
		"Capture options:\n"
		"  -c, --config FILE    configuration (default: %s)\n"
		"  -o, --output OUT     output path (strftime pattern; '-' for "
		"stdout); overrides the config;\n"
		"                       a FIFO or device is written into, "
		"never replaced;\n"
		"                       a directory gets a new file named by "
		"the config's pattern\n"
		"  -j, --workers N      walker threads; overrides the config\n"
		"      --strict         any plugin failure fails the capture "
		"(exit 3, no snapshot)\n"
		"      --no-supervise   run the capture in this process: a "
		"plugin that crashes ends it\n"
		"                       (by default it is named, left out and "
		"the capture runs again)\n"
		"  -q, --quiet          only errors\n"
		"  -v, --verbose        more messages (twice: debug)\n"
		"  -h, --help           this help\n"
		"  -V, --version        print the version\n"
		"\n"
		"Exit status: 0 ok; 1 capture or I/O failure, unreadable "
		"snapshot; 2 usage or configuration error;\n"
		"3 a required plugin (any, with --strict) failed (no snapshot "
		"written); 130 "
		"interrupted by SIGINT/SIGTERM (no file left).\n"
		"Every command takes --help.\n",
		ctp_cli_default_config());
	if (out == stdout)
		ctp_cli_print_plugin_commands(out);
}

static int parse_workers(const char *s, unsigned *out)
{
	char *end;
	errno = 0;
	unsigned long v = strtoul(s, &end, 10);
	if (errno || *end || v < 1 || v > 256)
		return -EINVAL;
	*out = (unsigned)v;
	return 0;
}

static int expand_output(const char *pattern, uint64_t when_ns, char *out,
			 size_t outlen)
{
	if (strcmp(pattern, "-") == 0) {
		snprintf(out, outlen, "-");
		return 0;
	}
	time_t t = (time_t)(when_ns / 1000000000ull);
	struct tm tm;
	localtime_r(&t, &tm);
	/* The pattern is the user's own strftime format, on purpose. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wformat-nonliteral"
	size_t n = strftime(out, outlen, pattern, &tm);
#pragma GCC diagnostic pop
	return n == 0 ? -ENAMETOOLONG : 0;
}

/* The capture's command line. */
struct capture_args {
	const char *config_path, *output; /* NULL: from the config */
	unsigned workers;		  /* 0: from the config */
	bool strict;
	bool no_supervise; /* run the capture in this process */
	bool supervised;   /* this is the supervisor's child */
};

/* Parse the capture's arguments into *a. Returns -1 to go on, else the exit
 * status to end with (--help, --version, a usage error). */
static int parse_capture_args(int argc, char **argv, struct capture_args *a)
{
	static const struct option opts[] = {
		{"config", required_argument, NULL, 'c'},
		{"output", required_argument, NULL, 'o'},
		{"workers", required_argument, NULL, 'j'},
		{"quiet", no_argument, NULL, 'q'},
		{"verbose", no_argument, NULL, 'v'},
		{"help", no_argument, NULL, 'h'},
		{"version", no_argument, NULL, 'V'},
		{"strict", no_argument, NULL, 'S'},
		{"no-supervise", no_argument, NULL, 'N'},
		{0},
	};
	int c;
	optind = 1;
	while ((c = getopt_long(argc, argv, "c:o:j:qvhV", opts, NULL)) != -1) {
		switch (c) {
		case 'c':
			a->config_path = optarg;
			break;
		case 'o':
			a->output = optarg;
			break;
		case 'j':
			if (parse_workers(optarg, &a->workers) < 0) {
				fprintf(stderr,
					"ctprof-core: --workers must be "
					"an integer in 1..256\n");
				return CTP_EXIT_USAGE;
			}
			break;
		case 'q':
			ctp_verbosity = -1;
			break;
		case 'S':
			a->strict = true;
			break;
		case 'N':
			a->no_supervise = true;
			break;
		case 'v':
			ctp_verbosity++;
			break;
		case 'h':
			usage_main(stdout);
			return CTP_EXIT_OK;
		case 'V':
			printf("ctprof-core %s (plugin ABI %d)\n", CTP_VERSION,
			       CTP_ABI_MAJOR);
			return CTP_EXIT_OK;
		default:
			fprintf(stderr, "ctprof-core: try --help\n");
			return CTP_EXIT_USAGE;
		}
	}
	if (optind < argc) {
		char near[32];
		ctp_closest_name(argv[optind], ctp_core_commands, near,
				 sizeof(near));
		fprintf(stderr, "ctprof-core: unknown command '%s'%s%s%s\n",
			argv[optind],
			*near ? "; did you mean '" : " (try --help)", near,
			*near ? "'?" : "");
		return CTP_EXIT_USAGE;
	}
	if (!a->config_path)
		a->config_path = ctp_cli_default_config();
	return -1;
}

/* Load the plugins and walk the host into cap. Returns 0 or the exit
 * status to end with (message printed). */
static int walk(struct ctp_engine *eng, const struct capture_args *a)
{
	struct ctp_capture *cap = eng->cap;
	eng->progress = isatty(STDERR_FILENO) && ctp_verbosity >= 0;
	eng->strict = a->strict;
	ctp_sv_busy(true);
	int r = ctp_engine_load(eng);
	ctp_sv_busy(false);
	if (r == -ECANCELED)
		return CTP_EXIT_REQUIRED;
	if (r < 0) {
		fprintf(stderr, "ctprof-core: loading plugins: %s\n",
			strerror(-r));
		return CTP_EXIT_FAILURE;
	}
	ctp_sv_busy(true);
	r = ctp_engine_capture(eng);
	ctp_sv_busy(false);
	cap->end_realtime_ns = ctp_cli_realtime_ns();
	cap->end_mono_ns = ctp_now_ns();
	ctp_cli_oom_exit();
	if (r == -EINTR || stop_requested) {
		fprintf(stderr,
			"ctprof-core: interrupted; no snapshot written\n");
		return CTP_EXIT_INTERRUPTED;
	}
	if (r < 0) {
		fprintf(stderr, "ctprof-core: capture failed: %s\n",
			strerror(-r));
		return CTP_EXIT_FAILURE;
	}
	if (a->strict && ctp_cli_plugin_gave_up(cap))
		return CTP_EXIT_REQUIRED;
	return 0;
}

/*
 * An output that names an existing directory (`-o /var/tmp/`) means a new
 * file in it, named by the last component of the configured pattern (by
 * default ctprof-%Y%m%dT%H%M%S.ctprof.zst), as cp(1) copies into a
 * directory. Anything else is returned as it is.
 */
static const char *output_in_dir(const char *output, const char *pattern,
				 char *buf, size_t len)
{
	struct stat st;
	if (strcmp(output, "-") == 0 || stat(output, &st) < 0 ||
	    !S_ISDIR(st.st_mode))
		return output;
	const char *slash = strrchr(pattern, '/');
	const char *leaf = slash ? slash + 1 : pattern;
	if (!*leaf || strcmp(pattern, output) == 0)
		leaf = "ctprof-%Y%m%dT%H%M%S.ctprof.zst";
	size_t n = strlen(output);
	int w = snprintf(buf, len, "%s%s%s", output,
			 n && output[n - 1] == '/' ? "" : "/", leaf);
	return w > 0 && (size_t)w < len ? buf : output;
}

/* One capture with a loaded config: engine up, walk, write, engine down. */
static int run_capture(const struct ctp_config *cfg,
		       const struct capture_args *a)
{
	char in_dir[PATH_MAX];
	const char *output = output_in_dir(a->output ? a->output : cfg->output,
					   cfg->output, in_dir, sizeof(in_dir));
	struct ctp_capture *cap = NULL;
	int r = ctp_capture_new(cfg->workers ? cfg->workers : 1, &cap);
	if (r < 0) {
		fprintf(stderr, "ctprof-core: %s\n", strerror(-r));
		return CTP_EXIT_FAILURE;
	}
	ctp_cli_capture_begin(cap);
	cap->config_path = strdup(a->config_path);

	int rc;
	char outpath[PATH_MAX];
	if (expand_output(output, cap->start_realtime_ns, outpath,
			  sizeof(outpath)) < 0) {
		fprintf(stderr,
			"ctprof-core: output pattern '%s' expands to "
			"nothing or too long a path\n",
			output);
		ctp_capture_free(cap);
		return CTP_EXIT_USAGE;
	}
	struct ctp_engine eng;
	r = ctp_engine_init(&eng, cfg, cap, &stop_requested);
	if (r >= 0)
		ctp_cli_record_self(cap, a->supervised);
	rc = r < 0 ? CTP_EXIT_FAILURE : walk(&eng, a);
	/* The plugins' fini before the file exists: a plugin that crashes
	 * there is left out of the next attempt like any other. */
	ctp_engine_unload(&eng);
	char why[256];
	if (!rc && ctp_capture_spoiled(cap, why, sizeof(why)))
		ctp_log(CTP_LOG_WARNING, "capture short of resources: %s", why);
	if (!rc)
		rc = ctp_cli_write(cap, cfg, outpath, &stop_requested, NULL,
				   true);
	ctp_engine_done(&eng);
	ctp_capture_free(cap);
	return rc;
}

/* ctp_supervise's view of run_capture. */
static int supervised_run(const struct ctp_config *cfg, void *arg)
{
	struct capture_args *a = arg;
	a->supervised = true; /* the child's copy */
	return run_capture(cfg, a);
}

static int cmd_capture(int argc, char **argv)
{
	struct capture_args a = {0};
	int rc = parse_capture_args(argc, argv, &a);
	if (rc >= 0)
		return rc;
	struct ctp_config *cfg = NULL;
	rc = ctp_cli_load_config(a.config_path, NULL, &cfg);
	if (rc)
		return rc;
	if (a.workers)
		cfg->workers = a.workers;

	struct sigaction sa = {.sa_handler = on_signal};
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	struct sigaction al = {.sa_handler = on_alarm};
	sigemptyset(&al.sa_mask);
	sigaction(SIGALRM, &al, NULL);

	if (a.no_supervise)
		rc = run_capture(cfg, &a);
	else
		rc = ctp_supervise(cfg, a.strict, supervised_run, &a,
				   &stop_requested);
	ctp_config_free(cfg);
	return rc;
}

/* ---- plugins ----------------------------------------------------------------
 */

/* A listing of plugins' fields or options, or why not (r: -ENOMEM). */
static void print_list(struct ctp_table *t, int r)
{
	if (r == 0) {
		ctp_table_fit(t, 0, NULL);
		ctp_table_print(t, stdout, false);
	} else {
		fprintf(stderr, "ctprof-core plugins: out of memory\n");
	}
	ctp_table_free(t);
}

/* The fields a plugin declares, each with what the core's check of its
 * declaration says when it refuses it. */
static void print_fields(const struct ctp_plugin *d)
{
	static const struct ctp_table_col cols[] = {
		{"FIELD", CTP_TABLE_OVERFLOW, 28, 0},
		{"SCOPE", CTP_TABLE_OVERFLOW, 8, 0},
		{"TYPE", CTP_TABLE_OVERFLOW, 7, 0},
		{"UNIT", CTP_TABLE_OVERFLOW, 9, 0},
		{"KIND", CTP_TABLE_OVERFLOW, 12, 0},
		{"RULE", CTP_TABLE_OVERFLOW, 6, 0},
		{"HELP", 0, 0, 0}};
	struct ctp_table *t = ctp_table_new_cols(CTP_TABLE_LIST, cols, 7);
	int r = t ? 0 : -ENOMEM;
	for (uint32_t i = 0; r == 0 && i < d->n_fields; i++) {
		const struct ctp_field_desc *f =
			(const void *)((const char *)d->fields +
				       (size_t)i * d->field_desc_size);
		const char *reason;
		bool ok = ctp_field_desc_check(f, &reason) == 0;
		const char *const cells[] = {f->name ? f->name : "(null)",
					     name_of(CTP_ENUM_SCOPE, f->scope),
					     name_of(CTP_ENUM_TYPE, f->type),
					     name_of(CTP_ENUM_UNIT, f->unit),
					     name_of(CTP_ENUM_KIND, f->kind),
					     name_of(CTP_ENUM_RULE, f->rule)};
		r = ctp_table_texts(t, cells, 6);
		if (r == 0)
			r = ctp_table_textf(
				t, "%s%s%s%s", f->help ? f->help : "",
				ok ? "" : "  [INVALID: ", ok ? "" : reason,
				ok ? "" : "]");
	}
	print_list(t, r);
}

/* The options a plugin declares (CTP_PLUGIN_OPTIONS), or that it does
 * not. */
static void print_options(const struct ctp_plugin *d)
{
	bool declared;
	size_t n;
	const struct ctp_option_desc *t = ctp_options_table(d, &declared, &n);
	if (!declared) {
		printf("  options: not declared (the plugin checks its own)\n");
		return;
	}
	if (!n) {
		printf("  options: none\n");
		return;
	}
	static const struct ctp_table_col cols[] = {
		{"OPTION", CTP_TABLE_OVERFLOW, 28, 0},
		{"TYPE", CTP_TABLE_OVERFLOW, 8, 0},
		{"DEFAULT", CTP_TABLE_OVERFLOW, 12, 0},
		{"HELP", 0, 0, 0}};
	struct ctp_table *tab = ctp_table_new_cols(CTP_TABLE_LIST, cols, 4);
	int r = tab ? 0 : -ENOMEM;
	for (size_t i = 0; r == 0 && i < n; i++) {
		const struct ctp_option_desc *o =
			(const void *)((const char *)t +
				       i * d->option_desc_size);
		const char *const cells[] = {o->name ? o->name : "(null)",
					     ctp_option_type_name(o->type),
					     o->def ? o->def : "-"};
		char *help = NULL;
		size_t len = 0;
		FILE *f = open_memstream(&help, &len);
		if (!f) {
			r = -ENOMEM;
			break;
		}
		fputs(o->help ? o->help : "", f);
		for (size_t c = 0; o->choices && o->choices[c]; c++)
			fprintf(f, "%s%s",
				c ? ", " : " (one of: ", o->choices[c]);
		fputs(o->choices && o->choices[0] ? ")" : "", f);
		r = fclose(f) ? -ENOMEM : ctp_table_texts(tab, cells, 3);
		if (r == 0)
			r = ctp_table_text(tab, help);
		free(help);
	}
	print_list(tab, r);
}

static void print_plugin(const char *path, bool allow_insecure)
{
	void *h = NULL;
	const struct ctp_plugin *d = NULL;
	char why[1024];
	if (ctp_plugin_open(path, allow_insecure, &h, &d, why, sizeof(why)) <
	    0) {
		printf("%s: cannot load: %s\n\n", path, why);
		return;
	}
	printf("%s %s — %s\n  path: %s\n  flags: %s%s%s%s\n", d->name,
	       d->version ? d->version : "",
	       d->description ? d->description : "", path,
	       d->flags & CTP_PLUGIN_MT_SAFE ? "mt-safe" : "serialized",
	       d->flags & CTP_PLUGIN_FD_LOCAL ? ", fd-local" : "",
	       d->flags & CTP_PLUGIN_SPLITTABLE ? ", splittable" : "",
	       d->flags & CTP_PLUGIN_NO_THREAD_DIR ? ", no-thread-dir" : "");
	bool declared;
	char caps[512];
	ctp_priv_caps_format(ctp_plugin_caps(d, &declared), caps, sizeof(caps));
	printf("  capabilities: %s%s\n", caps,
	       declared ? "" : " (undeclared: the default set is kept)");
	printf("  files:");
	for (size_t i = 0; d->thread_files && d->thread_files[i]; i++)
		printf(" task/<tid>/%s", d->thread_files[i]);
	for (size_t i = 0; d->process_files && d->process_files[i]; i++)
		printf(" <tgid>/%s", d->process_files[i]);
	printf("\n  callbacks:%s%s%s%s%s\n", d->host ? " host" : "",
	       d->process ? " process" : "", d->thread ? " thread" : "",
	       d->cgroup ? " cgroup" : "", d->finish ? " finish" : "");
	for (uint32_t i = 0; i < ctp_plugin_n_commands(d); i++) {
		const struct ctp_command *c = ctp_plugin_command(d, i);
		printf("  command: ctprof-core %s %s\n", c->name,
		       c->usage ? c->usage : "");
	}
	print_fields(d);
	print_options(d);
	if (d->size >= offsetof(struct ctp_plugin, reserved_end) &&
	    d->counters && d->n_counters) {
		printf("  summary counters:");
		for (uint32_t i = 0; i < d->n_counters; i++)
			printf("%s %s", i ? "," : "",
			       d->counters[i] ? d->counters[i] : "(null)");
		printf("\n");
	}
	printf("  (fields a plugin registers at runtime appear only in "
	       "snapshots)\n\n");
	dlclose(h);
}

/* One plugin's options where the config sets them (its declaration and
 * every host rule's override, matching here or not) against the table d
 * declares. Each error is one FILE:LINE:COL line; returns 0 or -EINVAL. */
static int check_options(const struct ctp_config *cfg, const char *name,
			 const struct ctp_plugin *d)
{
	int rc = 0;
	const struct ctp_plugin_cfg *sets[64];
	size_t n = 0;
	for (size_t i = 0; i < cfg->n_plugins && n < 64; i++)
		if (strcmp(cfg->declared_plugins[i].name, name) == 0)
			sets[n++] = &cfg->declared_plugins[i];
	for (size_t r = 0; r < cfg->n_rules; r++)
		for (size_t i = 0; i < cfg->rules[r].n_plugins && n < 64; i++)
			if (strcmp(cfg->rules[r].plugins[i].name, name) == 0)
				sets[n++] = &cfg->rules[r].plugins[i];
	for (size_t k = 0; k < n; k++) {
		const struct ctp_kv *bad = NULL;
		char why[512];
		if (ctp_options_check(d, sets[k], &bad, why, sizeof(why)) < 0) {
			fprintf(stderr, "%s:%u:%u: plugin '%s': %s\n",
				cfg->path ? cfg->path : "(defaults)", bad->line,
				bad->col, name, why);
			rc = -EINVAL;
		}
	}
	return rc;
}

/* The plugins' own checks of the values in effect here (files a value
 * names: ctp_option_desc.check), for a plugin enabled on this host; one
 * FILE:LINE:COL line when one fails. Returns 0 or the negative errno. */
static int check_values(const struct ctp_config *cfg,
			const struct ctp_plugin_cfg *pc,
			const struct ctp_plugin *d)
{
	const struct ctp_kv *bad = NULL;
	char why[1200];
	int r;
	if (!pc->enabled ||
	    (r = ctp_options_check_values(d, pc, &bad, why, sizeof(why))) >= 0)
		return 0;
	fprintf(stderr, "%s:%u:%u: plugin '%s': %s\n",
		cfg->path ? cfg->path : "(defaults)", bad ? bad->line : 0,
		bad ? bad->col : 0, pc->name, why);
	return r;
}

/*
 * Find, open and name-check every plugin the config declares, enabled on
 * this host or not (a host rule elsewhere may enable it), as a capture
 * would. Each failure is one "FILE:LINE:COL: plugin 'NAME': why" line.
 * Returns 0, or CTP_EXIT_USAGE when any plugin does not resolve. With
 * paths, paths[i] gets the file of cfg->plugins[i] (caller frees).
 */
static int resolve_plugins(const struct ctp_config *cfg, char **paths)
{
	char **dirs;
	size_t ndirs;
	if (ctp_plugin_dirs(cfg, &dirs, &ndirs) < 0)
		return CTP_EXIT_FAILURE;
	int rc = 0;
	for (size_t i = 0; i < cfg->n_plugins; i++) {
		const struct ctp_plugin_cfg *pc = &cfg->plugins[i];
		char why[4096 + 256], *path = NULL;
		void *h = NULL;
		const struct ctp_plugin *d = NULL;
		int r = ctp_plugin_resolve(dirs, ndirs, pc->name,
					   cfg->allow_insecure_plugins, &path,
					   &h, &d, why, sizeof(why));
		if (r == 0 && (check_options(cfg, pc->name, d) < 0 ||
			       check_values(cfg, pc, d) < 0)) {
			rc = CTP_EXIT_USAGE;
			dlclose(h);
		} else if (r < 0) {
			fprintf(stderr, "%s:%u:%u: plugin '%s'%s%s%s: %s\n",
				cfg->path ? cfg->path : "(defaults)", pc->line,
				pc->col, pc->name, path ? " (" : "",
				path ? path : "", path ? ")" : "", why);
			rc = CTP_EXIT_USAGE;
		} else {
			dlclose(h);
		}
		if (paths)
			paths[i] = path;
		else
			free(path);
	}
	for (size_t i = 0; i < ndirs; i++)
		free(dirs[i]);
	free(dirs);
	return rc;
}

/* What `plugins` lists: the plugins named on its command line (none: all),
 * each whole or by name only (--names). */
struct plugin_list {
	bool allow, names_only;
	char **want;
	size_t n_want;
	bool seen[64];
};

/* Is plugin `name` one the command line asks for? Marks it seen. */
static bool wanted(struct plugin_list *l, const char *name)
{
	bool any = false;
	for (size_t i = 0; i < l->n_want; i++)
		if (strcmp(l->want[i], name) == 0)
			any = l->seen[i] = true;
	return any || !l->n_want;
}

static void list_one(struct plugin_list *l, const char *name, const char *path)
{
	if (!wanted(l, name))
		return;
	if (l->names_only)
		printf("%s\n", name);
	else
		print_plugin(path, l->allow);
}

/* A plugin file of the directories: its name is the file's, less ".so". */
static int print_one(const char *path, void *arg)
{
	const char *base = strrchr(path, '/');
	char name[256];
	base = base ? base + 1 : path;
	snprintf(name, sizeof(name), "%.*s", (int)(strlen(base) - 3), base);
	list_one(arg, name, path);
	return 0;
}

/* A name asked for that no plugin has: said, exit status 2. */
static int unseen(const struct plugin_list *l)
{
	int rc = CTP_EXIT_OK;
	for (size_t i = 0; i < l->n_want; i++)
		if (!l->seen[i]) {
			fprintf(stderr, "ctprof-core plugins: no plugin '%s'\n",
				l->want[i]);
			rc = CTP_EXIT_USAGE;
		}
	return rc;
}

static const char plugins_usage[] =
	"Usage: ctprof-core plugins [--config FILE] [--names] [NAME...]\n"
	"List the plugins the config names (or every .so in the plugin "
	"directories without\n"
	"--config), or those named, with their fields, kinds, units and "
	"aggregation rules.\n"
	"Does not call init. --names: only the names, one a line, none "
	"loaded.\n"
	"With --config, a listed plugin that cannot be found or loaded is an "
	"error:\n"
	"FILE:LINE:COL: message, exit status 2.\n";

/* The config's plugins, resolved and loaded as a capture would. */
static int list_config(const struct ctp_config *cfg, struct plugin_list *l)
{
	char **paths = calloc(cfg->n_plugins + 1, sizeof(*paths));
	if (!paths)
		return CTP_EXIT_FAILURE;
	int rc = l->names_only ? 0 : resolve_plugins(cfg, paths);
	for (size_t i = 0; i < cfg->n_plugins; i++) {
		if (!rc)
			list_one(l, cfg->plugins[i].name, paths[i]);
		free(paths[i]);
	}
	free(paths);
	return rc;
}

static int cmd_plugins(int argc, char **argv)
{
	static const struct option opts[] = {
		{"config", required_argument, NULL, 'c'},
		{"names", no_argument, NULL, 'n'},
		{"help", no_argument, NULL, 'h'},
		{0},
	};
	const char *config_path = NULL;
	struct plugin_list l = {0};
	int c;
	optind = 1;
	while ((c = getopt_long(argc, argv, "c:h", opts, NULL)) != -1) {
		switch (c) {
		case 'c':
			config_path = optarg;
			break;
		case 'n':
			l.names_only = true;
			break;
		case 'h':
			fputs(plugins_usage, stdout);
			return CTP_EXIT_OK;
		default:
			return CTP_EXIT_USAGE;
		}
	}
	l.want = argv + optind;
	l.n_want = (size_t)(argc - optind);
	if (l.n_want > sizeof(l.seen) / sizeof(l.seen[0])) {
		fprintf(stderr, "ctprof-core plugins: at most 64 names\n");
		return CTP_EXIT_USAGE;
	}
	struct ctp_config *cfg = NULL;
	int rc = config_path ? ctp_cli_load_config(config_path, NULL, &cfg)
		 : ctp_config_defaults(&cfg) < 0 ? CTP_EXIT_FAILURE
						 : 0;
	if (rc)
		return rc;
	l.allow = cfg->allow_insecure_plugins;
	if (config_path)
		rc = list_config(cfg, &l);
	else
		ctp_cli_each_plugin(cfg, print_one, &l);
	ctp_config_free(cfg);
	return rc ? rc : unseen(&l);
}

/* ---- check-config
 * ------------------------------------------------------------ */

static int cmd_check_config(int argc, char **argv)
{
	static const struct option opts[] = {
		{"as-host", required_argument, NULL, 'H'},
		{"config", required_argument, NULL, 'c'},
		{"help", no_argument, NULL, 'h'},
		{0},
	};
	const char *as_host = NULL, *file = NULL;
	int c;
	optind = 1;
	while ((c = getopt_long(argc, argv, "H:h", opts, NULL)) != -1) {
		switch (c) {
		case 'H':
			as_host = optarg;
			break;
		case 'c': /* as every other verb takes it */
			file = optarg;
			break;
		case 'h':
			printf("Usage: ctprof-core check-config FILE "
			       "[--as-host "
			       "NAME]\n"
			       "       ctprof-core check-config --config FILE "
			       "[--as-host NAME]\n"
			       "Validate FILE and print the effective "
			       "configuration for this host (or for a host\n"
			       "named NAME: hostname rules match NAME; kernel "
			       "and path rules still use this machine).\n"
			       "Every plugin FILE lists (enabled here or not) "
			       "must be found and load as a\n"
			       "capture would load it (init is not called); "
			       "the options of each\n"
			       "enabled here pass the plugin's own checks (the "
			       "files they name).\n"
			       "Exit status 0 when valid, 2 with "
			       "FILE:LINE:COL: "
			       "message otherwise.\n");
			return CTP_EXIT_OK;
		default:
			return CTP_EXIT_USAGE;
		}
	}
	if (!file && optind == argc - 1)
		file = argv[optind++];
	if (!file || optind != argc) {
		fprintf(stderr, "Usage: ctprof-core check-config FILE "
				"[--as-host NAME]\n");
		return CTP_EXIT_USAGE;
	}
	struct ctp_config *cfg;
	int rc = ctp_cli_load_config(file, as_host, &cfg);
	if (rc)
		return rc;
	rc = resolve_plugins(cfg, NULL);
	if (rc) {
		ctp_config_free(cfg);
		return rc;
	}
	ctp_config_print(cfg, stdout);
	ctp_config_free(cfg);
	return CTP_EXIT_OK;
}

#ifdef CTP_WITH_JEMALLOC
/*
 * jemalloc reads this at its start (the MALLOC_CONF variable still wins).
 * A capture's tables grow to their peak during the walk and are freed
 * after the write; by default jemalloc keeps freed pages for seconds, so
 * the peak of one structure adds to the next's: returning them at once
 * lowered the peak RSS at 30,000 threads from 30 to 26 MiB
 * (docs/PERFORMANCE.md, issue 17), with no CPU cost measurable.
 */
CTP_EXPORT const char *malloc_conf = "dirty_decay_ms:0,muzzy_decay_ms:0";
#endif

int main(int argc, char **argv)
{
	if (argc >= 2) {
		const char *cmd = argv[1];
		if (strcmp(cmd, "show") == 0)
			return ctp_cmd_show(argc - 1, argv + 1);
		if (strcmp(cmd, "dump") == 0)
			return ctp_cmd_dump(argc - 1, argv + 1);
		if (strcmp(cmd, "compare") == 0)
			return ctp_cmd_compare(argc - 1, argv + 1);
		if (strcmp(cmd, "views") == 0)
			return ctp_cmd_views(argc - 1, argv + 1);
		if (strcmp(cmd, "plugins") == 0)
			return cmd_plugins(argc - 1, argv + 1);
		if (strcmp(cmd, "check-config") == 0)
			return cmd_check_config(argc - 1, argv + 1);
		if (strcmp(cmd, "capture") == 0)
			return cmd_capture(argc - 1, argv + 1);
		if (strcmp(cmd, "record") == 0)
			return ctp_cmd_record(argc - 1, argv + 1);
		if (strcmp(cmd, "export") == 0)
			return ctp_cmd_export(argc - 1, argv + 1);
		if (strcmp(cmd, "serve") == 0)
			return ctp_cmd_serve(argc - 1, argv + 1);
		if (strcmp(cmd, "trend") == 0)
			return ctp_cmd_trend(argc - 1, argv + 1);
		if (strcmp(cmd, "top") == 0)
			return ctp_cmd_top(argc - 1, argv + 1);
		if (strcmp(cmd, "replay") == 0)
			return ctp_cmd_replay(argc - 1, argv + 1);
		if (strcmp(cmd, "selftest") == 0)
			return ctp_cmd_selftest(argc - 1, argv + 1);
		int rc = ctp_cli_plugin_command(argc - 1, argv + 1);
		if (rc >= 0)
			return rc;
	}
	return cmd_capture(argc, argv);
}
