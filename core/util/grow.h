/* SPDX-License-Identifier: MIT */
/*
 * The one growth helper for arrays the core appends to (systemd's
 * GREEDY_REALLOC): capacity doubles from a first size, overflow checked.
 */
#ifndef CTP_CORE_GROW_H
#define CTP_CORE_GROW_H

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>

/*
 * Make *p, an array of *cap items of `elem` bytes, hold at least `need`
 * items: the capacity doubles from `first` until it does. Returns 0, or
 * -ENOMEM (allocation failed or the size overflows) with *p and *cap
 * untouched. Use CTP_GROW.
 */
static inline int ctp_grow(void **p, size_t *cap, size_t need, size_t elem,
			   size_t first)
{
	if (need <= *cap && *p)
		return 0;
	size_t n = *cap ? *cap : (first ? first : 1);
	while (n < need) {
		if (n > SIZE_MAX / 2)
			return -ENOMEM;
		n *= 2;
	}
	if (elem && n > SIZE_MAX / elem)
		return -ENOMEM;
	void *q = realloc(*p, n * elem);
	if (!q)
		return -ENOMEM;
	*p = q;
	*cap = n;
	return 0;
}

/* Grow array `ptr` (any pointer type) of capacity `cap` (a size_t lvalue)
 * to hold `need` items, doubling from `first`. */
#define CTP_GROW(ptr, cap, need, first)                                        \
	ctp_grow((void **)&(ptr), &(cap), (need), sizeof(*(ptr)), (first))

#endif
