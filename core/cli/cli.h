/* SPDX-License-Identifier: MIT */
/* Sub-command entry points and exit statuses. Private to the core. */
#ifndef CTP_CORE_CLI_H
#define CTP_CORE_CLI_H

#include <stdint.h>

/* Documented exit statuses (docs/CONFIG.md, --help). */
enum {
	CTP_EXIT_OK = 0,
	CTP_EXIT_FAILURE = 1,  /* I/O error, unreadable or corrupt snapshot */
	CTP_EXIT_USAGE = 2,    /* bad command line or configuration */
	CTP_EXIT_REQUIRED = 3, /* a plugin marked required failed */
	CTP_EXIT_INTERRUPTED = 130, /* SIGINT/SIGTERM stopped a capture */
};

int ctp_cmd_show(int argc, char **argv);
int ctp_cmd_dump(int argc, char **argv);
int ctp_cmd_compare(int argc, char **argv);
int ctp_cmd_views(int argc, char **argv);
int ctp_cmd_record(int argc, char **argv);
/* core/cli/export.c */
int ctp_cmd_export(int argc, char **argv);
/* core/cli/serve.c */
int ctp_cmd_serve(int argc, char **argv);

#endif
