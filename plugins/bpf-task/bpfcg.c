/* The css_sets a pass noted, kept and turned into "cgroup-v1" source
 * values (bpfcg.h). Pure. */
#include "bpfcg.h"

#include <ctprof/source-cgroup-v1.h>

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

_Static_assert(CTP_BPFCG_MAX_PAIRS == CTP_SRC_CG1_MAX_PAIRS,
	       "a css_set's pairs fit the source's");

static int cmp_key(const void *a, const void *b)
{
	const struct ctp_bpfcg_entry *x = a, *y = b;

	return (x->key > y->key) - (x->key < y->key);
}

/* An entry of pass gen that holds what the program writes. */
static bool entry_ok(const struct ctp_bpfcg_entry *e, __u64 gen)
{
	__u32 v1 = 0;

	if (!e->key || e->set.gen != gen || e->set.n > CTP_BPFCG_MAX_LINKS)
		return false;
	for (__u32 i = 0; i < e->set.n; i++) {
		if (e->set.p[i].hier > INT32_MAX)
			return false;
		v1 += e->set.p[i].hier != 0;
		for (__u32 j = 0; j < i; j++)
			if (e->set.p[j].hier == e->set.p[i].hier)
				return false;
	}
	return v1 <= CTP_BPFCG_MAX_PAIRS;
}

size_t ctp_bpfcg_keep(struct ctp_bpfcg_entry *e, size_t n, __u64 gen)
{
	size_t k = 0;

	for (size_t i = 0; i < n; i++)
		if (entry_ok(&e[i], gen)) {
			if (k != i)
				e[k] = e[i];
			k++;
		}
	if (k > 1)
		qsort(e, k, sizeof(*e), cmp_key);
	return k;
}

const struct ctp_bpfcg_entry *ctp_bpfcg_find(const struct ctp_bpfcg_entry *e,
					     size_t n, __u64 key)
{
	const struct ctp_bpfcg_entry k = {.key = key};

	if (!key || !n)
		return NULL;
	return bsearch(&k, e, n, sizeof(*e), cmp_key);
}

void ctp_bpfcg_to_src(const struct ctp_bpfcg_set *s,
		      struct ctp_src_cgroup_v1 *out)
{
	memset(out, 0, sizeof(*out));
	out->abi = 1;
	out->size = sizeof(*out);
	unsigned k = 0;

	for (__u32 i = 0; i < s->n && i < CTP_BPFCG_MAX_LINKS; i++) {
		if (!s->p[i].hier || k == CTP_SRC_CG1_MAX_PAIRS)
			continue;
		out->v[CTP_SRC_CG1_HIER(k)] = s->p[i].hier;
		out->v[CTP_SRC_CG1_ID(k)] = s->p[i].id;
		out->valid[0] |= 3ull << CTP_SRC_CG1_HIER(k);
		k++;
	}
	out->v[CTP_SRC_CG1_N] = k;
	out->valid[0] |= 1ull << CTP_SRC_CG1_N;
}
