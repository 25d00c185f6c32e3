/* SPDX-License-Identifier: MIT */
/*
 * The cgroup collector on the live host. The test makes its own cgroups
 * under the ones it runs in, moves a child process (a leader and three
 * threads) into them, captures the whole host with the cgroup plugin and
 * checks that the child's threads show up in them with the limits it set:
 *
 *   v1 memory   memory.limit_in_bytes = 256 MiB
 *   v1 pids     pids.max = 50, pids.current = 4; then one thread moved
 *               alone (v1 `tasks`) into a second cgroup: 3 and 1, and the
 *               threads' paths differ
 *   v2          the threads' path identity and cgroup.type; a threaded
 *               child holding one thread when the kernel lets us make one;
 *               pids.max when the pids controller is on there already
 *
 * and, host-wide, that every thread's v1 paths (taken from the hierarchies'
 * `tasks` listings, issue 17) equal the v1 lines of its own cgroup file, for
 * every thread whose file read the same before and after the capture; and
 * the same with bpf-task's source "cgroup-v1" serving them, the child's
 * threads split over v1 memory and name=systemd cgroups. And, recorded
 * with taskstats' exit records, short-lived processes in a v1 cpuacct
 * cgroup of the test's land in that cgroup's group on a cgroup:cpuacct
 * axis, with the CPU its cpuacct.usage counted (v1_exited).
 *
 * Everything it creates is removed in the teardown, also after a failure
 * (the child is killed first). A layout this host lacks is skipped with the
 * reason; without root, or with no usable hierarchy at all, the test exits
 * 77.
 */
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "cgroup_parse.h"
#include "e2e_util.h"
#include "exitsum.h"
#include "group.h"
#include "reader.h"
#include "view.h"

#define PATH(buf, ...) assert_int_equal(E2E_PATHF(buf, __VA_ARGS__), 0)
#define NTHREADS       4 /* the child's leader and three threads */
#define MEM_LIMIT      (256ull << 20)
#define PIDS_MAX       50

/* ---- The host's hierarchies, read naively -------------------------------- */

struct hier {
	char mount[PATH_MAX]; /* "" when not mounted */
	char root[PATH_MAX];  /* the mount's root in its hierarchy */
	char self[PATH_MAX];  /* this process's path in it */
};
static struct hier h_mem, h_pids, h_v2, h_sysd, h_acct;

/* The mountinfo line of a v1 hierarchy with option `opt`, or of cgroup2. */
static void find_mount(const char *opt, struct hier *h)
{
	char *text = NULL;

	h->mount[0] = '\0';
	if (e2e_read_file("/proc/self/mountinfo", &text, NULL) < 0)
		return;
	for (char *l = strtok(text, "\n"); l; l = strtok(NULL, "\n")) {
		char root[PATH_MAX], point[PATH_MAX], fstype[64], super[512];
		char *sep = strstr(l, " - ");
		if (!sep ||
		    sscanf(l, "%*s %*s %*s %4095s %4095s", root, point) != 2 ||
		    sscanf(sep + 3, "%63s %*s %511s", fstype, super) != 2)
			continue;
		if (strchr(point, '\\'))
			continue; /* escaped names: not worth decoding here */
		bool hit;
		if (!opt) {
			hit = !strcmp(fstype, "cgroup2");
		} else {
			char list[520];
			snprintf(list, sizeof(list), ",%s,", super);
			char item[80];
			snprintf(item, sizeof(item), ",%s,", opt);
			hit = !strcmp(fstype, "cgroup") && strstr(list, item);
		}
		if (hit) {
			snprintf(h->mount, sizeof(h->mount), "%s", point);
			snprintf(h->root, sizeof(h->root), "%s", root);
			break;
		}
	}
	free(text);
}

/* This process's path in hierarchy `ctrl` ("" for v2). */
static bool self_path(const char *ctrl, struct hier *h)
{
	char *text = NULL;
	bool found = false;

	if (e2e_read_file("/proc/self/cgroup", &text, NULL) < 0)
		return false;
	for (char *l = strtok(text, "\n"); l && !found;
	     l = strtok(NULL, "\n")) {
		char *c1 = strchr(l, ':');
		char *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
		if (!c2)
			continue;
		*c1 = '\0';
		*c2 = '\0';
		bool v2 = !strcmp(l, "0") && c1 + 1 == c2;
		if ((!*ctrl && v2) || (*ctrl && !v2 && !strcmp(c1 + 1, ctrl))) {
			snprintf(h->self, sizeof(h->self), "%s", c2 + 1);
			found = true;
		}
	}
	free(text);
	return found;
}

/* The directory of `path` (a cgroup path) under h's mount; false when the
 * mount does not show it. */
static bool dir_of(const struct hier *h, const char *path, char *out,
		   size_t len)
{
	size_t rl = strlen(h->root);

	if (!strcmp(h->root, "/"))
		rl = 0;
	else if (strncmp(path, h->root, rl) || (path[rl] && path[rl] != '/'))
		return false;
	return e2e_pathf(out, len, "%s%s", h->mount, path + rl) == 0;
}

/* A child cgroup path of this process's: "<self>/<name>". */
static void child_path(const struct hier *h, const char *name, char *out,
		       size_t len)
{
	bool root = !strcmp(h->self, "/");
	assert_int_equal(
		e2e_pathf(out, len, "%s/%s", root ? "" : h->self, name), 0);
}

/* ---- What the test creates, undone in reverse ---------------------------- */

static char made[16][PATH_MAX];
static int n_made;
static pid_t child = -1;
static pid_t child_tids[NTHREADS];

static int write_str(const char *path, const char *s)
{
	return e2e_write_file(path, s, strlen(s));
}

/* Write a number into a cgroup file. */
static int write_num(const char *dir, const char *file, long long v)
{
	char path[PATH_MAX + 64], num[32];
	snprintf(path, sizeof(path), "%s/%s", dir, file);
	snprintf(num, sizeof(num), "%lld", v);
	return write_str(path, num);
}

static int make_cgroup(const char *dir)
{
	size_t n = strlen(dir);

	if (n >= sizeof(made[0]) ||
	    n_made == (int)(sizeof(made) / sizeof(made[0])))
		return -ENAMETOOLONG;
	if (mkdir(dir, 0755) < 0)
		return -errno;
	memcpy(made[n_made++], dir, n + 1);
	return 0;
}

static void kill_child(void)
{
	if (child <= 0)
		return;
	kill(child, SIGKILL);
	waitpid(child, NULL, 0);
	child = -1;
}

/* Kill the child, then remove every cgroup made, children first. An empty
 * cgroup can stay busy for a moment after its last task is reaped. */
static int cleanup(void)
{
	int bad = 0;

	kill_child();
	while (n_made > 0) {
		const char *d = made[--n_made];
		int tries = 0;
		while (rmdir(d) < 0 && errno == EBUSY && tries++ < 200)
			usleep(10000);
		if (access(d, F_OK) == 0) {
			fprintf(stderr, "could not remove %s: %s\n", d,
				strerror(errno));
			bad = -1;
		}
	}
	return bad;
}

static void on_exit_cleanup(void)
{
	cleanup();
}

/* ---- The child ----------------------------------------------------------- */

static void *child_thread(void *arg)
{
	char name[16];
	snprintf(name, sizeof(name), "cgtest-w%d", (int)(intptr_t)arg);
	prctl(PR_SET_NAME, name);
	for (;;)
		pause();
	return NULL;
}

static int cmp_pid(const void *a, const void *b)
{
	pid_t x = *(const pid_t *)a, y = *(const pid_t *)b;
	return (x > y) - (x < y);
}

/* A child with NTHREADS tasks; their tids in child_tids, ascending. */
static void start_child(void)
{
	int p[2];

	assert_int_equal(pipe(p), 0);
	child = fork();
	assert_true(child >= 0);
	if (child == 0) {
		close(p[0]);
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		prctl(PR_SET_NAME, "cgtest-main");
		for (int i = 1; i < NTHREADS; i++) {
			pthread_t t;
			if (pthread_create(&t, NULL, child_thread,
					   (void *)(intptr_t)i) != 0)
				_exit(1);
		}
		if (write(p[1], "x", 1) != 1)
			_exit(1);
		for (;;)
			pause();
	}
	close(p[1]);
	char c;
	assert_int_equal(read(p[0], &c, 1), 1);
	close(p[0]);
	/* The threads exist once the child said so; list them. */
	char dir[64];
	snprintf(dir, sizeof(dir), "/proc/%d/task", (int)child);
	DIR *d = opendir(dir);
	assert_non_null(d);
	int k = 0;
	struct dirent *e;
	while ((e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		if (k < NTHREADS)
			child_tids[k] = (pid_t)atoi(e->d_name);
		k++;
	}
	closedir(d);
	assert_int_equal(k, NTHREADS);
	qsort(child_tids, NTHREADS, sizeof(child_tids[0]), cmp_pid);
	assert_int_equal(child_tids[0], child);
}

/* ---- Capturing ----------------------------------------------------------- */

static char tmp[PATH_MAX];
static unsigned seq;

/* A threaded child "t" of v2 cgroup dir (path, its v2 path) holding the
 * child's last thread; tdir and tpath (PATH_MAX + 8 bytes) get its
 * directory and path. false, with a note, where the kernel refuses. */
static bool threaded_child(const char *dir, const char *path, char *tdir,
			   char *tpath)
{
	snprintf(tdir, PATH_MAX + 8, "%s/t", dir);
	snprintf(tpath, PATH_MAX + 8, "%s/t", path);
	bool threaded = make_cgroup(tdir) == 0;
	if (threaded) {
		char tp[PATH_MAX + 32];
		snprintf(tp, sizeof(tp), "%s/cgroup.type", tdir);
		threaded = write_str(tp, "threaded") == 0 &&
			   write_num(tdir, "cgroup.threads",
				     child_tids[NTHREADS - 1]) == 0;
	}
	if (!threaded)
		print_message("note: no threaded cgroup here (%s)\n",
			      strerror(errno));
	return threaded;
}

static struct ctp_snap *capture(void)
{
	char cfg[PATH_MAX], log[PATH_MAX], out[PATH_MAX];
	unsigned n = ++seq;

	PATH(cfg, "%s/cfg-%u.yaml", tmp, n);
	PATH(log, "%s/log-%u.txt", tmp, n);
	PATH(out, "%s/snap-%u.ctprof.zst", tmp, n);
	FILE *f = fopen(cfg, "we");
	assert_non_null(f);
	fprintf(f,
		"plugin_dirs: [\"%s\"]\nworkers: 2\n"
		"plugins:\n  cgroup: {required: true}\n",
		CTP_TEST_PLUGIN_DIR);
	assert_int_equal(fclose(f), 0);
	return e2e_capture(cfg, out, log);
}

static long cg_row(const struct ctp_snap *s, const char *path)
{
	const struct ctp_snap_table *ct = ctp_snap_table(s, CTP_SCOPE_CGROUP);
	for (size_t r = 0; r < ct->rows; r++)
		if (e2e_bytes_eq(ct->path[r], path))
			return (long)r;
	return -1;
}

static struct ctp_value cg_value(const struct ctp_snap *s, long row,
				 const char *field)
{
	const struct ctp_snap_field *f = ctp_snap_field_find(s, field);
	struct ctp_value none = {.type = CTP_VALUE_ABSENT};

	if (!f || row < 0)
		return none;
	return ctp_snap_get(s, f, (size_t)row);
}

/*
 * Check the child's thread rows: there are NTHREADS, and thread i's value
 * of `field` (a v1 path field) or, for field NULL, its v2 identity, is
 * want[i]. Returns the number of mismatches (printed).
 */
static int check_threads(const struct ctp_snap *s, const char *field,
			 const char *const *want)
{
	const struct ctp_snap_table *tt = ctp_snap_table(s, CTP_SCOPE_THREAD);
	const struct ctp_snap_table *ct = ctp_snap_table(s, CTP_SCOPE_CGROUP);
	const struct ctp_snap_field *f =
		field ? ctp_snap_field_find(s, field) : NULL;
	int bad = 0, seen = 0;

	if (field && !f) {
		print_error("no field %s\n", field);
		return 1;
	}
	for (size_t r = 0; r < tt->rows; r++) {
		if (tt->tgid[r] != (uint64_t)child)
			continue;
		int i;
		for (i = 0; i < NTHREADS; i++)
			if (tt->tid[r] == (uint64_t)child_tids[i])
				break;
		if (i == NTHREADS) {
			print_error("unknown thread %" PRIu64 "\n", tt->tid[r]);
			bad++;
			continue;
		}
		seen++;
		struct ctp_bytes got = {0};
		if (f) {
			struct ctp_value v = ctp_snap_get(s, f, r);
			if (v.type == CTP_TYPE_STRING)
				got = v.str;
		} else if (tt->cgroup[r] >= 0) {
			got = ct->path[tt->cgroup[r]];
		}
		if (!got.ptr || !e2e_bytes_eq(got, want[i])) {
			print_error("tid %" PRIu64
				    ": %s is %.*s, expected %s\n",
				    tt->tid[r], field ? field : "cgroup",
				    got.ptr ? (int)got.len : 6,
				    got.ptr ? got.ptr : "absent", want[i]);
			bad++;
		}
	}
	if (seen != NTHREADS) {
		print_error("%d of the child's threads captured\n", seen);
		bad++;
	}
	return bad;
}

/* ---- Tests --------------------------------------------------------------- */

static int setup(void **state)
{
	(void)state;
	start_child();
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	return cleanup();
}

/* Make <self>/<name> in h and move the whole child there (cgroup.procs). */
static void enter(const struct hier *h, const char *name, char *dir,
		  size_t dlen, char *path, size_t plen)
{
	child_path(h, name, path, plen);
	if (!dir_of(h, path, dir, dlen))
		skip();
	assert_int_equal(make_cgroup(dir), 0);
}

static void move_procs(const char *dir, pid_t pid)
{
	assert_int_equal(write_num(dir, "cgroup.procs", pid), 0);
}

static void v1_memory(void **state)
{
	char name[64], dir[PATH_MAX], path[PATH_MAX];
	const char *want[NTHREADS];
	char key[PATH_MAX + 16];

	(void)state;
	if (!h_mem.mount[0]) {
		print_message("skipped: no cgroup v1 memory hierarchy here\n");
		skip();
	}
	snprintf(name, sizeof(name), "ctprof-cgtest-%d", (int)getpid());
	enter(&h_mem, name, dir, sizeof(dir), path, sizeof(path));
	assert_int_equal(
		write_num(dir, "memory.limit_in_bytes", (long long)MEM_LIMIT),
		0);
	move_procs(dir, child);

	struct ctp_snap *s = capture();
	for (int i = 0; i < NTHREADS; i++)
		want[i] = path;
	int bad = check_threads(s, "cgroup.v1.memory.path", want);
	snprintf(key, sizeof(key), "v1:memory:%s", path);
	long r = cg_row(s, key);
	struct ctp_value lim =
		cg_value(s, r, "cgroup.v1.memory.limit_in_bytes");
	struct ctp_value use =
		cg_value(s, r, "cgroup.v1.memory.usage_in_bytes");
	struct ctp_value hier = cg_value(s, r, "cgroup.v1.hierarchy");
	if (r < 0 || lim.type != CTP_TYPE_U64 || lim.u64 != MEM_LIMIT ||
	    use.type != CTP_TYPE_U64 || hier.type != CTP_TYPE_STRING ||
	    !e2e_bytes_eq(hier.str, "memory")) {
		print_error("row %s (%ld): limit %" PRIu64 " (type %u), usage "
			    "type %u\n",
			    key, r, lim.u64, lim.type, use.type);
		bad++;
	}
	/* The limit the test did not set stays absent (unlimited). */
	snprintf(key, sizeof(key), "v1:memory:%s", h_mem.self);
	long own = cg_row(s, key);
	struct ctp_value ol =
		cg_value(s, own, "cgroup.v1.memory.limit_in_bytes");
	char *text = NULL;
	char lp[PATH_MAX + 32];
	if (own >= 0 && dir_of(&h_mem, h_mem.self, lp, sizeof(lp) - 32)) {
		strcat(lp, "/memory.limit_in_bytes");
		if (e2e_read_file(lp, &text, NULL) == 0) {
			unsigned long long v = strtoull(text, NULL, 10);
			bool unlimited = v >= 9223372036854710272ull;
			if (unlimited != (ol.type == CTP_VALUE_ABSENT) ||
			    (!unlimited && ol.u64 != v)) {
				print_error("own memory limit %llu read as "
					    "type %u %" PRIu64 "\n",
					    v, ol.type, ol.u64);
				bad++;
			}
		}
		free(text);
	}
	ctp_snap_free(s);
	assert_int_equal(bad, 0);
}

static void v1_pids(void **state)
{
	char name[64], dir[PATH_MAX], path[PATH_MAX];
	char name2[80], dir2[PATH_MAX], path2[PATH_MAX];
	const char *want[NTHREADS];
	char key[PATH_MAX + 16], key2[PATH_MAX + 16];

	(void)state;
	if (!h_pids.mount[0]) {
		print_message("skipped: no cgroup v1 pids hierarchy here\n");
		skip();
	}
	snprintf(name, sizeof(name), "ctprof-cgtest-%d", (int)getpid());
	enter(&h_pids, name, dir, sizeof(dir), path, sizeof(path));
	assert_int_equal(write_num(dir, "pids.max", PIDS_MAX), 0);
	move_procs(dir, child);

	struct ctp_snap *s = capture();
	for (int i = 0; i < NTHREADS; i++)
		want[i] = path;
	int bad = check_threads(s, "cgroup.v1.pids.path", want);
	snprintf(key, sizeof(key), "v1:pids:%s", path);
	long r = cg_row(s, key);
	struct ctp_value mx = cg_value(s, r, "cgroup.v1.pids.max");
	struct ctp_value cur = cg_value(s, r, "cgroup.v1.pids.current");
	if (r < 0 || mx.type != CTP_TYPE_U64 || mx.u64 != PIDS_MAX ||
	    cur.type != CTP_TYPE_U64 || cur.u64 != NTHREADS) {
		print_error("row %s: max %" PRIu64 " current %" PRIu64 "\n",
			    key, mx.u64, cur.u64);
		bad++;
	}
	ctp_snap_free(s);

	/* v1 moves threads one by one: the last one alone elsewhere. */
	snprintf(name2, sizeof(name2), "%s-alone", name);
	enter(&h_pids, name2, dir2, sizeof(dir2), path2, sizeof(path2));
	assert_int_equal(write_num(dir2, "tasks", child_tids[NTHREADS - 1]), 0);
	s = capture();
	want[NTHREADS - 1] = path2;
	bad += check_threads(s, "cgroup.v1.pids.path", want);
	snprintf(key2, sizeof(key2), "v1:pids:%s", path2);
	r = cg_row(s, key);
	long r2 = cg_row(s, key2);
	cur = cg_value(s, r, "cgroup.v1.pids.current");
	struct ctp_value cur2 = cg_value(s, r2, "cgroup.v1.pids.current");
	if (cur.u64 != NTHREADS - 1 || cur2.type != CTP_TYPE_U64 ||
	    cur2.u64 != 1 ||
	    cg_value(s, r2, "cgroup.v1.pids.max").type != CTP_VALUE_ABSENT) {
		print_error("after the move: %" PRIu64 " and %" PRIu64 "\n",
			    cur.u64, cur2.u64);
		bad++;
	}
	ctp_snap_free(s);
	assert_int_equal(bad, 0);
}

static void v2_path(void **state)
{
	char name[64], dir[PATH_MAX], path[PATH_MAX];
	char tdir[PATH_MAX + 8], tpath[PATH_MAX + 8];
	const char *want[NTHREADS];
	char *ctl = NULL;

	(void)state;
	if (!h_v2.mount[0]) {
		print_message("skipped: no cgroup2 mount here\n");
		skip();
	}
	snprintf(name, sizeof(name), "ctprof-cgtest-%d", (int)getpid());
	enter(&h_v2, name, dir, sizeof(dir), path, sizeof(path));
	move_procs(dir, child);
	/* pids.max only where the controller is on for the new cgroup. */
	char cpath[PATH_MAX + 32];
	snprintf(cpath, sizeof(cpath), "%s/cgroup.controllers", dir);
	bool pids =
		e2e_read_file(cpath, &ctl, NULL) == 0 && strstr(ctl, "pids");
	free(ctl);
	if (pids)
		assert_int_equal(write_num(dir, "pids.max", PIDS_MAX), 0);
	else
		print_message("note: pids is not enabled for %s: pids.max "
			      "not checked\n",
			      dir);

	/* A threaded child with the last thread, when allowed. */
	bool threaded = threaded_child(dir, path, tdir, tpath);

	struct ctp_snap *s = capture();
	for (int i = 0; i < NTHREADS; i++)
		want[i] = path;
	if (threaded)
		want[NTHREADS - 1] = tpath;
	int bad = check_threads(s, NULL, want);
	long r = cg_row(s, path);
	struct ctp_value type = cg_value(s, r, "cgroup.v2.cgroup.type");
	struct ctp_value use = cg_value(s, r, "cgroup.v2.cpu.stat.usage_usec");
	const char *want_type = threaded ? "domain threaded" : "domain";
	if (r < 0 || type.type != CTP_TYPE_STRING ||
	    !e2e_bytes_eq(type.str, want_type) || use.type != CTP_TYPE_U64) {
		print_error("row %s: type %.*s, usage type %u\n", path,
			    (int)type.str.len, type.str.ptr ? type.str.ptr : "",
			    use.type);
		bad++;
	}
	if (pids) {
		struct ctp_value mx = cg_value(s, r, "cgroup.v2.pids.max");
		if (mx.type != CTP_TYPE_U64 || mx.u64 != PIDS_MAX) {
			print_error("row %s: pids.max type %u\n", path,
				    mx.type);
			bad++;
		}
	}
	if (threaded) {
		long rt = cg_row(s, tpath);
		type = cg_value(s, rt, "cgroup.v2.cgroup.type");
		if (rt < 0 || type.type != CTP_TYPE_STRING ||
		    !e2e_bytes_eq(type.str, "threaded")) {
			print_error("row %s: not threaded\n", tpath);
			bad++;
		}
	}
	ctp_snap_free(s);
	assert_int_equal(bad, 0);
}

/* ---- Threads that stayed put --------------------------------------------
 * The host-wide checks judge only what the capture could know: a thread
 * whose cgroup file and start time read the same before and after the
 * capture (not moved meanwhile, its tid not taken by a new task). A busy
 * host's moves and reused tids are not the collector's to explain.
 */

struct before_ent {
	uint32_t tid;
	char *state;
};
static struct before_ent *before_v;
static size_t before_n;

/* "STARTTIME\n" then the cgroup file of tgid/tid, read between two reads
 * of its start time that agree; NULL when gone or changing. */
static char *thread_state(int tgid, int tid)
{
	char path[96], *st = NULL, *cg = NULL, *out = NULL;
	char t0[32], t1[32];

	snprintf(path, sizeof(path), "/proc/%d/task/%d/stat", tgid, tid);
	if (e2e_read_file(path, &st, NULL) < 0 ||
	    !e2e_stat_token(st, 22, t0, sizeof(t0)))
		goto out;
	free(st);
	st = NULL;
	snprintf(path, sizeof(path), "/proc/%d/task/%d/cgroup", tgid, tid);
	if (e2e_read_file(path, &cg, NULL) < 0)
		goto out;
	snprintf(path, sizeof(path), "/proc/%d/task/%d/stat", tgid, tid);
	if (e2e_read_file(path, &st, NULL) < 0 ||
	    !e2e_stat_token(st, 22, t1, sizeof(t1)) || strcmp(t0, t1) ||
	    asprintf(&out, "%s\n%s", t0, cg) < 0)
		out = NULL;
out:
	free(st);
	free(cg);
	return out;
}

/* Whether thread tid of tgid is a zombie (or dead) now: its stat's state.
 * The capture places a zombie leader in the cgroup of its process's live
 * threads, not the one its own file names (docs/ARCHITECTURE.md), so a
 * comparison with each thread's file leaves such a row out; test_e2e_cgroup
 * live_zombie_leader checks that placement. */
static bool thread_dead(int tgid, int tid)
{
	char path[96], *st = NULL, s[8];
	bool dead = false;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/stat", tgid, tid);
	if (e2e_read_file(path, &st, NULL) == 0 &&
	    e2e_stat_token(st, 3, s, sizeof(s)))
		dead = s[0] == 'Z' || s[0] == 'X';
	free(st);
	return dead;
}

static int cmp_before(const void *a, const void *b)
{
	uint32_t x = ((const struct before_ent *)a)->tid,
		 y = ((const struct before_ent *)b)->tid;
	return (x > y) - (x < y);
}

static void before_free(void)
{
	for (size_t i = 0; i < before_n; i++)
		free(before_v[i].state);
	free(before_v);
	before_v = NULL;
	before_n = 0;
}

/* Every thread's state, before the capture. */
static void before_take(void)
{
	DIR *pd = opendir("/proc");
	size_t cap = 0;

	assert_non_null(pd);
	before_free();
	for (struct dirent *p; (p = readdir(pd));) {
		char tdir[64];
		int tgid = atoi(p->d_name);
		if (tgid <= 0)
			continue;
		snprintf(tdir, sizeof(tdir), "/proc/%d/task", tgid);
		DIR *td = opendir(tdir);
		if (!td)
			continue;
		for (struct dirent *t; (t = readdir(td));) {
			int tid = atoi(t->d_name);
			char *state = tid > 0 ? thread_state(tgid, tid) : NULL;
			if (!state)
				continue;
			if (before_n == cap) {
				cap = cap ? 2 * cap : 4096;
				before_v = realloc(before_v,
						   cap * sizeof(*before_v));
				assert_non_null(before_v);
			}
			before_v[before_n].tid = (uint32_t)tid;
			before_v[before_n++].state = state;
		}
		closedir(td);
	}
	closedir(pd);
	qsort(before_v, before_n, sizeof(*before_v), cmp_before);
}

/* tgid/tid's cgroup file when its state now is the one before the
 * capture (the caller frees it), else NULL: not compared. */
static char *stable_cgroup_file(int tgid, int tid)
{
	struct before_ent key = {.tid = (uint32_t)tid};
	const struct before_ent *b = bsearch(&key, before_v, before_n,
					     sizeof(*before_v), cmp_before);
	char *now = thread_state(tgid, tid);

	if (!b || !now || strcmp(b->state, now)) {
		free(now);
		return NULL;
	}
	memmove(now, now + strcspn(now, "\n") + 1,
		strlen(now) - strcspn(now, "\n"));
	return now;
}

/*
 * Compare thread row r of s with its own cgroup file: each v1 line
 * "ID:ctrl:path" against the field cgroup.v1.<hierarchy>.path. Returns -1
 * when the thread did not stay put across the capture (gone, moving:
 * not compared), else the number of differences (printed).
 */
static int v1_compare(const struct ctp_snap *s, size_t r)
{
	static unsigned printed; /* the first differences are enough */
	const struct ctp_snap_table *tt = ctp_snap_table(s, CTP_SCOPE_THREAD);
	char *text = stable_cgroup_file((int)tt->tgid[r], (int)tt->tid[r]);
	int bad = 0;

	if (!text)
		return -1;
	for (char *l = strtok(text, "\n"); l; l = strtok(NULL, "\n")) {
		char *c1 = strchr(l, ':'),
		     *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
		char hier[128], field[192];

		if (!c2 || !strncmp(l, "0:", 2) ||
		    ctp_cg_hier_name(c1 + 1, (size_t)(c2 - c1 - 1), hier,
				     sizeof(hier)) < 0)
			continue;
		snprintf(field, sizeof(field), "cgroup.v1.%s.path", hier);
		const struct ctp_snap_field *f = ctp_snap_field_find(s, field);
		struct ctp_value v =
			f ? ctp_snap_get(s, f, r) : (struct ctp_value){0};
		if ((v.type != CTP_TYPE_STRING ||
		     !e2e_bytes_eq(v.str, c2 + 1)) &&
		    bad++ < 10 && printed++ < 20) {
			print_error("tid %d: %s is %.*s, its file says %s\n",
				    (int)tt->tid[r], field,
				    v.type == CTP_TYPE_STRING ? (int)v.str.len
							      : 6,
				    v.type == CTP_TYPE_STRING ? v.str.ptr
							      : "absent",
				    c2 + 1);
		}
	}
	free(text);
	return bad;
}

/* Summary counter `name` of plugin `plugin` into *v: false where it has
 * none. */
static bool find_summary(const struct ctp_snap *s, const char *plugin,
			 const char *name, uint64_t *v)
{
	const struct ctp_snap_plugin *p = ctp_snap_plugins(s);
	size_t n = ctp_snap_n_plugins(s), i = 0;

	while (i < n && strcmp(p[i].name, plugin))
		i++;
	for (size_t k = 0; i < n && k < p[i].n_summary; k++)
		if (!strcmp(p[i].summary_name[k], name)) {
			*v = p[i].summary[k];
			return true;
		}
	return false;
}

/* Summary counter `name` of plugin `plugin` (the test fails without). */
static uint64_t plugin_summary(const struct ctp_snap *s, const char *plugin,
			       const char *name)
{
	uint64_t v = 0;

	if (!find_summary(s, plugin, name, &v))
		fail_msg("no summary counter %s of %s", name, plugin);
	return v;
}

static uint64_t cg_summary(const struct ctp_snap *s, const char *name)
{
	return plugin_summary(s, "cgroup", name);
}

/* Every thread of the host: listings and files agree. */
static void v1_listings(void **state)
{
	(void)state;
	if (!h_mem.mount[0] && !h_pids.mount[0]) {
		print_message("skipped: no cgroup v1 hierarchy here\n");
		skip();
	}
	before_take();
	struct ctp_snap *s = capture();
	const struct ctp_snap_table *tt = ctp_snap_table(s, CTP_SCOPE_THREAD);
	uint64_t listed = cg_summary(s, "from_listings");
	size_t checked = 0;
	int bad = 0;

	if (cg_summary(s, "hierarchies_unlisted")) {
		print_message("skipped: a v1 hierarchy could not be listed "
			      "here (not mounted whole)\n");
		ctp_snap_free(s);
		before_free();
		skip();
	}
	for (size_t r = 0; r < tt->rows; r++) {
		int d = v1_compare(s, r);

		if (d < 0)
			continue; /* gone, or moving */
		checked++;
		bad += d;
	}
	print_message("[ INFO     ] %zu threads compared; %" PRIu64
		      " of %zu placed by the listings\n",
		      checked, listed, tt->rows);
	/* Every row placed once: by the listings or by its own file (a
	 * thread gone before its file was read is neither counted nor
	 * kept). */
	assert_true(listed + cg_summary(s, "from_files") == tt->rows);
	/* At least the child's threads by the listings (they live through
	 * the capture), and compared: on a busy host (a build, or a
	 * stressor churning threads, beside the test) many other threads
	 * are born after the listing or gone before their file is read
	 * twice, so how many of the host's the listings place is not the
	 * test's to say. */
	assert_true(listed >= NTHREADS);
	assert_true(checked >= NTHREADS);
	ctp_snap_free(s);
	before_free();
	assert_int_equal(bad, 0);
}

/* The v1 paths of every thread from bpf-task's source "cgroup-v1" (bpf-task
 * first) and without it (listings): both the v1 lines of each thread's own
 * file, the child's threads in cgroups of their own in two hierarchies. */
static void v1_source(void **state)
{
	char name[64], dir[PATH_MAX], path[PATH_MAX];
	char dir2[PATH_MAX], path2[PATH_MAX];
	char sdir[PATH_MAX], spath[PATH_MAX], sdir2[PATH_MAX], spath2[PATH_MAX];
	const char *want_mem[NTHREADS], *want_sysd[NTHREADS];
	int bad = 0;

	(void)state;
	if (!h_mem.mount[0] || !h_sysd.mount[0]) {
		print_message("skipped: no cgroup v1 memory and name=systemd "
			      "hierarchies here\n");
		skip();
	}
	/* Leader and last thread in (A, S), thread 1 in (A2, S), thread 2
	 * in (A, S2): three css_sets, none two threads in a row share. */
	snprintf(name, sizeof(name), "ctprof-cgsrc-%d", (int)getpid());
	enter(&h_mem, name, dir, sizeof(dir), path, sizeof(path));
	move_procs(dir, child);
	enter(&h_sysd, name, sdir, sizeof(sdir), spath, sizeof(spath));
	move_procs(sdir, child);
	strcat(name, "-alone");
	enter(&h_mem, name, dir2, sizeof(dir2), path2, sizeof(path2));
	assert_int_equal(write_num(dir2, "tasks", child_tids[1]), 0);
	enter(&h_sysd, name, sdir2, sizeof(sdir2), spath2, sizeof(spath2));
	assert_int_equal(write_num(sdir2, "tasks", child_tids[2]), 0);
	for (int i = 0; i < NTHREADS; i++) {
		want_mem[i] = i == 1 ? path2 : path;
		want_sysd[i] = i == 2 ? spath2 : spath;
	}

	before_take();
	struct ctp_snap *with = e2e_capture_plugins(
		tmp, "src-bpf", 2,
		"  bpf-task: {required: true}\n  cgroup: {required: true}\n");
	struct ctp_snap *without = e2e_capture_plugins(
		tmp, "src-none", 2, "  cgroup: {required: true}\n");
	uint64_t served = cg_summary(with, "from_source");
	const struct ctp_snap_table *tw = ctp_snap_table(with,
							 CTP_SCOPE_THREAD),
				    *to = ctp_snap_table(without,
							 CTP_SCOPE_THREAD);
	/* The source is offered wherever bpf-task passes run in the initial
	 * cgroup namespace (its inode, PROC_CGROUP_INIT_INO): only where
	 * either is missing is there nothing to test. */
	struct stat ns;
	uint64_t passes = 0;
	/* A build without BPF loads a bpf-task of no counters. */
	if (!find_summary(with, "bpf-task", "passes", &passes) || !passes ||
	    stat("/proc/self/ns/cgroup", &ns) < 0 || ns.st_ino != 0xEFFFFFFBu) {
		print_message("skipped: no cgroup-v1 source (bpf-task not "
			      "loadable here, or another cgroup "
			      "namespace)\n");
		ctp_snap_free(with);
		ctp_snap_free(without);
		before_free();
		skip();
	}
	print_message("[ INFO     ] %" PRIu64 " of %zu threads from the "
		      "source\n",
		      served, tw->rows);
	/* Nearly every live thread from the source (the pass walked them);
	 * none without it. An exiting or dead thread takes its files (the
	 * pass notes no css_set for it), and a busy host may hold thousands:
	 * they are left out of the count. */
	size_t live = 0;
	for (size_t r = 0; r < tw->rows; r++)
		live += !thread_dead((int)tw->tgid[r], (int)tw->tid[r]);
	print_message("[ INFO     ] %zu of them alive now\n", live);
	assert_true(served >= NTHREADS);
	assert_true(served * 2 >= live);
	assert_int_equal(cg_summary(without, "from_source"), 0);
	bad += check_threads(with, "cgroup.v1.memory.path", want_mem);
	bad += check_threads(with, "cgroup.v1.name-systemd.path", want_sysd);
	bad += check_threads(without, "cgroup.v1.memory.path", want_mem);
	bad += check_threads(without, "cgroup.v1.name-systemd.path", want_sysd);
	size_t checked = 0;
	for (size_t r = 0; r < tw->rows; r++) {
		int d = v1_compare(with, r);
		if (d >= 0) {
			checked++;
			bad += d;
		}
	}
	for (size_t r = 0; r < to->rows; r++) {
		int d = v1_compare(without, r);
		if (d >= 0)
			bad += d;
	}
	print_message("[ INFO     ] %zu threads compared with their files\n",
		      checked);
	assert_true(checked >= NTHREADS);
	ctp_snap_free(with);
	ctp_snap_free(without);
	before_free();
	assert_int_equal(bad, 0);
}

/* ---- Exited tasks on a v1 axis ------------------------------------------- */

#define N_BURN	32 /* short-lived children, half through a shell */
#define N_TASKS (N_BURN + N_BURN / 2)
#define BURN_NS (20000000ull) /* of CPU each */

/* What burn_exit adds up: global, so that its stores stay (a local that
 * is only written is a warning under clang). */
static volatile uint64_t burn_sink;

/* Burn BURN_NS of this process's CPU, then exit. */
static void burn_exit(void)
{
	struct timespec t;
	do {
		for (int i = 0; i < 100000; i++)
			burn_sink += (uint64_t)i;
		clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
	} while ((uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec <
		 BURN_NS);
	_exit(0);
}

/* The child of v1_exited: on a byte from `go`, N_BURN burners one after
 * the other (every other one the child of an intermediate process that
 * exits after it, as make's shells do), then a byte on `done`; then it
 * waits to be killed, alive for the captures after. */
static void burner_parent(int go, int done)
{
	char c;
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	prctl(PR_SET_NAME, "v1x-make");
	if (read(go, &c, 1) != 1)
		_exit(1);
	for (int i = 0; i < N_BURN; i++) {
		pid_t p = fork();
		if (p == 0) {
			prctl(PR_SET_NAME, i % 2 ? "v1x-sh" : "v1x-cc");
			if (i % 2) {
				pid_t q = fork();
				if (q == 0) {
					prctl(PR_SET_NAME, "v1x-cc");
					burn_exit();
				}
				_exit(q > 0 && waitpid(q, NULL, 0) == q ? 0
									: 1);
			}
			burn_exit();
		}
		if (p < 0 || waitpid(p, NULL, 0) != p)
			_exit(1);
	}
	if (write(done, "x", 1) != 1)
		_exit(1);
	for (;;)
		pause();
}

static int cmp_name(const void *a, const void *b)
{
	return strcmp(a, b);
}

/* The recording's files in dir, sorted by name (capture order); n. */
static size_t rec_files(const char *dir, char (*out)[PATH_MAX], size_t max)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	size_t n = 0;
	if (!d)
		return 0;
	while ((e = readdir(d))) {
		size_t l = strlen(e->d_name);
		if (l > 11 && !strcmp(e->d_name + l - 11, ".ctprof.zst") &&
		    n < max &&
		    e2e_pathf(out[n], PATH_MAX, "%s/%s", dir, e->d_name) == 0)
			n++;
	}
	closedir(d);
	qsort(out, n, sizeof(*out), cmp_name);
	return n;
}

/* Wait (polling) until dir holds at least n files; false after a minute. */
static bool wait_files(const char *dir, size_t n, char (*buf)[PATH_MAX],
		       size_t max)
{
	for (int i = 0; i < 6000; i++) {
		if (rec_files(dir, buf, max) >= n)
			return true;
		usleep(10000);
	}
	return false;
}

static uint64_t acct_usage(const char *dir)
{
	char path[PATH_MAX + 32], *text = NULL;
	uint64_t v = 0;
	snprintf(path, sizeof(path), "%s/cpuacct.usage", dir);
	if (e2e_read_file(path, &text, NULL) == 0)
		v = strtoull(text, NULL, 10);
	free(text);
	return v;
}

static bool is_ours(const struct ctp_bytes *comm)
{
	return comm->ptr && comm->len > 4 && !memcmp(comm->ptr, "v1x-", 4);
}

/* One of the test's exited tasks as the files' exited tables hold it. */
struct v1x_task {
	uint64_t tid, ppid;
	size_t file;
};

/* The test's exited tasks in files[1..nf) (each exit is in one file's
 * table), into t (room for max); how many. */
static size_t v1x_rows(char (*files)[PATH_MAX], size_t nf, struct v1x_task *t,
		       size_t max)
{
	size_t n = 0;
	char err[512];
	for (size_t k = 1; k < nf; k++) {
		struct ctp_snap *s;
		if (ctp_snap_open(files[k], 1ull << 31, &s, err, sizeof(err)) <
		    0)
			fail_msg("%s", err);
		const struct ctp_snap_table *x =
			ctp_snap_table(s, CTP_SCOPE_EXITED);
		const struct ctp_snap_field *pf =
			ctp_snap_role_field(s, CTP_SCOPE_EXITED, "parent");
		for (size_t r = 0; x && r < x->rows && n < max; r++) {
			if (!is_ours(&x->comm[r]))
				continue;
			struct ctp_value v = pf ? ctp_snap_get(s, pf, r)
						: (struct ctp_value){0};
			t[n++] = (struct v1x_task){
				x->tid[r], v.type == CTP_TYPE_U64 ? v.u64 : 0,
				k};
		}
		ctp_snap_free(s);
	}
	return n;
}

/* May the rules leave tid without a key? Its parent is one of the
 * test's shells whose exit a later file recorded than tid's own: the walk
 * up the parents reads the exited table of the task's own file
 * (docs/COMPARE.md "Exited tasks"), so it finds the shell only when a
 * capture read it live. */
static bool unplaceable(const struct v1x_task *t, size_t n, uint64_t tid)
{
	const struct v1x_task *me = NULL;
	for (size_t i = 0; i < n && !me; i++)
		if (t[i].tid == tid)
			me = &t[i];
	for (size_t i = 0; me && i < n; i++)
		if (t[i].tid == me->ppid)
			return t[i].file > me->file;
	return false;
}

/*
 * Short-lived processes in a v1 cpuacct cgroup of their own, recorded
 * (taskstats' exit records, the cgroup plugin's v1 paths): grouped by
 * cgroup:cpuacct over the recording, the cgroup's group holds every one
 * of them (by its parent, which the files saw live there; the ones under
 * an exited shell by their grandparent) and their CPU is what the
 * cgroup's cpuacct.usage counted, never the group without a key's.
 */
static void v1_exited(void **state)
{
	enum { MAXF = 256 };
	static char files[MAXF][PATH_MAX];
	struct v1x_task rows[2 * N_TASKS];
	char name[64], dir[PATH_MAX], path[PATH_MAX], cfg[PATH_MAX],
		rec[PATH_MAX], log[PATH_MAX], err[512];
	int go[2], done[2];
	char c;

	(void)state;
	if (!h_acct.mount[0]) {
		print_message("skipped: no cgroup v1 cpuacct hierarchy here\n");
		skip();
	}
	kill_child(); /* this case's child is its own */
	snprintf(name, sizeof(name), "ctprof-v1exit-%d", (int)getpid());
	enter(&h_acct, name, dir, sizeof(dir), path, sizeof(path));
	assert_int_equal(pipe(go), 0);
	assert_int_equal(pipe(done), 0);
	child = fork();
	assert_true(child >= 0);
	if (child == 0)
		burner_parent(go[0], done[1]);
	move_procs(dir, child);

	PATH(cfg, "%s/v1x.yaml", tmp);
	PATH(rec, "%s/v1x-rec", tmp);
	PATH(log, "%s/v1x-rec.log", tmp);
	FILE *f = fopen(cfg, "we");
	assert_non_null(f);
	fprintf(f,
		"plugin_dirs: [\"%s\"]\nworkers: 2\nplugins:\n"
		"  procfs-stat: {required: true}\n"
		"  taskstats: {required: true}\n"
		"  cgroup: {required: true}\n",
		CTP_TEST_PLUGIN_DIR);
	assert_int_equal(fclose(f), 0);
	const char *args[] = {"record", "--config", cfg,  "-o",	  rec,
			      "-i",	"300ms",    "-n", "1000", NULL};
	pid_t recording;
	assert_int_equal(e2e_spawn(args, NULL, log, &recording), 0);
	e2e_started_add(recording);
	/* The child in its cgroup in a file, then its burners. */
	assert_true(wait_files(rec, 1, files, MAXF));
	uint64_t u0 = acct_usage(dir);
	assert_int_equal(write(go[1], "x", 1), 1);
	assert_int_equal(read(done[0], &c, 1), 1);
	uint64_t u1 = acct_usage(dir);
	/* Two more files: one whose capture began after the last exit. */
	size_t n_done = rec_files(rec, files, MAXF);
	assert_true(wait_files(rec, n_done + 2, files, MAXF));
	kill(recording, SIGTERM);
	e2e_wait_bounded(recording, 60000, "record");
	e2e_started_done(recording);
	close(go[0]);
	close(go[1]);
	close(done[0]);
	close(done[1]);
	size_t nf = rec_files(rec, files, MAXF);
	assert_true(nf >= 3);

	static const char view_text[] =
		"view: x\ndescription: d\nsort: a\n"
		"sections: [{title: T, group_by: pcomm}]\n"
		"columns: [{id: a, label: A, sum: [procfs.utime, "
		"procfs.stime], exited: [taskstats.exited.utime, "
		"taskstats.exited.stime]}]\n"
		"coverage: {threads: [procfs.utime, procfs.stime], exited: "
		"[taskstats.exited.utime, taskstats.exited.stime]}\n";
	struct ctp_view *v;
	struct ctp_snap *base, *cand;
	struct ctp_exit_sum ex;
	assert_int_equal(ctp_view_parse("x.yaml", view_text, strlen(view_text),
					&v, err, sizeof(err)),
			 0);
	if (ctp_snap_open(files[0], 1ull << 31, &base, err, sizeof(err)) < 0 ||
	    ctp_snap_open(files[nf - 1], 1ull << 31, &cand, err, sizeof(err)) <
		    0)
		fail_msg("%s", err);
	char *between[MAXF];
	for (size_t i = 1; i + 1 < nf; i++)
		between[i - 1] = files[i];
	assert_int_equal(ctp_exit_sum_paths(base, cand, between, nf - 2,
					    1ull << 31, v, stderr, "test", &ex),
			 0);
	if (!ex.present) {
		print_message("skipped: no exit records here (taskstats "
			      "exits unavailable)\n");
		ctp_exit_sum_free(&ex);
		ctp_snap_free(base);
		ctp_snap_free(cand);
		ctp_view_free(v);
		skip();
	}
	struct ctp_group_spec spec = {.no_normalize = true};
	char axes[] = "cgroup:cpuacct";
	struct ctp_groups *g;
	assert_int_equal(ctp_group_spec_parse(axes, &spec, err, sizeof(err)),
			 0);
	if (ctp_groups_new_extra(cand, &spec, ex.id, ex.tasks, &g, err,
				 sizeof(err)) < 0)
		fail_msg("%s", err);
	const char *key[1] = {path}, *none[1] = {NULL};
	const struct ctp_group *gr = ctp_groups_find(g, key),
			       *keyless = ctp_groups_find(g, none);
	size_t nrows = v1x_rows(files, nf, rows, 2 * N_TASKS);
	double cpu = 0, lost_cpu = 0;
	uint32_t ours = 0, lost = 0, expected = 0, bad = 0;
	for (uint32_t i = 0; gr && i < gr->n_extras; i++) {
		ours += is_ours(&ex.id[gr->extras[i]].comm);
		cpu += ex.cpu_of[gr->extras[i]];
	}
	for (size_t i = 0; i < nrows; i++)
		expected += unplaceable(rows, nrows, rows[i].tid);
	for (uint32_t i = 0; keyless && i < keyless->n_extras; i++) {
		const struct ctp_group_extra *x = &ex.id[keyless->extras[i]];
		if (!is_ours(&x->comm))
			continue;
		lost++;
		lost_cpu += ex.cpu_of[keyless->extras[i]];
		if (!unplaceable(rows, nrows, x->tid)) {
			print_error("%.*s %llu without a key\n",
				    (int)x->comm.len, x->comm.ptr,
				    (unsigned long long)x->tid);
			bad++;
		}
	}
	double usage = (double)(u1 - u0) / 1e9;
	printf("NOTE: %s: %u exited tasks, %.3f s of CPU; cpuacct.usage "
	       "%.3f s; keyless: %u of them (%u under a shell whose exit a "
	       "later file has), %.3f s; %llu exits lost\n",
	       path, ours, cpu, usage, lost, expected, lost_cpu,
	       (unsigned long long)ex.lost);
	/* Every burner and shell, less what the plugin said it missed;
	 * none without a key but a child whose parent's exit is in a later
	 * file than its own. */
	assert_true(ours + expected + ex.lost >= N_TASKS);
	assert_true(ours + lost + ex.lost >= N_TASKS);
	assert_int_equal(bad, 0);
	/* Their CPU is the cgroup's, give or take the exit records'
	 * rounding and the parent's own forks. */
	if (!ex.lost &&
	    (cpu + lost_cpu < 0.8 * usage || cpu + lost_cpu > 1.1 * usage))
		fail_msg("exited CPU %.3f s, cpuacct.usage %.3f s",
			 cpu + lost_cpu, usage);
	ctp_groups_free(g);
	ctp_exit_sum_free(&ex);
	ctp_snap_free(base);
	ctp_snap_free(cand);
	ctp_view_free(v);
}

/* Every thread of the host: its v2 identity (the core's, from the
 * cgroups' cgroup.procs listings, issue 17) equals the 0:: line of its own
 * cgroup file, for every thread that stayed put across the capture. */
static void v2_listings(void **state)
{
	size_t checked = 0;
	int bad = 0;

	(void)state;
	if (!h_v2.mount[0]) {
		print_message("skipped: no cgroup2 mount here\n");
		skip();
	}
	/* The child in a cgroup of its own: not everything is "/". */
	char name[64], dir[PATH_MAX], cpath[PATH_MAX];
	const char *want[NTHREADS];
	snprintf(name, sizeof(name), "ctprof-cgtest-%d", (int)getpid());
	enter(&h_v2, name, dir, sizeof(dir), cpath, sizeof(cpath));
	move_procs(dir, child);
	for (int i = 0; i < NTHREADS; i++)
		want[i] = cpath;
	/* The last thread in a threaded child, when allowed: placed by that
	 * cgroup's cgroup.threads, not by where its process is listed. */
	char tdir[PATH_MAX + 8], tpath[PATH_MAX + 8];
	bool threaded = threaded_child(dir, cpath, tdir, tpath);
	if (threaded)
		want[NTHREADS - 1] = tpath;
	/* procfs-stat's <tgid>/stat tells a live leader from a zombie; -vv
	 * for the line that says what the listings placed. */
	char cfg[PATH_MAX], out[PATH_MAX], log[PATH_MAX];
	PATH(cfg, "%s/v2l.yaml", tmp);
	PATH(out, "%s/v2l.ctprof.zst", tmp);
	PATH(log, "%s/v2l.log", tmp);
	FILE *f = fopen(cfg, "we");
	assert_non_null(f);
	fprintf(f,
		"plugin_dirs: [\"%s\"]\nworkers: 2\nplugins:\n"
		"  procfs-stat: {required: true}\n",
		CTP_TEST_PLUGIN_DIR);
	assert_int_equal(fclose(f), 0);
	const char *args[] = {"-vv", "--config", cfg, "-o", out, NULL};
	before_take();
	assert_int_equal(e2e_run(args, NULL, log), 0);
	struct ctp_snap *s = NULL;
	char err[512];
	if (ctp_snap_open(out, 1ull << 31, &s, err, sizeof(err)) < 0)
		fail_msg("cannot read the snapshot: %s", err);
	char *text = NULL;
	assert_int_equal(e2e_read_file(log, &text, NULL), 0);
	const char *line = strstr(text, "cgroup listings placed ");
	unsigned long procs = 0, threads = 0;
	if (!line || sscanf(line,
			    "cgroup listings placed %lu processes and %lu "
			    "threads",
			    &procs, &threads) != 2) {
		e2e_show_file("ctprof-core stderr", log);
		fail_msg("no 'cgroup listings placed' line");
	}
	print_message("[ INFO     ] listings placed %lu processes, %lu "
		      "threads of threaded cgroups\n",
		      procs, threads);
	assert_true(procs > 0);
	if (threaded)
		assert_true(threads >= 1);
	free(text);
	const struct ctp_snap_table *tt = ctp_snap_table(s, CTP_SCOPE_THREAD);
	const struct ctp_snap_table *ct = ctp_snap_table(s, CTP_SCOPE_CGROUP);

	bad += check_threads(s, NULL, want);
	for (size_t r = 0; r < tt->rows; r++) {
		char *a = stable_cgroup_file((int)tt->tgid[r], (int)tt->tid[r]),
		     *v2 = a ? strstr(a, "0::") : NULL;

		/* Another test's zombie leader, placed with its threads. */
		if (!v2 || thread_dead((int)tt->tgid[r], (int)tt->tid[r])) {
			free(a);
			continue;
		}
		v2 += 3;
		v2[strcspn(v2, "\n")] = '\0';
		checked++;
		if (tt->cgroup[r] < 0 ||
		    !e2e_bytes_eq(ct->path[tt->cgroup[r]], v2)) {
			if (bad++ < 20)
				print_error(
					"tid %d: cgroup %.*s, its file says "
					"%s\n",
					(int)tt->tid[r],
					tt->cgroup[r] < 0
						? 4
						: (int)ct->path[tt->cgroup[r]]
							  .len,
					tt->cgroup[r] < 0
						? "none"
						: ct->path[tt->cgroup[r]].ptr,
					v2);
		}
		free(a);
	}
	before_free();
	print_message("[ INFO     ] %zu of %zu threads compared\n", checked,
		      tt->rows);
	/* At least the child's (a busy host's others may come and go). */
	assert_true(checked >= NTHREADS);
	ctp_snap_free(s);
	assert_int_equal(bad, 0);
}

int main(void)
{
	if (geteuid() != 0) {
		printf("skipped: creating cgroups needs root\n");
		return 77;
	}
	find_mount("memory", &h_mem);
	find_mount("pids", &h_pids);
	find_mount(NULL, &h_v2);
	find_mount("name=systemd", &h_sysd);
	if (h_mem.mount[0] && !self_path("memory", &h_mem))
		h_mem.mount[0] = '\0';
	if (h_pids.mount[0] && !self_path("pids", &h_pids))
		h_pids.mount[0] = '\0';
	if (h_v2.mount[0] && !self_path("", &h_v2))
		h_v2.mount[0] = '\0';
	if (h_sysd.mount[0] && !self_path("name=systemd", &h_sysd))
		h_sysd.mount[0] = '\0';
	/* cpuacct alone, or beside cpu (cpu,cpuacct) as most hosts mount it. */
	find_mount("cpuacct", &h_acct);
	if (h_acct.mount[0] && !self_path("cpuacct", &h_acct) &&
	    !self_path("cpu,cpuacct", &h_acct) &&
	    !self_path("cpuacct,cpu", &h_acct))
		h_acct.mount[0] = '\0';
	if (!h_mem.mount[0] && !h_pids.mount[0] && !h_v2.mount[0]) {
		printf("skipped: no cgroup hierarchy to create cgroups in\n");
		return 77;
	}
	printf("v1 memory: %s, v1 pids: %s, v2: %s\n",
	       h_mem.mount[0] ? h_mem.mount : "none",
	       h_pids.mount[0] ? h_pids.mount : "none",
	       h_v2.mount[0] ? h_v2.mount : "none");
	if (e2e_tmpdir("cgroup-live", tmp, sizeof(tmp)) < 0)
		return 1;
	atexit(on_exit_cleanup);

	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(v1_memory, setup, teardown),
		cmocka_unit_test_setup_teardown(v1_pids, setup, teardown),
		cmocka_unit_test_setup_teardown(v2_path, setup, teardown),
		cmocka_unit_test_setup_teardown(v1_listings, setup, teardown),
		cmocka_unit_test_setup_teardown(v1_source, setup, teardown),
		cmocka_unit_test_setup_teardown(v2_listings, setup, teardown),
		cmocka_unit_test_setup_teardown(v1_exited, setup, teardown),
	};
	int rc = cmocka_run_group_tests(tests, NULL, NULL);
	e2e_rm_rf(tmp);
	return rc;
}
