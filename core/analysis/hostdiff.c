/* SPDX-License-Identifier: MIT */
/* Host diff between two snapshots; see hostdiff.h. */
#include "hostdiff.h"

#include <errno.h>
#include <fnmatch.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "term.h"

/* An output cursor that counts what it could not store. */
struct out {
	char *buf;
	size_t len, used; /* used may pass len: the length needed */
};

static void put(struct out *o, const char *s, size_t n)
{
	if (o->used < o->len) {
		size_t room = o->len - 1 - o->used;

		memcpy(o->buf + o->used, s, n < room ? n : room);
	}
	o->used += n;
}

static void putf(struct out *o, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static void putf(struct out *o, const char *fmt, ...)
{
	char tmp[48];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(tmp, sizeof(tmp), fmt, ap);
	va_end(ap);
	if (n > 0)
		put(o, tmp, (size_t)n < sizeof(tmp) ? (size_t)n : sizeof(tmp));
}

/* By the terminal's rule (term.h), '\\' doubled. */
static void put_escaped(struct out *o, const char *s, size_t n)
{
	const unsigned char *p = (const unsigned char *)s;

	for (size_t i = 0; i < n;) {
		char t[CTP_TERM_CHAR_MAX];
		size_t tl;

		if (p[i] == '\\') {
			put(o, "\\\\", 2);
			i++;
			continue;
		}
		i += ctp_term_char(p + i, n - i, t, &tl);
		put(o, t, tl);
	}
}

size_t ctp_hostdiff_render(const struct ctp_value *v, char *buf, size_t len)
{
	struct out o = {.buf = buf, .len = len};

	switch (v->type) {
	case CTP_TYPE_U64:
		putf(&o, "%" PRIu64, v->u64);
		break;
	case CTP_TYPE_I64:
		putf(&o, "%" PRId64, v->i64);
		break;
	case CTP_TYPE_BOOL:
		put(&o, v->b ? "true" : "false", v->b ? 4 : 5);
		break;
	case CTP_TYPE_CHAR:
		put_escaped(&o, (const char *)&v->c, 1);
		break;
	case CTP_TYPE_STRING:
		put_escaped(&o, v->str.ptr, v->str.len);
		break;
	case CTP_TYPE_CPUSET:
		for (size_t i = 0; i < v->cpuset.n; i++) {
			uint32_t lo = v->cpuset.r[2 * i];
			uint32_t hi = v->cpuset.r[2 * i + 1];

			if (lo == hi)
				putf(&o, "%s%" PRIu32, i ? "," : "", lo);
			else
				putf(&o, "%s%" PRIu32 "-%" PRIu32, i ? "," : "",
				     lo, hi);
		}
		break;
	default:
		put(&o, CTP_HOSTDIFF_UNKNOWN, sizeof(CTP_HOSTDIFF_UNKNOWN) - 1);
	}
	if (len)
		buf[o.used < len ? o.used : len - 1] = '\0';
	return o.used;
}

/* The rendered value of host field `name` in snap, malloc'ed. */
static char *render_key(const struct ctp_snap *snap, const char *name,
			bool *absent)
{
	const struct ctp_snap_field *f = ctp_snap_field_find(snap, name);
	struct ctp_value v = {.type = CTP_VALUE_ABSENT};
	char small[256], *s;
	size_t n;

	if (f && f->scope == CTP_SCOPE_HOST)
		v = ctp_snap_get(snap, f, 0);
	*absent = v.type == CTP_VALUE_ABSENT;
	n = ctp_hostdiff_render(&v, small, sizeof(small));
	s = malloc(n + 1);
	if (!s)
		return NULL;
	if (n < sizeof(small))
		memcpy(s, small, n + 1);
	else
		ctp_hostdiff_render(&v, s, n + 1);
	return s;
}

static bool matches(const char *name, const char *const *globs, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (fnmatch(globs[i], name, 0) == 0)
			return true;
	return false;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

void ctp_hostdiff_free(struct ctp_hostdiff *d)
{
	if (!d)
		return;
	for (size_t i = 0; i < d->n; i++) {
		free((char *)d->lines[i].key);
		free((char *)d->lines[i].before);
		free((char *)d->lines[i].after);
	}
	free(d->lines);
	free(d);
}

int ctp_hostdiff_new(const struct ctp_snap *before,
		     const struct ctp_snap *after,
		     const struct ctp_hostdiff_opts *opts,
		     struct ctp_hostdiff **ret)
{
	static const struct ctp_hostdiff_opts none;
	const struct ctp_snap *side[2] = {before, after};
	const char **keys;
	struct ctp_hostdiff *d;
	size_t nk = 0, max;

	if (!opts)
		opts = &none;
	max = ctp_snap_n_fields(before) + ctp_snap_n_fields(after);
	keys = malloc((max ? max : 1) * sizeof(*keys));
	d = calloc(1, sizeof(*d));
	if (d)
		d->lines = calloc(max ? max : 1, sizeof(*d->lines));
	if (!keys || !d || !d->lines) {
		free(keys);
		ctp_hostdiff_free(d);
		return -ENOMEM;
	}
	for (int s = 0; s < 2; s++) {
		const struct ctp_snap_field *fs = ctp_snap_fields(side[s]);

		for (size_t i = 0; i < ctp_snap_n_fields(side[s]); i++) {
			if (fs[i].scope != CTP_SCOPE_HOST)
				continue;
			if (opts->n_include &&
			    !matches(fs[i].name, opts->include,
				     opts->n_include))
				continue;
			if (matches(fs[i].name, opts->exclude, opts->n_exclude))
				continue;
			if (opts->exclude_section &&
			    strcmp(fs[i].section, opts->exclude_section) == 0)
				continue;
			keys[nk++] = fs[i].name;
		}
	}
	if (nk)
		qsort(keys, nk, sizeof(*keys), cmp_str);
	for (size_t i = 0; i < nk; i++) {
		struct ctp_hostdiff_line *l = &d->lines[d->n];

		if (i && strcmp(keys[i], keys[i - 1]) == 0)
			continue;
		l->before = render_key(before, keys[i], &l->before_absent);
		l->after = render_key(after, keys[i], &l->after_absent);
		l->key = strdup(keys[i]);
		d->n++;
		if (!l->before || !l->after || !l->key) {
			free(keys);
			ctp_hostdiff_free(d);
			return -ENOMEM;
		}
		l->differs = l->before_absent != l->after_absent ||
			     strcmp(l->before, l->after) != 0;
		if (!l->differs && !opts->all) {
			d->n--;
			free((char *)l->key);
			free((char *)l->before);
			free((char *)l->after);
			memset(l, 0, sizeof(*l));
		}
	}
	free(keys);
	*ret = d;
	return 0;
}
