/* SPDX-License-Identifier: MIT */
/*
 * The built psi.so, loaded into a real engine and called without the walk
 * (tests/harness.h): its descriptor and options, the host callback over
 * tests/fixtures/psi/proc, the cgroup callback over the directories of
 * tests/fixtures/psi/cgroup, what stays absent and what is counted, the
 * hint, refused fields and setters, and EOPNOTSUPP (PSI disabled) made real
 * with a seccomp filter in a child process.
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "harness.h"

#define PLUGIN_PATH CTP_TEST_PLUGIN_DIR "/psi.so"
#define FIX_PROC    CTP_TEST_FIXTURES "/psi/proc"
#define FIX_CGROUP  CTP_TEST_FIXTURES "/psi/cgroup"
#define N_FIELDS    52
#define SKIP	    77

/* A core up to file_gate: what came later (derived fields, cgroup_ref)
 * this plugin does not use, and it must not touch what `size` leaves out. */
#define API_SIZE HX_API_SIZE_THROUGH(file_gate)

static int setup(void **state)
{
	return hx_fx_setup(state, PLUGIN_PATH);
}

static int start(struct hx_fx *fx, const char *const *opts)
{
	return hx_fx_start(fx, API_SIZE, opts);
}

static void stop(struct hx_fx *fx)
{
	if (fx->ctx.eng.roots.proc_fd >= 0)
		close(fx->ctx.eng.roots.proc_fd);
	hx_fx_stop(fx);
}

static int open_dir(const char *path)
{
	int fd = open(path, O_PATH | O_DIRECTORY | O_CLOEXEC);

	if (fd < 0)
		fail_msg("open %s: %s", path, strerror(errno));
	return fd;
}

/* The four values of "<prefix>.<res>.<half>" in rec, against want[];
 * want NULL: all four absent. */
static void half_is(const struct hx_rec *rec, const char *prefix,
		    const char *rh, const uint64_t *want)
{
	static const char *const m[] = {"avg10", "avg60", "avg300", "total"};
	char name[64];

	for (int i = 0; i < 4; i++) {
		const struct hx_cell *c;

		snprintf(name, sizeof(name), "%s.%s.%s", prefix, rh, m[i]);
		c = hx_cell(rec, name);
		if (!want) {
			if (c->set)
				fail_msg("%s set to %llu, expected absent",
					 name, (unsigned long long)c->u);
			continue;
		}
		if (c->set != 1 || c->type != CTP_TYPE_U64 || c->u != want[i])
			fail_msg("%s: set %d value %llu, expected %llu", name,
				 c->set, (unsigned long long)c->u,
				 (unsigned long long)want[i]);
	}
}

/* ---- Descriptor and options ---------------------------------------------- */

static void descriptor(void **state)
{
	struct hx_fx *fx = *state;
	const struct ctp_plugin *p = fx->p;
	size_t host = 0, cg = 0;

	hx_expect_descriptor(p, "psi",
			     CTP_PLUGIN_CAPS | CTP_PLUGIN_MT_SAFE |
				     CTP_PLUGIN_OPTIONS,
			     N_FIELDS);
	for (uint32_t i = 0; i < p->n_fields; i++) {
		const struct ctp_field_desc *f = &p->fields[i];
		const char *last = strrchr(f->name, '.') + 1;
		int total = !strcmp(last, "total");
		char dims[96];

		/* Section and dimensions say what the name says, so readers
		 * need not parse it: psi.[cg.]<res>.<stall>.<window>. */
		assert_int_equal(f->flags, CTP_FIELD_META);
		assert_string_equal(f->section, "psi");
		const char *rest =
			f->name + (f->scope == CTP_SCOPE_HOST ? 4 : 7);
		char res[16], stall[8], win[8];
		assert_int_equal(sscanf(rest, "%15[a-z].%7[a-z].%7[a-z0-9]",
					res, stall, win),
				 3);
		snprintf(dims, sizeof(dims), "resource=%s,stall=%s,window=%s",
			 res, stall, win);
		assert_string_equal(f->dims, dims);

		/* Names unique across scopes: psi.<res>... vs psi.cg.<res>. */
		if (f->scope == CTP_SCOPE_HOST) {
			assert_null(strstr(f->name, "psi.cg."));
			host++;
		} else {
			assert_int_equal(f->scope, CTP_SCOPE_CGROUP);
			assert_ptr_equal(strstr(f->name, "psi.cg."), f->name);
			cg++;
		}
		/* A window's total stall time is a counter of µs, its
		 * averages are gauges of centi-percent (the rest of what a
		 * field declares: test_plugin_properties). */
		assert_int_equal(f->type, CTP_TYPE_U64);
		assert_int_equal(f->unit,
				 total ? CTP_UNIT_US : CTP_UNIT_CENTIPCT);
		assert_int_equal(f->kind,
				 total ? CTP_KIND_COUNTER : CTP_KIND_GAUGE);
		assert_int_equal(f->rule, total ? CTP_RULE_SUM : CTP_RULE_MAX);
	}
	assert_int_equal(host, 24);
	assert_int_equal(cg, 28);
	assert_int_equal(hx_field_index(p, "psi.cpu.full.avg10"), -1);
	assert_int_equal(hx_field_index(p, "psi.irq.some.total"), -1);
	assert_int_equal(hx_field_index(p, "psi.cg.irq.some.total"), -1);
	assert_true(hx_field_index(p, "psi.cg.cpu.full.total") >= 0);
	assert_null(p->thread_files);
	assert_null(p->process_files);
	assert_null(p->thread);
	assert_null(p->process);
	assert_non_null(p->init);
	assert_non_null(p->fini);
	assert_non_null(p->host);
	assert_non_null(p->cgroup);
	assert_non_null(p->finish);
}

static void init_options(void **state)
{
	static const char *const unknown[] = {"hots", "true", NULL};
	static const char *const bad[] = {"cgroup", "sometimes", NULL};
	static const char *const off[] = {"host", "no", "cgroup", "off", NULL};
	static const char *const names[] = {"missing", "unsupported",
					    "read_errors", "parse_errors",
					    "cgroups_unreachable"};
	struct hx_fx *fx = *state;

	/* An unknown name or an ill-typed value: the core's loader refuses
	 * the plugin before init (declared options). */
	assert_string_equal(fx->p->options[0].name, "host");
	assert_string_equal(fx->p->options[1].name, "cgroup");
	assert_int_equal(start(fx, unknown), -EINVAL);
	assert_non_null(strstr(fx->ctx.last_log, "'hots'"));
	hx_ctx_done(&fx->ctx);
	assert_int_equal(start(fx, bad), -EINVAL);
	assert_non_null(strstr(fx->ctx.last_log, "cgroup"));
	hx_ctx_done(&fx->ctx);

	assert_int_equal(start(fx, off), 0);
	assert_int_equal(hx_info(&fx->ctx)->n_summary, 5);
	for (size_t i = 0; i < 5; i++)
		assert_int_equal(hx_summary(&fx->ctx, names[i]), 0);
	stop(fx);

	/* A core without roots() cannot say where /proc is. */
	assert_int_equal(hx_fx_start(fx, offsetof(struct ctp_api, roots), NULL),
			 -ENOTSUP);
	hx_ctx_done(&fx->ctx);
}

/* ---- Host ---------------------------------------------------------------- */

static void host_fixture(void **state)
{
	static const uint64_t cpu_some[] = {105, 50, 25, 123456789};
	static const uint64_t mem_some[] = {1234, 567, 89, 987654321};
	static const uint64_t mem_full[] = {1000, 450, 75, 876543210};
	static const uint64_t io_some[] = {10000, 9999, 1, UINT64_MAX};
	static const uint64_t io_full[] = {10099, 5050, 29, 42};
	static const uint64_t irq_full[] = {57, 28, 14, 5550000};
	struct hx_fx *fx = *state;
	struct hx_rec rec;

	assert_int_equal(start(fx, NULL), 0);
	fx->ctx.eng.roots.proc_fd = open_dir(FIX_PROC);
	hx_rec_init(&rec, &fx->ctx, CTP_SCOPE_HOST);
	assert_int_equal(fx->p->host(fx->state, &rec.core), 0);
	assert_int_equal(rec.bad_sets, 0);
	assert_int_equal(rec.n_sets, 24);
	half_is(&rec, "psi", "cpu.some", cpu_some);
	half_is(&rec, "psi", "memory.some", mem_some);
	half_is(&rec, "psi", "memory.full", mem_full);
	half_is(&rec, "psi", "io.some", io_some);
	half_is(&rec, "psi", "io.full", io_full);
	half_is(&rec, "psi", "irq.full", irq_full);
	for (unsigned i = 0; i < hx_info(&fx->ctx)->n_summary; i++)
		assert_int_equal(hx_info(&fx->ctx)->summary[i], 0);
	hx_rec_init(&rec, &fx->ctx, CTP_SCOPE_HOST);
	assert_int_equal(fx->p->finish(fx->state, &rec.core), 0);
	assert_int_equal(fx->ctx.n_hint, 0);
	stop(fx);
}

/* A proc root without pressure/: PSI off. Absent, no error, the hint. */
static void host_psi_off(void **state)
{
	struct hx_fx *fx = *state;
	struct hx_rec rec;

	assert_int_equal(start(fx, NULL), 0);
	fx->ctx.eng.roots.proc_fd = open_dir(FIX_CGROUP); /* no pressure/ */
	hx_rec_init(&rec, &fx->ctx, CTP_SCOPE_HOST);
	assert_int_equal(fx->p->host(fx->state, &rec.core), 0);
	assert_int_equal(rec.n_sets, 0);
	assert_int_equal(hx_summary(&fx->ctx, "missing"), 4);
	assert_int_equal(hx_summary(&fx->ctx, "read_errors"), 0);
	assert_int_equal(fx->p->finish(fx->state, &rec.core), 0);
	assert_int_equal(fx->ctx.n_hint, 1);
	assert_non_null(strstr(hx_hint(&fx->ctx), "psi=1"));
	stop(fx);

	/* host: false: nothing read, nothing hinted. */
	{
		static const char *const no_host[] = {"host", "false", NULL};

		assert_int_equal(start(fx, no_host), 0);
		fx->ctx.eng.roots.proc_fd = open_dir(FIX_CGROUP);
		hx_rec_init(&rec, &fx->ctx, CTP_SCOPE_HOST);
		assert_int_equal(fx->p->host(fx->state, &rec.core), 0);
		assert_int_equal(fx->p->finish(fx->state, &rec.core), 0);
		assert_int_equal(rec.n_sets, 0);
		assert_int_equal(hx_summary(&fx->ctx, "missing"), 0);
		assert_int_equal(fx->ctx.n_hint, 0);
		stop(fx);
	}

	/* No proc root at all: counted, nothing else. */
	assert_int_equal(start(fx, NULL), 0);
	hx_rec_init(&rec, &fx->ctx, CTP_SCOPE_HOST);
	assert_int_equal(fx->p->host(fx->state, &rec.core), 0);
	assert_int_equal(rec.n_sets, 0);
	assert_int_equal(hx_summary(&fx->ctx, "read_errors"), 1);
	stop(fx);
}

/* ---- Cgroups ------------------------------------------------------------- */

static int run_cgroup(struct hx_fx *fx, struct hx_rec *rec, const char *path,
		      const char *dir)
{
	struct ctp_cgroup cg = {
		.abi = CTP_ABI_MAJOR,
		.size = sizeof(cg),
		.path = path,
		.dirfd = dir ? open_dir(dir) : -1,
		.v2_root_fd = -1,
	};
	int r;

	hx_rec_init(rec, &fx->ctx, CTP_SCOPE_CGROUP);
	r = fx->p->cgroup(fx->state, &cg, &rec->core);
	if (cg.dirfd >= 0)
		close(cg.dirfd);
	return r;
}

static void cgroup_fixture(void **state)
{
	static const uint64_t cpu_some[] = {310, 220, 130, 4000001};
	static const uint64_t cpu_full[] = {110, 90, 70, 2500002};
	static const uint64_t mem_some[] = {4567, 3001, 999, 71000003};
	static const uint64_t mem_full[] = {4000, 2550, 808, 65000004};
	static const uint64_t io_some[] = {777, 666, 555, 9000005};
	static const uint64_t io_full[] = {444, 333, 222, 8000006};
	static const uint64_t irq_full[] = {2, 1, 0, 1234};
	static const uint64_t zero[] = {0, 0, 0, 0};
	static const uint64_t b_cpu_full[] = {20, 10, 5, 2000};
	static const uint64_t b_mem_some[] = {30, 20, 10, 3000};
	static const uint64_t b_io_full[] = {0, 0, 0, 77};
	struct hx_fx *fx = *state;
	struct hx_rec rec;

	assert_int_equal(start(fx, NULL), 0);

	assert_int_equal(run_cgroup(fx, &rec, "/system.slice/db.service",
				    FIX_CGROUP "/system.slice/db.service"),
			 0);
	assert_int_equal(rec.bad_sets, 0);
	assert_int_equal(rec.n_sets, 28);
	half_is(&rec, "psi.cg", "cpu.some", cpu_some);
	half_is(&rec, "psi.cg", "cpu.full", cpu_full);
	half_is(&rec, "psi.cg", "memory.some", mem_some);
	half_is(&rec, "psi.cg", "memory.full", mem_full);
	half_is(&rec, "psi.cg", "io.some", io_some);
	half_is(&rec, "psi.cg", "io.full", io_full);
	half_is(&rec, "psi.cg", "irq.full", irq_full);

	/* The fixture root is a plain directory, not the kernel's root
	 * cgroup: its cpu "full" line is kept; irq.pressure is missing. */
	assert_int_equal(run_cgroup(fx, &rec, "/", FIX_CGROUP), 0);
	assert_int_equal(rec.n_sets, 24);
	half_is(&rec, "psi.cg", "cpu.full", zero);
	half_is(&rec, "psi.cg", "irq.full", NULL);
	assert_int_equal(hx_summary(&fx->ctx, "missing"), 1);

	/* Pressure disabled in this cgroup: no files, nothing set. */
	assert_int_equal(run_cgroup(fx, &rec, "/batch.slice/job.scope",
				    FIX_CGROUP "/batch.slice/job.scope"),
			 0);
	assert_int_equal(rec.n_sets, 0);
	assert_int_equal(hx_summary(&fx->ctx, "missing"), 5);

	/* Damaged files: each counted once, the good halves kept. */
	assert_int_equal(run_cgroup(fx, &rec, "/broken.scope",
				    FIX_CGROUP "/broken.scope"),
			 0);
	assert_int_equal(rec.bad_sets, 0);
	assert_int_equal(rec.n_sets, 12);
	half_is(&rec, "psi.cg", "cpu.some", NULL);
	half_is(&rec, "psi.cg", "cpu.full", b_cpu_full);
	half_is(&rec, "psi.cg", "memory.some", b_mem_some);
	half_is(&rec, "psi.cg", "memory.full", NULL);
	half_is(&rec, "psi.cg", "io.some", NULL);
	half_is(&rec, "psi.cg", "io.full", b_io_full);
	half_is(&rec, "psi.cg", "irq.full", NULL);
	assert_int_equal(hx_summary(&fx->ctx, "parse_errors"), 4);

	/* No directory: counted, nothing set. */
	assert_int_equal(run_cgroup(fx, &rec, "/gone.scope", NULL), 0);
	assert_int_equal(rec.n_sets, 0);
	assert_int_equal(hx_summary(&fx->ctx, "cgroups_unreachable"), 1);
	/* A row of another namespace (a v1 key) is not ours. */
	assert_int_equal(run_cgroup(fx, &rec, "v1:memory:/x", NULL), 0);
	assert_int_equal(rec.n_sets, 0);
	assert_int_equal(hx_summary(&fx->ctx, "cgroups_unreachable"), 1);
	assert_int_equal(hx_summary(&fx->ctx, "read_errors"), 0);
	assert_int_equal(hx_summary(&fx->ctx, "unsupported"), 0);
	stop(fx);

	/* cgroup: false: nothing read. */
	{
		static const char *const no_cg[] = {"cgroup", "false", NULL};

		assert_int_equal(start(fx, no_cg), 0);
		assert_int_equal(run_cgroup(fx, &rec, "/", FIX_CGROUP), 0);
		assert_int_equal(run_cgroup(fx, &rec, "/gone.scope", NULL), 0);
		assert_int_equal(rec.n_sets, 0);
		assert_int_equal(hx_summary(&fx->ctx, "missing"), 0);
		assert_int_equal(hx_summary(&fx->ctx, "cgroups_unreachable"),
				 0);
		stop(fx);
	}
}

/* A field the core refuses is skipped; a refused setter is the plugin's
 * error while the other values still land. */
static void refused_fields(void **state)
{
	static const uint64_t cpu_some[] = {310, 220, 130, 4000001};
	struct hx_fx *fx = *state;
	struct hx_rec rec;

	hx_ctx_init(&fx->ctx, fx->p, NULL);
	fx->ctx.disabled_field[0] =
		hx_field_index(fx->p, "psi.cg.io.full.avg60");
	assert_int_equal(hx_fx_load(fx, API_SIZE), 0);
	assert_int_equal(run_cgroup(fx, &rec, "/system.slice/db.service",
				    FIX_CGROUP "/system.slice/db.service"),
			 0);
	assert_int_equal(rec.n_sets, 27);
	assert_int_equal(hx_cell(&rec, "psi.cg.io.full.avg60")->set, 0);
	assert_int_equal(hx_cell(&rec, "psi.cg.io.full.avg10")->u, 444);

	fx->ctx.failing_field = hx_field_index(fx->p, "psi.cg.cpu.some.avg10");
	assert_int_equal(run_cgroup(fx, &rec, "/system.slice/db.service",
				    FIX_CGROUP "/system.slice/db.service"),
			 -EINVAL);
	assert_int_equal(hx_cell(&rec, "psi.cg.cpu.some.avg10")->set, 0);
	assert_int_equal(hx_cell(&rec, "psi.cg.cpu.some.total")->u,
			 cpu_some[3]);
	assert_int_equal(hx_cell(&rec, "psi.cg.irq.full.total")->u, 1234);
	assert_int_equal(rec.bad_sets, 0);
	stop(fx);
}

/* ---- EOPNOTSUPP -----------------------------------------------------------
 */

/* Make every read(2) of this process fail with err. */
static int fail_reads(int err)
{
	struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
			 offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_read, 0, 1),
		BPF_STMT(BPF_RET | BPF_K,
			 SECCOMP_RET_ERRNO |
				 ((unsigned)err & SECCOMP_RET_DATA)),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = {.len = sizeof(f) / sizeof(f[0]), .filter = f};

	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 ||
	    prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) < 0)
		return -errno;
	return 0;
}

/* In the child: the checks, as an exit status (0 good, 77 no seccomp). */
static int eopnotsupp_child(struct hx_fx *fx)
{
	struct hx_rec host, cg;
	struct ctp_cgroup c = {.abi = CTP_ABI_MAJOR,
			       .size = sizeof(c),
			       .path = "/system.slice/db.service",
			       .v2_root_fd = -1};
	int bad = 0;

	if (start(fx, NULL) != 0)
		return 1;
	fx->ctx.eng.roots.proc_fd = open(FIX_PROC, O_PATH | O_DIRECTORY);
	c.dirfd = open(FIX_CGROUP "/system.slice/db.service",
		       O_PATH | O_DIRECTORY);
	if (fx->ctx.eng.roots.proc_fd < 0 || c.dirfd < 0)
		return 2;
	if (fail_reads(EOPNOTSUPP) < 0)
		return SKIP;
	hx_rec_init(&host, &fx->ctx, CTP_SCOPE_HOST);
	hx_rec_init(&cg, &fx->ctx, CTP_SCOPE_CGROUP);
	bad |= fx->p->host(fx->state, &host.core) != 0;
	bad |= (fx->p->cgroup(fx->state, &c, &cg.core) != 0) << 1;
	bad |= (fx->p->finish(fx->state, &host.core) != 0) << 2;
	bad |= (host.n_sets != 0 || cg.n_sets != 0) << 3;
	bad |= (hx_summary(&fx->ctx, "unsupported") != 8) << 4;
	bad |= (hx_summary(&fx->ctx, "missing") != 0 ||
		hx_summary(&fx->ctx, "read_errors") != 0 ||
		hx_summary(&fx->ctx, "parse_errors") != 0)
	       << 5;
	bad |= (fx->ctx.n_hint != 1 || !strstr(hx_hint(&fx->ctx), "psi=1"))
	       << 6;
	return bad ? 100 + bad : 0;
}

/*
 * psi_show() fails with EOPNOTSUPP while PSI is disabled (and irq.pressure
 * without irq time accounting). A child whose read(2) calls all fail that
 * way runs the host, cgroup and finish callbacks on the fixture: every
 * resource absent, counted as unsupported, no error, the hint.
 */
static void eopnotsupp(void **state)
{
	struct hx_fx *fx = *state;
	int status;
	pid_t pid;

	fflush(NULL);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0)
		_exit(eopnotsupp_child(fx));
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	if (WEXITSTATUS(status) == SKIP)
		skip();
	if (WEXITSTATUS(status) != 0)
		fail_msg("child check failed: status %d (bits %#x)",
			 WEXITSTATUS(status), WEXITSTATUS(status) - 100);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(descriptor),
		cmocka_unit_test(init_options),
		cmocka_unit_test(host_fixture),
		cmocka_unit_test(host_psi_off),
		cmocka_unit_test(cgroup_fixture),
		cmocka_unit_test(refused_fields),
		cmocka_unit_test(eopnotsupp),
	};

	return cmocka_run_group_tests(tests, setup, hx_fx_teardown);
}
