/* SPDX-License-Identifier: MIT */
/*
 * Configuration: collectors.yaml parsed with libyaml into struct ctp_config.
 * Private to the core.
 *
 * Loading validates everything it can without the plugins themselves: unknown
 * keys, wrong types, out-of-range numbers, host rules that name a plugin the
 * `plugins:` map does not declare. Every error names file, line and column.
 */
#ifndef CTP_CORE_CONFIG_H
#define CTP_CORE_CONFIG_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "recordcfg.h"

/* One plugin option: a scalar, or a sequence of scalars joined with ','. */
struct ctp_kv {
	char *key;
	char *value;
	unsigned line, col; /* 1-based position of the value in the file */
};

struct ctp_plugin_cfg {
	char *name;
	int enabled;  /* default 1 */
	int required; /* default 0 */
	struct ctp_kv *opts;
	size_t n_opts;
	unsigned line, col; /* position of the plugin's key */
	/* Not from the file: set by the capture's supervisor when an earlier
	 * attempt crashed in this plugin ("crashed: SIGSEGV in ..."); the
	 * loader then marks it failed with this reason and does not load
	 * it. NULL otherwise. Owned by the config. */
	char *crashed;
};

/* One entry of `hosts:`. Every condition present must hold (AND). */
struct ctp_host_rule {
	char *hostname_glob; /* fnmatch(3) pattern, or NULL */
	char *release_glob;  /* matched against uname release, or NULL */
	char *path_exists;   /* absolute path that must exist, or NULL */
	/* Overrides: per plugin, `enabled`/`required` (-1 when not given) and
	 * option keys to set (same shape as ctp_plugin_cfg). */
	struct ctp_plugin_cfg *plugins;
	size_t n_plugins;
	struct ctp_record_cfg record; /* `record:` settings it overrides */
	unsigned line, col;
};

struct ctp_config {
	char *path; /* the file loaded, or NULL for built-in defaults */
	char **plugin_dirs;
	size_t n_plugin_dirs;  /* 0: the core's default search path */
	char *output;	       /* strftime(3) pattern, or "-" for stdout */
	int compression_level; /* zstd level, 1..19, default 3 */
	unsigned workers;      /* >= 1, default 1 */
	/* With workers > 1, a process of more threads than this has them
	 * walked in chunks of this many by any worker; 0: never. Default
	 * 512. */
	unsigned split_threads;
	char *proc_root;	    /* default "/proc" */
	char *sys_root;		    /* default "/sys" */
	char *cgroup_root;	    /* default "auto": found from mountinfo */
	int record_hostname;	    /* default 0 */
	int allow_insecure_plugins; /* default 0: refuse o+w files/dirs as root
				     */
	uint64_t max_decompressed_bytes; /* reader cap, default 512 MiB */
	struct ctp_plugin_cfg *plugins;	 /* declaration order */
	size_t n_plugins;
	struct ctp_host_rule *rules;
	size_t n_rules;
	/* Appended (config module). The plugins as loaded, n_plugins of them:
	 * ctp_config_apply_hosts() always starts over from these, so
	 * `plugins` above holds the declarations with the matching rules
	 * applied on top. */
	struct ctp_plugin_cfg *declared_plugins;
	/* What the last ctp_config_apply_hosts() did, for ctp_config_print():
	 * the facts it matched against (NULL: unknown) and one flag per rule.
	 */
	int hosts_applied;
	char *hosts_hostname;
	char *hosts_release;
	unsigned char *rule_matched; /* n_rules entries, 1 = matched */
	/* `record:` as the top level declares it, and with the matching host
	 * rules' laid over it (ctp_config_apply_hosts). */
	struct ctp_record_cfg record_declared, record;
	/* `service:`, what `serve` and `record` do with a capture that
	 * misbehaves (docs/RELIABILITY.md): a capture running longer than
	 * deadline_ns is abandoned (default 30 s); the capture process may
	 * hold memory_limit bytes of data (RLIMIT_DATA, default 2 GiB); a
	 * plugin is left out after quarantine_after crashes, hangs or
	 * breaches of the limit (default 1). series_ttl_ns: how long a group
	 * once exported by serve or record --textfile keeps its series
	 * without an increase (docs/EXPORT.md "Counters over time"; default
	 * 10 min; --series-ttl overrides it). */
	struct {
		uint64_t deadline_ns, memory_limit, series_ttl_ns;
		unsigned quarantine_after;
	} service;
};

/* What host rules are matched against. */
struct ctp_host_facts {
	const char *hostname;
	const char *release;
};

/* A config holding only defaults (no plugins). Returns 0 or -ENOMEM. */
int ctp_config_defaults(struct ctp_config **ret);

/*
 * Parse `path`. On failure returns a negative errno (-ENOENT/-EACCES for an
 * unreadable file, -EINVAL for a syntax or schema error) and writes one
 * message "FILE:LINE:COL: what is wrong" (or "FILE: strerror" when the file
 * cannot be read) into err. *ret is left untouched on failure.
 */
int ctp_config_load(const char *path, struct ctp_config **ret, char *err,
		    size_t errlen);
/* Same, over an in-memory buffer; `name` is used in messages. */
int ctp_config_load_buf(const char *name, const char *buf, size_t len,
			struct ctp_config **ret, char *err, size_t errlen);

/*
 * Apply the `hosts:` rules matching `facts`, in order (later wins), to the
 * plugins' enabled/required flags and options. Idempotent per config.
 * Appended notes: each call starts from the plugins as loaded (see
 * declared_plugins), so direct edits of cfg->plugins are discarded;
 * facts == NULL means this machine (uname(2)); a NULL hostname or release
 * never matches a hostname or kernel condition. Hostnames match
 * case-insensitively. Returns 0, -ENOMEM, or -EINVAL for a rule naming an
 * undeclared plugin (only possible in a config built by hand).
 */
int ctp_config_apply_hosts(struct ctp_config *cfg,
			   const struct ctp_host_facts *facts);

/* Does rule i match? 1 yes, 0 no. */
int ctp_config_rule_matches(const struct ctp_host_rule *rule,
			    const struct ctp_host_facts *facts);

const struct ctp_plugin_cfg *ctp_config_plugin(const struct ctp_config *cfg,
					       const char *name);

void ctp_config_free(struct ctp_config *cfg);

/* Parse a byte count as the config's size keys take it: an integer,
 * optionally followed by K, M, G, KiB, MiB or GiB (powers of 1024). Returns
 * 0 and *out, or -EINVAL (not a byte count), -EDOM (zero) or -ERANGE (2^64
 * or more); *out is untouched on failure. */
int ctp_config_parse_bytes(const char *s, uint64_t *out);
/* A duration: an integer followed by ns, us, ms, s, m, h or d, or nothing
 * (seconds). Returns 0 and *ns, -EINVAL, -EDOM (zero) or -ERANGE. */
int ctp_config_parse_duration(const char *s, uint64_t *ns);
struct ctp_yctx;
struct ctp_ynode;
/* A config value at path that is a duration from min_ns to max_ns (range
 * as the message says it, "100ms to 1h") into *out; else the error at
 * the value (FILE:LINE:COL) and its negative errno. */
int ctp_y_duration(struct ctp_yctx *c, const char *path,
		   const struct ctp_ynode *v, uint64_t min_ns, uint64_t max_ns,
		   const char *range, uint64_t *out);
/* s as a YAML double-quoted scalar (loads back unchanged). */
void ctp_config_put_quoted(FILE *out, const char *s);

/*
 * Print the effective configuration as YAML (backs `ctprof-core
 * check-config`): settings, each plugin with enabled/required/options, and
 * as comments the file, the host facts and which host rules matched. The
 * output loads back as a config with the same effective settings (without
 * the rules). Returns 0, or -EIO when writing failed.
 */
int ctp_config_print(const struct ctp_config *cfg, FILE *out);

#endif
