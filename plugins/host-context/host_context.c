/* SPDX-License-Identifier: MIT */
/*
 * host-context: one host row describing the machine the capture ran on
 * (uname, CPU identity, memory and hugepages, THP policy, sched_* tunables,
 * online CPUs, NUMA nodes, cpufreq governors, boot command line, accounting
 * state), read before the walk; and, after it, the collector's own heap
 * (jemalloc's mallctl when jemalloc serves malloc, else glibc's mallinfo2),
 * peak RSS and CPU time.
 *
 * Every source is read relative to the capture's proc and sys roots, so a
 * fixture tree stands in for the machine. Each value is absent when its
 * source is missing or unreadable; the uname triple (a syscall) is always
 * there. No options.
 */
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "host_parse.h"
#include "hostprobe.h"
#include "ctprof/plugin-util.h"

#ifndef HOST_CONTEXT_VERSION
#define HOST_CONTEXT_VERSION "0"
#endif

enum {
	F_SYSNAME,
	F_RELEASE,
	F_MACHINE,
	F_CPU_MODEL,
	F_CPU_VENDOR,
	F_CPU_ONLINE,
	F_NUMA_NODES,
	F_MEM_TOTAL,
	F_HP_TOTAL,
	F_HP_FREE,
	F_HP_SIZE,
	F_THP_ENABLED_MENU,
	F_THP_ENABLED,
	F_THP_DEFRAG_MENU,
	F_THP_DEFRAG,
	F_CMDLINE,
	F_DELAYACCT,
	F_XACCT,
	F_ALLOCATOR,
	F_JE_ALLOCATED,
	F_JE_ACTIVE,
	F_JE_RESIDENT,
	F_JE_MAPPED,
	F_JE_NARENAS,
	F_GL_ARENA,
	F_GL_ORDBLKS,
	F_GL_HBLKS,
	F_GL_HBLKHD,
	F_GL_UORDBLKS,
	F_GL_FORDBLKS,
	F_GL_KEEPCOST,
	F_MAXRSS,
	F_CPU_USER,
	F_CPU_SYSTEM,
	N_FIELDS
};

static const struct ctp_field_desc fields[] = {
	[F_SYSNAME] =
		CTP_FIELD_LABEL("host.uname.sysname", HOST, "uname(2) sysname"),
	[F_RELEASE] =
		CTP_FIELD_LABEL("host.uname.release", HOST, "uname(2) release"),
	[F_MACHINE] =
		CTP_FIELD_LABEL("host.uname.machine", HOST, "uname(2) machine"),
	[F_CPU_MODEL] =
		CTP_FIELD_LABEL("host.cpu.model", HOST,
				"cpuinfo 'model name' of the first processor"),
	[F_CPU_VENDOR] =
		CTP_FIELD_LABEL("host.cpu.vendor", HOST,
				"cpuinfo 'vendor_id' of the first processor "
				"(none on arm64)"),
	[F_CPU_ONLINE] =
		CTP_FIELD_GAUGE("host.cpu.online", HOST, COUNT, MAX,
				"CPUs in /sys/devices/system/cpu/online"),
	[F_NUMA_NODES] =
		CTP_FIELD_GAUGE("host.numa.nodes", HOST, COUNT, MAX,
				"NUMA nodes in "
				"/sys/devices/system/node/online (else "
				"node* directories)"),
	[F_MEM_TOTAL] = CTP_FIELD_GAUGE("host.mem.total", HOST, BYTES, MAX,
					"meminfo MemTotal"),
	[F_HP_TOTAL] = CTP_FIELD_GAUGE("host.hugepages.total", HOST, COUNT, MAX,
				       "meminfo HugePages_Total (pages)"),
	[F_HP_FREE] = CTP_FIELD_GAUGE("host.hugepages.free", HOST, COUNT, MAX,
				      "meminfo HugePages_Free (pages)"),
	[F_HP_SIZE] = CTP_FIELD_GAUGE("host.hugepages.size", HOST, BYTES, MAX,
				      "meminfo Hugepagesize"),
	[F_THP_ENABLED_MENU] = CTP_FIELD_LABEL("host.thp.enabled.menu", HOST,
					       "transparent_hugepage/enabled "
					       "verbatim"),
	[F_THP_ENABLED] =
		CTP_FIELD_LABEL("host.thp.enabled.active", HOST,
				"transparent_hugepage/enabled bracketed "
				"choice"),
	[F_THP_DEFRAG_MENU] =
		CTP_FIELD_LABEL("host.thp.defrag.menu", HOST,
				"transparent_hugepage/defrag verbatim"),
	[F_THP_DEFRAG] =
		CTP_FIELD_LABEL("host.thp.defrag.active", HOST,
				"transparent_hugepage/defrag bracketed "
				"choice"),
	[F_CMDLINE] = CTP_FIELD_LABEL("host.cmdline", HOST,
				      "/proc/cmdline, edges trimmed"),
	[F_DELAYACCT] =
		CTP_FIELD_LABEL("host.task_delayacct", HOST,
				"delay accounting: config-off, runtime-off, "
				"on"),
	[F_XACCT] =
		CTP_FIELD_LABEL("host.config_task_xacct", HOST,
				"CONFIG_TASK_XACCT from config.gz: on, off, "
				"unknown"),
	[F_ALLOCATOR] =
		CTP_FIELD_LABEL("host.self.allocator", HOST,
				"allocator serving the collector's malloc: "
				"jemalloc or glibc"),
	[F_JE_ALLOCATED] =
		CTP_FIELD_GAUGE("host.self.jemalloc.allocated", HOST, BYTES,
				MAX, "jemalloc stats.allocated at the end"),
	[F_JE_ACTIVE] =
		CTP_FIELD_GAUGE("host.self.jemalloc.active", HOST, BYTES, MAX,
				"jemalloc stats.active at the end"),
	[F_JE_RESIDENT] =
		CTP_FIELD_GAUGE("host.self.jemalloc.resident", HOST, BYTES, MAX,
				"jemalloc stats.resident at the end"),
	[F_JE_MAPPED] =
		CTP_FIELD_GAUGE("host.self.jemalloc.mapped", HOST, BYTES, MAX,
				"jemalloc stats.mapped at the end"),
	[F_JE_NARENAS] = CTP_FIELD_GAUGE("host.self.jemalloc.narenas", HOST,
					 COUNT, MAX, "jemalloc arenas.narenas"),
	[F_GL_ARENA] =
		CTP_FIELD_GAUGE("host.self.glibc.arena", HOST, BYTES, MAX,
				"mallinfo2 arena: sbrk/arena memory"),
	[F_GL_ORDBLKS] = CTP_FIELD_GAUGE("host.self.glibc.ordblks", HOST, COUNT,
					 MAX, "mallinfo2 ordblks: free chunks"),
	[F_GL_HBLKS] = CTP_FIELD_GAUGE("host.self.glibc.hblks", HOST, COUNT,
				       MAX, "mallinfo2 hblks: mmapped chunks"),
	[F_GL_HBLKHD] =
		CTP_FIELD_GAUGE("host.self.glibc.hblkhd", HOST, BYTES, MAX,
				"mallinfo2 hblkhd: bytes in mmapped chunks"),
	[F_GL_UORDBLKS] =
		CTP_FIELD_GAUGE("host.self.glibc.uordblks", HOST, BYTES, MAX,
				"mallinfo2 uordblks: bytes in use"),
	[F_GL_FORDBLKS] =
		CTP_FIELD_GAUGE("host.self.glibc.fordblks", HOST, BYTES, MAX,
				"mallinfo2 fordblks: free bytes"),
	[F_GL_KEEPCOST] =
		CTP_FIELD_GAUGE("host.self.glibc.keepcost", HOST, BYTES, MAX,
				"mallinfo2 keepcost: trimmable top"),
	[F_MAXRSS] = CTP_FIELD_PEAK("host.self.maxrss", HOST, BYTES,
				    "collector peak RSS (getrusage ru_maxrss)"),
	[F_CPU_USER] =
		CTP_FIELD_COUNTER("host.self.cpu_user", HOST, NS,
				  "collector user CPU time, all its threads"),
	[F_CPU_SYSTEM] =
		CTP_FIELD_COUNTER("host.self.cpu_system", HOST, NS,
				  "collector system CPU time, all its threads"),
};

_Static_assert(sizeof(fields) / sizeof(fields[0]) == N_FIELDS,
	       "field table and enum disagree");

/* Summary counters. */
enum { C_MISSING, C_UNREADABLE, C_PARSE, C_SKIPPED, N_COUNTERS };
static const char *const counter_names[N_COUNTERS] = {
	[C_MISSING] = "sources_missing",
	[C_UNREADABLE] = "sources_unreadable",
	[C_PARSE] = "parse_errors",
	[C_SKIPPED] = "keys_skipped",
};

/* Every file read here is small; cpuinfo is only needed up to its first
 * blank line, which a 64 KiB prefix always holds. */
#define READ_BUF (64u * 1024)
/* Bitmaps for the online lists: NR_CPUS is at most 8192 (x86 MAXSMP). */
#define LIST_WORDS (8192 / 64)

struct host_state {
	struct ctp_ctx *ctx;
	const struct ctp_api *api;
	int fh[N_FIELDS];
	int counter[N_COUNTERS];
	char *buf;
	uint64_t cpus[LIST_WORDS];
	/* config.gz's answer about CONFIG_TASK_XACCT (xa) and the file it
	 * came from (xa_file; xa_kept: one was read). The running kernel's
	 * config does not change, and reading it is a gunzip of ~1.8 M
	 * instructions: a recorder reads it again only for another file. */
	bool xa_kept;
	struct stat xa_file;
	enum ctp_xacct_state xa;
};

static void count(struct host_state *st, int c)
{
	if (st->counter[c] >= 0)
		st->api->summary_add(st->ctx, st->counter[c], 1);
}

/* Field f's value, under its handle. A setter failing means a bug here
 * (wrong type or scope): the callback reports it, the other values are
 * still set. */
static void set_u64(struct host_state *st, struct ctp_setter *set, int f,
		    uint64_t v)
{
	ctp_set_u64(set, st->fh[f], v);
}

static void set_str(struct host_state *st, struct ctp_setter *set, int f,
		    const char *s, size_t len)
{
	ctp_set_str(set, st->fh[f], s, len);
}

/* Tally a failed read: missing sources and unreadable ones apart. */
static int read_failed(struct host_state *st, const char *path, int r)
{
	if (r == -ENOENT || r == -ENOTDIR) {
		count(st, C_MISSING);
	} else {
		count(st, C_UNREADABLE);
		st->api->log(st->ctx, CTP_LOG_DEBUG, "%s: %s", path,
			     strerror(-r));
	}
	return r;
}

/*
 * Read a file under dirfd into st->buf (NUL-terminated): 0 and *len, or a
 * negative errno (tallied). A root that is not open (-1) counts as the
 * file not existing. A file that fills the buffer may have been cut:
 * -EFBIG when the caller needs it whole (single values), else its start
 * is what the caller reads (cpuinfo's first processor).
 */
static int read_file(struct host_state *st, int dirfd, const char *path,
		     bool whole, size_t *len)
{
	int r = -ENOENT;

	*len = 0;
	if (dirfd >= 0)
		r = ctp_read_small(dirfd, path, st->buf, READ_BUF, len);
	if (r == 0 && whole && *len + 1 >= READ_BUF)
		r = -EFBIG;
	return r < 0 ? read_failed(st, path, r) : 0;
}

/* A whole single-value file: 0 and *len, or a negative errno (tallied). */
static int read_value(struct host_state *st, int dirfd, const char *path,
		      size_t *len)
{
	return read_file(st, dirfd, path, true, len);
}

static void parse_failed(struct host_state *st, const char *what, int r)
{
	count(st, C_PARSE);
	st->api->log(st->ctx, CTP_LOG_DEBUG, "%s: %s", what, strerror(-r));
}

/* ---- Sources --------------------------------------------------------------
 */

static void do_uname(struct host_state *st, struct ctp_setter *set)
{
	struct utsname u;

	/* Never the nodename: snapshots are meant to be shareable. */
	if (uname(&u) < 0)
		return;
	set_str(st, set, F_SYSNAME, u.sysname, strlen(u.sysname));
	set_str(st, set, F_RELEASE, u.release, strlen(u.release));
	set_str(st, set, F_MACHINE, u.machine, strlen(u.machine));
}

static void do_cpuinfo(struct host_state *st, int proc_fd,
		       struct ctp_setter *set)
{
	struct ctp_hc_cpuinfo ci;
	size_t len;

	if (read_file(st, proc_fd, "cpuinfo", false, &len) < 0)
		return;
	/* Neither key on arm64 (no vendor_id, no model name): not an error. */
	if (ctp_hc_parse_cpuinfo(st->buf, len, &ci) < 0)
		return;
	if (ci.has_model)
		set_str(st, set, F_CPU_MODEL, ci.model.ptr, ci.model.len);
	if (ci.has_vendor)
		set_str(st, set, F_CPU_VENDOR, ci.vendor.ptr, ci.vendor.len);
}

static void do_meminfo(struct host_state *st, int proc_fd,
		       struct ctp_setter *set)
{
	struct ctp_hc_meminfo mi;
	size_t len;
	int r;

	if (read_file(st, proc_fd, "meminfo", false, &len) < 0)
		return;
	r = ctp_hc_parse_meminfo(st->buf, len, &mi);
	/* HugePages_* are missing without CONFIG_HUGETLBFS: not an error. */
	if (r < 0 && r != -ENODATA)
		parse_failed(st, "meminfo", r);
	if (mi.present & CTP_HC_MEM_TOTAL)
		set_u64(st, set, F_MEM_TOTAL, mi.mem_total_bytes);
	if (mi.present & CTP_HC_HP_TOTAL)
		set_u64(st, set, F_HP_TOTAL, mi.hp_total);
	if (mi.present & CTP_HC_HP_FREE)
		set_u64(st, set, F_HP_FREE, mi.hp_free);
	if (mi.present & CTP_HC_HP_SIZE)
		set_u64(st, set, F_HP_SIZE, mi.hp_size_bytes);
}

static void do_menu(struct host_state *st, int sys_fd, const char *path,
		    int f_menu, int f_active, struct ctp_setter *set)
{
	struct ctp_hc_menu m;
	size_t len;
	int r;

	if (read_value(st, sys_fd, path, &len) < 0)
		return;
	r = ctp_hc_parse_menu(st->buf, len, &m);
	if (r < 0)
		parse_failed(st, path, r);
	if (m.menu.ptr)
		set_str(st, set, f_menu, m.menu.ptr, m.menu.len);
	if (m.has_active)
		set_str(st, set, f_active, m.active.ptr, m.active.len);
}

static void do_cmdline(struct host_state *st, int proc_fd,
		       struct ctp_setter *set)
{
	struct ctp_hc_str s;
	size_t len;

	if (read_value(st, proc_fd, "cmdline", &len) < 0)
		return;
	/* An empty command line is a measured "", not an absent value. */
	if (ctp_hc_trim(st->buf, len, &s) < 0)
		parse_failed(st, "cmdline", -EINVAL);
	else
		set_str(st, set, F_CMDLINE, s.ptr, s.len);
}

/* Register a runtime host field; < 0 (counted as skipped) on failure. */
static int reg_field(struct host_state *st, const char *name, const char *help,
		     uint8_t type)
{
	struct ctp_field_desc d = {
		.name = name,
		.help = help,
		.scope = CTP_SCOPE_HOST,
		.type = type,
		.unit = CTP_UNIT_NONE,
		.kind = CTP_KIND_CATEGORICAL,
		.rule = CTP_RULE_MODE,
	};
	int h = st->api->field_register(st->ctx, &d);

	if (h < 0)
		count(st, C_SKIPPED);
	return h;
}

static int cmp_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/*
 * Directory entries of `path` under dirfd for which keep() is true, sorted
 * by name (malloc'ed array of malloc'ed names). So runtime fields register
 * in the same order on every capture of the same host.
 */
static int list_dir(int dirfd, const char *path, bool (*keep)(const char *),
		    char ***out, size_t *n_out)
{
	char **names = NULL;
	size_t n = 0, cap = 0;
	struct dirent *e;
	DIR *d;
	int fd, ret = 0;

	*out = NULL;
	*n_out = 0;
	if (dirfd < 0)
		return -ENOENT;
	fd = openat(dirfd, path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	d = fdopendir(fd);
	if (!d) {
		ret = -errno;
		close(fd);
		return ret;
	}
	while ((e = readdir(d))) {
		char *s;

		if (!keep(e->d_name))
			continue;
		if (n == cap) {
			size_t nc = cap ? cap * 2 : 32;
			char **nn = realloc(names, nc * sizeof(*names));

			if (!nn) {
				ret = -ENOMEM;
				break;
			}
			names = nn;
			cap = nc;
		}
		s = strdup(e->d_name);
		if (!s) {
			ret = -ENOMEM;
			break;
		}
		names[n++] = s;
	}
	closedir(d);
	if (ret < 0) {
		while (n)
			free(names[--n]);
		free(names);
		return ret;
	}
	if (n)
		qsort(names, n, sizeof(*names), cmp_name);
	*out = names;
	*n_out = n;
	return 0;
}

static void free_names(char **names, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(names[i]);
	free(names);
}

static bool is_sched_name(const char *name)
{
	return strncmp(name, "sched_", 6) == 0;
}

/* True when `name` under dirfd is a regular file (proc: every tunable). */
static bool is_regular(int dirfd, const char *name)
{
	struct stat sb;

	return fstatat(dirfd, name, &sb, 0) == 0 && S_ISREG(sb.st_mode);
}

static void do_sched(struct host_state *st, int proc_fd, struct ctp_setter *set)
{
	char **names, fname[CTP_HC_NAME_MAX + 1], help[192];
	size_t n;
	int kfd, r;

	r = list_dir(proc_fd, "sys/kernel", is_sched_name, &names, &n);
	if (r < 0) {
		read_failed(st, "sys/kernel", r);
		return;
	}
	kfd = openat(proc_fd, "sys/kernel", O_PATH | O_DIRECTORY | O_CLOEXEC);
	for (size_t i = 0; kfd >= 0 && i < n; i++) {
		struct ctp_hc_tunable t;
		size_t len;
		int h;

		/* Old kernels have a sched_domain/ directory: not a value. */
		if (!is_regular(kfd, names[i]))
			continue;
		if (ctp_hc_sched_field_name(names[i], fname, sizeof(fname)) <
		    0) {
			count(st, C_SKIPPED);
			continue;
		}
		if (read_value(st, kfd, names[i], &len) < 0)
			continue;
		if (ctp_hc_parse_tunable(st->buf, len, &t) < 0) {
			parse_failed(st, names[i], -EINVAL);
			continue;
		}
		snprintf(help, sizeof(help), "/proc/sys/kernel/%s%s", names[i],
			 t.is_int ? "" : " (verbatim)");
		h = reg_field(st, fname, help,
			      t.is_int ? CTP_TYPE_I64 : CTP_TYPE_STRING);
		if (h < 0)
			continue;
		if (t.is_int)
			ctp_set_i64(set, h, t.value);
		else
			ctp_set_str(set, h, t.text.ptr, t.text.len);
	}
	if (kfd >= 0)
		close(kfd);
	free_names(names, n);
}

/* Online CPUs: the count, and one governor field per online CPU. */
static void do_cpus(struct host_state *st, int sys_fd, struct ctp_setter *set)
{
	static const char online[] = "devices/system/cpu/online";
	char path[96], fname[64], help[96];
	size_t len;
	int ncpu;

	if (read_value(st, sys_fd, online, &len) < 0)
		return;
	ncpu = ctp_hc_parse_online(st->buf, len, st->cpus, LIST_WORDS);
	if (ncpu < 0) {
		parse_failed(st, online, ncpu);
		return;
	}
	set_u64(st, set, F_CPU_ONLINE, (uint64_t)ncpu);
	for (unsigned cpu = 0; cpu < LIST_WORDS * 64; cpu++) {
		struct ctp_hc_str g;
		int h;

		if (!(st->cpus[cpu / 64] >> (cpu % 64) & 1))
			continue;
		snprintf(path, sizeof(path),
			 "devices/system/cpu/cpu%u/cpufreq/scaling_governor",
			 cpu);
		/* No cpufreq driver (VMs): every CPU is missing. */
		if (read_value(st, sys_fd, path, &len) < 0)
			continue;
		if (ctp_hc_trim(st->buf, len, &g) < 0) {
			parse_failed(st, path, -EINVAL);
			continue;
		}
		snprintf(fname, sizeof(fname), "host.cpufreq.governor.cpu%u",
			 cpu);
		snprintf(help, sizeof(help), "cpu%u/cpufreq/scaling_governor",
			 cpu);
		h = reg_field(st, fname, help, CTP_TYPE_STRING);
		if (h >= 0)
			ctp_set_str(set, h, g.ptr, g.len);
	}
}

static bool is_node_name(const char *name)
{
	return ctp_hc_is_node_dir(name);
}

static void do_numa(struct host_state *st, int sys_fd, struct ctp_setter *set)
{
	static const char online[] = "devices/system/node/online";
	char **names;
	size_t len, n;
	int r;

	r = read_value(st, sys_fd, online, &len);
	if (r == 0) {
		r = ctp_hc_parse_online(st->buf, len, st->cpus, LIST_WORDS);
		if (r >= 0) {
			set_u64(st, set, F_NUMA_NODES, (uint64_t)r);
			return;
		}
		parse_failed(st, online, r);
	}
	/* Without the list (older sysfs, a partial copy), count nodeN/. */
	if (list_dir(sys_fd, "devices/system/node", is_node_name, &names, &n) <
	    0)
		return;
	if (n)
		set_u64(st, set, F_NUMA_NODES, n);
	free_names(names, n);
}

/* Whether a and b are one file, unchanged. */
static bool same_file(const struct stat *a, const struct stat *b)
{
	return a->st_dev == b->st_dev && a->st_ino == b->st_ino &&
	       a->st_size == b->st_size &&
	       a->st_mtim.tv_sec == b->st_mtim.tv_sec &&
	       a->st_mtim.tv_nsec == b->st_mtim.tv_nsec &&
	       a->st_ctim.tv_sec == b->st_ctim.tv_sec &&
	       a->st_ctim.tv_nsec == b->st_ctim.tv_nsec;
}

/* ctp_probe_xacct, or the answer a read of config.gz gave before where
 * it is the same file (device, inode, size and times). A failed read is
 * not kept: the next capture tries again. */
static int probe_xacct(struct host_state *st, int proc_fd,
		       enum ctp_xacct_state *out)
{
	struct stat sb;
	int r;

	if (proc_fd < 0 || fstatat(proc_fd, "config.gz", &sb, 0) < 0)
		return ctp_probe_xacct(proc_fd, out);
	if (st->xa_kept && same_file(&sb, &st->xa_file)) {
		*out = st->xa;
		return 0;
	}
	r = ctp_probe_xacct(proc_fd, out);
	st->xa_kept = r == 0;
	st->xa_file = sb;
	st->xa = *out;
	return r;
}

static void do_accounting(struct host_state *st, int proc_fd,
			  struct ctp_setter *set)
{
	enum ctp_delayacct_state da;
	enum ctp_xacct_state xa;
	struct stat sb;
	const char *s;
	int r;

	/* No sysctl file means "not built in" only when the proc root has a
	 * sysctl tree at all; otherwise nothing is known. */
	if (proc_fd >= 0 && fstatat(proc_fd, "sys/kernel", &sb, 0) == 0 &&
	    S_ISDIR(sb.st_mode)) {
		r = ctp_probe_delayacct(proc_fd, &da);
		if (r < 0) {
			read_failed(st, "sys/kernel/task_delayacct", r);
		} else {
			s = ctp_delayacct_state_name(da);
			set_str(st, set, F_DELAYACCT, s, strlen(s));
		}
	} else {
		count(st, C_MISSING);
	}
	/* A missing config.gz (no CONFIG_IKCONFIG_PROC) leaves the state
	 * absent; one that is there but unreadable, corrupt or silent about
	 * the symbol is "unknown". */
	r = probe_xacct(st, proc_fd, &xa);
	if (r == -ENOENT || r == -EBADF) {
		count(st, C_MISSING);
		return;
	}
	if (r < 0)
		read_failed(st, "config.gz", r);
	s = ctp_xacct_state_name(xa);
	set_str(st, set, F_XACCT, s, strlen(s));
}

static int host_cb(void *statep, struct ctp_record *rec)
{
	struct host_state *st = statep;
	struct ctp_setter set = CTP_SETTER(st->api, rec);
	const struct ctp_roots *roots = st->api->roots(st->ctx);
	int proc_fd = roots ? roots->proc_fd : -1;
	int sys_fd = roots ? roots->sys_fd : -1;

	do_uname(st, &set);
	do_cpuinfo(st, proc_fd, &set);
	do_meminfo(st, proc_fd, &set);
	do_menu(st, sys_fd, "kernel/mm/transparent_hugepage/enabled",
		F_THP_ENABLED_MENU, F_THP_ENABLED, &set);
	do_menu(st, sys_fd, "kernel/mm/transparent_hugepage/defrag",
		F_THP_DEFRAG_MENU, F_THP_DEFRAG, &set);
	do_sched(st, proc_fd, &set);
	do_cpus(st, sys_fd, &set);
	do_numa(st, sys_fd, &set);
	do_cmdline(st, proc_fd, &set);
	do_accounting(st, proc_fd, &set);
	return set.err;
}

/* ---- The collector itself ---------------------------------------------------
 */

typedef int (*mallctl_fn)(const char *name, void *oldp, size_t *oldlenp,
			  void *newp, size_t newlen);

/*
 * jemalloc's mallctl, when jemalloc is the malloc this process uses. Looked
 * up at run time (the plugin links nothing but libc): present when the
 * executable was linked with libjemalloc. It must also be the object that
 * `malloc` resolves to, so a library that merely loaded jemalloc beside
 * glibc's malloc does not pass for it.
 */
static mallctl_fn find_mallctl(void)
{
	void *mc = dlsym(RTLD_DEFAULT, "mallctl");
	void *ma = dlsym(RTLD_DEFAULT, "malloc");
	Dl_info a, b;

	if (!mc || !ma || !dladdr(mc, &a) || !dladdr(ma, &b))
		return NULL;
	if (a.dli_fbase != b.dli_fbase)
		return NULL;
	return (mallctl_fn)(uintptr_t)mc;
}

static void je_size(struct host_state *st, struct ctp_setter *set,
		    mallctl_fn mc, const char *name, int f)
{
	size_t v, sz = sizeof(v);

	if (mc(name, &v, &sz, NULL, 0) == 0 && sz == sizeof(v))
		set_u64(st, set, f, v);
}

static void do_jemalloc(struct host_state *st, struct ctp_setter *set,
			mallctl_fn mc)
{
	uint64_t epoch = 1;
	size_t esz = sizeof(epoch);
	unsigned narenas;
	size_t nsz = sizeof(narenas);

	set_str(st, set, F_ALLOCATOR, "jemalloc", 8);
	/* stats.* are cached; writing "epoch" refreshes them. */
	if (mc("epoch", &epoch, &esz, &epoch, esz) != 0)
		return;
	je_size(st, set, mc, "stats.allocated", F_JE_ALLOCATED);
	je_size(st, set, mc, "stats.active", F_JE_ACTIVE);
	je_size(st, set, mc, "stats.resident", F_JE_RESIDENT);
	je_size(st, set, mc, "stats.mapped", F_JE_MAPPED);
	if (mc("arenas.narenas", &narenas, &nsz, NULL, 0) == 0 &&
	    nsz == sizeof(narenas))
		set_u64(st, set, F_JE_NARENAS, narenas);
}

static void do_glibc(struct host_state *st, struct ctp_setter *set)
{
	/* Sums every arena (malloc/malloc.c __libc_mallinfo2). */
	struct mallinfo2 mi = mallinfo2();

	set_str(st, set, F_ALLOCATOR, "glibc", 5);
	set_u64(st, set, F_GL_ARENA, mi.arena);
	set_u64(st, set, F_GL_ORDBLKS, mi.ordblks);
	set_u64(st, set, F_GL_HBLKS, mi.hblks);
	set_u64(st, set, F_GL_HBLKHD, mi.hblkhd);
	set_u64(st, set, F_GL_UORDBLKS, mi.uordblks);
	set_u64(st, set, F_GL_FORDBLKS, mi.fordblks);
	set_u64(st, set, F_GL_KEEPCOST, mi.keepcost);
}

static uint64_t tv_ns(struct timeval tv)
{
	return (uint64_t)tv.tv_sec * 1000000000u + (uint64_t)tv.tv_usec * 1000u;
}

static int finish_cb(void *statep, struct ctp_record *host_rec)
{
	struct host_state *st = statep;
	struct ctp_setter set = CTP_SETTER(st->api, host_rec);
	mallctl_fn mc = find_mallctl();
	struct rusage ru;

	if (mc)
		do_jemalloc(st, &set, mc);
	else
		do_glibc(st, &set);
	/* The whole process: the capture is all it does. */
	if (getrusage(RUSAGE_SELF, &ru) == 0) {
		/* ru_maxrss is in KiB on Linux. */
		set_u64(st, &set, F_MAXRSS, (uint64_t)ru.ru_maxrss * 1024);
		set_u64(st, &set, F_CPU_USER, tv_ns(ru.ru_utime));
		set_u64(st, &set, F_CPU_SYSTEM, tv_ns(ru.ru_stime));
	}
	return set.err;
}

/* ---- Life cycle -------------------------------------------------------------
 */

static void host_fini(void *statep)
{
	struct host_state *st = statep;

	if (!st)
		return;
	free(st->buf);
	free(st);
}

static int host_init(struct ctp_ctx *ctx, const struct ctp_api *api,
		     void **statep)
{
	struct host_state *st = calloc(1, sizeof(*st));
	int r = -ENOMEM;

	if (st)
		st->buf = malloc(READ_BUF);
	if (st && st->buf)
		r = CTP_ATTACH(ctx, api, CTP_API_THROUGH(roots), st->fh,
			       st->counter);
	if (r < 0) {
		host_fini(st);
		return r;
	}
	st->ctx = ctx;
	st->api = api;
	*statep = st;
	return 0;
}

CTP_EXPORT const struct ctp_plugin ctp_plugin_v1 = {
	CTP_PLUGIN_HEADER,
	.name = "host-context",
	.version = HOST_CONTEXT_VERSION,
	.description = "host identity, memory, THP, sched tunables, cpufreq, "
		       "accounting state; the collector's own heap and CPU",
	/* No option, declared: the core refuses any. */
	.flags = CTP_PLUGIN_CAPS | CTP_PLUGIN_MT_SAFE | CTP_PLUGIN_OPTIONS,
	CTP_PLUGIN_FIELDS(fields),
	.init = host_init,
	.fini = host_fini,
	.host = host_cb,
	.finish = finish_cb,
	CTP_PLUGIN_COUNTER_TABLE(counter_names),
	.capabilities = 0,
};
