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
	char line[1024], shown[1024], lab[64];
	int n = snprintf(line, sizeof(line), "ctprof-core: %s%s",
			 who ? who : "", who ? ": " : "");
	if (n < 0 || (size_t)n >= sizeof(line))
		return;
	/* The level between the escaped parts: its colour is the program's
	 * own (warnings yellow, errors red, on a terminal). */
	size_t at = (size_t)n;
	vsnprintf(line + at, sizeof(line) - at, fmt, ap);
	/* Names a process or a file may hold any byte: by the terminal's
	 * rule, so a line is one line and no escape reaches the screen. */
	char head[512];
	ctp_term_escape(line, at, SIZE_MAX, head, sizeof(head));
	ctp_term_escape(line + at, strlen(line + at), SIZE_MAX, shown,
			sizeof(shown));
	const char *sgr = level <= CTP_LOG_ERR	     ? CTP_SGR_RED
			  : level == CTP_LOG_WARNING ? CTP_SGR_YELLOW
						     : NULL;
	const char *name = level_name(level);
	if (sgr)
		name = ctp_color_label(name, sgr, lab, sizeof(lab));
	/* One write per line so concurrent workers do not interleave. */
	fprintf(stderr, "%s%s: %s\n", head, name, shown);
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
