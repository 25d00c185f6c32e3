/* SPDX-License-Identifier: MIT */
/*
 * Checking a plugin's configured options against the options[] table its
 * descriptor declares (CTP_PLUGIN_OPTIONS): before init, by check-config
 * and listed by `plugins`. Pure but for the plugins' own value checks;
 * private to the core.
 */
#ifndef CTP_CORE_OPTIONS_H
#define CTP_CORE_OPTIONS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "config.h"
#include "ctprof/plugin.h"

/* The options table of d, or NULL (and *n = 0) when d does not declare
 * one (no CTP_PLUGIN_OPTIONS, or a descriptor too old to carry it). A
 * declared table with no entry gives a non-NULL "empty" result. */
const struct ctp_option_desc *ctp_options_table(const struct ctp_plugin *d,
						bool *declared, size_t *n);

/*
 * Check every option of pc against d's declared table. Returns 0 (also
 * when d declares none), or -EINVAL with *bad the offending option (for its
 * position) and why: an unknown name (with a "did you mean"), a value that
 * is not of the option's type, not one of its choices, or out of range.
 */
int ctp_options_check(const struct ctp_plugin *d,
		      const struct ctp_plugin_cfg *pc,
		      const struct ctp_kv **bad, char *why, size_t whylen);

/*
 * The value checks of d's options (ctp_option_desc.check, ABI 1 tables
 * that carry it) on the values pc sets, after ctp_options_check: 0, or
 * the check's negative errno with *bad the option and why ("option
 * 'NAME': reason"). They may read files the values name: for the
 * settings in effect (before init; check-config for the plugins enabled
 * on the host), not for every host rule.
 */
int ctp_options_check_values(const struct ctp_plugin *d,
			     const struct ctp_plugin_cfg *pc,
			     const struct ctp_kv **bad, char *why,
			     size_t whylen);

/* The value parsers behind ctp_api.opt_u64, opt_i64 and opt_bool (a
 * number in any base strtoull/strtoll takes; true/yes/on/1,
 * false/no/off/0): 0, or -EINVAL. Pure. */
int ctp_opt_parse_u64(const char *s, uint64_t *out);
int ctp_opt_parse_i64(const char *s, int64_t *out);
int ctp_opt_parse_bool(const char *s, int *out);

/* The type's name ("string", "u64", "bool", "bytes"), "?" if unknown. */
const char *ctp_option_type_name(unsigned type);

#endif
