/* SPDX-License-Identifier: MIT */
/*
 * The one string hash of the core's open-addressing tables (the blob pool's
 * interned strings, trend's rows): FNV-1a, 32 bits, for short keys (names,
 * cgroup paths, group keys). Not for keys an attacker chooses to collide:
 * every table using it is bounded by what a snapshot holds.
 */
#ifndef CTP_CORE_HASH_H
#define CTP_CORE_HASH_H

#include <stddef.h>
#include <stdint.h>

static inline uint32_t ctp_hash_bytes(const void *data, size_t len)
{
	const unsigned char *p = data;
	uint32_t h = 2166136261u;
	for (size_t i = 0; i < len; i++) {
		h ^= p[i];
		h *= 16777619u;
	}
	return h;
}

#endif
