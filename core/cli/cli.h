/* SPDX-License-Identifier: MIT */
/* Sub-command entry points and exit statuses. Private to the core. */
#ifndef CTP_CORE_CLI_H
#define CTP_CORE_CLI_H

#include <stdint.h>
#include <stdio.h>

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
/* core/cli/trend_cmd.c */
int ctp_cmd_trend(int argc, char **argv);
/* core/cli/serve.c */
int ctp_cmd_serve(int argc, char **argv);
/* `top` and `replay DIR` (top.c, docs/TOP.md). */
int ctp_cmd_top(int argc, char **argv);
int ctp_cmd_replay(int argc, char **argv);
/* selftest.c: per-task sources against files on this kernel. */
int ctp_cmd_selftest(int argc, char **argv);

/* core/cli/plugcmd.c: commands plugins add. */
struct ctp_config;
/* fn(path, arg) for every .so of cfg's plugin directories, in order,
 * until fn returns non-zero (returned); -1 when the directories cannot be
 * had. */
int ctp_cli_each_plugin(const struct ctp_config *cfg,
			int (*fn)(const char *path, void *arg), void *arg);
/* Run argv[0] as a plugin's command: its exit status, or -1 when no
 * plugin of the default directories offers it. */
int ctp_cli_plugin_command(int argc, char **argv);
/* "Commands of plugins:" and a line per plugin command, when any. */
void ctp_cli_print_plugin_commands(FILE *out);

#endif
