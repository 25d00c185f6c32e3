/* SPDX-License-Identifier: MIT */
/*
 * The `record:` settings (interval, retention, directory) at the top level
 * of the configuration and in host rules (config.h, docs/CONFIG.md).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "recordcfg.h"
#include "yamltree.h"

int ctp_config_parse_duration(const char *s, uint64_t *ns)
{
	static const struct {
		const char *sfx;
		uint64_t mul;
	} units[] = {{"ns", 1},
		     {"us", 1000},
		     {"ms", 1000000},
		     {"s", 1000000000ull},
		     {"m", 60000000000ull},
		     {"h", 3600000000000ull},
		     {"d", 86400000000000ull},
		     {"", 1000000000ull}};
	uint64_t x;
	int k = ctp_y_scan_u64(s, &x);
	if (k < 0)
		return -ERANGE;
	if (k == 0)
		return -EINVAL;
	for (size_t i = 0; i < sizeof(units) / sizeof(*units); i++) {
		if (strcmp(s + k, units[i].sfx) != 0)
			continue;
		if (x > UINT64_MAX / units[i].mul)
			return -ERANGE;
		if (x == 0)
			return -EDOM;
		*ns = x * units[i].mul;
		return 0;
	}
	return -EINVAL;
}

int ctp_y_duration(struct ctp_yctx *c, const char *path,
		   const struct ctp_ynode *v, uint64_t min_ns, uint64_t max_ns,
		   const char *range, uint64_t *out)
{
	struct ctp_yclip b;
	uint64_t ns = 0;
	int r = v->type == CTP_Y_SCALAR ? ctp_config_parse_duration(v->str, &ns)
					: -EINVAL;
	if (r == 0 && ns >= min_ns && ns <= max_ns) {
		*out = ns;
		return 0;
	}
	return ctp_y_fail(c, v,
			  "'%s' must be a duration from %s (a number with ms, "
			  "s, m, h or d; plain seconds), got %s",
			  path, range, ctp_y_got(&b, v));
}

static int conv_duration(struct ctp_yctx *c, const char *path,
			 const struct ctp_ynode *v, uint64_t *out)
{
	return ctp_y_duration(c, path, v, CTP_RECORD_MIN_INTERVAL_NS,
			      CTP_RECORD_MAX_INTERVAL_NS, "100ms to 1d", out);
}

int ctp_record_cfg_conv(struct ctp_yctx *c, const char *path,
			const struct ctp_ynode *v, struct ctp_record_cfg *rc)
{
	static const char *const keys[] = {"interval", "keep", "max_bytes",
					   "dir", NULL};
	char sub[128], where[140];
	struct ctp_yclip b;
	int r = 0;

	r = ctp_y_collection(c, v, CTP_Y_MAP, path,
			     " (interval, keep, max_bytes, dir)");
	if (r != 0)
		return r < 0 ? r : 0;
	ctp_y_path(where, sizeof(where), "'%s'", path);
	for (size_t i = 0; i < v->n && r >= 0; i += 2) {
		const struct ctp_ynode *key = v->kids[i], *val = v->kids[i + 1];
		int k = ctp_y_key_index(c, key, keys, where);
		if (k < 0)
			return k;
		ctp_y_path(sub, sizeof(sub), "%s.%s", path, keys[k]);
		switch (k) {
		case 0:
			r = conv_duration(c, sub, val, &rc->interval_ns);
			break;
		case 1:
			r = ctp_y_uint(c, sub, val, 1, UINT32_MAX, &rc->keep);
			break;
		case 2:
			r = val->type == CTP_Y_SCALAR
				    ? ctp_config_parse_bytes(val->str,
							     &rc->max_bytes)
				    : -EINVAL;
			if (r < 0)
				r = ctp_y_fail(c, val,
					       "'%s' must be a byte count (an "
					       "integer, optionally followed "
					       "by K, M, G, KiB, MiB or GiB), "
					       "at least 1, got %s",
					       sub, ctp_y_got(&b, val));
			break;
		case 3:
			r = ctp_y_str(c, sub, val, &rc->dir);
			break;
		}
	}
	return r;
}

void ctp_record_cfg_overlay(struct ctp_record_cfg *dst,
			    const struct ctp_record_cfg *src)
{
	if (src->interval_ns)
		dst->interval_ns = src->interval_ns;
	if (src->keep)
		dst->keep = src->keep;
	if (src->max_bytes)
		dst->max_bytes = src->max_bytes;
	if (src->dir)
		dst->dir_ref = src->dir;
	else if (src->dir_ref)
		dst->dir_ref = src->dir_ref;
}

void ctp_record_cfg_print(FILE *out, const struct ctp_record_cfg *rc)
{
	if (!rc->interval_ns && !rc->keep && !rc->max_bytes && !rc->dir_ref)
		return;
	fputs("record:\n", out);
	if (rc->interval_ns)
		fprintf(out, "  interval: %" PRIu64 "ms\n",
			rc->interval_ns / 1000000);
	if (rc->keep)
		fprintf(out, "  keep: %" PRIu64 "\n", rc->keep);
	if (rc->max_bytes)
		fprintf(out, "  max_bytes: %" PRIu64 "\n", rc->max_bytes);
	if (rc->dir_ref) {
		fputs("  dir: ", out);
		ctp_config_put_quoted(out, rc->dir_ref);
		fputc('\n', out);
	}
}

void ctp_record_cfg_free(struct ctp_record_cfg *rc)
{
	free(rc->dir);
	rc->dir = NULL;
}
