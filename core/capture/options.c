/* SPDX-License-Identifier: MIT */
/* See options.h. */
#include "options.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "suggest.h"

/* The descriptor members up to and including the options table's. */
#define OPTIONS_END                                                            \
	(offsetof(struct ctp_plugin, option_desc_size) + sizeof(uint32_t))

/* The first ABI 1 option descriptor, before `check` was appended; a
 * member past a table's option_desc_size is absent. */
#define DESC_V1 offsetof(struct ctp_option_desc, check)
#define HAS_CHECK(d)                                                           \
	((d)->option_desc_size >=                                              \
	 DESC_V1 + sizeof(((struct ctp_option_desc *)0)->check))

const struct ctp_option_desc *ctp_options_table(const struct ctp_plugin *d,
						bool *declared, size_t *n)
{
	static const struct ctp_option_desc none;
	*n = 0;
	*declared = (d->flags & CTP_PLUGIN_OPTIONS) && d->size >= OPTIONS_END;
	if (!*declared)
		return NULL;
	if (!d->options || !d->n_options || d->option_desc_size < DESC_V1)
		return &none;
	*n = d->n_options;
	return d->options;
}

const char *ctp_option_type_name(unsigned type)
{
	static const char *const names[] = {"?", "string", "u64", "bool",
					    "bytes"};
	return type < sizeof(names) / sizeof(names[0]) ? names[type] : "?";
}

static const struct ctp_option_desc *opt_at(const struct ctp_option_desc *t,
					    size_t size, size_t i)
{
	return (const struct ctp_option_desc *)((const char *)t + i * size);
}

/* The value of an option of type `type` as ctp_api reads it; 0 or -EINVAL
 * with why. */
static int check_value(const struct ctp_option_desc *o, const char *v,
		       char *why, size_t whylen)
{
	static const char *const bools[] = {"true", "false", "yes", "no",
					    "on",   "off",   "1",   "0"};
	uint64_t x = 0;
	char *end;

	switch (o->type) {
	case CTP_OPT_STRING:
		for (size_t i = 0; o->choices && o->choices[i]; i++)
			if (strcmp(v, o->choices[i]) == 0)
				return 0;
		if (!o->choices)
			return 0;
		snprintf(why, whylen, "'%s' is not one of:", v);
		for (size_t i = 0; o->choices[i]; i++)
			snprintf(why + strlen(why), whylen - strlen(why),
				 "%s %s", i ? "," : "", o->choices[i]);
		return -EINVAL;
	case CTP_OPT_BOOL:
		for (size_t i = 0; i < sizeof(bools) / sizeof(bools[0]); i++)
			if (strcmp(v, bools[i]) == 0)
				return 0;
		snprintf(why, whylen, "'%s' is not a boolean (true or false)",
			 v);
		return -EINVAL;
	case CTP_OPT_U64:
		errno = 0;
		x = *v >= '0' && *v <= '9' ? strtoull(v, &end, 0) : 0;
		if (*v < '0' || *v > '9' || errno || *end) {
			snprintf(why, whylen, "'%s' is not a whole number", v);
			return -EINVAL;
		}
		break;
	case CTP_OPT_BYTES:
		if (ctp_config_parse_bytes(v, &x) < 0) {
			snprintf(why, whylen,
				 "'%s' is not a byte count (an integer, "
				 "optionally followed by K, M, G, KiB, MiB "
				 "or GiB)",
				 v);
			return -EINVAL;
		}
		break;
	default:
		snprintf(why, whylen, "the plugin declares an unknown type %u",
			 (unsigned)o->type);
		return -EINVAL;
	}
	if (x < o->min || (o->max && x > o->max)) {
		snprintf(why, whylen, "%s is out of range (%llu..%llu)", v,
			 (unsigned long long)o->min,
			 (unsigned long long)o->max);
		return -EINVAL;
	}
	return 0;
}

int ctp_options_check(const struct ctp_plugin *d,
		      const struct ctp_plugin_cfg *pc,
		      const struct ctp_kv **bad, char *why, size_t whylen)
{
	bool declared;
	size_t n;
	const struct ctp_option_desc *t = ctp_options_table(d, &declared, &n);
	if (!declared || !pc)
		return 0;
	for (size_t k = 0; k < pc->n_opts; k++) {
		const struct ctp_kv *kv = &pc->opts[k];
		const struct ctp_option_desc *o = NULL;
		unsigned best = (unsigned)-1;
		char near[65] = "";
		for (size_t i = 0; i < n && !o; i++) {
			const struct ctp_option_desc *c =
				opt_at(t, d->option_desc_size, i);
			if (c->name && strcmp(c->name, kv->key) == 0)
				o = c;
			else if (c->name)
				ctp_closest_step(kv->key, c->name, &best, near,
						 sizeof(near));
		}
		*bad = kv;
		if (!o) {
			if (!n)
				snprintf(why, whylen,
					 "unknown option '%s' (%s has no "
					 "options)",
					 kv->key, d->name);
			else if (*near)
				snprintf(why, whylen,
					 "unknown option '%s'; did you mean "
					 "'%s'?",
					 kv->key, near);
			else
				snprintf(why, whylen,
					 "unknown option '%s' (`ctprof-core "
					 "plugins` lists %s's)",
					 kv->key, d->name);
			return -EINVAL;
		}
		char vwhy[256];
		if (check_value(o, kv->value, vwhy, sizeof(vwhy)) < 0) {
			snprintf(why, whylen, "option '%s': %s", kv->key, vwhy);
			return -EINVAL;
		}
	}
	*bad = NULL;
	return 0;
}

int ctp_options_check_values(const struct ctp_plugin *d,
			     const struct ctp_plugin_cfg *pc,
			     const struct ctp_kv **bad, char *why,
			     size_t whylen)
{
	bool declared;
	size_t n;
	const struct ctp_option_desc *t = ctp_options_table(d, &declared, &n);
	*bad = NULL;
	if (!declared || !pc || !HAS_CHECK(d))
		return 0;
	for (size_t k = 0; k < pc->n_opts; k++) {
		const struct ctp_kv *kv = &pc->opts[k];
		for (size_t i = 0; i < n; i++) {
			const struct ctp_option_desc *o =
				opt_at(t, d->option_desc_size, i);
			char vwhy[1024] = "";
			if (!o->name || strcmp(o->name, kv->key) || !o->check)
				continue;
			int r = o->check(kv->value, vwhy, sizeof(vwhy));
			if (r >= 0)
				break;
			*bad = kv;
			snprintf(why, whylen, "option '%s': %s", kv->key,
				 *vwhy ? vwhy : strerror(-r));
			return r;
		}
	}
	return 0;
}

int ctp_opt_parse_u64(const char *s, uint64_t *out)
{
	if (*s < '0' || *s > '9')
		return -EINVAL;
	char *end;
	errno = 0;
	unsigned long long v = strtoull(s, &end, 0);
	if (errno || *end)
		return -EINVAL;
	*out = v;
	return 0;
}

int ctp_opt_parse_i64(const char *s, int64_t *out)
{
	char *end;
	errno = 0;
	long long v = strtoll(s, &end, 0);
	if (errno || *end || end == s)
		return -EINVAL;
	*out = v;
	return 0;
}

int ctp_opt_parse_bool(const char *s, int *out)
{
	static const char *const yes[] = {"true", "yes", "on", "1"};
	static const char *const no[] = {"false", "no", "off", "0"};
	for (size_t i = 0; i < 4; i++) {
		if (strcmp(s, yes[i]) == 0) {
			*out = 1;
			return 0;
		}
		if (strcmp(s, no[i]) == 0) {
			*out = 0;
			return 0;
		}
	}
	return -EINVAL;
}
