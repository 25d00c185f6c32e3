/* SPDX-License-Identifier: MIT */
/*
 * The layout every value source shares (struct ctp_source_desc.n_values,
 * plugin.h): `uint32_t abi` (1), `uint32_t size` (the bytes the provider
 * built), `uint64_t valid[valid_words]` (bit i of valid[i / 64]: value i is
 * offered) and `uint64_t v[n_values]`. A value exists when `size` covers it
 * and its bit is set. source-task.h and source-process.h name the values of
 * the two sources the shipped plugins offer.
 */
#ifndef CTPROF_SOURCE_VALUES_H
#define CTPROF_SOURCE_VALUES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* Most valid words a layout may have (128 values with two). */
#define CTP_SRC_VALUES_MAX_WORDS 2

/*
 * Value `which` of a value source's bytes laid out with `valid_words`
 * presence words, or false when absent: short bytes, another layout, an
 * older provider or a value not offered. Pure.
 */
static inline bool ctp_src_values_get(const void *data, size_t len,
				      unsigned valid_words, unsigned which,
				      uint64_t *out)
{
	uint32_t hdr[2];
	uint64_t word;
	size_t head = 8 + 8 * (size_t)valid_words;
	size_t need = head + ((size_t)which + 1) * sizeof(uint64_t);

	if (!data || valid_words == 0 ||
	    valid_words > CTP_SRC_VALUES_MAX_WORDS || len < head ||
	    which >= 64 * valid_words)
		return false;
	memcpy(hdr, data, sizeof(hdr));
	if (hdr[0] != 1 || hdr[1] > len || hdr[1] < need)
		return false;
	memcpy(&word, (const char *)data + 8 + 8 * (which / 64), sizeof(word));
	if (!((word >> (which % 64)) & 1))
		return false;
	memcpy(out, (const char *)data + need - sizeof(uint64_t), sizeof(*out));
	return true;
}

#endif /* CTPROF_SOURCE_VALUES_H */
