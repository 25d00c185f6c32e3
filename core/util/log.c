/* SPDX-License-Identifier: MIT */
#include "log.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "term.h"

int ctp_verbosity;

bool ctp_log_shown(int level)
{
	if (level <= CTP_LOG_ERR)
		return true;
	if (level <= CTP_LOG_NOTICE)
		return ctp_verbosity >= 0;
	if (level == CTP_LOG_INFO)
		return ctp_verbosity >= 1;
	return ctp_verbosity >= 2;
}

static const char *level_name(int level)
{
	switch (level) {
	case CTP_LOG_ERR:
		return "error";
	case CTP_LOG_WARNING:
		return "warning";
	case CTP_LOG_NOTICE:
		return "notice";
	case CTP_LOG_INFO:
		return "info";
	default:
		return "debug";
	}
}

void ctp_vlog(const char *who, int level, const char *fmt, va_list ap)
{
	char line[1024], shown[1024];
	int n = snprintf(line, sizeof(line),
			 "ctprof-core: %s%s%s: ", who ? who : "",
			 who ? ": " : "", level_name(level));
	if (n < 0)
		return;
	if ((size_t)n < sizeof(line))
		vsnprintf(line + n, sizeof(line) - (size_t)n, fmt, ap);
	/* Names a process or a file may hold any byte: by the terminal's
	 * rule, so a line is one line and no escape reaches the screen. */
	ctp_term_escape(line, strlen(line), SIZE_MAX, shown, sizeof(shown));
	/* One write per line so concurrent workers do not interleave. */
	fprintf(stderr, "%s\n", shown);
}

void ctp_log(int level, const char *fmt, ...)
{
	if (!ctp_log_shown(level))
		return;
	va_list ap;
	va_start(ap, fmt);
	ctp_vlog(NULL, level, fmt, ap);
	va_end(ap);
}
