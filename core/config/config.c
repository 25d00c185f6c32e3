/* SPDX-License-Identifier: MIT */
/*
 * collectors.yaml -> struct ctp_config.
 *
 * Two passes: libyaml's event parser builds a small tree of scalars,
 * sequences and mappings (rejecting aliases, anchors, tags and duplicate
 * keys on the way), then the schema pass walks that tree and fills the
 * config. The tree keeps every node's position, so each error, including
 * the cross-reference check of host rules against `plugins:` that can only
 * run once the whole file is read, can name file, line and column.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>
#include <yaml.h>

#include "grow.h"
#include "yamltree.h"

/* A config is a few KiB; the cap keeps a wrong path (a log, a core file)
 * from being slurped and parsed. */
#define CONFIG_MAX_BYTES (1u << 20)
#define MAX_NAME	 64

#define DEFAULT_OUTPUT "ctprof-%Y%m%dT%H%M%S.ctprof.zst"
/* The snapshot readers' memory budget: a 30,000-thread host with every
 * thread field of every shipped plugin needs about 160 MiB
 * (docs/FORMAT.md "Size cap"). */
#define DEFAULT_MAX_DECOMPRESSED (UINT64_C(512) << 20)

int ctp_config_parse_bytes(const char *s, uint64_t *out)
{
	static const struct {
		const char *sfx;
		unsigned shift;
	} units[] = {{"", 0},	  {"K", 10}, {"KiB", 10}, {"M", 20},
		     {"MiB", 20}, {"G", 30}, {"GiB", 30}};
	uint64_t x = 0;
	int k = ctp_y_scan_u64(s, &x);

	if (k <= 0)
		return k < 0 ? k : -EINVAL;
	for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
		if (strcmp(s + k, units[i].sfx))
			continue;
		if (x > UINT64_MAX >> units[i].shift)
			return -ERANGE;
		x <<= units[i].shift;
		if (!x)
			return -EDOM;
		*out = x;
		return 0;
	}
	return -EINVAL;
}

static int conv_bytes(struct ctp_yctx *c, const char *path,
		      const struct ctp_ynode *v, uint64_t *out)
{
	struct ctp_yclip b;
	int r = v->type == CTP_Y_SCALAR ? ctp_config_parse_bytes(v->str, out)
					: -EINVAL;

	if (r == 0)
		return 0;
	if (r == -EDOM)
		return ctp_y_fail(c, v, "'%s' must be at least 1, got %s", path,
				  ctp_y_got(&b, v));
	return ctp_y_fail(
		c, v,
		"'%s' must be a byte count below 2^64 (an integer, "
		"optionally followed by K, M, G, KiB, MiB or GiB), got %s",
		path, ctp_y_got(&b, v));
}

/* [a-z0-9_-]+: plugin names become .so names and snapshot keys. */
static int check_plugin_name(struct ctp_yctx *c, const struct ctp_ynode *key)
{
	const char *s = key->str;
	struct ctp_yclip b;
	size_t i;

	for (i = 0; s[i]; i++)
		if (!((s[i] >= 'a' && s[i] <= 'z') ||
		      (s[i] >= '0' && s[i] <= '9') || s[i] == '_' ||
		      s[i] == '-'))
			break;
	if (!i || s[i])
		return ctp_y_fail(
			c, key,
			"plugin name '%s' is not valid: use only a-z, "
			"0-9, '_' and '-'",
			ctp_y_clip(&b, s));
	if (i > MAX_NAME)
		return ctp_y_fail(c, key,
				  "plugin name '%s' is longer than %d bytes",
				  ctp_y_clip(&b, s), MAX_NAME);
	return 0;
}

/* ---- Plugin declarations and overrides ----------------------------------- */

static void kv_free(struct ctp_kv *kv, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(kv[i].key);
		free(kv[i].value);
	}
	free(kv);
}

static void plugin_done(struct ctp_plugin_cfg *pc)
{
	free(pc->name);
	free(pc->crashed);
	kv_free(pc->opts, pc->n_opts);
}

static void plugins_free(struct ctp_plugin_cfg *pcs, size_t n)
{
	for (size_t i = 0; i < n; i++)
		plugin_done(&pcs[i]);
	free(pcs);
}

/* Set key in pc's options: replace the value of an existing key, or append.
 * Takes nothing; copies key and value. */
static int opt_set(struct ctp_plugin_cfg *pc, const struct ctp_kv *kv)
{
	struct ctp_kv *a;
	char *k, *v;

	for (size_t i = 0; i < pc->n_opts; i++) {
		if (strcmp(pc->opts[i].key, kv->key))
			continue;
		v = strdup(kv->value);
		if (!v)
			return -ENOMEM;
		free(pc->opts[i].value);
		pc->opts[i].value = v;
		pc->opts[i].line = kv->line;
		pc->opts[i].col = kv->col;
		return 0;
	}
	a = realloc(pc->opts, (pc->n_opts + 1) * sizeof(*a));
	if (!a)
		return -ENOMEM;
	pc->opts = a;
	k = strdup(kv->key);
	v = strdup(kv->value);
	if (!k || !v) {
		free(k);
		free(v);
		return -ENOMEM;
	}
	a[pc->n_opts++] = (struct ctp_kv){k, v, kv->line, kv->col};
	return 0;
}

static int plugin_copy(struct ctp_plugin_cfg *dst,
		       const struct ctp_plugin_cfg *src)
{
	int r;

	*dst = *src;
	dst->opts = NULL;
	dst->n_opts = 0;
	dst->crashed = NULL;
	dst->name = strdup(src->name);
	if (!dst->name)
		return -ENOMEM;
	if (src->crashed && !(dst->crashed = strdup(src->crashed)))
		return -ENOMEM;
	for (size_t i = 0; i < src->n_opts; i++) {
		r = opt_set(dst, &src->opts[i]);
		if (r < 0)
			return r;
	}
	return 0;
}

static int plugins_dup(const struct ctp_plugin_cfg *src, size_t n,
		       struct ctp_plugin_cfg **ret)
{
	struct ctp_plugin_cfg *d;
	size_t i;

	d = calloc(n ? n : 1, sizeof(*d));
	if (!d)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		if (plugin_copy(&d[i], &src[i]) < 0) {
			plugins_free(d, i + 1);
			return -ENOMEM;
		}
	}
	*ret = d;
	return 0;
}

/* One option value: a scalar, or a sequence of scalars joined with ','. */
static int conv_opt_value(struct ctp_yctx *c, const char *path,
			  const struct ctp_ynode *key,
			  const struct ctp_ynode *v, char **out)
{
	struct ctp_yclip b, kb;
	size_t len = 0, o = 0;
	char *s;

	if (v->type == CTP_Y_SCALAR) {
		*out = strdup(v->str);
		return *out ? 0 : -ENOMEM;
	}
	if (v->type == CTP_Y_MAP)
		return ctp_y_fail(c, v,
				  "option '%s' in '%s' must be a scalar or a "
				  "sequence of scalars, got a mapping (nested "
				  "mappings are not supported)",
				  ctp_y_clip(&kb, key->str), path);
	for (size_t i = 0; i < v->n; i++) {
		const struct ctp_ynode *it = v->kids[i];

		if (it->type != CTP_Y_SCALAR)
			return ctp_y_fail(
				c, it,
				"option '%s' in '%s' must be a scalar or a "
				"sequence of scalars, got %s inside the "
				"sequence",
				ctp_y_clip(&kb, key->str), path,
				ctp_y_got(&b, it));
		if (strchr(it->str, ','))
			return ctp_y_fail(
				c, it,
				"items of option '%s' in '%s' are joined "
				"with ',', so they cannot contain one: "
				"got %s",
				ctp_y_clip(&kb, key->str), path,
				ctp_y_got(&b, it));
		len += strlen(it->str) + 1;
	}
	s = malloc(len + 1);
	if (!s)
		return -ENOMEM;
	s[0] = '\0';
	for (size_t i = 0; i < v->n; i++) {
		size_t l = strlen(v->kids[i]->str);

		if (i)
			s[o++] = ',';
		memcpy(s + o, v->kids[i]->str, l);
		o += l;
	}
	s[o] = '\0';
	*out = s;
	return 0;
}

static int conv_options(struct ctp_yctx *c, const char *path,
			const struct ctp_ynode *v, struct ctp_plugin_cfg *pc)
{
	int r;

	r = ctp_y_collection(c, v, CTP_Y_MAP, path,
			     " of option names to values");
	if (r != 0)
		return r < 0 ? r : 0;
	pc->opts = calloc(v->n / 2 ? v->n / 2 : 1, sizeof(*pc->opts));
	if (!pc->opts)
		return -ENOMEM;
	for (size_t i = 0; i < v->n; i += 2) {
		const struct ctp_ynode *key = v->kids[i], *val = v->kids[i + 1];
		struct ctp_kv *kv = &pc->opts[pc->n_opts];

		if (!key->str[0])
			return ctp_y_fail(c, key, "empty option name in '%s'",
					  path);
		r = conv_opt_value(c, path, key, val, &kv->value);
		if (r < 0)
			return r;
		kv->key = strdup(key->str);
		kv->line = val->line;
		kv->col = val->col;
		pc->n_opts++;
		if (!kv->key)
			return -ENOMEM;
	}
	return 0;
}

/* enabled / required / options, for a declaration or a host rule. */
static int conv_plugin_body(struct ctp_yctx *c, const char *path,
			    const struct ctp_ynode *v,
			    struct ctp_plugin_cfg *pc)
{
	static const char *const keys[] = {"enabled", "required", "options",
					   NULL};
	char where[160], sub[192];
	int r, k;

	r = ctp_y_collection(c, v, CTP_Y_MAP, path,
			     " (enabled, required, options)");
	if (r != 0)
		return r < 0 ? r : 0;
	ctp_y_path(where, sizeof(where), "'%s'", path);
	for (size_t i = 0; i < v->n; i += 2) {
		const struct ctp_ynode *key = v->kids[i], *val = v->kids[i + 1];

		k = ctp_y_key_index(c, key, keys, where);
		if (k < 0)
			return k;
		ctp_y_path(sub, sizeof(sub), "%s.%s", path, keys[k]);
		if (k == 0)
			r = ctp_y_bool(c, sub, val, &pc->enabled);
		else if (k == 1)
			r = ctp_y_bool(c, sub, val, &pc->required);
		else
			r = conv_options(c, sub, val, pc);
		if (r < 0)
			return r;
	}
	return 0;
}

/* A map of plugin name -> body. Overrides (host rules) start at -1. */
static int conv_plugin_map(struct ctp_yctx *c, const char *path,
			   const struct ctp_ynode *v, int dflt_enabled,
			   int dflt_required, struct ctp_plugin_cfg **ret,
			   size_t *n_ret)
{
	struct ctp_plugin_cfg *pcs;
	char sub[192];
	int r;

	r = ctp_y_collection(c, v, CTP_Y_MAP, path, " of plugin names");
	if (r != 0)
		return r < 0 ? r : 0;
	pcs = calloc(v->n / 2 ? v->n / 2 : 1, sizeof(*pcs));
	if (!pcs)
		return -ENOMEM;
	*ret = pcs;
	for (size_t i = 0; i < v->n; i += 2) {
		const struct ctp_ynode *key = v->kids[i], *val = v->kids[i + 1];
		struct ctp_plugin_cfg *pc = &pcs[*n_ret];

		r = check_plugin_name(c, key);
		if (r < 0)
			return r;
		pc->name = strdup(key->str);
		if (!pc->name)
			return -ENOMEM;
		pc->enabled = dflt_enabled;
		pc->required = dflt_required;
		pc->line = key->line;
		pc->col = key->col;
		(*n_ret)++;
		ctp_y_path(sub, sizeof(sub), "%s.%s", path, key->str);
		r = conv_plugin_body(c, sub, val, pc);
		if (r < 0)
			return r;
	}
	return 0;
}

/* A string at path that must be an absolute path, into *out (freeing what
 * was there), as ctp_y_str(). */
static int abs_path(struct ctp_yctx *c, const char *path,
		    const struct ctp_ynode *v, char **out)
{
	struct ctp_yclip b;

	if (v->type == CTP_Y_SCALAR && v->str[0] && v->str[0] != '/')
		return ctp_y_fail(c, v, "'%s' must be an absolute path, got %s",
				  path, ctp_y_got(&b, v));
	return ctp_y_str(c, path, v, out);
}

/* ---- Host rules ---------------------------------------------------------- */

static int conv_match(struct ctp_yctx *c, const char *path,
		      const struct ctp_ynode *v, struct ctp_host_rule *rule)
{
	static const char *const keys[] = {"hostname", "kernel", "path_exists",
					   NULL};
	char where[96], sub[128];
	int r, k;

	r = ctp_y_collection(c, v, CTP_Y_MAP, path,
			     " of conditions (hostname, kernel, path_exists)");
	if (r < 0)
		return r;
	if (r > 0 || !v->n)
		return ctp_y_fail(
			c, v,
			"'%s' needs at least one condition (hostname, "
			"kernel or path_exists)",
			path);
	ctp_y_path(where, sizeof(where), "'%s'", path);
	for (size_t i = 0; i < v->n; i += 2) {
		const struct ctp_ynode *key = v->kids[i], *val = v->kids[i + 1];
		char **dst;

		k = ctp_y_key_index(c, key, keys, where);
		if (k < 0)
			return k;
		ctp_y_path(sub, sizeof(sub), "%s.%s", path, keys[k]);
		dst = k == 0   ? &rule->hostname_glob
		      : k == 1 ? &rule->release_glob
			       : &rule->path_exists;
		r = k == 2 ? abs_path(c, sub, val, dst)
			   : ctp_y_str(c, sub, val, dst);
		if (r < 0)
			return r;
	}
	return 0;
}

static int conv_hosts(struct ctp_yctx *c, const struct ctp_ynode *v,
		      struct ctp_config *cfg)
{
	static const char *const keys[] = {"match", "plugins", "record", NULL};
	char path[48], where[64], sub[96];
	struct ctp_yclip b;
	int r, k;

	r = ctp_y_collection(c, v, CTP_Y_SEQ, "hosts", " of host rules");
	if (r != 0)
		return r < 0 ? r : 0;
	cfg->rules = calloc(v->n ? v->n : 1, sizeof(*cfg->rules));
	if (!cfg->rules)
		return -ENOMEM;
	for (size_t i = 0; i < v->n; i++) {
		const struct ctp_ynode *it = v->kids[i];
		struct ctp_host_rule *rule = &cfg->rules[cfg->n_rules++];
		bool have_match = false;

		rule->line = it->line;
		rule->col = it->col;
		ctp_y_path(path, sizeof(path), "hosts[%zu]", i);
		if (it->type != CTP_Y_MAP)
			return ctp_y_fail(
				c, it,
				"'%s' must be a mapping with 'match' and "
				"'plugins', got %s",
				path, ctp_y_got(&b, it));
		ctp_y_path(where, sizeof(where), "'%s'", path);
		for (size_t j = 0; j < it->n; j += 2) {
			const struct ctp_ynode *key = it->kids[j];
			const struct ctp_ynode *val = it->kids[j + 1];

			k = ctp_y_key_index(c, key, keys, where);
			if (k < 0)
				return k;
			ctp_y_path(sub, sizeof(sub), "%s.%s", path, keys[k]);
			if (k == 0) {
				have_match = true;
				r = conv_match(c, sub, val, rule);
			} else if (k == 2) {
				r = ctp_record_cfg_conv(c, sub, val,
							&rule->record);
			} else {
				r = conv_plugin_map(c, sub, val, -1, -1,
						    &rule->plugins,
						    &rule->n_plugins);
			}
			if (r < 0)
				return r;
		}
		if (!have_match)
			return ctp_y_fail(
				c, it,
				"'%s' has no 'match:': a host rule needs "
				"at least one condition (hostname, kernel "
				"or path_exists)",
				path);
	}
	return 0;
}

/* A typo in a rule's plugin name must never leave a probe silently on. */
static int check_rule_plugins(struct ctp_yctx *c, const struct ctp_config *cfg)
{
	const char **names;
	int r = 0;

	names = calloc(cfg->n_plugins ? cfg->n_plugins : 1, sizeof(*names));
	if (!names)
		return -ENOMEM;
	for (size_t i = 0; i < cfg->n_plugins; i++)
		names[i] = cfg->plugins[i].name;
	for (size_t i = 0; i < cfg->n_rules && !r; i++) {
		const struct ctp_host_rule *rule = &cfg->rules[i];

		for (size_t j = 0; j < rule->n_plugins && !r; j++) {
			const struct ctp_plugin_cfg *o = &rule->plugins[j];
			const char *hint;

			if (ctp_config_plugin(cfg, o->name))
				continue;
			hint = ctp_y_closest(o->name, names, cfg->n_plugins);
			if (hint)
				r = ctp_y_fail_at(
					c, o->line, o->col,
					"host rule names plugin '%s' which "
					"is not declared under 'plugins:'; "
					"did you mean '%s'?",
					o->name, hint);
			else
				r = ctp_y_fail_at(
					c, o->line, o->col,
					"host rule names plugin '%s' which "
					"is not declared under 'plugins:'",
					o->name);
		}
	}
	free(names);
	return r;
}

/* ---- Top level ----------------------------------------------------------- */

enum {
	K_PLUGIN_DIRS,
	K_OUTPUT,
	K_COMPRESSION_LEVEL,
	K_WORKERS,
	K_SPLIT_THREADS,
	K_RECORD_HOSTNAME,
	K_ALLOW_INSECURE,
	K_MAX_DECOMPRESSED,
	K_ROOTS,
	K_PLUGINS,
	K_HOSTS,
	K_RECORD,
	K_SERVICE,
};

static const char *const top_keys[] = {
	"plugin_dirs",
	"output",
	"compression_level",
	"workers",
	"split_threads",
	"record_hostname",
	"allow_insecure_plugins",
	"max_decompressed_bytes",
	"roots",
	"plugins",
	"hosts",
	"record",
	"service",
	NULL,
};

static int conv_plugin_dirs(struct ctp_yctx *c, const struct ctp_ynode *v,
			    struct ctp_config *cfg)
{
	char path[48];
	int r;

	r = ctp_y_collection(c, v, CTP_Y_SEQ, "plugin_dirs", " of directories");
	if (r != 0)
		return r < 0 ? r : 0;
	cfg->plugin_dirs = calloc(v->n ? v->n : 1, sizeof(char *));
	if (!cfg->plugin_dirs)
		return -ENOMEM;
	for (size_t i = 0; i < v->n; i++) {
		const struct ctp_ynode *it = v->kids[i];

		ctp_y_path(path, sizeof(path), "plugin_dirs[%zu]", i);
		/* dlopen() from a directory that depends on the cwd of a
		 * root process is an accident waiting to happen. */
		r = abs_path(c, path, it, &cfg->plugin_dirs[i]);
		if (r < 0)
			return r;
		cfg->n_plugin_dirs++;
	}
	return 0;
}

static int conv_roots(struct ctp_yctx *c, const struct ctp_ynode *v,
		      struct ctp_config *cfg)
{
	static const char *const keys[] = {"proc", "sys", "cgroup", NULL};
	char sub[32];
	int r, k;

	r = ctp_y_collection(c, v, CTP_Y_MAP, "roots", " (proc, sys, cgroup)");
	if (r != 0)
		return r < 0 ? r : 0;
	for (size_t i = 0; i < v->n; i += 2) {
		const struct ctp_ynode *key = v->kids[i], *val = v->kids[i + 1];
		char **dst;

		k = ctp_y_key_index(c, key, keys, "'roots'");
		if (k < 0)
			return k;
		ctp_y_path(sub, sizeof(sub), "roots.%s", keys[k]);
		dst = k == 0   ? &cfg->proc_root
		      : k == 1 ? &cfg->sys_root
			       : &cfg->cgroup_root;
		r = ctp_y_str(c, sub, val, dst);
		if (r < 0)
			return r;
	}
	return 0;
}

/* `service:` (config.h). */
static int conv_service(struct ctp_yctx *c, const struct ctp_ynode *v,
			struct ctp_config *cfg)
{
	static const char *const keys[] = {"capture_deadline", "memory_limit",
					   "quarantine_after", "series_ttl",
					   NULL};
	char sub[64];
	struct ctp_yclip b;
	uint64_t x;
	int r = 0;

	r = ctp_y_collection(
		c, v, CTP_Y_MAP, "service",
		" (capture_deadline, memory_limit, quarantine_after, "
		"series_ttl)");
	if (r != 0)
		return r < 0 ? r : 0;
	for (size_t i = 0; i < v->n && r >= 0; i += 2) {
		const struct ctp_ynode *key = v->kids[i], *val = v->kids[i + 1];
		int k = ctp_y_key_index(c, key, keys, "'service'");
		if (k < 0)
			return k;
		snprintf(sub, sizeof(sub), "service.%s", keys[k]);
		switch (k) {
		case 0:
			r = ctp_y_duration(c, sub, val, 100000000ull,
					   3600000000000ull, "100ms to 1h", &x);
			if (r >= 0)
				cfg->service.deadline_ns = x;
			break;
		case 1:
			if (val->type != CTP_Y_SCALAR ||
			    ctp_config_parse_bytes(val->str, &x) < 0 ||
			    x < (64ull << 20))
				return ctp_y_fail(c, val,
						  "'%s' must be a byte count "
						  "of at least 64MiB (an "
						  "integer, optionally "
						  "followed by K, M, G, KiB, "
						  "MiB or GiB), got %s",
						  sub, ctp_y_got(&b, val));
			cfg->service.memory_limit = x;
			break;
		case 2:
			r = ctp_y_uint(c, sub, val, 1, 1000000, &x);
			if (r >= 0)
				cfg->service.quarantine_after = (unsigned)x;
			break;
		case 3:
			r = ctp_y_duration(c, sub, val, 1000000000ull,
					   604800000000000ull, "1s to 7d", &x);
			if (r >= 0)
				cfg->service.series_ttl_ns = x;
			break;
		}
	}
	return r;
}

static int conv_top(struct ctp_yctx *c, const struct ctp_ynode *root,
		    struct ctp_config *cfg)
{
	uint64_t x;
	int r = 0, k;

	for (size_t i = 0; i < root->n && r >= 0; i += 2) {
		const struct ctp_ynode *key = root->kids[i],
				       *v = root->kids[i + 1];

		k = ctp_y_key_index(c, key, top_keys, "top level");
		if (k < 0)
			return k;
		switch (k) {
		case K_PLUGIN_DIRS:
			r = conv_plugin_dirs(c, v, cfg);
			break;
		case K_OUTPUT:
			r = ctp_y_str(c, "output", v, &cfg->output);
			break;
		case K_COMPRESSION_LEVEL:
			r = ctp_y_uint(c, "compression_level", v, 1, 19, &x);
			if (r >= 0)
				cfg->compression_level = (int)x;
			break;
		case K_WORKERS:
			r = ctp_y_uint(c, "workers", v, 1, 256, &x);
			if (r >= 0)
				cfg->workers = (unsigned)x;
			break;
		case K_SPLIT_THREADS:
			r = ctp_y_uint(c, "split_threads", v, 0, 1u << 22, &x);
			if (r >= 0)
				cfg->split_threads = (unsigned)x;
			break;
		case K_RECORD_HOSTNAME:
			r = ctp_y_bool(c, "record_hostname", v,
				       &cfg->record_hostname);
			break;
		case K_ALLOW_INSECURE:
			r = ctp_y_bool(c, "allow_insecure_plugins", v,
				       &cfg->allow_insecure_plugins);
			break;
		case K_MAX_DECOMPRESSED:
			r = conv_bytes(c, "max_decompressed_bytes", v,
				       &cfg->max_decompressed_bytes);
			break;
		case K_ROOTS:
			r = conv_roots(c, v, cfg);
			break;
		case K_PLUGINS:
			r = conv_plugin_map(c, "plugins", v, 1, 0,
					    &cfg->plugins, &cfg->n_plugins);
			break;
		case K_HOSTS:
			r = conv_hosts(c, v, cfg);
			break;
		case K_RECORD:
			r = ctp_record_cfg_conv(c, "record", v,
						&cfg->record_declared);
			break;
		case K_SERVICE:
			r = conv_service(c, v, cfg);
			break;
		}
	}
	return r;
}

/* ---- Public API ---------------------------------------------------------- */

int ctp_config_defaults(struct ctp_config **ret)
{
	struct ctp_config *cfg;

	if (!ret)
		return -EINVAL;
	cfg = calloc(1, sizeof(*cfg));
	if (!cfg)
		return -ENOMEM;
	cfg->output = strdup(DEFAULT_OUTPUT);
	cfg->proc_root = strdup("/proc");
	cfg->sys_root = strdup("/sys");
	cfg->cgroup_root = strdup("auto");
	cfg->compression_level = 3;
	cfg->workers = 1;
	cfg->split_threads = 512;
	cfg->max_decompressed_bytes = DEFAULT_MAX_DECOMPRESSED;
	cfg->service.deadline_ns = 30000000000ull;
	cfg->service.memory_limit = 2ull << 30;
	cfg->service.quarantine_after = 1;
	cfg->service.series_ttl_ns = 600000000000ull;
	if (!cfg->output || !cfg->proc_root || !cfg->sys_root ||
	    !cfg->cgroup_root) {
		ctp_config_free(cfg);
		return -ENOMEM;
	}
	*ret = cfg;
	return 0;
}

int ctp_config_load_buf(const char *name, const char *buf, size_t len,
			struct ctp_config **ret, char *err, size_t errlen)
{
	struct ctp_yctx c = {
		name ? name : "<buffer>", buf, len, err, errlen, NULL};
	struct ctp_config *cfg = NULL;
	struct ctp_ynode *root = NULL;
	struct ctp_yclip b;
	int r;

	if (err && errlen)
		err[0] = '\0';
	if (!ret || (!buf && len))
		return -EINVAL;
	if (len > CONFIG_MAX_BYTES) {
		ctp_y_fail_file(&c,
				"too large for a config file (over %u bytes)",
				CONFIG_MAX_BYTES);
		return -EFBIG;
	}
	r = ctp_config_defaults(&cfg);
	if (r < 0)
		goto out;
	cfg->path = strdup(c.name);
	if (!cfg->path) {
		r = -ENOMEM;
		goto out;
	}
	r = ctp_yaml_parse(&c, &root);
	if (r < 0)
		goto out;
	if (root && !ctp_ynode_is_null(root)) {
		if (root->type != CTP_Y_MAP) {
			r = ctp_y_fail(
				&c, root,
				"the top level must be a mapping of settings, "
				"got %s",
				ctp_y_got(&b, root));
			goto out;
		}
		r = conv_top(&c, root, cfg);
		if (r < 0)
			goto out;
		r = check_rule_plugins(&c, cfg);
		if (r < 0)
			goto out;
	}
	r = plugins_dup(cfg->plugins, cfg->n_plugins, &cfg->declared_plugins);
	cfg->record = cfg->record_declared;
	cfg->record.dir = NULL;
	cfg->record.dir_ref = cfg->record_declared.dir;
out:
	ctp_ynode_free(root);
	if (r < 0) {
		if (r == -ENOMEM && err && errlen && !err[0])
			ctp_y_fail_file(&c, "out of memory");
		ctp_config_free(cfg);
		return r;
	}
	*ret = cfg;
	return 0;
}

int ctp_config_load(const char *path, struct ctp_config **ret, char *err,
		    size_t errlen)
{
	struct ctp_yctx c = {path, NULL, 0, err, errlen, NULL};
	size_t len = 0, cap = 4096;
	struct stat st;
	char *buf = NULL;
	int fd, r;

	if (err && errlen)
		err[0] = '\0';
	if (!path || !ret)
		return -EINVAL;
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
	if (fd < 0) {
		r = -errno;
		goto fail;
	}
	if (fstat(fd, &st) < 0) {
		r = -errno;
		goto fail;
	}
	if (S_ISDIR(st.st_mode)) {
		r = -EISDIR;
		goto fail;
	}
	/* Read to EOF rather than trusting st_size: pipes and /dev/stdin
	 * work too. One byte past the cap tells "too large" apart. */
	for (;;) {
		ssize_t k;

		if (len == cap || !buf) {
			char *nb;

			cap = buf ? 2 * cap : cap;
			nb = realloc(buf, cap);
			if (!nb) {
				r = -ENOMEM;
				goto fail;
			}
			buf = nb;
		}
		k = read(fd, buf + len, cap - len);
		if (k < 0) {
			if (errno == EINTR)
				continue;
			r = -errno;
			goto fail;
		}
		if (!k)
			break;
		len += (size_t)k;
		if (len > CONFIG_MAX_BYTES)
			break;
	}
	close(fd);
	r = ctp_config_load_buf(path, buf, len, ret, err, errlen);
	free(buf);
	return r;
fail:
	ctp_y_fail_file(&c, "%s", strerror(-r));
	if (fd >= 0)
		close(fd);
	free(buf);
	return r;
}

int ctp_config_rule_matches(const struct ctp_host_rule *rule,
			    const struct ctp_host_facts *facts)
{
	if (!rule)
		return 0;
	/* Host names are case-insensitive (RFC 4343); releases are not. */
	if (rule->hostname_glob &&
	    (!facts || !facts->hostname ||
	     fnmatch(rule->hostname_glob, facts->hostname, FNM_CASEFOLD)))
		return 0;
	if (rule->release_glob &&
	    (!facts || !facts->release ||
	     fnmatch(rule->release_glob, facts->release, 0)))
		return 0;
	if (rule->path_exists && access(rule->path_exists, F_OK))
		return 0;
	return 1;
}

static struct ctp_plugin_cfg *find_plugin(struct ctp_plugin_cfg *pcs, size_t n,
					  const char *name)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(pcs[i].name, name))
			return &pcs[i];
	return NULL;
}

static int dup_or_null(const char *s, char **out)
{
	*out = NULL;
	if (!s)
		return 0;
	*out = strdup(s);
	return *out ? 0 : -ENOMEM;
}

int ctp_config_apply_hosts(struct ctp_config *cfg,
			   const struct ctp_host_facts *facts)
{
	struct ctp_plugin_cfg *eff = NULL;
	struct ctp_record_cfg rec;
	struct ctp_host_facts local;
	unsigned char *matched = NULL;
	char *host = NULL, *rel = NULL;
	struct utsname u;
	int r;

	if (!cfg)
		return -EINVAL;
	if (!facts) {
		if (uname(&u) < 0)
			return -errno;
		local.hostname = u.nodename;
		local.release = u.release;
		facts = &local;
	}
	/* A config assembled by hand has no snapshot of its declarations:
	 * take one now so repeated calls start from the same place. */
	if (!cfg->declared_plugins) {
		r = plugins_dup(cfg->plugins, cfg->n_plugins,
				&cfg->declared_plugins);
		if (r < 0)
			return r;
	}
	r = plugins_dup(cfg->declared_plugins, cfg->n_plugins, &eff);
	if (r < 0)
		return r;
	rec = cfg->record_declared;
	rec.dir = NULL;
	rec.dir_ref = cfg->record_declared.dir;
	matched = calloc(cfg->n_rules ? cfg->n_rules : 1, 1);
	if (!matched || dup_or_null(facts->hostname, &host) < 0 ||
	    dup_or_null(facts->release, &rel) < 0) {
		r = -ENOMEM;
		goto fail;
	}
	for (size_t i = 0; i < cfg->n_rules; i++) {
		const struct ctp_host_rule *rule = &cfg->rules[i];

		if (!ctp_config_rule_matches(rule, facts))
			continue;
		matched[i] = 1;
		ctp_record_cfg_overlay(&rec, &rule->record);
		for (size_t j = 0; j < rule->n_plugins; j++) {
			const struct ctp_plugin_cfg *o = &rule->plugins[j];
			struct ctp_plugin_cfg *pc;

			pc = find_plugin(eff, cfg->n_plugins, o->name);
			if (!pc) {
				/* Loading rejects this; only a config built
				 * by hand gets here. */
				r = -EINVAL;
				goto fail;
			}
			if (o->enabled >= 0)
				pc->enabled = o->enabled;
			if (o->required >= 0)
				pc->required = o->required;
			for (size_t k = 0; k < o->n_opts; k++) {
				r = opt_set(pc, &o->opts[k]);
				if (r < 0)
					goto fail;
			}
		}
	}
	plugins_free(cfg->plugins, cfg->n_plugins);
	cfg->plugins = eff;
	cfg->record = rec;
	free(cfg->rule_matched);
	cfg->rule_matched = matched;
	free(cfg->hosts_hostname);
	cfg->hosts_hostname = host;
	free(cfg->hosts_release);
	cfg->hosts_release = rel;
	cfg->hosts_applied = 1;
	return 0;
fail:
	plugins_free(eff, cfg->n_plugins);
	free(matched);
	free(host);
	free(rel);
	return r;
}

const struct ctp_plugin_cfg *ctp_config_plugin(const struct ctp_config *cfg,
					       const char *name)
{
	if (!cfg || !name)
		return NULL;
	return find_plugin(cfg->plugins, cfg->n_plugins, name);
}

/* ---- Printing ------------------------------------------------------------ */

/* A YAML double-quoted scalar: what is printed loads back unchanged. */
void ctp_config_put_quoted(FILE *out, const char *s)
{
	fputc('"', out);
	for (; *s; s++) {
		unsigned char ch = (unsigned char)*s;

		if (ch == '"' || ch == '\\')
			fprintf(out, "\\%c", ch);
		else if (ch == '\n')
			fputs("\\n", out);
		else if (ch == '\t')
			fputs("\\t", out);
		else if (ch < 0x20 || ch == 0x7f)
			fprintf(out, "\\x%02x", ch);
		else
			fputc(ch, out);
	}
	fputc('"', out);
}

static void print_rule(FILE *out, const struct ctp_config *cfg, size_t i)
{
	const struct ctp_host_rule *rule = &cfg->rules[i];
	const char *sep = "";

	fprintf(out, "#   hosts[%zu] (line %u):", i, rule->line);
	if (rule->hostname_glob) {
		fputs(" hostname ", out);
		ctp_config_put_quoted(out, rule->hostname_glob);
		sep = ",";
	}
	if (rule->release_glob) {
		fprintf(out, "%s kernel ", sep);
		ctp_config_put_quoted(out, rule->release_glob);
		sep = ",";
	}
	if (rule->path_exists) {
		fprintf(out, "%s path_exists ", sep);
		ctp_config_put_quoted(out, rule->path_exists);
	}
	if (!cfg->hosts_applied)
		fputs(": not evaluated\n", out);
	else
		fputs(cfg->rule_matched[i] ? ": matched\n" : ": no match\n",
		      out);
}

int ctp_config_print(const struct ctp_config *cfg, FILE *out)
{
	if (!cfg || !out)
		return -EINVAL;
	fputs("# ctprof-core effective configuration\n", out);
	if (cfg->path) {
		fputs("# from: ", out);
		ctp_config_put_quoted(out, cfg->path);
		fputc('\n', out);
	} else {
		fputs("# from: built-in defaults\n", out);
	}
	if (!cfg->n_rules) {
		fputs("# host rules: none\n", out);
	} else {
		if (!cfg->hosts_applied) {
			fputs("# host rules: not applied\n", out);
		} else {
			fputs("# host rules, matched against hostname ", out);
			ctp_config_put_quoted(out, cfg->hosts_hostname
							   ? cfg->hosts_hostname
							   : "");
			fputs(", kernel ", out);
			ctp_config_put_quoted(out, cfg->hosts_release
							   ? cfg->hosts_release
							   : "");
			fputs(" (later rules win):\n", out);
		}
		for (size_t i = 0; i < cfg->n_rules; i++)
			print_rule(out, cfg, i);
	}
	if (!cfg->n_plugin_dirs) {
		fputs("# plugin_dirs: not set (the core's default search "
		      "path)\n",
		      out);
	} else {
		fputs("plugin_dirs:\n", out);
		for (size_t i = 0; i < cfg->n_plugin_dirs; i++) {
			fputs("  - ", out);
			ctp_config_put_quoted(out, cfg->plugin_dirs[i]);
			fputc('\n', out);
		}
	}
	fputs("output: ", out);
	ctp_config_put_quoted(out, cfg->output ? cfg->output : "");
	fprintf(out, "\ncompression_level: %d\n", cfg->compression_level);
	fprintf(out, "workers: %u\n", cfg->workers);
	fprintf(out, "split_threads: %u\n", cfg->split_threads);
	fprintf(out, "record_hostname: %s\n",
		cfg->record_hostname ? "true" : "false");
	fprintf(out, "allow_insecure_plugins: %s\n",
		cfg->allow_insecure_plugins ? "true" : "false");
	fprintf(out, "max_decompressed_bytes: %" PRIu64 "\n",
		cfg->max_decompressed_bytes);
	ctp_record_cfg_print(out, &cfg->record);
	fprintf(out,
		"service:\n  capture_deadline: %" PRIu64 "ms\n"
		"  memory_limit: %" PRIu64 "\n  quarantine_after: %u\n"
		"  series_ttl: %" PRIu64 "ms\n",
		cfg->service.deadline_ns / 1000000, cfg->service.memory_limit,
		cfg->service.quarantine_after,
		cfg->service.series_ttl_ns / 1000000);
	fputs("roots:\n  proc: ", out);
	ctp_config_put_quoted(out, cfg->proc_root ? cfg->proc_root : "");
	fputs("\n  sys: ", out);
	ctp_config_put_quoted(out, cfg->sys_root ? cfg->sys_root : "");
	fputs("\n  cgroup: ", out);
	ctp_config_put_quoted(out, cfg->cgroup_root ? cfg->cgroup_root : "");
	fputc('\n', out);
	if (!cfg->n_plugins)
		fputs("plugins: {}\n", out);
	else
		fputs("plugins:\n", out);
	for (size_t i = 0; i < cfg->n_plugins; i++) {
		const struct ctp_plugin_cfg *pc = &cfg->plugins[i];

		fputs("  ", out);
		ctp_config_put_quoted(out, pc->name);
		fprintf(out, ":\n    enabled: %s\n    required: %s\n",
			pc->enabled ? "true" : "false",
			pc->required ? "true" : "false");
		if (!pc->n_opts) {
			fputs("    options: {}\n", out);
			continue;
		}
		fputs("    options:\n", out);
		for (size_t j = 0; j < pc->n_opts; j++) {
			fputs("      ", out);
			ctp_config_put_quoted(out, pc->opts[j].key);
			fputs(": ", out);
			ctp_config_put_quoted(out, pc->opts[j].value);
			fputc('\n', out);
		}
	}
	if (fflush(out) == EOF || ferror(out))
		return -EIO;
	return 0;
}

static void rule_done(struct ctp_host_rule *rule)
{
	free(rule->hostname_glob);
	free(rule->release_glob);
	free(rule->path_exists);
	plugins_free(rule->plugins, rule->n_plugins);
	ctp_record_cfg_free(&rule->record);
}

void ctp_config_free(struct ctp_config *cfg)
{
	if (!cfg)
		return;
	free(cfg->path);
	for (size_t i = 0; i < cfg->n_plugin_dirs; i++)
		free(cfg->plugin_dirs[i]);
	free(cfg->plugin_dirs);
	free(cfg->output);
	free(cfg->proc_root);
	free(cfg->sys_root);
	free(cfg->cgroup_root);
	plugins_free(cfg->plugins, cfg->n_plugins);
	if (cfg->declared_plugins)
		plugins_free(cfg->declared_plugins, cfg->n_plugins);
	for (size_t i = 0; i < cfg->n_rules; i++)
		rule_done(&cfg->rules[i]);
	free(cfg->rules);
	free(cfg->rule_matched);
	free(cfg->hosts_hostname);
	free(cfg->hosts_release);
	ctp_record_cfg_free(&cfg->record_declared);
	free(cfg);
}
