/* SPDX-License-Identifier: MIT */
/*
 * The built cgroup.so driven without the engine: dlopen it, check its
 * descriptor, and run init/host/thread/cgroup/finish/fini against a fake
 * struct ctp_api that records registrations, set_str calls, file fetches
 * and cgroup_ref calls. Proves what the fixture runs cannot show directly:
 * the lazy cgroup file is never fetched on a host without v1, v1 rows are
 * referenced once per distinct membership text per worker and capture (and
 * again after a failed reference), a core without cgroup_ref still gets the
 * paths, a refused hierarchy field drops only its paths, option errors,
 * foreign keys, and concurrent workers registering hierarchies.
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "harness.h"

#define PLUGIN_PATH CTP_TEST_PLUGIN_DIR "/cgroup.so"

/* ---- Fixture ------------------------------------------------------------- */

static const char hybrid_self[] = "3:memory:/\n2:cpu,cpuacct:/\n"
				  "1:name=systemd:/\n0::/\n";
static const char hybrid_mounts[] =
	"35 31 0:32 / /sys/fs/cgroup/memory rw - cgroup cgroup rw,memory\n"
	"41 31 0:38 / /sys/fs/cgroup/unified rw - cgroup2 cgroup2 rw\n";

struct fx {
	void *dl;
	const struct ctp_plugin *p;
	struct hx_ctx ctx;
	void *state;
	int proc_fd;	 /* of dir, the proc root */
	size_t api_size; /* of the engine's table; 0: all of it */
	char dir[PATH_MAX];
};

static void write_file(const char *dir, const char *name, const char *text)
{
	char path[PATH_MAX];
	FILE *f;

	int n = snprintf(path, sizeof(path), "%s/%s", dir, name);
	assert_true(n > 0 && (size_t)n < sizeof(path));
	f = fopen(path, "we");
	assert_non_null(f);
	fputs(text, f);
	assert_int_equal(fclose(f), 0);
}

/* A proc root with only self/cgroup and self/mountinfo (NULL: absent). */
static void make_proc(struct fx *fx, const char *self_cgroup,
		      const char *mountinfo)
{
	char self[PATH_MAX + 8], path[PATH_MAX + 32];

	snprintf(self, sizeof(self), "%s/self", fx->dir);
	mkdir(self, 0755);
	snprintf(path, sizeof(path), "%s/cgroup", self);
	unlink(path);
	snprintf(path, sizeof(path), "%s/mountinfo", self);
	unlink(path);
	if (self_cgroup)
		write_file(self, "cgroup", self_cgroup);
	if (mountinfo)
		write_file(self, "mountinfo", mountinfo);
}

static int setup(void **state)
{
	struct fx *fx = calloc(1, sizeof(*fx));
	const char *base = getenv("TMPDIR");

	if (!fx)
		return -1;
	snprintf(fx->dir, sizeof(fx->dir), "%s/ctprof-cgplugin.XXXXXX",
		 base && *base ? base : "/tmp");
	if (!mkdtemp(fx->dir)) {
		free(fx);
		return -1;
	}
	fx->p = hx_dlopen(PLUGIN_PATH, &fx->dl);
	if (!fx->p) {
		free(fx);
		return -1;
	}
	fx->proc_fd = open(fx->dir, O_RDONLY | O_DIRECTORY);
	hx_ctx_init(&fx->ctx, fx->p, NULL);
	*state = fx;
	return 0;
}

static int teardown(void **state)
{
	struct fx *fx = *state;
	char cmd[PATH_MAX + 16];

	hx_ctx_done(&fx->ctx);
	dlclose(fx->dl);
	close(fx->proc_fd);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", fx->dir);
	if (system(cmd) != 0)
		fprintf(stderr, "could not remove %s\n", fx->dir);
	free(fx);
	return 0;
}

/* A fresh engine with options (what the test set up to refuse kept), the
 * plugin loaded into it. */
static int init(struct fx *fx, const char *const *opts)
{
	const char *refuse = fx->ctx.refuse_name;
	int r;

	hx_ctx_done(&fx->ctx);
	hx_ctx_init(&fx->ctx, fx->p, opts);
	fx->ctx.refuse_name = refuse;
	fx->ctx.log_max = CTP_LOG_INFO; /* debug messages are not counted */
	fx->ctx.eng.roots.proc = fx->dir;
	fx->ctx.eng.roots.sys = NULL;
	fx->ctx.eng.roots.proc_fd = fx->proc_fd;
	r = hx_ctx_load(&fx->ctx, fx->api_size);
	fx->state = hx_state(&fx->ctx);
	return r;
}

static int field(struct fx *fx, const char *name)
{
	return hx_field(&fx->ctx, name);
}

/* One thread callback on a task whose cgroup file holds `text` (NULL: the
 * fetch fails with ENOENT). */
static int thread(struct fx *fx, const char *text, struct hx_rec *rec,
		  struct hx_task *ft)
{
	hx_task_init(ft, 100, 100);
	ft->task.pcomm = ft->task.comm = "x";
	hx_task_lazy(ft, 0, text, text ? 0 : -ENOENT);
	hx_rec_init(rec, &fx->ctx, CTP_SCOPE_THREAD);
	return fx->p->thread(fx->state, &ft->task, &rec->core);
}

static int host(struct fx *fx)
{
	struct hx_rec rec;

	hx_rec_init(&rec, &fx->ctx, CTP_SCOPE_HOST);
	return fx->p->host(fx->state, &rec.core);
}

/* ---- Tests --------------------------------------------------------------- */

static void descriptor(void **state)
{
	struct fx *fx = *state;
	const struct ctp_plugin *p = fx->p;

	assert_int_equal(p->abi, CTP_ABI_MAJOR);
	assert_string_equal(p->name, "cgroup");
	assert_true(p->flags & CTP_PLUGIN_MT_SAFE);
	assert_non_null(p->thread_files);
	assert_string_equal(p->thread_files[0], "?cgroup");
	/* For the age of a thread the listings do not place. */
	assert_string_equal(p->thread_files[1], "?stat");
	assert_null(p->thread_files[2]);
	assert_true(p->flags & CTP_PLUGIN_NO_THREAD_DIR);
	assert_null(p->process_files);
	assert_non_null(p->cgroup);
	assert_null(p->process);
	/* Every static field says its version in its name, and its scope. */
	for (uint32_t i = 0; i < p->n_fields; i++) {
		const struct ctp_field_desc *d = &p->fields[i];
		bool v1 = !strncmp(d->name, "cgroup.v1.", 10);
		bool v2 = !strncmp(d->name, "cgroup.v2.", 10);
		if (!(v1 || v2) || d->scope != CTP_SCOPE_CGROUP || !d->help ||
		    strncmp(d->help, v1 ? "v1" : "v2", 2) != 0)
			fail_msg("field %s", d->name);
	}
}

/* Pure v2: host() finds no v1, the thread callback never fetches. */
static void no_v1_no_read(void **state)
{
	struct fx *fx = *state;
	struct hx_rec rec;
	struct hx_task ft;

	make_proc(fx, "0::/user.slice\n",
		  "41 31 0:38 / /sys/fs/cgroup rw - cgroup2 cgroup2 rw\n");
	assert_int_equal(init(fx, NULL), 0);
	assert_int_equal(host(fx), 0);
	assert_int_equal(thread(fx, "0::/user.slice\n", &rec, &ft), 0);
	assert_int_equal(ft.gets, 0);
	assert_int_equal(rec.n_sets, 0);
	assert_int_equal(fx->ctx.n_ref_calls, 0);
}

/* v1 listed in self/cgroup is enough, mounted or not. */
static void v1_paths_and_refs(void **state)
{
	struct fx *fx = *state;
	struct hx_rec rec;
	struct hx_task ft;
	static const char t1[] = "3:memory:/a\n2:cpu,cpuacct:/b\n"
				 "1:name=systemd:/c\n0::/d\n";
	static const char t2[] = "3:memory:/a\n2:cpu,cpuacct:/b/gc\n"
				 "1:name=systemd:/c\n0::/d\n";

	make_proc(fx, hybrid_self, NULL);
	assert_int_equal(init(fx, NULL), 0);
	assert_int_equal(host(fx), 0);
	assert_int_equal(thread(fx, t1, &rec, &ft), 0);
	assert_int_equal(ft.gets, 1);
	assert_int_equal(rec.bad_sets, 0);
	int fm = field(fx, "cgroup.v1.memory.path");
	int fc = field(fx, "cgroup.v1.cpu-cpuacct.path");
	int fs = field(fx, "cgroup.v1.name-systemd.path");
	assert_true(fm >= 0 && fc >= 0 && fs >= 0);
	assert_string_equal(rec.cells[fm].str, "/a");
	assert_string_equal(rec.cells[fc].str, "/b");
	assert_string_equal(rec.cells[fs].str, "/c");
	assert_int_equal(hx_field_at(&fx->ctx, fm)->scope, CTP_SCOPE_THREAD);
	assert_int_equal(hx_field_at(&fx->ctx, fm)->kind, CTP_KIND_CATEGORICAL);
	assert_int_equal(fx->ctx.n_ref_calls, 3);
	assert_int_equal(hx_n_keys(&fx->ctx), 3);
	assert_string_equal(hx_key(&fx->ctx, 0), "v1:memory:/a");
	assert_string_equal(hx_key(&fx->ctx, 1), "v1:cpu,cpuacct:/b");
	assert_string_equal(hx_key(&fx->ctx, 2), "v1:name=systemd:/c");

	/* the same text again on this worker: already referenced */
	assert_int_equal(thread(fx, t1, &rec, &ft), 0);
	assert_int_equal(fx->ctx.n_ref_calls, 3);
	assert_string_equal(rec.cells[fc].str, "/b"); /* still recorded */
	/* a thread moved alone: its text differs, all refs again */
	assert_int_equal(thread(fx, t2, &rec, &ft), 0);
	assert_int_equal(fx->ctx.n_ref_calls, 6);
	assert_int_equal(hx_n_keys(&fx->ctx), 4);
	assert_string_equal(hx_key(&fx->ctx, 3), "v1:cpu,cpuacct:/b/gc");
	assert_string_equal(rec.cells[fc].str, "/b/gc");

	/* a new capture references again */
	assert_int_equal(thread(fx, t2, &rec, &ft), 0);
	assert_int_equal(fx->ctx.n_ref_calls, 6);
	assert_int_equal(host(fx), 0);
	assert_int_equal(thread(fx, t2, &rec, &ft), 0);
	assert_int_equal(fx->ctx.n_ref_calls, 9);

	/* each hierarchy's field was registered once */
	assert_int_equal(fx->ctx.registered[fm], 1);
	assert_int_equal(hx_summary(&fx->ctx, "ref_errors"), 0);
	assert_int_equal(hx_summary(&fx->ctx, "parse_errors"), 0);
}

/* A failed reference is counted and retried by the next thread. */
static void ref_failure(void **state)
{
	struct fx *fx = *state;
	struct hx_rec rec;
	struct hx_task ft;
	static const char t[] = "3:memory:/a\n0::/\n";

	make_proc(fx, hybrid_self, NULL);
	assert_int_equal(init(fx, NULL), 0);
	assert_int_equal(host(fx), 0);
	fx->ctx.ref_err = -ENOMEM;
	assert_int_equal(thread(fx, t, &rec, &ft), 0);
	assert_int_equal(hx_summary(&fx->ctx, "ref_errors"), 1);
	assert_string_equal(rec.cells[field(fx, "cgroup.v1.memory.path")].str,
			    "/a");
	fx->ctx.ref_err = 0;
	assert_int_equal(thread(fx, t, &rec, &ft), 0);
	assert_int_equal(fx->ctx.n_ref_calls, 2);
	assert_int_equal(hx_n_keys(&fx->ctx), 1);
}

/* An older core: no cgroup_ref member. Paths still, a notice once. */
static void core_without_ref(void **state)
{
	struct fx *fx = *state;
	struct hx_rec rec;
	struct hx_task ft;

	make_proc(fx, hybrid_self, NULL);
	fx->api_size = offsetof(struct ctp_api, cgroup_ref);
	assert_int_equal(init(fx, NULL), 0);
	assert_int_equal(fx->ctx.n_log, 1);
	assert_non_null(strstr(fx->ctx.last_log, "cgroup_ref"));
	assert_int_equal(host(fx), 0);
	assert_int_equal(thread(fx, "3:memory:/a\n0::/\n", &rec, &ft), 0);
	assert_string_equal(rec.cells[field(fx, "cgroup.v1.memory.path")].str,
			    "/a");
	assert_int_equal(fx->ctx.n_ref_calls, 0);
	assert_int_equal(hx_summary(&fx->ctx, "ref_errors"), 0);
}

/* A hierarchy whose field is refused loses its paths, not the others'. */
static void refused_hierarchy(void **state)
{
	struct fx *fx = *state;
	struct hx_rec rec;
	struct hx_task ft;

	make_proc(fx, hybrid_self, NULL);
	fx->ctx.refuse_name = "cgroup.v1.memory.path";
	assert_int_equal(init(fx, NULL), 0);
	assert_int_equal(host(fx), 0);
	assert_int_equal(
		thread(fx, "3:memory:/a\n1:pids:/p\n0::/\n", &rec, &ft), 0);
	assert_int_equal(
		thread(fx, "3:memory:/a\n1:pids:/p\n0::/\n", &rec, &ft), 0);
	assert_int_equal(field(fx, "cgroup.v1.memory.path"), -1);
	assert_string_equal(rec.cells[field(fx, "cgroup.v1.pids.path")].str,
			    "/p");
	assert_int_equal(hx_summary(&fx->ctx, "keys_dropped"), 2);
	/* its rows are still referenced: the values do not need the path */
	assert_int_equal(hx_n_keys(&fx->ctx), 2);
	assert_int_equal(rec.bad_sets, 0);
}

/*
 * A static field the core refuses (a handle < 0) is skipped on every row:
 * never handed to a setter, its file's other values still recorded. A v2
 * row from the files of a temporary cgroup directory, and a v1 row.
 */
static void refused_static_fields(void **state)
{
	static const char *const refused[] = {
		"cgroup.v2.cpu.weight", "cgroup.v2.cpu.weight.nice",
		"cgroup.v2.cgroup.type", "cgroup.v1.hierarchy"};
	struct fx *fx = *state;
	struct hx_rec rec;
	struct ctp_cgroup cg = {.abi = CTP_ABI_MAJOR,
				.size = sizeof(cg),
				.path = "/x",
				.v2_root_fd = -1};
	char dir[PATH_MAX + 8];

	snprintf(dir, sizeof(dir), "%s/cg", fx->dir);
	mkdir(dir, 0755);
	write_file(dir, "cpu.weight", "100\n");
	write_file(dir, "cpu.weight.nice", "-3\n");
	write_file(dir, "cgroup.type", "threaded\n");
	write_file(dir, "cpu.max", "max 100000\n");
	write_file(dir, "memory.max", "1024\n");
	make_proc(fx, hybrid_self, hybrid_mounts);
	hx_ctx_done(&fx->ctx);
	hx_ctx_init(&fx->ctx, fx->p, NULL);
	for (size_t i = 0; i < sizeof(refused) / sizeof(refused[0]); i++)
		fx->ctx.disabled_field[i] = hx_table_index(fx->p, refused[i]);
	fx->ctx.eng.roots.proc = fx->dir;
	fx->ctx.eng.roots.proc_fd = fx->proc_fd;
	assert_int_equal(hx_ctx_load(&fx->ctx, 0), 0);
	fx->state = hx_state(&fx->ctx);
	assert_int_equal(host(fx), 0);

	cg.dirfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	assert_true(cg.dirfd >= 0);
	hx_rec_init(&rec, &fx->ctx, CTP_SCOPE_CGROUP);
	assert_int_equal(fx->p->cgroup(fx->state, &cg, &rec.core), 0);
	close(cg.dirfd);
	assert_int_equal(rec.bad_sets, 0);
	for (size_t i = 0; i < 3; i++)
		assert_int_equal(rec.cells[field(fx, refused[i])].set, 0);
	assert_int_equal(rec.cells[field(fx, "cgroup.v2.memory.max")].u, 1024);
	assert_int_equal(rec.cells[field(fx, "cgroup.v2.cpu.max.period_us")].u,
			 100000);
	assert_int_equal(rec.n_sets, 2);

	hx_rec_init(&rec, &fx->ctx, CTP_SCOPE_CGROUP);
	cg.path = "v1:pids:/x";
	cg.dirfd = -1;
	assert_int_equal(fx->p->cgroup(fx->state, &cg, &rec.core), 0);
	assert_int_equal(rec.bad_sets, 0);
	assert_int_equal(rec.n_sets, 0);
	assert_int_equal(hx_summary(&fx->ctx, "v1_no_mount"), 1);
}

/* Garbage lines are counted; the good ones are kept. A failed fetch sets
 * nothing and is not the plugin's error. */
static void garbage_and_failures(void **state)
{
	struct fx *fx = *state;
	struct hx_rec rec;
	struct hx_task ft;

	make_proc(fx, hybrid_self, NULL);
	assert_int_equal(init(fx, NULL), 0);
	assert_int_equal(host(fx), 0);
	assert_int_equal(thread(fx, "junk\n3:memory:/a\n2:cpu:/cut", &rec, &ft),
			 0);
	assert_string_equal(rec.cells[field(fx, "cgroup.v1.memory.path")].str,
			    "/a");
	assert_int_equal(field(fx, "cgroup.v1.cpu.path"), -1);
	assert_int_equal(hx_summary(&fx->ctx, "parse_errors"), 1);
	assert_int_equal(thread(fx, NULL, &rec, &ft), 0);
	assert_int_equal(ft.gets, 1);
	assert_int_equal(rec.n_sets, 0);
}

static void options(void **state)
{
	struct fx *fx = *state;
	static const char *const unknown[] = {"v2", "off", NULL};
	static const char *const bad_bool[] = {"v1", "maybe", NULL};
	static const char *const relative[] = {"mount_prefix", "x/y", NULL};
	static const char *const off[] = {"v1", "off", NULL};
	struct hx_rec rec;
	struct hx_task ft;

	make_proc(fx, hybrid_self, hybrid_mounts);
	/* An unknown name or an ill-typed value is the core's loader to
	 * refuse, before init (declared options). */
	assert_int_equal(fx->p->n_options, 2);
	assert_string_equal(fx->p->options[0].name, "v1");
	assert_int_equal(init(fx, unknown), -EINVAL);
	assert_non_null(strstr(fx->ctx.last_log, "'v2'"));
	assert_int_equal(init(fx, bad_bool), -EINVAL);
	assert_non_null(strstr(fx->ctx.last_log, "'maybe'"));
	assert_int_equal(init(fx, relative), -EINVAL);
	assert_non_null(strstr(fx->ctx.last_log, "absolute"));
	assert_int_equal(init(fx, off), 0);
	assert_int_equal(host(fx), 0);
	assert_int_equal(thread(fx, "3:memory:/a\n0::/\n", &rec, &ft), 0);
	assert_int_equal(ft.gets, 0);
	assert_int_equal(fx->ctx.n_ref_calls, 0);
}

/* Keys of another namespace are not this plugin's: no value, no error.
 * A v2 row the core could not open is counted. A v1 row of a hierarchy
 * with no mount gets its hierarchy and is counted. */
static void cgroup_rows(void **state)
{
	struct fx *fx = *state;
	struct hx_rec rec, hrec;
	struct ctp_cgroup cg = {.abi = CTP_ABI_MAJOR,
				.size = sizeof(cg),
				.dirfd = -1,
				.v2_root_fd = -1};
	/* The mounts are under the (empty) temp dir, never the host's. */
	const char *const opts[] = {"mount_prefix", fx->dir, NULL};

	make_proc(fx, hybrid_self, hybrid_mounts);
	assert_int_equal(init(fx, opts), 0);
	assert_int_equal(host(fx), 0);
	hx_rec_init(&rec, &fx->ctx, CTP_SCOPE_CGROUP);
	cg.path = "other:thing";
	assert_int_equal(fx->p->cgroup(fx->state, &cg, &rec.core), 0);
	assert_int_equal(rec.n_sets, 0);
	cg.path = "/gone";
	assert_int_equal(fx->p->cgroup(fx->state, &cg, &rec.core), 0);
	assert_int_equal(rec.n_sets, 0);
	assert_int_equal(hx_summary(&fx->ctx, "v2_unreachable"), 1);
	cg.path = "v1:pids:/x";
	assert_int_equal(fx->p->cgroup(fx->state, &cg, &rec.core), 0);
	assert_int_equal(rec.n_sets, 1);
	assert_string_equal(rec.cells[field(fx, "cgroup.v1.hierarchy")].str,
			    "pids");
	assert_int_equal(hx_summary(&fx->ctx, "v1_no_mount"), 1);
	/* memory is mounted, at a directory that does not exist */
	hx_rec_init(&rec, &fx->ctx, CTP_SCOPE_CGROUP);
	cg.path = "v1:memory:/x";
	assert_int_equal(fx->p->cgroup(fx->state, &cg, &rec.core), 0);
	assert_int_equal(rec.n_sets, 1);
	assert_int_equal(hx_summary(&fx->ctx, "v1_unreachable"), 1);
	assert_int_equal(rec.bad_sets, 0);
	hx_rec_init(&hrec, &fx->ctx, CTP_SCOPE_HOST);
	assert_int_equal(fx->p->finish(fx->state, &hrec.core), 0);
}

/* Workers registering hierarchies at once: one field each, every path. */
struct worker_arg {
	struct fx *fx;
	int id;
	int bad;
};

static void *worker(void *arg)
{
	struct worker_arg *w = arg;
	char text[512];
	size_t off = 0;

	for (int h = 1; h <= 24; h++)
		off += (size_t)snprintf(text + off, sizeof(text) - off,
					"%d:name=h%d:/w%d\n", h, h, w->id);
	for (int i = 0; i < 500; i++) {
		struct hx_rec *rec = calloc(1, sizeof(*rec));
		struct hx_task ft;
		if (!rec) {
			w->bad++;
			break;
		}
		if (thread(w->fx, text, rec, &ft) < 0 || rec->bad_sets ||
		    rec->n_sets != 24)
			w->bad++;
		free(rec);
	}
	return NULL;
}

static void concurrent_workers(void **state)
{
	struct fx *fx = *state;
	pthread_t t[8];
	struct worker_arg a[8];

	make_proc(fx, hybrid_self, NULL);
	assert_int_equal(init(fx, NULL), 0);
	assert_int_equal(host(fx), 0);
	for (int i = 0; i < 8; i++) {
		a[i] = (struct worker_arg){.fx = fx, .id = i};
		assert_int_equal(pthread_create(&t[i], NULL, worker, &a[i]), 0);
	}
	for (int i = 0; i < 8; i++) {
		pthread_join(t[i], NULL);
		assert_int_equal(a[i].bad, 0);
	}
	for (int h = 1; h <= 24; h++) {
		char name[64];
		snprintf(name, sizeof(name), "cgroup.v1.name-h%d.path", h);
		int f = field(fx, name);
		assert_true(f >= 0);
		assert_int_equal(fx->ctx.registered[f], 1);
	}
	/* each worker referenced its 24 rows once (the same text after) */
	assert_int_equal(fx->ctx.n_ref_calls, 8 * 24);
	assert_int_equal(hx_n_keys(&fx->ctx), 8 * 24);
	assert_int_equal(hx_summary(&fx->ctx, "ref_errors"), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(descriptor, setup, teardown),
		cmocka_unit_test_setup_teardown(no_v1_no_read, setup, teardown),
		cmocka_unit_test_setup_teardown(v1_paths_and_refs, setup,
						teardown),
		cmocka_unit_test_setup_teardown(ref_failure, setup, teardown),
		cmocka_unit_test_setup_teardown(core_without_ref, setup,
						teardown),
		cmocka_unit_test_setup_teardown(refused_hierarchy, setup,
						teardown),
		cmocka_unit_test_setup_teardown(refused_static_fields, setup,
						teardown),
		cmocka_unit_test_setup_teardown(garbage_and_failures, setup,
						teardown),
		cmocka_unit_test_setup_teardown(options, setup, teardown),
		cmocka_unit_test_setup_teardown(cgroup_rows, setup, teardown),
		cmocka_unit_test_setup_teardown(concurrent_workers, setup,
						teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
