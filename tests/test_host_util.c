/* SPDX-License-Identifier: MIT */
/* Helpers for the host-context end-to-end tests; see test_host_util.h. */
#include "test_host_util.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "e2e_util.h"

#define MAX_SNAP (1ull << 30)

static int write_config(const struct host_run *r, const char *proc,
			const char *sys)
{
	FILE *f = fopen(r->cfg, "we");
	int bad;

	if (!f)
		return -errno;
	/* Paths come from the build and mkdtemp: no quotes or backslashes. */
	fprintf(f, "plugin_dirs: [\"%s\"]\noutput: \"%s\"\n",
		CTP_TEST_PLUGIN_DIR, r->out);
	if (proc || sys) {
		fputs("roots:\n", f);
		if (proc)
			fprintf(f, "  proc: \"%s\"\n", proc);
		if (sys)
			fprintf(f, "  sys: \"%s\"\n", sys);
	}
	fputs("plugins:\n  host-context:\n    enabled: true\n"
	      "    required: true\n",
	      f);
	bad = ferror(f);
	if (fclose(f) != 0 || bad)
		return -EIO;
	return 0;
}

int host_capture(const char *proc, const char *sys, struct host_run *r)
{
	static const char *args[] = {"--config", NULL, "-q", NULL};
	char err[512];
	int rc;

	memset(r, 0, sizeof(*r));
	rc = e2e_tmpdir("host", r->dir, sizeof(r->dir));
	if (rc < 0)
		return rc;
	snprintf(r->cfg, sizeof(r->cfg), "%s/cfg.yaml", r->dir);
	snprintf(r->out, sizeof(r->out), "%s/snap.ctprof", r->dir);
	snprintf(r->log, sizeof(r->log), "%s/log.txt", r->dir);
	rc = write_config(r, proc, sys);
	if (rc == 0) {
		args[1] = r->cfg;
		rc = e2e_run(args, NULL, r->log);
		if (rc != 0)
			e2e_show_file("ctprof-core stderr", r->log);
	}
	if (rc == 0) {
		rc = ctp_snap_open(r->out, MAX_SNAP, &r->snap, err,
				   sizeof(err));
		if (rc < 0)
			fprintf(stderr, "cannot read the snapshot: %s\n", err);
	}
	/* Nothing left behind when the caller's check fails. */
	if (rc != 0)
		host_run_done(r);
	return rc;
}

void host_run_done(struct host_run *r)
{
	ctp_snap_free(r->snap);
	r->snap = NULL;
	if (r->dir[0])
		e2e_rm_rf(r->dir);
	r->dir[0] = '\0';
}

struct ctp_value host_value(const struct ctp_snap *s, const char *name)
{
	const struct ctp_snap_field *f = ctp_snap_field_find(s, name);
	struct ctp_value none = {.type = CTP_VALUE_ABSENT};

	if (!f || f->scope != CTP_SCOPE_HOST)
		return none;
	return ctp_snap_get(s, f, 0);
}

bool host_str_is(const struct ctp_snap *s, const char *name, const char *want)
{
	struct ctp_value v = host_value(s, name);

	if (v.type == CTP_TYPE_STRING && e2e_bytes_eq(v.str, want))
		return true;
	if (v.type == CTP_TYPE_STRING)
		fprintf(stderr, "%s = \"%.*s\", expected \"%s\"\n", name,
			(int)v.str.len, v.str.ptr, want);
	else
		fprintf(stderr, "%s: type %u, expected the string \"%s\"\n",
			name, v.type, want);
	return false;
}

bool host_u64_is(const struct ctp_snap *s, const char *name, uint64_t want)
{
	struct ctp_value v = host_value(s, name);

	if (v.type == CTP_TYPE_U64 && v.u64 == want)
		return true;
	fprintf(stderr, "%s: type %u value %" PRIu64 ", expected %" PRIu64 "\n",
		name, v.type, v.type == CTP_TYPE_U64 ? v.u64 : 0, want);
	return false;
}

bool host_i64_is(const struct ctp_snap *s, const char *name, int64_t want)
{
	struct ctp_value v = host_value(s, name);

	if (v.type == CTP_TYPE_I64 && v.i64 == want)
		return true;
	fprintf(stderr, "%s: type %u value %" PRId64 ", expected %" PRId64 "\n",
		name, v.type, v.type == CTP_TYPE_I64 ? v.i64 : 0, want);
	return false;
}

uint64_t host_summary(const struct ctp_snap *s, const char *name)
{
	const struct ctp_snap_plugin *p = ctp_snap_plugins(s);

	for (size_t i = 0; i < ctp_snap_n_plugins(s); i++) {
		if (strcmp(p[i].name, "host-context"))
			continue;
		for (size_t k = 0; k < p[i].n_summary; k++)
			if (!strcmp(p[i].summary_name[k], name))
				return p[i].summary[k];
	}
	return UINT64_MAX;
}
