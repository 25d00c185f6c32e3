/* SPDX-License-Identifier: MIT */
/*
 * A view file (views/NAME.yaml, docs/VIEWS.md; users write their own) on
 * arbitrary text, then what show does with a view it accepts: print it over
 * a small real snapshot (tests/fixtures/snapshots/sample-v1.ctprof) at 80
 * columns and unbounded, its own sort and another column's, so grouping
 * axes, columns, sums, shares and fitting meet whatever a file can say.
 */
#include <stdio.h>
#include <stdlib.h>

#include "fuzz.h"
#include "reader.h"
#include "view.h"
#include "viewshow.h"

#ifndef CTP_FUZZ_SNAPSHOT
#error "CTP_FUZZ_SNAPSHOT names the snapshot the views are shown over"
#endif

static const struct ctp_snap *snapshot(void)
{
	static struct ctp_snap *snap;
	char err[512];
	if (!snap && ctp_snap_open(CTP_FUZZ_SNAPSHOT, 1u << 26, &snap, err,
				   sizeof(err)) < 0) {
		fprintf(stderr, "view fuzz: %s\n", err);
		abort();
	}
	return snap;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct ctp_view *v;
	char err[1024];
	if (ctp_view_parse("fuzz.yaml", (const char *)data, size, &v, err,
			   sizeof(err)) < 0)
		return 0;
	FILE *out = fopen("/dev/null", "w");
	for (int k = 0; out && !v->full && k < 2; k++) {
		struct ctp_view_opts o = {
			.width = k ? 0 : 80,
			.top = k ? 0 : 5,
			.sort = k && v->n_cols > 1 ? v->cols[1].id : NULL,
			.asc = k ? 1 : -1,
		};
		ctp_view_show(out, snapshot(), v, &o, err, sizeof(err));
	}
	if (out)
		fclose(out);
	ctp_view_free(v);
	return 0;
}
