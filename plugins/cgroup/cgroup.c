/* SPDX-License-Identifier: MIT */
/*
 * cgroup: what the cgroups of the captured threads say about themselves,
 * for both cgroup versions, named so the two never mix (README.md):
 *
 *   cgroup.v2.<file>[.<key>]   per distinct v2 cgroup (the core's rows,
 *                              keyed by the "0::" path), read relative
 *                              to the directory the core opened;
 *   cgroup.v1.<file>[.<key>]   per distinct v1 cgroup: rows this plugin
 *                              adds with ctp_api.cgroup_ref under the key
 *                              "v1:<controllers>:<path>", read from the
 *                              hierarchy's mount found in mountinfo;
 *   cgroup.v1.<hierarchy>.path per thread: its path in each v1 hierarchy
 *                              (threads of a process may sit in different
 *                              v1 cgroups, so it is never taken from the
 *                              process): from the source "cgroup-v1"
 *                              (bpf-task) and the hierarchies' directory
 *                              inodes, else from the hierarchies' own
 *                              `tasks` listings, read once per cgroup per
 *                              capture (cglist.h), else from its own
 *                              task/<tid>/cgroup.
 *
 * Options: v1 (bool, default true) collects the v1 side; mount_prefix
 * (default "") is prepended to every mount point read from
 * <proc>/self/mountinfo (a host tree mounted under a directory, fixtures).
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <sys/vfs.h>

#include <linux/magic.h>

#include "cglist.h"
#include "cgroup_parse.h"
#include "ctprof/plugin-util.h"
#include "ctprof/source-cgroup-v1.h"
#include "ctprof/source-task.h"
#include "procfs_parse.h"

#ifndef CGROUP_VERSION
#define CGROUP_VERSION "0"
#endif

/* Longest v1 key: the core takes 4096 bytes. */
#define KEY_MAX	   4096
#define HIER_MAX   64	/* v1 hierarchies remembered (the kernel has 16) */
#define HIER_LEN   128	/* bytes of a controller list */
#define NAME_SLOTS 2048 /* field-name cache of the cgroup pass */
#define TLS_BYTES  1024 /* a thread's cgroup file remembered per worker */

/* ---- Fields -------------------------------------------------------------- */

enum {
	F2_USAGE,
	F2_NR_THROTTLED,
	F2_THROTTLED,
	F2_QUOTA,
	F2_PERIOD,
	F2_WEIGHT,
	F2_WEIGHT_NICE,
	F2_MEM_CURRENT,
	F2_MEM_MAX,
	F2_MEM_HIGH,
	F2_MEM_LOW,
	F2_MEM_MIN,
	F2_PIDS_CURRENT,
	F2_PIDS_MAX,
	F2_TYPE,
	F1_HIERARCHY,
	F1_CPUACCT_USAGE,
	F1_QUOTA,
	F1_PERIOD,
	F1_SHARES,
	F1_NR_PERIODS,
	F1_NR_THROTTLED,
	F1_THROTTLED_TIME,
	F1_MEM_USAGE,
	F1_MEM_LIMIT,
	F1_MEM_MAX_USAGE,
	F1_PIDS_CURRENT,
	F1_PIDS_MAX,
	N_FIELDS
};

static const struct ctp_field_desc fields[N_FIELDS] = {
	[F2_USAGE] = CTP_FIELD_COUNTER(
		"cgroup.v2.cpu.stat.usage_usec", CGROUP, US,
		"v2 cpu.stat usage_usec: CPU time of the cgroup"),
	[F2_NR_THROTTLED] = CTP_FIELD_COUNTER(
		"cgroup.v2.cpu.stat.nr_throttled", CGROUP, COUNT,
		"v2 cpu.stat nr_throttled: periods in "
		"which the bandwidth limit throttled it"),
	[F2_THROTTLED] = CTP_FIELD_COUNTER(
		"cgroup.v2.cpu.stat.throttled_usec", CGROUP, US,
		"v2 cpu.stat throttled_usec: time throttled"),
	[F2_QUOTA] = CTP_FIELD_GAUGE(
		"cgroup.v2.cpu.max.quota_us", CGROUP, US, MAX,
		"v2 cpu.max quota per period; absent when \"max\""),
	[F2_PERIOD] = CTP_FIELD_GAUGE("cgroup.v2.cpu.max.period_us", CGROUP, US,
				      MAX, "v2 cpu.max period"),
	[F2_WEIGHT] = CTP_FIELD_GAUGE("cgroup.v2.cpu.weight", CGROUP, NONE, MAX,
				      "v2 cpu.weight, 1..10000 (default 100)"),
	[F2_WEIGHT_NICE] =
		CTP_FIELD("cgroup.v2.cpu.weight.nice", CGROUP, I64, NONE, GAUGE,
			  MIN, "v2 cpu.weight.nice, -20..19"),
	[F2_MEM_CURRENT] =
		CTP_FIELD_GAUGE("cgroup.v2.memory.current", CGROUP, BYTES, MAX,
				"v2 memory.current: memory charged"),
	[F2_MEM_MAX] = CTP_FIELD_GAUGE(
		"cgroup.v2.memory.max", CGROUP, BYTES, MAX,
		"v2 memory.max hard limit; absent when \"max\""),
	[F2_MEM_HIGH] =
		CTP_FIELD_GAUGE("cgroup.v2.memory.high", CGROUP, BYTES, MAX,
				"v2 memory.high throttle limit; absent when "
				"\"max\""),
	[F2_MEM_LOW] =
		CTP_FIELD_GAUGE("cgroup.v2.memory.low", CGROUP, BYTES, MIN,
				"v2 memory.low best-effort protection; "
				"18446744073709551615 (2^64-1) when \"max\" "
				"(all of it)"),
	[F2_MEM_MIN] =
		CTP_FIELD_GAUGE("cgroup.v2.memory.min", CGROUP, BYTES, MIN,
				"v2 memory.min hard protection; "
				"18446744073709551615 (2^64-1) when \"max\" "
				"(all of it)"),
	[F2_PIDS_CURRENT] =
		CTP_FIELD_GAUGE("cgroup.v2.pids.current", CGROUP, COUNT, MAX,
				"v2 pids.current: tasks in the cgroup"),
	[F2_PIDS_MAX] =
		CTP_FIELD_GAUGE("cgroup.v2.pids.max", CGROUP, COUNT, MAX,
				"v2 pids.max; absent when \"max\""),
	[F2_TYPE] = CTP_FIELD_LABEL(
		"cgroup.v2.cgroup.type", CGROUP,
		"v2 cgroup.type: domain, domain threaded, "
		"domain invalid or threaded (none at the root)"),
	[F1_HIERARCHY] =
		CTP_FIELD_LABEL("cgroup.v1.hierarchy", CGROUP,
				"v1 row: the hierarchy's controller list "
				"as in /proc/<pid>/cgroup"),
	[F1_CPUACCT_USAGE] =
		CTP_FIELD_COUNTER("cgroup.v1.cpuacct.usage", CGROUP, NS,
				  "v1 cpuacct.usage: CPU time of the cgroup"),
	[F1_QUOTA] = CTP_FIELD_GAUGE(
		"cgroup.v1.cpu.cfs_quota_us", CGROUP, US, MAX,
		"v1 cpu.cfs_quota_us; absent when -1 (no limit)"),
	[F1_PERIOD] = CTP_FIELD_GAUGE("cgroup.v1.cpu.cfs_period_us", CGROUP, US,
				      MAX, "v1 cpu.cfs_period_us"),
	[F1_SHARES] = CTP_FIELD_GAUGE("cgroup.v1.cpu.shares", CGROUP, NONE, MAX,
				      "v1 cpu.shares (default 1024)"),
	[F1_NR_PERIODS] = CTP_FIELD_COUNTER(
		"cgroup.v1.cpu.stat.nr_periods", CGROUP, COUNT,
		"v1 cpu.stat nr_periods: enforcement "
		"periods elapsed"),
	[F1_NR_THROTTLED] = CTP_FIELD_COUNTER(
		"cgroup.v1.cpu.stat.nr_throttled", CGROUP, COUNT,
		"v1 cpu.stat nr_throttled: periods "
		"throttled"),
	[F1_THROTTLED_TIME] = CTP_FIELD_COUNTER(
		"cgroup.v1.cpu.stat.throttled_time", CGROUP, NS,
		"v1 cpu.stat throttled_time: time "
		"throttled"),
	[F1_MEM_USAGE] =
		CTP_FIELD_GAUGE("cgroup.v1.memory.usage_in_bytes", CGROUP,
				BYTES, MAX, "v1 memory.usage_in_bytes"),
	[F1_MEM_LIMIT] = CTP_FIELD_GAUGE(
		"cgroup.v1.memory.limit_in_bytes", CGROUP, BYTES, MAX,
		"v1 memory.limit_in_bytes; absent when "
		"unlimited"),
	[F1_MEM_MAX_USAGE] = CTP_FIELD_PEAK(
		"cgroup.v1.memory.max_usage_in_bytes", CGROUP, BYTES,
		"v1 memory.max_usage_in_bytes: usage "
		"high-water mark"),
	[F1_PIDS_CURRENT] =
		CTP_FIELD_GAUGE("cgroup.v1.pids.current", CGROUP, COUNT, MAX,
				"v1 pids.current: tasks in the cgroup"),
	[F1_PIDS_MAX] =
		CTP_FIELD_GAUGE("cgroup.v1.pids.max", CGROUP, COUNT, MAX,
				"v1 pids.max; absent when \"max\""),
};

/* Both lazy. cgroup: read only for threads the listings cannot place.
 * stat: for the start time of a thread no listing has (in the root if it
 * is older than the listings); procfs-stat reads it up front anyway, and
 * the core shares the bytes. */
enum { TF_CGROUP, TF_STAT };
static const char *const thread_files[] = {"?cgroup", "?stat", NULL};

enum {
	C_PARSE,
	C_READ,
	C_KEYS_DROPPED,
	C_V1_NO_MOUNT,
	C_V1_UNREACHABLE,
	C_V2_UNREACHABLE,
	C_REF_ERRORS,
	C_FROM_LISTINGS,
	C_FROM_FILES,
	C_UNLISTED,
	C_FROM_SOURCE,
	N_COUNTERS
};
static const char *const counter_names[N_COUNTERS] = {
	[C_PARSE] = "parse_errors",
	[C_READ] = "read_errors",
	[C_KEYS_DROPPED] = "keys_dropped",
	[C_V1_NO_MOUNT] = "v1_no_mount",
	[C_V1_UNREACHABLE] = "v1_unreachable",
	[C_V2_UNREACHABLE] = "v2_unreachable",
	[C_REF_ERRORS] = "ref_errors",
	/* Threads whose v1 paths came from the cgroups' listings / from
	 * their own cgroup file; v1 hierarchies that could not be listed. */
	[C_FROM_LISTINGS] = "from_listings",
	[C_FROM_FILES] = "from_files",
	[C_UNLISTED] = "hierarchies_unlisted",
	/* Threads whose v1 paths came from the source "cgroup-v1". */
	[C_FROM_SOURCE] = "from_source",
};

/* ---- State --------------------------------------------------------------- */

struct name_slot {
	char *name; /* NULL: free */
	int handle;
};

/* A cgroup (v1) mount of <proc>/self/mountinfo. */
struct mount {
	char *super; /* super options: "rw,cpu,cpuacct" */
	char *root;  /* the mount's root within its hierarchy */
	char *point; /* mount_prefix + mount point */
	int fd;	     /* -1 not opened yet, -2 cannot be */
};

struct cg_state {
	struct ctp_ctx *ctx;
	const struct ctp_api *api;
	int counter[N_COUNTERS];
	int handle[N_FIELDS];
	bool v1_opt;	    /* option v1 */
	bool can_ref;	    /* the core has cgroup_ref */
	const char *prefix; /* option mount_prefix */
	size_t prefix_len;
	/* Per capture, set by host() before the walk. */
	bool v1_live;	    /* this host has v1 hierarchies */
	bool str_handles;   /* the core has str_intern and set_str_handle */
	bool str_handles_n; /* and set_str_handles */
	uint64_t gen;	    /* identifies the capture for the TLS cache */
	struct mount *mounts;
	size_t n_mounts;
	struct cg_listing list; /* every thread's v1 paths, when complete */
	uint64_t list_ticks;	/* when the listing began, USER_HZ since boot */
	/* The cgroups by directory inode, for the source "cgroup-v1". */
	struct cg_listing inos;
	/* The v1 hierarchies of <proc>/self/cgroup (n_hiers 0: none, or
	 * they could not be read: nothing is listed or indexed). */
	struct cg_hier {
		uint32_t id;
		char ctrl[CG_LIST_CTRL_LEN];
		size_t ctrl_len;
	} hiers[CG_LIST_MAX_HIER];
	size_t n_hiers;
	bool hiers_ok; /* hiers were read (a line too many: not) */
	bool listable; /* the listings name this proc root's tids */
	/* list and inos are built by the first worker that needs them
	 * (under lazy), once a capture: 1 when built. */
	pthread_mutex_t lazy;
	_Atomic int list_built, inos_built;

	/* Thread path fields by controller list, registered by workers (a
	 * refused one: its paths are dropped). */
	struct ctp_handle_cache hier;

	/* The cgroup pass (main thread only). */
	struct name_slot names[NAME_SLOTS];
	size_t n_names;
	char *buf;
	size_t cap;
	struct ctp_cg_keyed keyed;
};

/* The cgroup file of the worker's previous thread, whose v1 rows it
 * already referenced in capture `gen` of state `st`. */
struct tls_seen {
	const void *st;
	uint64_t gen;
	size_t len;
	char data[TLS_BYTES];
};
static _Thread_local struct tls_seen seen;

/* The worker's place in each hierarchy's listing of capture `gen` of
 * state `st`: a worker walks a process's tids in rising order, so the
 * next thread's pair is a few steps ahead of the last one's. */
struct tls_cursor {
	const void *st;
	uint64_t gen;
	size_t pos[CG_LIST_MAX_HIER];
};
static _Thread_local struct tls_cursor cursor;

/* The source bytes of the worker's previous thread served from the source
 * in capture `gen` of state `st`, and the keys they resolved to: threads
 * of a process usually share every cgroup. */
struct tls_source {
	const void *st;
	uint64_t gen;
	size_t len;
	unsigned char data[sizeof(struct ctp_src_cgroup_v1)];
	uint32_t kid[CG_LIST_MAX_HIER];
};
static _Thread_local struct tls_source last_src;

static void count(struct cg_state *st, int c, uint64_t n)
{
	if (n)
		st->api->summary_add(st->ctx, st->counter[c], n);
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* ---- Reading cgroupfs (main thread) -------------------------------------- */

/* A whole file at dirfd/name into st->buf. 0, or -errno. */
static int read_at(struct cg_state *st, int dirfd, const char *name,
		   size_t *len)
{
	return ctp_read_grow(dirfd, name, CTP_HOST_READ_MAX, &st->buf, &st->cap,
			     len);
}

/*
 * Read one control file. true with the bytes in st->buf; false when it
 * cannot be read: a file that does not exist (controller not enabled, the
 * root cgroup) silently, anything else counted.
 */
static bool control(struct cg_state *st, int dirfd, const char *name,
		    size_t *len)
{
	int r = read_at(st, dirfd, name, len);

	if (r == 0)
		return true;
	if (r != -ENOENT && r != -ENODEV && r != -EOPNOTSUPP)
		count(st, C_READ, 1);
	return false;
}

/* ---- Open key sets ------------------------------------------------------- */

static uint32_t hash(const char *s)
{
	uint32_t h = 2166136261u;

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 16777619u;
	return h;
}

/* The slot of `name` in the cache, or the free slot it would take; NULL
 * when the cache is full. */
static struct name_slot *name_slot(struct cg_state *st, const char *name)
{
	uint32_t i = hash(name) % NAME_SLOTS, n;

	for (n = 0; n < NAME_SLOTS; n++, i = (i + 1) % NAME_SLOTS)
		if (!st->names[i].name || strcmp(st->names[i].name, name) == 0)
			return &st->names[i];
	return NULL;
}

static void name_remember(struct cg_state *st, const char *name, int handle)
{
	struct name_slot *s;

	/* Keep a quarter free so probes stay short; past it, the core's
	 * field_register answers (same description, same handle). */
	if (st->n_names >= NAME_SLOTS * 3 / 4)
		return;
	s = name_slot(st, name);
	if (!s || s->name)
		return;
	s->name = strdup(name);
	if (!s->name)
		return;
	s->handle = handle;
	st->n_names++;
}

/* The handle of key kv of a keyed file, "<prefix><key>", registering it
 * the first time; < 0 when refused. */
static int key_handle(struct cg_state *st, enum ctp_cg_keyed_file file,
		      const char *prefix, const struct ctp_keyval *kv)
{
	char name[128], help[160];
	struct ctp_cg_keymeta meta;
	struct name_slot *s;
	size_t pl = strlen(prefix);
	int h;

	if (pl + kv->key_len + 1 > sizeof(name))
		return -ENAMETOOLONG;
	memcpy(name, prefix, pl);
	memcpy(name + pl, kv->key, kv->key_len);
	name[pl + kv->key_len] = '\0';
	s = name_slot(st, name);
	if (s && s->name)
		return s->handle;
	ctp_cg_key_meta(file, kv->key, kv->key_len, &meta);
	/* "cgroup.v2.memory.stat." -> "v2 memory.stat <key>" */
	snprintf(help, sizeof(help), "%.2s %.*s %s", prefix + 7, (int)(pl - 11),
		 prefix + 10, name + pl);
	struct ctp_field_desc d = {
		.name = name,
		.help = help,
		.scope = CTP_SCOPE_CGROUP,
		.type = CTP_TYPE_U64,
		.unit = meta.unit,
		.kind = meta.kind,
		.rule = meta.rule,
	};
	h = st->api->field_register(st->ctx, &d);
	/* Refusals are remembered too: the core logged it once. */
	name_remember(st, name, h);
	return h;
}

/* True for a v1 memory.stat limit key whose value means "unlimited". */
static bool v1_unlimited_key(enum ctp_cg_keyed_file file,
			     const struct ctp_keyval *kv)
{
	static const char *const limits[] = {"hierarchical_memory_limit",
					     "hierarchical_memsw_limit"};
	size_t i;

	if (file != CTP_CG_V1_MEMORY_STAT || kv->value < CTP_CG_V1_UNLIMITED)
		return false;
	for (i = 0; i < 2; i++)
		if (kv->key_len == strlen(limits[i]) &&
		    memcmp(kv->key, limits[i], kv->key_len) == 0)
			return true;
	return false;
}

/* A keyed file: every key "<prefix><key>". */
static void file_keyed(struct cg_state *st, struct ctp_setter *set, int dirfd,
		       const char *name, enum ctp_cg_keyed_file file,
		       const char *prefix)
{
	struct ctp_cg_keyed *kd = &st->keyed;
	uint64_t dropped;
	size_t len, i;
	int h;

	if (!control(st, dirfd, name, &len))
		return;
	if (ctp_cg_parse_keyed(st->buf, len, kd) < 0)
		count(st, C_PARSE, 1);
	dropped = kd->dropped;
	for (i = 0; i < kd->n; i++) {
		if (v1_unlimited_key(file, &kd->kv[i]))
			continue;
		h = key_handle(st, file, prefix, &kd->kv[i]);
		dropped += h < 0;
		ctp_set_u64(set, h, kd->kv[i].value);
	}
	count(st, C_KEYS_DROPPED, dropped);
}

/* ---- Control files ------------------------------------------------------- */

/* How a control file's text becomes its field's value. */
enum shape {
	S_KEYED,     /* "key value" lines: a field a key, "<prefix><key>" */
	S_U64,	     /* "N\n" */
	S_LIMIT,     /* "N\n", or "max\n": no limit, absent */
	S_PROTECT,   /* "N\n", or "max\n": all of it, 2^64-1 */
	S_I64,	     /* "[-]N\n" */
	S_LINE,	     /* one line of text */
	S_CPU_MAX,   /* v2 cpu.max "quota period": quota absent when "max";
			the period is the next field */
	S_CFS_QUOTA, /* v1 cpu.cfs_quota_us: -1 is no limit, absent */
	S_V1_LIMIT,  /* v1 memory.limit_in_bytes: "unlimited" is absent */
};

/* One control file a cgroup row reads, in the order they are read (which
 * is the order keyed files register their fields in). */
struct control {
	const char *ctrl; /* v1: read only in a hierarchy with it */
	const char *file;
	uint8_t shape;	    /* enum shape */
	uint8_t keyed;	    /* S_KEYED: enum ctp_cg_keyed_file */
	int16_t field;	    /* its field (F2_*, F1_*) */
	const char *prefix; /* S_KEYED: the name of its keys' fields */
};

#define V2(f, sh, fld)                                                         \
	{                                                                      \
		.file = (f), .shape = (sh), .field = (fld)                     \
	}
#define V2_KEYED(f, kf)                                                        \
	{                                                                      \
		.file = (f), .shape = S_KEYED, .keyed = (kf),                  \
		.prefix = "cgroup.v2." f "."                                   \
	}
#define V1(c, f, sh, fld)                                                      \
	{                                                                      \
		.ctrl = (c), .file = (f), .shape = (sh), .field = (fld)        \
	}
#define V1_KEYED(c, f, kf)                                                     \
	{                                                                      \
		.ctrl = (c), .file = (f), .shape = S_KEYED, .keyed = (kf),     \
		.prefix = "cgroup.v1." f "."                                   \
	}

static const struct control v2_controls[] = {
	V2_KEYED("cpu.stat", CTP_CG_V2_CPU_STAT),
	V2("cpu.max", S_CPU_MAX, F2_QUOTA),
	V2("cpu.weight", S_U64, F2_WEIGHT),
	V2("cpu.weight.nice", S_I64, F2_WEIGHT_NICE),
	V2("memory.current", S_U64, F2_MEM_CURRENT),
	V2("memory.max", S_LIMIT, F2_MEM_MAX),
	V2("memory.high", S_LIMIT, F2_MEM_HIGH),
	V2("memory.low", S_PROTECT, F2_MEM_LOW),
	V2("memory.min", S_PROTECT, F2_MEM_MIN),
	V2_KEYED("memory.stat", CTP_CG_V2_MEMORY_STAT),
	V2_KEYED("memory.events", CTP_CG_V2_MEMORY_EVENTS),
	V2("pids.current", S_U64, F2_PIDS_CURRENT),
	V2("pids.max", S_LIMIT, F2_PIDS_MAX),
	V2("cgroup.type", S_LINE, F2_TYPE),
};

static const struct control v1_controls[] = {
	V1("cpuacct", "cpuacct.usage", S_U64, F1_CPUACCT_USAGE),
	V1("cpu", "cpu.cfs_quota_us", S_CFS_QUOTA, F1_QUOTA),
	V1("cpu", "cpu.cfs_period_us", S_U64, F1_PERIOD),
	V1("cpu", "cpu.shares", S_U64, F1_SHARES),
	V1_KEYED("cpu", "cpu.stat", CTP_CG_V1_CPU_STAT),
	V1("memory", "memory.usage_in_bytes", S_U64, F1_MEM_USAGE),
	V1("memory", "memory.limit_in_bytes", S_V1_LIMIT, F1_MEM_LIMIT),
	V1("memory", "memory.max_usage_in_bytes", S_U64, F1_MEM_MAX_USAGE),
	V1_KEYED("memory", "memory.stat", CTP_CG_V1_MEMORY_STAT),
	V1("pids", "pids.current", S_U64, F1_PIDS_CURRENT),
	V1("pids", "pids.max", S_LIMIT, F1_PIDS_MAX),
};

/* The value of a control file (len bytes at buf) into its field, whose
 * handle is fh[c->field]; 0, or the parse's error. */
static int control_value(const struct control *c, const char *buf, size_t len,
			 const int *fh, struct ctp_setter *set)
{
	int h = fh[c->field];
	struct ctp_cg_cpu_max cm;
	const char *w;
	uint64_t v;
	int64_t i;
	bool is_max;
	int r;

	switch (c->shape) {
	case S_U64:
	case S_V1_LIMIT:
		r = ctp_cg_parse_u64(buf, len, &v);
		if (r == 0 && (c->shape == S_U64 || v < CTP_CG_V1_UNLIMITED))
			ctp_set_u64(set, h, v);
		return r;
	case S_LIMIT:
	case S_PROTECT:
		r = ctp_cg_parse_u64_max(buf, len, &v, &is_max);
		if (r == 0 && (!is_max || c->shape == S_PROTECT))
			ctp_set_u64(set, h, is_max ? UINT64_MAX : v);
		return r;
	case S_I64:
	case S_CFS_QUOTA:
		r = ctp_cg_parse_i64(buf, len, &i);
		/* The kernel takes no negative quota but -1. */
		if (r == 0 && c->shape == S_CFS_QUOTA && i < -1)
			r = -EINVAL;
		if (r == 0 && c->shape == S_I64)
			ctp_set_i64(set, h, i);
		else if (r == 0 && i >= 0)
			ctp_set_u64(set, h, (uint64_t)i);
		return r;
	case S_LINE:
		r = ctp_cg_parse_line(buf, len, &w, &len);
		if (r == 0)
			ctp_set_str(set, h, w, len);
		return r;
	case S_CPU_MAX:
		r = ctp_cg_parse_cpu_max(buf, len, &cm);
		if (r == 0 && !cm.quota_max)
			ctp_set_u64(set, h, cm.quota);
		if (r == 0)
			ctp_set_u64(set, fh[c->field + 1], cm.period);
		return r;
	default:
		return -EINVAL;
	}
}

static bool has_ctrl(const char *ctrl, size_t len, const char *c)
{
	return ctp_cg_list_has(ctrl, len, c, strlen(c));
}

/* Read each control file of the table the hierarchy `ctrl` has (v2: all)
 * into its field or, for a keyed file, its keys' fields. */
static void read_controls(struct cg_state *st, struct ctp_setter *set,
			  int dirfd, const struct control *c, size_t n,
			  const char *ctrl, size_t ctrl_len)
{
	for (size_t i = 0; i < n; i++, c++) {
		size_t len;

		if (c->ctrl && !has_ctrl(ctrl, ctrl_len, c->ctrl))
			continue;
		if (c->shape == S_KEYED) {
			file_keyed(st, set, dirfd, c->file, c->keyed,
				   c->prefix);
			continue;
		}
		if (!control(st, dirfd, c->file, &len))
			continue;
		if (control_value(c, st->buf, len, st->handle, set) < 0)
			count(st, C_PARSE, 1);
	}
}

/* ---- v2 ------------------------------------------------------------------ */

static int v2_cgroup(struct cg_state *st, int dirfd, struct ctp_record *rec)
{
	struct ctp_setter set = CTP_SETTER(st->api, rec);

	read_controls(st, &set, dirfd, v2_controls, CTP_ARRAY_LEN(v2_controls),
		      NULL, 0);
	return set.err;
}

/* ---- v1 ------------------------------------------------------------------ */

static void mounts_close(struct cg_state *st)
{
	size_t i;

	for (i = 0; i < st->n_mounts; i++)
		if (st->mounts[i].fd >= 0) {
			close(st->mounts[i].fd);
			st->mounts[i].fd = -1;
		}
}

static void mounts_free(struct cg_state *st)
{
	size_t i;

	mounts_close(st);
	for (i = 0; i < st->n_mounts; i++) {
		free(st->mounts[i].super);
		free(st->mounts[i].root);
		free(st->mounts[i].point);
	}
	free(st->mounts);
	st->mounts = NULL;
	st->n_mounts = 0;
}

static char *unescaped(const char *s, size_t len, const char *prefix,
		       size_t plen)
{
	char *out = malloc(plen + len + 1);
	int n;

	if (!out)
		return NULL;
	memcpy(out, prefix, plen);
	n = ctp_cg_unescape(s, len, out + plen, len + 1);
	if (n < 0) {
		free(out);
		return NULL;
	}
	return out;
}

/* Keep one cgroup v1 mount; false only when out of memory. */
static bool mount_add(struct cg_state *st, const struct ctp_cg_mount *m)
{
	struct mount *nm =
		realloc(st->mounts, (st->n_mounts + 1) * sizeof(*st->mounts));
	struct mount *t;

	if (!nm)
		return false;
	st->mounts = nm;
	t = &nm[st->n_mounts];
	t->fd = -1;
	t->super = strndup(m->super, m->super_len);
	t->root = unescaped(m->root, m->root_len, "", 0);
	t->point =
		unescaped(m->point, m->point_len, st->prefix, st->prefix_len);
	if (!t->super || !t->root || !t->point) {
		free(t->super);
		free(t->root);
		free(t->point);
		/* An undecodable name is skipped, not fatal. */
		return t->super != NULL;
	}
	st->n_mounts++;
	return true;
}

/* The v1 mounts of <proc>/self/mountinfo; true when any. */
static bool mounts_load(struct cg_state *st, int proc_fd)
{
	const char *p, *end;
	struct ctp_cg_mount m;
	size_t len;
	int r;

	mounts_free(st);
	if (proc_fd < 0 || read_at(st, proc_fd, "self/mountinfo", &len) < 0) {
		st->api->log(st->ctx, CTP_LOG_DEBUG,
			     "no self/mountinfo under the proc root: v1 "
			     "values are not read");
		return false;
	}
	p = st->buf;
	end = st->buf + len;
	while ((r = ctp_cg_mountinfo_next(&p, end, &m)) != 0) {
		if (r < 0) {
			count(st, C_PARSE, 1);
			continue;
		}
		if (m.fstype_len == 6 && memcmp(m.fstype, "cgroup", 6) == 0 &&
		    !mount_add(st, &m))
			break;
	}
	return st->n_mounts > 0;
}

/* Does <proc>/self/cgroup list a v1 hierarchy? Every task lists every
 * hierarchy the kernel has, mounted here or not. */
static bool self_has_v1(struct cg_state *st, int proc_fd)
{
	struct ctp_cg_membership m;
	size_t len, i;

	if (proc_fd < 0 || read_at(st, proc_fd, "self/cgroup", &len) < 0)
		return false;
	ctp_cg_parse_membership(st->buf, len, &m);
	for (i = 0; i < m.n; i++)
		if (m.line[i].id != 0)
			return true;
	return false;
}

/* The mount of hierarchy `ctrl`: one showing its whole tree first. */
static struct mount *mount_of(struct cg_state *st, const char *ctrl,
			      size_t ctrl_len)
{
	struct mount *best = NULL;
	size_t i;

	for (i = 0; i < st->n_mounts; i++) {
		struct mount *mt = &st->mounts[i];
		struct ctp_cg_mount m = {.fstype = "cgroup",
					 .fstype_len = 6,
					 .super = mt->super,
					 .super_len = strlen(mt->super)};

		if (!ctp_cg_mount_holds(&m, ctrl, ctrl_len))
			continue;
		if (strcmp(mt->root, "/") == 0)
			return mt;
		if (!best)
			best = mt;
	}
	return best;
}

static int v1_cgroup(struct cg_state *st, const char *ctrl, size_t ctrl_len,
		     const char *path, size_t path_len, struct ctp_record *rec)
{
	struct ctp_setter set = CTP_SETTER(st->api, rec);
	char rel[KEY_MAX + 2];
	const char *r;
	size_t rl;
	struct mount *mt;
	int dirfd;

	ctp_set_str(&set, st->handle[F1_HIERARCHY], ctrl, ctrl_len);
	mt = mount_of(st, ctrl, ctrl_len);
	if (!mt) {
		count(st, C_V1_NO_MOUNT, 1);
		return set.err;
	}
	if (mt->fd == -1) {
		mt->fd = open(mt->point, O_PATH | O_DIRECTORY | O_CLOEXEC);
		if (mt->fd < 0) {
			mt->fd = -2;
			st->api->log(st->ctx, CTP_LOG_WARNING,
				     "cannot open cgroup v1 mount %s: %s",
				     mt->point, strerror(errno));
		}
	}
	if (mt->fd < 0 ||
	    ctp_cg_path_in_mount(path, path_len, mt->root, strlen(mt->root), &r,
				 &rl) < 0 ||
	    rl + 1 > sizeof(rel)) {
		/* Outside what this mount shows (a container's bind of its
		 * own subtree), or a path that would climb out of it. */
		count(st, C_V1_UNREACHABLE, 1);
		return set.err;
	}
	memcpy(rel, r, rl);
	rel[rl] = '\0';
	dirfd = openat(mt->fd, rl ? rel : ".",
		       O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (dirfd < 0) {
		/* Removed since the walk, or outside this mount's view. */
		count(st, C_V1_UNREACHABLE, 1);
		return set.err;
	}
	read_controls(st, &set, dirfd, v1_controls, CTP_ARRAY_LEN(v1_controls),
		      ctrl, ctrl_len);
	close(dirfd);
	return set.err;
}

static int cg_cgroup(void *state, const struct ctp_cgroup *cg,
		     struct ctp_record *rec)
{
	struct cg_state *st = state;
	const char *ctrl, *path;
	size_t cl, pl;

	if (!cg || !cg->path)
		return -EINVAL;
	if (cg->path[0] == '/') {
		if (cg->dirfd < 0) {
			count(st, C_V2_UNREACHABLE, 1);
			return 0;
		}
		return v2_cgroup(st, cg->dirfd, rec);
	}
	if (ctp_cg_v1_key_split(cg->path, strlen(cg->path), &ctrl, &cl, &path,
				&pl) < 0)
		return 0; /* another plugin's namespace: not ours */
	return v1_cgroup(st, ctrl, cl, path, pl, rec);
}

/* ---- Threads: v1 paths --------------------------------------------------- */

/* The path field of hierarchy ctrl (ctp_handle_cache_get's reg). */
static int register_hier(void *arg, const char *ctrl, size_t len)
{
	struct cg_state *st = arg;
	char hn[HIER_LEN], name[HIER_LEN + 32], help[2 * HIER_LEN + 96],
		dims[HIER_LEN + 16];
	int n = ctp_cg_hier_name(ctrl, len, hn, sizeof(hn));

	if (n < 0)
		return n;
	snprintf(name, sizeof(name), "cgroup.v1.%s.path", hn);
	snprintf(help, sizeof(help),
		 "path in the cgroup v1 hierarchy %.*s (its row in cgroups: "
		 "v1:%.*s:<path>)",
		 (int)len, ctrl, (int)len, ctrl);
	struct ctp_field_desc d = {
		.name = name,
		.help = help,
		.scope = CTP_SCOPE_THREAD,
		.type = CTP_TYPE_STRING,
		.unit = CTP_UNIT_NONE,
		.kind = CTP_KIND_CATEGORICAL,
		.rule = CTP_RULE_MODE,
		/* Readers find a hierarchy's path field by this, not by
		 * its name (group's cgroup:HIER axis). */
		.flags = CTP_FIELD_META,
		.section = "cgroup-v1-path",
		.dims = dims,
	};
	snprintf(dims, sizeof(dims), "hierarchy=%s", hn);
	return st->api->field_register(st->ctx, &d);
}

/* The path field of hierarchy `ctrl`, registered the first time. */
static int hier_handle(struct cg_state *st, const char *ctrl, size_t len)
{
	return ctp_handle_cache_get(&st->hier, ctrl, len, register_hier, st);
}

/*
 * The thread's start, USER_HZ ticks since boot: from the per-task source
 * "task" when it offers it (no file: a walk from the source opens none),
 * else from its stat. 0, or a negative errno.
 */
static int start_ticks(struct cg_state *st, const struct ctp_task *task,
		       uint64_t *out)
{
	const void *src;
	const char *data;
	size_t len;
	struct ctp_stat s;

	if (CTP_API_HAS(st->api, source_get) &&
	    st->api->source_get(task, CTP_SOURCE_TASK, &src, &len) == 0 &&
	    ctp_src_task_get(src, len, CTP_SRC_TASK_START_TIME, out))
		return 0;
	int r = ctp_task_fetch(st->api, task, TF_STAT, &data, &len);
	if (r < 0)
		return r;
	if (ctp_parse_stat(data, len, &s) < 0 ||
	    !ctp_stat_has(&s, CTP_STAT_STARTTIME))
		return -EINVAL;
	*out = s.w[CTP_STAT_STARTTIME].u;
	return 0;
}

/*
 * The handle of the path of key `kid` of l (ctp_api.str_intern), made by
 * the first thread of the key this capture (every thread of a cgroup sets
 * the same path: interning it once saves hashing and comparing it again on
 * every thread); -1 where the core has no handles or interning failed.
 */
static int64_t path_handle(struct cg_state *st, const struct cg_listing *l,
			   uint32_t kid)
{
	const struct cg_key *k = &l->keys[kid];
	int64_t hs;

	if (!st->str_handles)
		return -1;
	hs = atomic_load_explicit(&l->path_str[kid], memory_order_relaxed);
	if (hs >= 0)
		return hs;
	hs = st->api->str_intern(st->ctx, l->arena + k->off + k->path_off,
				 k->len - k->path_off);
	if (hs >= 0)
		atomic_store_explicit(&l->path_str[kid], hs,
				      memory_order_relaxed);
	return hs;
}

/*
 * Set the thread's path in every hierarchy of l, hierarchy h's cgroup being
 * key kid[h] of l: those with a handle in one set_str_handles call (a call
 * a path cost ~110 instructions of the core's checks, nine a thread on a
 * v1 host), the others by their bytes; the first thread of a cgroup
 * references its row (one flag per key of l).
 */
static void place(struct cg_state *st, const struct cg_listing *l,
		  const uint32_t *kid, struct ctp_setter *set)
{
	int fid[CG_LIST_MAX_HIER];
	int64_t handles[CG_LIST_MAX_HIER];
	uint32_t n = 0;
	uint64_t ref_err = 0, dropped = 0;

	for (size_t h = 0; h < l->n_hier; h++) {
		const struct cg_key *k = &l->keys[kid[h]];
		const char *key = l->arena + k->off;
		int field = l->h[h].handle;

		if (field < 0) {
			dropped++;
		} else if ((handles[n] = path_handle(st, l, kid[h])) >= 0) {
			fid[n++] = field;
		} else {
			ctp_set_str(set, field, key + k->path_off,
				    k->len - k->path_off);
		}
		/* A load first: every thread of a cgroup but its first
		 * finds the row referenced, without writing (and taking
		 * from the other workers) the flag's cache line. */
		if (st->can_ref &&
		    !atomic_load_explicit(&l->referenced[kid[h]],
					  memory_order_relaxed) &&
		    !atomic_exchange_explicit(&l->referenced[kid[h]], 1,
					      memory_order_relaxed) &&
		    st->api->cgroup_ref(st->ctx, key, k->len) < 0)
			ref_err++;
	}
	if (st->str_handles_n)
		ctp_set_str_handles(set, fid, handles, n);
	else
		for (uint32_t i = 0; i < n; i++)
			ctp_set_str_handle(set, fid[i], handles[i]);
	count(st, C_KEYS_DROPPED, dropped);
	count(st, C_REF_ERRORS, ref_err);
}

/*
 * The thread's path in every hierarchy from the listings; false (nothing
 * set) when one of them does not place it exactly once.
 */
static bool from_listing(struct cg_state *st, const struct ctp_task *task,
			 struct ctp_setter *set)
{
	const struct cg_listing *l = &st->list;
	uint32_t kid[CG_LIST_MAX_HIER];
	int old = -1; /* started before the listing: 1, after or unknown: 0 */

	if (cursor.st != st || cursor.gen != st->gen) {
		memset(cursor.pos, 0, sizeof(cursor.pos));
		cursor.st = st;
		cursor.gen = st->gen;
	}
	for (size_t h = 0; h < l->n_hier; h++) {
		const struct ctp_id_pair *m = cg_listing_find(
			l, h, (uint32_t)task->tid, &cursor.pos[h]);

		if (m && m->val == CTP_ID_AMBIGUOUS)
			return false;
		if (m) {
			kid[h] = m->val;
			continue;
		}
		/* In no other cgroup: the root's, if it is older than the
		 * listing (a tick of margin for the rounding). */
		if (old < 0) {
			uint64_t start;
			old = start_ticks(st, task, &start) == 0 &&
			      start + 1 < st->list_ticks;
		}
		if (!old)
			return false;
		kid[h] = l->h[h].root_key;
	}
	place(st, l, kid, set);
	count(st, C_FROM_LISTINGS, 1);
	return true;
}

/* Run build once a capture, by the first worker to get here; the others
 * wait for it. */
static void once(struct cg_state *st, _Atomic int *built,
		 void (*build)(struct cg_state *))
{
	if (atomic_load_explicit(built, memory_order_acquire))
		return;
	pthread_mutex_lock(&st->lazy);
	if (!atomic_load_explicit(built, memory_order_relaxed)) {
		build(st);
		atomic_store_explicit(built, 1, memory_order_release);
	}
	pthread_mutex_unlock(&st->lazy);
}

static void build_inos(struct cg_state *st);
static void build_listings(struct cg_state *st);

/* How the source "cgroup-v1" answered for a thread. */
enum src_answer {
	SRC_SERVED,  /* paths set */
	SRC_THREAD,  /* not for this thread: it reads its file */
	SRC_CAPTURE, /* not this capture: no source, no pass, no index */
};

/*
 * The thread's path in every hierarchy from the source "cgroup-v1": its
 * (hierarchy id, kernfs id) pairs, each kernfs id the inode of a cgroup
 * directory the per-capture index (build_inos) knows.
 */
static enum src_answer from_source(struct cg_state *st,
				   const struct ctp_task *task,
				   struct ctp_setter *set)
{
	struct ctp_src_cg1_pair p[CTP_SRC_CG1_MAX_PAIRS];
	const void *data;
	size_t len;
	int n;

	if (!CTP_API_HAS(st->api, source_get))
		return SRC_CAPTURE;
	n = st->api->source_get(task, CTP_SOURCE_CGROUP_V1, &data, &len);
	if (n == -ENOENT || n == -EAGAIN)
		return SRC_CAPTURE;
	if (n < 0)
		return SRC_THREAD;
	once(st, &st->inos_built, build_inos);
	if (!st->inos.complete)
		return SRC_CAPTURE;
	if (last_src.st == st && last_src.gen == st->gen &&
	    last_src.len == len && memcmp(last_src.data, data, len) == 0) {
		place(st, &st->inos, last_src.kid, set);
		count(st, C_FROM_SOURCE, 1);
		return SRC_SERVED;
	}
	n = ctp_src_cg1_pairs(data, len, p, CTP_SRC_CG1_MAX_PAIRS);
	if (n < 0) {
		count(st, C_PARSE, 1);
		return SRC_THREAD;
	}
	if (!cg_listing_resolve(&st->inos, p, (size_t)n, last_src.kid)) {
		last_src.st = NULL;
		return SRC_THREAD;
	}
	if (len <= sizeof(last_src.data)) {
		memcpy(last_src.data, data, len);
		last_src.len = len;
		last_src.gen = st->gen;
		last_src.st = st;
	} else {
		last_src.st = NULL;
	}
	place(st, &st->inos, last_src.kid, set);
	count(st, C_FROM_SOURCE, 1);
	return SRC_SERVED;
}

static int cg_thread(void *state, const struct ctp_task *task,
		     struct ctp_record *rec)
{
	struct cg_state *st = state;
	struct ctp_setter set = CTP_SETTER(st->api, rec);
	struct ctp_cg_membership m;
	const char *data;
	size_t len;
	char key[KEY_MAX + 1];
	bool refs_done, refs_ok = true;
	uint64_t dropped = 0, ref_err = 0;
	size_t i;
	int h, n;

	if (!st->v1_live)
		return 0;
	/* The source first; the listings only in a capture it does not
	 * serve (a thread it leaves out, rare, reads its own file). */
	switch (from_source(st, task, &set)) {
	case SRC_SERVED:
		return set.err;
	case SRC_CAPTURE:
		once(st, &st->list_built, build_listings);
		if (st->list.complete && from_listing(st, task, &set))
			return set.err;
		break;
	case SRC_THREAD:
		break;
	}
	/* A failed read is the core's to tally (and a vanished task its to
	 * drop); the paths stay absent, and the thread is not counted as
	 * placed by its file: from_listings, from_source and from_files add
	 * up to the rows a snapshot keeps. */
	n = ctp_task_fetch(st->api, task, TF_CGROUP, &data, &len);
	if (n == -EPROTO)
		return n;
	if (n < 0)
		return 0;
	count(st, C_FROM_FILES, 1);
	if (ctp_cg_parse_membership(data, len, &m) < 0)
		count(st, C_PARSE, 1);
	dropped = m.dropped;
	/* Threads of a process usually share every cgroup: the rows are
	 * then referenced already. */
	refs_done = !st->can_ref ||
		    (seen.st == st && seen.gen == st->gen && seen.len == len &&
		     memcmp(seen.data, data, len) == 0);
	for (i = 0; i < m.n; i++) {
		const struct ctp_cg_line *l = &m.line[i];

		if (l->id == 0)
			continue; /* v2: the core's identity column */
		h = hier_handle(st, l->ctrl, l->ctrl_len);
		dropped += h < 0;
		ctp_set_str(&set, h, l->path, l->path_len);
		/* The row's values do not need the path field. */
		if (refs_done)
			continue;
		n = ctp_cg_v1_key(key, sizeof(key), l->ctrl, l->ctrl_len,
				  l->path, l->path_len);
		if (n < 0 || st->api->cgroup_ref(st->ctx, key, (size_t)n) < 0) {
			ref_err++;
			refs_ok = false;
		}
	}
	if (!refs_done && refs_ok && len <= sizeof(seen.data)) {
		memcpy(seen.data, data, len);
		seen.len = len;
		seen.gen = st->gen;
		seen.st = st;
	}
	count(st, C_KEYS_DROPPED, dropped);
	count(st, C_REF_ERRORS, ref_err);
	return set.err;
}

/* ---- Per capture --------------------------------------------------------- */

/* Now, in USER_HZ ticks since boot (the clock of stat's start time). */
static uint64_t boot_ticks(void)
{
	struct timespec ts;
	long hz = sysconf(_SC_CLK_TCK);

	clock_gettime(CLOCK_BOOTTIME, &ts);
	return (uint64_t)ts.tv_sec * (uint64_t)hz +
	       (uint64_t)ts.tv_nsec / (1000000000ull / (uint64_t)hz);
}

/*
 * Whether the hierarchies' listings name the threads the walk sees: the
 * proc root is this process's procfs (the listings print tids in our pid
 * namespace), or no procfs at all (a copied tree, listings included).
 */
static bool listings_match(int proc_fd)
{
	struct statfs sf;

	if (proc_fd < 0 || fstatfs(proc_fd, &sf) < 0)
		return false;
	return sf.f_type != PROC_SUPER_MAGIC || ctp_proc_is_live(proc_fd);
}

/*
 * The v1 hierarchies of this host (the lines of <proc>/self/cgroup: every
 * task lists every hierarchy), for the listings and the inode index.
 */
static void read_hierarchies(struct cg_state *st, int proc_fd)
{
	struct ctp_cg_membership self;
	size_t len;

	st->n_hiers = 0;
	st->hiers_ok = false;
	if (!st->v1_live || read_at(st, proc_fd, "self/cgroup", &len) < 0)
		return;
	ctp_cg_parse_membership(st->buf, len, &self);
	if (!self.n || self.dropped)
		return;
	st->hiers_ok = true;
	for (size_t i = 0; i < self.n; i++) {
		const struct ctp_cg_line *l = &self.line[i];
		struct cg_hier *h = &st->hiers[st->n_hiers];

		if (l->id == 0)
			continue;
		if (st->n_hiers == CG_LIST_MAX_HIER ||
		    l->ctrl_len >= sizeof(h->ctrl) || l->id > INT32_MAX) {
			count(st, C_UNLISTED, 1);
			st->n_hiers = 0;
			st->hiers_ok = false;
			return;
		}
		h->id = (uint32_t)l->id;
		memcpy(h->ctrl, l->ctrl, l->ctrl_len);
		h->ctrl_len = l->ctrl_len;
		st->n_hiers++;
	}
}

/*
 * Walk every v1 hierarchy from a mount that shows its whole tree, into
 * l (cg_listing_add, or cg_listing_add_inos with inos). One hierarchy that
 * cannot be walked (not mounted, mounted from a subtree, a bound passed)
 * leaves l incomplete.
 */
static void walk_hierarchies(struct cg_state *st, struct cg_listing *l,
			     bool inos)
{
	bool ok = st->hiers_ok;

	for (size_t i = 0; ok && i < st->n_hiers; i++) {
		const struct cg_hier *hr = &st->hiers[i];
		struct mount *mt = mount_of(st, hr->ctrl, hr->ctrl_len);
		int fd, r, handle;

		if (!mt || strcmp(mt->root, "/") != 0) {
			count(st, C_UNLISTED, 1);
			ok = false;
			break;
		}
		handle = hier_handle(st, hr->ctrl, hr->ctrl_len);
		fd = open(mt->point, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		r = fd < 0 ? -errno
		    : inos ? cg_listing_add_inos(l, hr->ctrl, hr->ctrl_len,
						 handle, hr->id, fd)
			   : cg_listing_add(l, hr->ctrl, hr->ctrl_len, handle,
					    fd);
		if (fd >= 0)
			close(fd);
		if (r < 0) {
			count(st, C_UNLISTED, 1);
			st->api->log(st->ctx, CTP_LOG_DEBUG,
				     "v1 hierarchy %.*s not %s: %s",
				     (int)hr->ctrl_len, hr->ctrl,
				     inos ? "indexed" : "listed", strerror(-r));
			ok = false;
		}
	}
	if (!ok)
		return;
	cg_listing_done(l);
	l->complete = true;
}

/* Every thread's v1 paths from the hierarchies' `tasks` listings (the
 * first worker of a capture the source does not serve). */
static void build_listings(struct cg_state *st)
{
	if (!st->listable)
		return;
	st->list_ticks = boot_ticks();
	walk_hierarchies(st, &st->list, false);
}

/* Every cgroup by its directory's inode (the first worker the source
 * serves). */
static void build_inos(struct cg_state *st)
{
	walk_hierarchies(st, &st->inos, true);
}

static int cg_host(void *state, struct ctp_record *rec)
{
	struct cg_state *st = state;
	const struct ctp_roots *roots = st->api->roots(st->ctx);
	int proc_fd = roots ? roots->proc_fd : -1;
	bool mounted;

	(void)rec;
	st->gen = now_ns();
	mounted = st->v1_opt && mounts_load(st, proc_fd);
	st->v1_live = st->v1_opt && (mounted || self_has_v1(st, proc_fd));
	cg_listing_reset(&st->list);
	cg_listing_reset(&st->inos);
	read_hierarchies(st, proc_fd);
	st->listable = listings_match(proc_fd);
	atomic_store_explicit(&st->list_built, 0, memory_order_relaxed);
	atomic_store_explicit(&st->inos_built, 0, memory_order_relaxed);
	/* While v1 paths are read, every thread asks the source first
	 * (from_source): the core fills it for a run of threads ahead. */
	if (CTP_API_HAS(st->api, source_prefill))
		st->api->source_prefill(st->ctx, CTP_SOURCE_CGROUP_V1,
					st->v1_live);
	st->api->log(st->ctx, CTP_LOG_DEBUG,
		     "%zu cgroup v1 mounts; v1 paths %s", st->n_mounts,
		     st->v1_live ? "read" : "not read");
	return 0;
}

static int cg_finish(void *state, struct ctp_record *host_rec)
{
	(void)host_rec;
	mounts_close(state);
	return 0;
}

/* ---- Set-up -------------------------------------------------------------- */

static void cg_fini(void *state)
{
	struct cg_state *st = state;
	size_t i;

	if (!st)
		return;
	mounts_free(st);
	cg_listing_free(&st->list);
	cg_listing_free(&st->inos);
	pthread_mutex_destroy(&st->lazy);
	for (i = 0; i < NAME_SLOTS; i++)
		free(st->names[i].name);
	free(st->buf);
	ctp_handle_cache_done(&st->hier);
	free(st);
}

static const struct ctp_option_desc options[] = {
	{.name = "v1",
	 .help = "record cgroup v1 hierarchies too",
	 .type = CTP_OPT_BOOL,
	 .def = "true"},
	{.name = "mount_prefix",
	 .help = "absolute path prefixed to cgroup mount points (a host "
		 "root seen from a container)",
	 .type = CTP_OPT_STRING,
	 .def = ""},
};

static int parse_options(struct ctp_ctx *ctx, const struct ctp_api *api,
			 struct cg_state *st)
{
	int r, b;

	r = api->opt_bool(ctx, "v1", &b);
	if (r == -ENOENT) {
		b = 1;
	} else if (r < 0) {
		api->log(ctx, CTP_LOG_ERR,
			 "option 'v1': expected true or false");
		return r;
	}
	st->v1_opt = b;
	r = api->opt_str(ctx, "mount_prefix", &st->prefix);
	if (r == -ENOENT) {
		st->prefix = "";
	} else if (r < 0) {
		return r;
	} else if (st->prefix[0] && st->prefix[0] != '/') {
		api->log(ctx, CTP_LOG_ERR,
			 "option 'mount_prefix': '%s' is not an absolute path",
			 st->prefix);
		return -EINVAL;
	}
	st->prefix_len = strlen(st->prefix);
	/* "/x/" + "/sys/fs/cgroup" would double the slash: harmless, but
	 * keep the recorded paths clean. */
	while (st->prefix_len && st->prefix[st->prefix_len - 1] == '/')
		st->prefix_len--;
	return 0;
}

static int cg_init(struct ctp_ctx *ctx, const struct ctp_api *api, void **state)
{
	struct cg_state *st = calloc(1, sizeof(*st));
	int i, r;

	if (!st)
		return -ENOMEM;
	st->ctx = ctx;
	st->api = api;
	st->str_handles = CTP_API_HAS(api, str_intern) &&
			  CTP_API_HAS(api, set_str_handle);
	st->str_handles_n =
		st->str_handles && CTP_API_HAS(api, set_str_handles);
	pthread_mutex_init(&st->lazy, NULL);
	ctp_handle_cache_init(&st->hier, HIER_MAX);
	/* The lazy cgroup file needs file_get. */
	r = CTP_ATTACH(ctx, api, CTP_API_THROUGH(file_get), st->handle,
		       st->counter);
	if (r == 0)
		r = parse_options(ctx, api, st); /* says why */
	if (r < 0) {
		cg_fini(st);
		return r;
	}
	st->can_ref = CTP_API_HAS(api, cgroup_ref);
	/* Keyed files find their named keys here (a refused handle is
	 * remembered as refused). */
	for (i = 0; i < N_FIELDS; i++)
		name_remember(st, fields[i].name, st->handle[i]);
	if (st->v1_opt && !st->can_ref)
		api->log(ctx, CTP_LOG_NOTICE,
			 "this core has no cgroup_ref: v1 paths are recorded, "
			 "v1 cgroup values are not");
	*state = st;
	return 0;
}

CTP_EXPORT const struct ctp_plugin ctp_plugin_v1 = {
	CTP_PLUGIN_HEADER,
	.name = "cgroup",
	.version = CGROUP_VERSION,
	.description = "cgroup v2 and v1 controller values per distinct "
		       "cgroup, and each thread's v1 hierarchy paths",
	.flags = CTP_PLUGIN_CAPS | CTP_PLUGIN_MT_SAFE | CTP_PLUGIN_FD_LOCAL |
		 CTP_PLUGIN_SPLITTABLE | CTP_PLUGIN_OPTIONS |
		 CTP_PLUGIN_NO_THREAD_DIR,
	CTP_PLUGIN_FIELDS(fields),
	CTP_PLUGIN_OPTION_TABLE(options),
	.thread_files = thread_files,
	.init = cg_init,
	.fini = cg_fini,
	.host = cg_host,
	.thread = cg_thread,
	.cgroup = cg_cgroup,
	.finish = cg_finish,
	CTP_PLUGIN_COUNTER_TABLE(counter_names),
	.capabilities = 0,
};
