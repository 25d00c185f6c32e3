/* SPDX-License-Identifier: MIT */
/*
 * The core's log: one line on stderr per message, "ctprof-core: [WHO: ]LEVEL:
 * text", shown by the terminal's rule (term.h) so a line is one line, and
 * written in one go so that concurrent threads do not interleave. Levels
 * are the plugin ABI's (CTP_LOG_*); how many are shown is ctp_verbosity.
 * Plugins log through ctp_api.log (core/capture/api.c), which names the
 * plugin and rate-limits on top of this. Private to the core.
 */
#ifndef CTP_CORE_LOG_H
#define CTP_CORE_LOG_H

#include <stdarg.h>
#include <stdbool.h>

#include "ctprof/plugin.h" /* CTP_LOG_* */

/* How much the core and plugins log (set from the command line): -q gives
 * -1, -v gives 1, -vv 2. */
extern int ctp_verbosity;

/* Whether a line of this level is shown at the current verbosity. */
bool ctp_log_shown(int level);

/* One line of the core's own (respects ctp_verbosity). */
void ctp_log(int level, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* One line in the name of `who` (NULL: the core's), shown whatever the
 * verbosity: the caller asked ctp_log_shown. */
void ctp_vlog(const char *who, int level, const char *fmt, va_list ap)
	__attribute__((format(printf, 3, 0)));

#endif
