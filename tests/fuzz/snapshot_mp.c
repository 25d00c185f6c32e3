/* SPDX-License-Identifier: MIT */
/*
 * The snapshot reader on arbitrary MessagePack: the input is compressed
 * here (zstd, level 1, with the content checksum the reader requires), so
 * the fuzzer explores the decoder and the model checks rather than the
 * compression format.
 */
#include <stdlib.h>
#include <zstd.h>

#include "fuzz.h"
#include "fuzz_snap.h"
#include "reader.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	size_t cap = ZSTD_compressBound(size);
	void *z = malloc(cap ? cap : 1);
	struct ctp_snap *snap;
	char err[512];

	if (!z)
		return 0;
	static ZSTD_CCtx *cctx;

	if (!cctx) {
		cctx = ZSTD_createCCtx();
		if (!cctx) {
			free(z);
			return 0;
		}
		ZSTD_CCtx_setParameter(cctx, ZSTD_c_compressionLevel, 1);
		ZSTD_CCtx_setParameter(cctx, ZSTD_c_checksumFlag, 1);
	}
	size_t n = ZSTD_compress2(cctx, z, cap, data, size);
	if (!ZSTD_isError(n) &&
	    ctp_snap_open_buf("fuzz", z, n, 64u << 20, &snap, err,
			      sizeof(err)) == 0) {
		ctp_fuzz_exercise(snap);
		ctp_snap_free(snap);
	}
	free(z);
	return 0;
}
