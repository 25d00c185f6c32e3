/* SPDX-License-Identifier: MIT */
/*
 * psi: Pressure Stall Information (kernel/sched/psi.c), host scope from
 * <proc>/pressure/{cpu,memory,io,irq} and cgroup scope from each captured
 * cgroup's {cpu,memory,io,irq}.pressure. Averages are stored as exact
 * centi-percent integers, totals in microseconds. README.md has the field
 * table and what is left absent and why.
 *
 * Options:
 *   host: true (default) | false     read <proc>/pressure
 *   cgroup: true (default) | false   read every captured cgroup's files
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/types.h>
#include <unistd.h>

#include "ctprof/plugin-util.h"
#include "psi_parse.h"
#include "ctprof/plugin-util.h"

#ifndef PSI_VERSION
#define PSI_VERSION "0"
#endif

#ifndef CGROUP2_SUPER_MAGIC
#define CGROUP2_SUPER_MAGIC 0x63677270
#endif

/* The four values of one half-line, in field-table order. */
enum { M_AVG10, M_AVG60, M_AVG300, M_TOTAL, N_METRICS };

/*
 * One group of four fields per (scope, resource, half) the kernel fills.
 * Host scope has no cpu "full" (see README: psi_show() never computes it
 * for the system group) and neither scope has an irq "some" (the kernel
 * prints only "full" for irq).
 */
enum {
	G_HOST_CPU_SOME,
	G_HOST_MEMORY_SOME,
	G_HOST_MEMORY_FULL,
	G_HOST_IO_SOME,
	G_HOST_IO_FULL,
	G_HOST_IRQ_FULL,
	G_CG_CPU_SOME,
	G_CG_CPU_FULL,
	G_CG_MEMORY_SOME,
	G_CG_MEMORY_FULL,
	G_CG_IO_SOME,
	G_CG_IO_FULL,
	G_CG_IRQ_FULL,
	N_GROUPS
};
#define N_FIELDS (N_GROUPS * N_METRICS)

#define SOME_WHO "some task was"
#define FULL_WHO "every non-idle task was"

/* Every field is in section "psi", with its resource, stall kind (some,
 * full) and window as dimensions: readers group them without parsing
 * names. */
#define DIMS(res, half, key) "resource=" res ",stall=" half ",window=" key
#define AVG(g, m, sc, nm, key, win, who, res, half, src)                       \
	[(g)*N_METRICS + (m)] =                                                \
		CTP_FIELD_DIMS(nm "." key, sc, U64, CENTIPCT, GAUGE, MAX,      \
			       "psi", DIMS(res, half, key),                    \
			       "Share of time " who " stalled on " res         \
			       ", " win " average (" src ")")
#define TOTAL(g, sc, nm, who, res, half, src)                                  \
	[(g)*N_METRICS + M_TOTAL] = CTP_FIELD_DIMS(                            \
		nm ".total", sc, U64, US, COUNTER, SUM, "psi",                 \
		DIMS(res, half, "total"),                                      \
		"Time " who " stalled on " res ", cumulative (" src ")")
#define GROUP(g, sc, nm, who, res, half, src)                                  \
	AVG(g, M_AVG10, sc, nm, "avg10", "10 s", who, res, half, src),         \
		AVG(g, M_AVG60, sc, nm, "avg60", "60 s", who, res, half, src), \
		AVG(g, M_AVG300, sc, nm, "avg300", "300 s", who, res, half,    \
		    src),                                                      \
		TOTAL(g, sc, nm, who, res, half, src)
#define HOST(g, res, half, who)                                                \
	GROUP(g, HOST, "psi." res "." half, who, res, half,                    \
	      "pressure/" res " " half)
#define CG(g, res, half, who)                                                  \
	GROUP(g, CGROUP, "psi.cg." res "." half, who, res, half,               \
	      res ".pressure " half)

static const struct ctp_field_desc fields[] = {
	HOST(G_HOST_CPU_SOME, "cpu", "some", SOME_WHO),
	HOST(G_HOST_MEMORY_SOME, "memory", "some", SOME_WHO),
	HOST(G_HOST_MEMORY_FULL, "memory", "full", FULL_WHO),
	HOST(G_HOST_IO_SOME, "io", "some", SOME_WHO),
	HOST(G_HOST_IO_FULL, "io", "full", FULL_WHO),
	HOST(G_HOST_IRQ_FULL, "irq", "full", FULL_WHO),
	CG(G_CG_CPU_SOME, "cpu", "some", SOME_WHO),
	CG(G_CG_CPU_FULL, "cpu", "full", FULL_WHO),
	CG(G_CG_MEMORY_SOME, "memory", "some", SOME_WHO),
	CG(G_CG_MEMORY_FULL, "memory", "full", FULL_WHO),
	CG(G_CG_IO_SOME, "io", "some", SOME_WHO),
	CG(G_CG_IO_FULL, "io", "full", FULL_WHO),
	CG(G_CG_IRQ_FULL, "irq", "full", FULL_WHO),
};

#undef CG
#undef HOST
#undef GROUP
#undef TOTAL
#undef AVG
#undef DIMS

_Static_assert(sizeof(fields) / sizeof(fields[0]) == N_FIELDS,
	       "field table and enum disagree");

/* Where each resource is read and which groups its halves feed (-1: the
 * half is not recorded in that scope). */
enum { R_CPU, R_MEMORY, R_IO, R_IRQ, N_RES };
static const struct resource {
	const char *host_file; /* under the proc root */
	const char *cg_file;   /* in a cgroup v2 directory */
	signed char host[2];   /* some, full */
	signed char cg[2];
} resources[N_RES] = {
	[R_CPU] = {"pressure/cpu",
		   "cpu.pressure",
		   {G_HOST_CPU_SOME, -1},
		   {G_CG_CPU_SOME, G_CG_CPU_FULL}},
	[R_MEMORY] = {"pressure/memory",
		      "memory.pressure",
		      {G_HOST_MEMORY_SOME, G_HOST_MEMORY_FULL},
		      {G_CG_MEMORY_SOME, G_CG_MEMORY_FULL}},
	[R_IO] = {"pressure/io",
		  "io.pressure",
		  {G_HOST_IO_SOME, G_HOST_IO_FULL},
		  {G_CG_IO_SOME, G_CG_IO_FULL}},
	[R_IRQ] = {"pressure/irq",
		   "irq.pressure",
		   {-1, G_HOST_IRQ_FULL},
		   {-1, G_CG_IRQ_FULL}},
};

enum {
	C_MISSING,     /* files that do not exist (ENOENT) */
	C_UNSUPPORTED, /* files that failed with EOPNOTSUPP */
	C_READ_ERRORS, /* files that failed otherwise */
	C_PARSE_ERRORS,
	C_UNREACHABLE, /* cgroups without a directory */
	N_COUNTERS
};
static const char *const counter_names[N_COUNTERS] = {
	[C_MISSING] = "missing",
	[C_UNSUPPORTED] = "unsupported",
	[C_READ_ERRORS] = "read_errors",
	[C_PARSE_ERRORS] = "parse_errors",
	[C_UNREACHABLE] = "cgroups_unreachable",
};

/* A pressure file is ~110 bytes; anything longer is cut and reported by
 * the parser. */
#define FILE_MAX 1024

/*
 * host, cgroup and finish run on the main thread one at a time (PLUGINS.md,
 * "Thread safety"), so the buffer and the host tally need no lock.
 */
struct psi_state {
	struct ctp_ctx *ctx;
	const struct ctp_api *api;
	int fh[N_FIELDS]; /* field handles; < 0 means skip */
	int counter[N_COUNTERS];
	bool host, cgroup;
	bool host_ran;
	unsigned host_off; /* cpu/memory/io files missing or EOPNOTSUPP */
	char buf[FILE_MAX];
};

static void count(const struct psi_state *st, int c)
{
	st->api->summary_add(st->ctx, st->counter[c], 1);
}

static void set_half(const struct psi_state *st, struct ctp_setter *set,
		     int group, const struct ctp_psi_half *h)
{
	const uint64_t v[N_METRICS] = {
		[M_AVG10] = h->avg10,
		[M_AVG60] = h->avg60,
		[M_AVG300] = h->avg300,
		[M_TOTAL] = h->total_us,
	};

	for (int m = 0; m < N_METRICS; m++)
		ctp_set_u64(set, st->fh[group * N_METRICS + m], v[m]);
}

/*
 * Read and record one pressure file. A file that does not exist or says
 * EOPNOTSUPP (PSI off, no irq time accounting, pressure disabled in this
 * cgroup) leaves its resource absent and sets *off; any failure is counted,
 * never returned: only a refused setter (a bug) is, through set.
 */
static void record_file(struct psi_state *st, struct ctp_setter *set, int dirfd,
			const char *path, const signed char groups[2],
			bool *off)
{
	struct ctp_psi psi;
	size_t len;
	int n = ctp_read_small(dirfd, path, st->buf, sizeof(st->buf), &len);

	*off = false;
	if (n < 0) {
		if (n == -ENOENT || n == -EOPNOTSUPP) {
			*off = true;
			count(st, n == -ENOENT ? C_MISSING : C_UNSUPPORTED);
		} else {
			count(st, C_READ_ERRORS);
		}
		return;
	}
	if (ctp_parse_psi(st->buf, len, &psi) < 0)
		count(st, C_PARSE_ERRORS);
	if (groups[0] >= 0 && (psi.present & CTP_PSI_SOME))
		set_half(st, set, groups[0], &psi.some);
	if (groups[1] >= 0 && (psi.present & CTP_PSI_FULL))
		set_half(st, set, groups[1], &psi.full);
}

static int psi_host(void *state, struct ctp_record *rec)
{
	struct psi_state *st = state;
	struct ctp_setter set = CTP_SETTER(st->api, rec);
	const struct ctp_roots *roots;

	if (!st->host)
		return 0;
	st->host_ran = true;
	roots = st->api->roots(st->ctx);
	if (!roots || !CTP_HAS(roots, struct ctp_roots, proc_fd) ||
	    roots->proc_fd < 0) {
		count(st, C_READ_ERRORS);
		return 0;
	}
	st->host_off = 0;
	for (int r = 0; r < N_RES; r++) {
		bool off;

		record_file(st, &set, roots->proc_fd, resources[r].host_file,
			    resources[r].host, &off);
		if (off && r != R_IRQ)
			st->host_off++;
	}
	return set.err;
}

/*
 * The kernel's root cgroup shows the system group (cgroup_psi() in
 * kernel/cgroup/cgroup.c), whose cpu "full" is never computed. It is the
 * one cgroup2 directory with inode 1 (kernfs numbers its root 1); a cgroup
 * namespace's root is some other cgroup and keeps its cpu "full".
 */
static bool is_kernel_root(int dirfd)
{
	struct statfs sfs;
	struct stat sb;

	return fstatfs(dirfd, &sfs) == 0 &&
	       (unsigned long)sfs.f_type == CGROUP2_SUPER_MAGIC &&
	       fstat(dirfd, &sb) == 0 && sb.st_ino == 1;
}

static int psi_cgroup(void *state, const struct ctp_cgroup *cg,
		      struct ctp_record *rec)
{
	struct psi_state *st = state;
	struct ctp_setter set = CTP_SETTER(st->api, rec);
	bool root;

	/* Rows of other namespaces (a v1 key added by cgroup_ref) are not
	 * ours; the core does not hand them to us anyway. */
	if (!st->cgroup || !cg->path || cg->path[0] != '/')
		return 0;
	if (!CTP_HAS(cg, struct ctp_cgroup, dirfd) || cg->dirfd < 0) {
		count(st, C_UNREACHABLE);
		return 0;
	}
	root = is_kernel_root(cg->dirfd);
	for (int r = 0; r < N_RES; r++) {
		signed char groups[2] = {resources[r].cg[0],
					 resources[r].cg[1]};
		bool off;

		if (root && r == R_CPU)
			groups[1] = -1;
		record_file(st, &set, cg->dirfd, resources[r].cg_file, groups,
			    &off);
	}
	return set.err;
}

static int psi_finish(void *state, struct ctp_record *host_rec)
{
	struct psi_state *st = state;

	(void)host_rec;
	/* /proc/pressure exists only while PSI is on (psi_proc_init()). */
	if (st->host_ran && st->host_off == N_RES - 1 &&
	    CTP_HAS(st->api, struct ctp_api, set_hint) && st->api->set_hint)
		st->api->set_hint(st->ctx,
				  "PSI is off (no pressure/cpu, memory, io): "
				  "boot with psi=1 (kernels built with "
				  "CONFIG_PSI_DEFAULT_DISABLED need it) or "
				  "use a kernel with CONFIG_PSI=y");
	return 0;
}

static int bool_opt(struct ctp_ctx *ctx, const struct ctp_api *api,
		    const char *key, bool *out)
{
	int v, r = api->opt_bool(ctx, key, &v);

	if (r == -ENOENT)
		return 0;
	if (r < 0) {
		api->log(ctx, CTP_LOG_ERR,
			 "option '%s': not a boolean (true or false)", key);
		return r;
	}
	*out = v != 0;
	return 0;
}

static const struct ctp_option_desc options[] = {
	{.name = "host",
	 .help = "record the host's <proc>/pressure files",
	 .type = CTP_OPT_BOOL,
	 .def = "true"},
	{.name = "cgroup",
	 .help = "record each captured cgroup's *.pressure files",
	 .type = CTP_OPT_BOOL,
	 .def = "true"},
};

static int parse_options(struct ctp_ctx *ctx, const struct ctp_api *api,
			 struct psi_state *st)
{
	int r;

	st->host = st->cgroup = true;
	r = bool_opt(ctx, api, "host", &st->host);
	if (r == 0)
		r = bool_opt(ctx, api, "cgroup", &st->cgroup);
	return r;
}

static void psi_fini(void *state)
{
	free(state);
}

static int psi_init(struct ctp_ctx *ctx, const struct ctp_api *api,
		    void **state)
{
	struct psi_state *st = calloc(1, sizeof(*st));
	int r;

	if (!st)
		return -ENOMEM;
	st->ctx = ctx;
	st->api = api;
	r = CTP_ATTACH(ctx, api, CTP_API_THROUGH(roots), st->fh, st->counter);
	if (r == 0)
		r = parse_options(ctx, api, st);
	if (r < 0) {
		free(st);
		return r;
	}
	*state = st;
	return 0;
}

CTP_EXPORT const struct ctp_plugin ctp_plugin_v1 = {
	CTP_PLUGIN_HEADER,
	.name = "psi",
	.version = PSI_VERSION,
	.description = "Pressure stall information (cpu, memory, io, irq) of "
		       "the host and of every captured cgroup",
	.flags = CTP_PLUGIN_CAPS | CTP_PLUGIN_MT_SAFE | CTP_PLUGIN_OPTIONS,
	CTP_PLUGIN_FIELDS(fields),
	CTP_PLUGIN_OPTION_TABLE(options),
	.init = psi_init,
	.fini = psi_fini,
	.host = psi_host,
	.cgroup = psi_cgroup,
	.finish = psi_finish,
	CTP_PLUGIN_COUNTER_TABLE(counter_names),
	.capabilities = 0,
};
