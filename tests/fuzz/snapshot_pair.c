/* SPDX-License-Identifier: MIT */
/*
 * compare on two decoded snapshots: the input is a 4-byte length, that
 * many bytes of MessagePack for BASE, the rest for CAND (each compressed
 * here with the checksum the reader requires). When both decode, they are
 * compared in every mode and format, grouped by pcomm and by cgroup,
 * and by cgroup,pcomm pairing renamed cgroups at thresholds 0, written to
 * /dev/null at 80 columns.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zstd.h>

#include "compare.h"
#include "fuzz.h"
#include "reader.h"

static struct ctp_snap *open_mp(const uint8_t *data, size_t size)
{
	static ZSTD_CCtx *cctx;
	size_t cap = ZSTD_compressBound(size);
	void *z = malloc(cap ? cap : 1);
	struct ctp_snap *snap = NULL;
	char err[512];

	if (!cctx) {
		cctx = ZSTD_createCCtx();
		if (cctx) {
			ZSTD_CCtx_setParameter(cctx, ZSTD_c_compressionLevel,
					       1);
			ZSTD_CCtx_setParameter(cctx, ZSTD_c_checksumFlag, 1);
		}
	}
	if (z && cctx) {
		size_t n = ZSTD_compress2(cctx, z, cap, data, size);
		if (!ZSTD_isError(n) &&
		    ctp_snap_open_buf("fuzz", z, n, 64u << 20, &snap, err,
				      sizeof(err)) < 0)
			snap = NULL;
	}
	free(z);
	return snap;
}

/* Grouped by cgroup and pcomm with renaming at thresholds 0, so that any
 * two one-sided cgroups pair: every path of core/analysis/rename.c. */
static void compare_renaming(struct ctp_snap *const snap[2], FILE *out)
{
	for (int f = CTP_COMPARE_TABLE; f <= CTP_COMPARE_CSV; f++) {
		struct ctp_compare_opts o = {
			.sections = CTP_COMPARE_ALL,
			.fmt = (enum ctp_compare_fmt)f,
			.paths = {"base", "cand"},
			.rename = {.jaccard_set = true, .shared_set = true},
		};
		char axes[] = "cgroup,pcomm", err[256];
		o.r.group_by = "cgroup,pcomm";
		o.r.cap = 64u << 20;
		if (ctp_group_spec_parse(axes, &o.r.spec, err, sizeof(err)) ==
		    0)
			ctp_compare_snaps(&o, snap, out, 80, false);
	}
}

static void compare_all(struct ctp_snap *const snap[2], FILE *out)
{
	static const char *const by[] = {"pcomm", "cgroup"};

	compare_renaming(snap, out);
	for (size_t g = 0; g < 2; g++)
		for (int m = CTP_COMPARE_FULL; m <= CTP_COMPARE_ARROW; m++)
			for (int f = CTP_COMPARE_TABLE; f <= CTP_COMPARE_CSV;
			     f++) {
				struct ctp_compare_opts o = {
					.sections = CTP_COMPARE_ALL,
					.mode = (enum ctp_compare_mode)m,
					.fmt = (enum ctp_compare_fmt)f,
					.paths = {"base", "cand"},
				};
				char axes[16], err[256];
				snprintf(axes, sizeof(axes), "%s", by[g]);
				o.r.group_by = by[g];
				o.r.cap = 64u << 20;
				if (ctp_group_spec_parse(axes, &o.r.spec, err,
							 sizeof(err)) == 0)
					ctp_compare_snaps(&o, snap, out, 80,
							  false);
			}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct ctp_snap *snap[2] = {NULL, NULL};
	uint32_t len;
	FILE *out;

	if (size < 4)
		return 0;
	memcpy(&len, data, 4);
	data += 4;
	size -= 4;
	if (len > size)
		return 0;
	snap[0] = open_mp(data, len);
	snap[1] = snap[0] ? open_mp(data + len, size - len) : NULL;
	out = snap[1] ? fopen("/dev/null", "w") : NULL;
	if (out) {
		compare_all(snap, out);
		fclose(out);
	}
	ctp_snap_free(snap[0]);
	ctp_snap_free(snap[1]);
	return 0;
}
