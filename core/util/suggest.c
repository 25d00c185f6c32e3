/* SPDX-License-Identifier: MIT */
#include "suggest.h"

#include <limits.h>
#include <stdio.h>
#include <string.h>

#define NAME_MAX_LEN 64

unsigned ctp_edit_distance(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b);
	unsigned row[NAME_MAX_LEN + 1];
	if (la > NAME_MAX_LEN || lb > NAME_MAX_LEN)
		return UINT_MAX;
	for (size_t j = 0; j <= lb; j++)
		row[j] = (unsigned)j;
	for (size_t i = 1; i <= la; i++) {
		unsigned diag = row[0];
		row[0] = (unsigned)i;
		for (size_t j = 1; j <= lb; j++) {
			unsigned up = row[j];
			unsigned best = diag + (a[i - 1] != b[j - 1]);
			if (up + 1 < best)
				best = up + 1;
			if (row[j - 1] + 1 < best)
				best = row[j - 1] + 1;
			row[j] = best;
			diag = up;
		}
	}
	return row[lb];
}

static unsigned typo_limit(const char *typed)
{
	size_t third = strlen(typed) / 3;
	return third > 2 ? (unsigned)third : 2;
}

bool ctp_is_typo_of(const char *typed, const char *candidate)
{
	return ctp_edit_distance(typed, candidate) <= typo_limit(typed);
}

void ctp_closest_step(const char *typed, const char *candidate, unsigned *best,
		      char *out, size_t outlen)
{
	unsigned d = ctp_edit_distance(typed, candidate);
	if (d > typo_limit(typed))
		return;
	if (d < *best || (d == *best && strcmp(candidate, out) < 0)) {
		*best = d;
		snprintf(out, outlen, "%s", candidate);
	}
}

void ctp_closest_name(const char *typed, const char *const *candidates,
		      char *out, size_t outlen)
{
	unsigned best = UINT_MAX;
	out[0] = '\0';
	for (size_t i = 0; candidates[i]; i++)
		ctp_closest_step(typed, candidates[i], &best, out, outlen);
}
