/* SPDX-License-Identifier: MIT */
/*
 * sched_ext: the extensible scheduler class (kernel/sched/ext.c). Host
 * scope from <sys>/kernel/sched_ext/ (state, switch_all, nr_rejected,
 * hotplug_seq, enable_seq, and the loaded scheduler's root/ops); thread
 * scope: whether sched_ext runs the thread now, from the "ext.enabled" line
 * of task/<tid>/sched, the file the schedstat plugin reads too (declared
 * lazily, so the core reads it once for both). A kernel without
 * CONFIG_SCHED_CLASS_EXT has no such directory and no such line: every
 * field stays absent. README.md has the field table.
 *
 * Options:
 *   ext_enabled: auto (default) | true | false
 *     auto: fetch each thread's sched file only when <sys>/kernel/sched_ext
 *     exists; otherwise use its bytes only when another plugin (schedstat)
 *     fetched them anyway. true: always fetch. false: never look.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

#include "ctprof/plugin-util.h"
#include "scx_parse.h"
#include "ctprof/plugin-util.h"

#ifndef SCHED_EXT_VERSION
#define SCHED_EXT_VERSION "0"
#endif

/* Relative to the sys root. */
#define SCX_DIR "kernel/sched_ext"

/* How a host file's text becomes its value. */
enum { P_COUNT, P_FLAG, P_LINE };

#define HOST_LABEL(n, t, h)                                                    \
	CTP_FIELD("sched_ext." n, HOST, t, NONE, CATEGORICAL, MODE, h)
#define HOST_COUNT(n, h) CTP_FIELD_COUNTER("sched_ext." n, HOST, COUNT, h)

/* The host fields, one line each: X(id, file under SCX_DIR, how it is
 * read, field). */
#define HOST_FIELDS(X)                                                         \
	X(F_STATE, "state", P_LINE,                                            \
	  HOST_LABEL("state", STRING,                                          \
		     "sched_ext class state: enabling, enabled, disabling or " \
		     "disabled (/sys/kernel/sched_ext/state)"))                \
	X(F_SWITCH_ALL, "switch_all", P_FLAG,                                  \
	  HOST_LABEL("switch_all", BOOL,                                       \
		     "All fair-class tasks run on sched_ext, not only "        \
		     "SCHED_EXT ones (/sys/kernel/sched_ext/switch_all)"))     \
	X(F_NR_REJECTED, "nr_rejected", P_COUNT,                               \
	  HOST_COUNT("nr_rejected",                                            \
		     "Tasks refused SCHED_EXT by the BPF scheduler since it "  \
		     "loaded (/sys/kernel/sched_ext/nr_rejected)"))            \
	X(F_HOTPLUG_SEQ, "hotplug_seq", P_COUNT,                               \
	  HOST_COUNT("hotplug_seq", "CPU hotplug events seen by sched_ext "    \
				    "(/sys/kernel/sched_ext/hotplug_seq)"))    \
	X(F_ENABLE_SEQ, "enable_seq", P_COUNT,                                 \
	  HOST_COUNT("enable_seq", "BPF schedulers enabled since boot "        \
				   "(/sys/kernel/sched_ext/enable_seq)"))      \
	X(F_OPS, "root/ops", P_LINE,                                           \
	  HOST_LABEL("ops", STRING,                                            \
		     "Name of the loaded BPF scheduler "                       \
		     "(/sys/kernel/sched_ext/root/ops)"))

/* The thread field, read in scx_thread. */
#define THREAD_FIELDS(X)                                                       \
	X(F_EXT_ENABLED, NULL, 0,                                              \
	  CTP_FIELD("sched_ext.ext_enabled", THREAD, BOOL, NONE, CATEGORICAL,  \
		    MODE, "Scheduled by sched_ext now (sched ext.enabled)"))

#define FIELD_ID(id, file, how, desc)	id,
#define FIELD_DESC(id, file, how, desc) desc,
#define HOST_FILE(id, file, how, desc)	{file, id, how},

enum { HOST_FIELDS(FIELD_ID) THREAD_FIELDS(FIELD_ID) N_FIELDS };

static const struct ctp_field_desc fields[] = {
	HOST_FIELDS(FIELD_DESC) THREAD_FIELDS(FIELD_DESC)};

_Static_assert(sizeof(fields) / sizeof(fields[0]) == N_FIELDS,
	       "field table and enum disagree");

/* The host files, each feeding one field. */
static const struct {
	const char *file; /* under SCX_DIR */
	int field;
	int how;
} host_files[] = {HOST_FIELDS(HOST_FILE)};
#define N_HOST_FILES (sizeof(host_files) / sizeof(host_files[0]))

/* Declaration order is the order of task->files[]. */
enum { TF_SCHED, N_TF };
static const char *const thread_files[] = {"?sched", NULL};

enum {
	C_SYSFS_READ_ERRORS,
	C_SYSFS_PARSE_ERRORS,
	C_SCHED_PARSE_ERRORS,
	N_COUNTERS
};
static const char *const counter_names[N_COUNTERS] = {
	[C_SYSFS_READ_ERRORS] = "sysfs_read_errors",
	[C_SYSFS_PARSE_ERRORS] = "sysfs_parse_errors",
	[C_SCHED_PARSE_ERRORS] = "sched_parse_errors",
};

enum { MODE_AUTO, MODE_ON, MODE_OFF };

/* sysfs show() output is at most a page. */
#define SYSFS_MAX 4096

/*
 * Read-only after init as far as the thread callback is concerned; buf is
 * used by host only, which runs on the main thread before the walk.
 */
struct scx_state {
	struct ctp_ctx *ctx;
	const struct ctp_api *api;
	int fh[N_FIELDS]; /* field handles; < 0 means skip */
	int counter[N_COUNTERS];
	int mode;
	bool fetch; /* fetch task/<tid>/sched for ext.enabled */
	char buf[SYSFS_MAX + 1];
};

static void count(const struct scx_state *st, int c)
{
	st->api->summary_add(st->ctx, st->counter[c], 1);
}

/*
 * One host file. Missing is not an error: root/ops exists only while a
 * scheduler is loaded, and older kernels lack hotplug_seq and enable_seq.
 */
static void host_file(struct scx_state *st, struct ctp_setter *set, int dirfd,
		      size_t i)
{
	int fh = st->fh[host_files[i].field];
	int n;
	uint64_t v;
	const char *s;
	size_t sl, len;
	bool b;
	int r;

	/* A file no enabled field needs is not read. */
	if (fh < 0)
		return;
	n = ctp_read_small(dirfd, host_files[i].file, st->buf, sizeof(st->buf),
			   &len);
	if (n < 0) {
		if (n != -ENOENT)
			count(st, C_SYSFS_READ_ERRORS);
		return;
	}
	switch (host_files[i].how) {
	case P_COUNT:
		r = ctp_scx_parse_count(st->buf, len, &v);
		if (r == 0)
			ctp_set_u64(set, fh, v);
		break;
	case P_FLAG:
		r = ctp_scx_parse_flag(st->buf, len, &b);
		if (r == 0)
			ctp_set_bool(set, fh, b);
		break;
	default:
		r = ctp_scx_parse_line(st->buf, len, &s, &sl);
		if (r == 0)
			ctp_set_str(set, fh, s, sl);
		break;
	}
	if (r < 0)
		count(st, C_SYSFS_PARSE_ERRORS);
}

static int scx_host(void *state, struct ctp_record *rec)
{
	struct scx_state *st = state;
	struct ctp_setter set = CTP_SETTER(st->api, rec);
	const struct ctp_roots *roots = st->api->roots(st->ctx);
	int dirfd;

	if (!roots || !CTP_HAS(roots, struct ctp_roots, sys_fd) ||
	    roots->sys_fd < 0)
		return 0;
	dirfd = openat(roots->sys_fd, SCX_DIR,
		       O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (dirfd < 0) {
		/* No directory: a kernel without sched_ext, all absent. */
		if (errno != ENOENT) {
			count(st, C_SYSFS_READ_ERRORS);
			st->api->log(st->ctx, CTP_LOG_WARNING,
				     "cannot open %s/" SCX_DIR ": %s",
				     roots->sys ? roots->sys : "(sys root)",
				     strerror(errno));
		}
		return 0;
	}
	for (size_t i = 0; i < N_HOST_FILES; i++)
		host_file(st, &set, dirfd, i);
	close(dirfd);
	return set.err;
}

/*
 * The slot of a lazy file says -ENODATA until some plugin fetched it for
 * this task; fetching is ours to decide (st->fetch), using bytes another
 * plugin already paid for is free. A read failure is the core's to tally.
 */
static int scx_thread(void *state, const struct ctp_task *task,
		      struct ctp_record *rec)
{
	const struct scx_state *st = state;
	const char *data;
	size_t len;
	bool on;
	int r;

	if (st->mode == MODE_OFF || st->fh[F_EXT_ENABLED] < 0)
		return 0;
	r = st->fetch ? ctp_task_fetch(st->api, task, TF_SCHED, &data, &len)
		      : ctp_task_file(task, TF_SCHED, &data, &len);
	if (r == -EPROTO)
		return r;
	if (r < 0)
		return 0;
	r = ctp_scx_parse_task(data, len, &on);
	if (r == 0) {
		struct ctp_setter set = CTP_SETTER(st->api, rec);

		return ctp_set_bool(&set, st->fh[F_EXT_ENABLED], on);
	}
	/* No line: a kernel without sched_ext (or a fixture of one). */
	if (r != -ENODATA)
		count(st, C_SCHED_PARSE_ERRORS);
	return 0;
}

static const char *const ext_enabled_values[] = {
	"auto", "true", "false", "yes", "no", "on", "off", "1", "0", NULL};

static const struct ctp_option_desc options[] = {
	{.name = "ext_enabled",
	 .help = "record the per-thread ext.enabled flag: auto (when a "
		 "sched_ext scheduler is loaded), true or false",
	 .type = CTP_OPT_STRING,
	 .def = "auto",
	 .choices = ext_enabled_values},
};

static int parse_options(struct ctp_ctx *ctx, const struct ctp_api *api,
			 int *mode)
{
	const char *s;
	int b, r;

	*mode = MODE_AUTO;
	r = api->opt_str(ctx, "ext_enabled", &s);
	if (r == -ENOENT)
		return 0;
	if (r == 0 && strcmp(s, "auto") == 0)
		return 0;
	r = api->opt_bool(ctx, "ext_enabled", &b);
	if (r < 0) {
		api->log(ctx, CTP_LOG_ERR,
			 "option 'ext_enabled': not auto, true or false");
		return r;
	}
	*mode = b ? MODE_ON : MODE_OFF;
	return 0;
}

/* Does <sys>/kernel/sched_ext exist (CONFIG_SCHED_CLASS_EXT)? */
static bool scx_present(const struct ctp_api *api, struct ctp_ctx *ctx)
{
	const struct ctp_roots *roots = api->roots(ctx);
	struct stat sb;

	return roots && CTP_HAS(roots, struct ctp_roots, sys_fd) &&
	       roots->sys_fd >= 0 &&
	       fstatat(roots->sys_fd, SCX_DIR, &sb, 0) == 0 &&
	       S_ISDIR(sb.st_mode);
}

static void scx_fini(void *state)
{
	free(state);
}

static int scx_init(struct ctp_ctx *ctx, const struct ctp_api *api,
		    void **state)
{
	struct scx_state *st = calloc(1, sizeof(*st));
	int mode = MODE_AUTO, r;

	if (!st)
		return -ENOMEM;
	st->ctx = ctx;
	st->api = api;
	/* The lazy sched file needs file_get. */
	r = CTP_ATTACH(ctx, api, CTP_API_THROUGH(file_get), st->fh,
		       st->counter);
	if (r == 0)
		r = parse_options(ctx, api, &mode);
	if (r < 0) {
		free(st);
		return r;
	}
	st->mode = mode;
	st->fetch =
		mode == MODE_ON || (mode == MODE_AUTO && scx_present(api, ctx));
	if (mode == MODE_AUTO && !st->fetch)
		api->log(ctx, CTP_LOG_INFO,
			 "no " SCX_DIR " under the sys root (kernel without "
			 "CONFIG_SCHED_CLASS_EXT): sched files are not "
			 "fetched for ext.enabled");
	*state = st;
	return 0;
}

CTP_EXPORT const struct ctp_plugin ctp_plugin_v1 = {
	CTP_PLUGIN_HEADER,
	.name = "sched_ext",
	.version = SCHED_EXT_VERSION,
	.description = "sched_ext state of the host (/sys/kernel/sched_ext) "
		       "and whether sched_ext runs each thread",
	.flags = CTP_PLUGIN_CAPS | CTP_PLUGIN_MT_SAFE | CTP_PLUGIN_FD_LOCAL |
		 CTP_PLUGIN_SPLITTABLE | CTP_PLUGIN_OPTIONS |
		 CTP_PLUGIN_NO_THREAD_DIR,
	CTP_PLUGIN_FIELDS(fields),
	CTP_PLUGIN_OPTION_TABLE(options),
	.thread_files = thread_files,
	.init = scx_init,
	.fini = scx_fini,
	.host = scx_host,
	.thread = scx_thread,
	CTP_PLUGIN_COUNTER_TABLE(counter_names),
	.capabilities = 0,
};
