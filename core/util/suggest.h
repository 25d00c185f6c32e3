/* SPDX-License-Identifier: MIT */
/*
 * "Did you mean": the closest known name to one a person typed (a command,
 * a plugin). Private to the core.
 */
#ifndef CTP_CORE_SUGGEST_H
#define CTP_CORE_SUGGEST_H

#include <stdbool.h>
#include <stddef.h>

/* Levenshtein distance of two names of at most 64 bytes (UINT_MAX when
 * either is longer). Pure. */
unsigned ctp_edit_distance(const char *a, const char *b);

/* Is `candidate` close enough to `typed` to be what was meant: at most a
 * third of typed's length in edits, and at least 2 allowed. */
bool ctp_is_typo_of(const char *typed, const char *candidate);

/* Into out, the candidate (NULL-terminated list) closest to `typed` that
 * ctp_is_typo_of accepts, ties to the first in byte order; "" when none. */
void ctp_closest_name(const char *typed, const char *const *candidates,
		      char *out, size_t outlen);

/* The same over one candidate at a time: keeps in out (start it "") the
 * best so far, its distance in *best (start it at UINT_MAX). */
void ctp_closest_step(const char *typed, const char *candidate, unsigned *best,
		      char *out, size_t outlen);

#endif
