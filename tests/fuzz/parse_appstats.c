/* SPDX-License-Identifier: MIT */
/*
 * appstats' registry checks (aps_parse.c) on a hostile image: the input is
 * the first copy of a registry and the values' copy; the last is the same
 * bytes, then the same bytes with every slot's seq moved, as if the slots
 * changed hands between the copies. Whatever the header claims, nothing is read
 * past the input, and what the checks accept holds.
 */
#include <stdlib.h>
#include <string.h>

#include "aps.h"
#include "fuzz.h"

static void on_slot(void *arg, int32_t tid, const uint64_t *values)
{
	size_t *n = arg;

	(void)values;
	if (tid <= 0)
		abort();
	++*n;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct ctp_aps_field f[CTP_APS_MAX_FIELDS];
	struct ctp_aps_slot_stats st;
	struct ctp_aps_hdr h;
	const char *why;
	uint8_t *b;
	size_t n = 0;
	uint32_t bad;

	/* The ELF symbol's size: the input's, or (odd last byte) a small
	 * one, 0 (none) included. (Not the first byte: it is the magic's.) */
	uint64_t bound =
		size && (data[size - 1] & 1) ? data[size - 1] >> 1 : size;
	if (ctp_aps_header(data, size, bound, &h, &why) != CTP_APS_OK)
		return 0;
	if (bound && h.size > bound)
		abort();
	/* A registry larger than the input: the reader would copy that many
	 * bytes; here there is nothing more to check. */
	if (h.size > size)
		return 0;
	if (h.n_fields > h.max_fields ||
	    h.fields_off + (uint64_t)h.max_fields * h.field_size > h.size ||
	    h.slots_off + (uint64_t)h.max_slots * h.slot_size > h.size)
		abort();
	if (ctp_aps_fields(data, size, &h, f, &bad, &why) != CTP_APS_OK)
		return 0;
	for (uint32_t i = 0; i < h.n_fields; i++)
		if (!f[i].name[0] ||
		    strnlen(f[i].name, CTP_APS_NAME_MAX) == CTP_APS_NAME_MAX)
			abort();
	/* Copies of exactly h.size bytes: a read past them is ASan's. */
	b = malloc(h.size);
	if (!b)
		return 0;
	memcpy(b, data, h.size);
	if (!ctp_aps_same_shape(data, b, h.size, &h))
		abort();
	if (ctp_aps_slots(data, data, b, h.size, &h, on_slot, &n, &st) != n ||
	    st.kept != n)
		abort();
	for (uint32_t j = 0; j < h.max_slots; j++) {
		uint8_t *seq = b + h.slots_off + (size_t)j * h.slot_size + 4;
		seq[0] ^= 2;
	}
	n = 0;
	if (ctp_aps_slots(data, b, b, h.size, &h, on_slot, &n, &st) != 0 || n)
		abort();
	free(b);
	return 0;
}
