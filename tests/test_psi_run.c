/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "e2e_util.h"
#include "test_psi_run.h"

static char tmp[PATH_MAX];
static unsigned seq;
static struct ctp_snap *snaps[16];
static size_t n_snaps;

int run_setup(const char *tag)
{
	return e2e_tmpdir(tag, tmp, sizeof(tmp));
}

int run_teardown(void)
{
	return e2e_rm_rf(tmp);
}

const char *run_dir(void)
{
	return tmp;
}

int run_free_snaps(void **state)
{
	(void)state;
	for (size_t i = 0; i < n_snaps; i++)
		ctp_snap_free(snaps[i]);
	n_snaps = 0;
	return 0;
}

/* A YAML double-quoted scalar, so any path survives. */
static void put_quoted(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++) {
		if (*s == '"' || *s == '\\')
			fputc('\\', f);
		fputc(*s, f);
	}
	fputc('"', f);
}

static int write_config(const char *path, const struct run_cfg *c)
{
	FILE *f = fopen(path, "we");
	int bad;

	if (!f)
		return -errno;
	fputs("# written by tests/test_psi_run.c\nplugin_dirs:\n  - ", f);
	put_quoted(f, CTP_TEST_PLUGIN_DIR);
	fprintf(f, "\nworkers: %u\n", c->workers ? c->workers : 1);
	if (c->proc || c->sys || c->cgroup) {
		fputs("roots:", f);
		if (c->proc) {
			fputs("\n  proc: ", f);
			put_quoted(f, c->proc);
		}
		if (c->sys) {
			fputs("\n  sys: ", f);
			put_quoted(f, c->sys);
		}
		if (c->cgroup) {
			fputs("\n  cgroup: ", f);
			put_quoted(f, c->cgroup);
		}
		fputc('\n', f);
	}
	fprintf(f, "plugins:\n%s\n", c->plugins);
	bad = ferror(f);
	if (fclose(f) != 0 || bad)
		return -EIO;
	return 0;
}

struct ctp_snap *run_capture(const struct run_cfg *c)
{
	char cfg[PATH_MAX], out[PATH_MAX], log[PATH_MAX];
	unsigned n = ++seq;
	struct ctp_snap *s = NULL;

	assert_int_equal(E2E_PATHF(cfg, "%s/cfg-%u.yaml", tmp, n), 0);
	assert_int_equal(E2E_PATHF(out, "%s/snap-%u.ctprof.zst", tmp, n), 0);
	assert_int_equal(E2E_PATHF(log, "%s/log-%u.txt", tmp, n), 0);
	assert_int_equal(write_config(cfg, c), 0);
	s = e2e_capture(cfg, out, log);
	assert_true(n_snaps < sizeof(snaps) / sizeof(snaps[0]));
	snaps[n_snaps++] = s;
	return s;
}

uint64_t run_summary(const struct ctp_snap_plugin *p, const char *name)
{
	for (size_t i = 0; i < p->n_summary; i++)
		if (!strcmp(p->summary_name[i], name))
			return p->summary[i];
	fail_msg("plugin %s: no summary counter %s", p->name, name);
	return 0;
}

uint64_t run_tally(const struct ctp_snap *s, const char *file)
{
	const struct ctp_snap_readfail *rf = ctp_snap_readfail(s);

	for (size_t i = 0; i < rf->n_files; i++)
		if (!strcmp(rf->file[i], file))
			return rf->failures[i];
	return 0;
}

long run_cgroup_row(const struct ctp_snap *s, const char *path)
{
	const struct ctp_snap_table *t = ctp_snap_table(s, CTP_SCOPE_CGROUP);

	for (size_t i = 0; t && i < t->rows; i++)
		if (e2e_bytes_eq(t->path[i], path))
			return (long)i;
	return -1;
}
