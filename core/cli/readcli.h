/* SPDX-License-Identifier: MIT */
/*
 * What the snapshot readers (`show`, `dump`, `compare`) share on their
 * command line: the decompression cap from --max-decompressed or the
 * configuration, and usage errors that say what was wrong. Private to the
 * core.
 */
#ifndef CTP_CORE_READCLI_H
#define CTP_CORE_READCLI_H

#include <getopt.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "readopts.h"

/* getopt_long codes of the shared options (a command's own start at
 * CTP_READOPT_FIRST_FREE); -c is --config. */
enum {
	CTP_READOPT_GROUP_BY = 256,
	CTP_READOPT_NO_NORMALIZE,
	CTP_READOPT_FLATTEN,
	CTP_READOPT_FIELDS,
	CTP_READOPT_LIMIT,
	CTP_READOPT_SORT,
	CTP_READOPT_CAP,
	CTP_READOPT_COLOR,
	CTP_READOPT_FIRST_FREE = 300,
};

/* The struct option entries of the shared options, for a command's table. */
#define CTP_READOPT_LONGOPTS                                                   \
	{"group-by", required_argument, NULL, CTP_READOPT_GROUP_BY},           \
		{"no-normalize", no_argument, NULL, CTP_READOPT_NO_NORMALIZE}, \
		{"flatten", required_argument, NULL, CTP_READOPT_FLATTEN},     \
		{"fields", required_argument, NULL, CTP_READOPT_FIELDS},       \
		{"limit", required_argument, NULL, CTP_READOPT_LIMIT},         \
		{"sort", required_argument, NULL, CTP_READOPT_SORT},           \
		{"max-decompressed", required_argument, NULL,                  \
		 CTP_READOPT_CAP},                                             \
		{"color", required_argument, NULL, CTP_READOPT_COLOR},         \
	{                                                                      \
		"config", required_argument, NULL, 'c'                         \
	}

/* Not a shared option: the command handles it (ctp_readopts_option). */
#define CTP_READOPT_NOT_MINE (-2)

/*
 * Take option `c` with argument `arg` into r. Returns -1 when taken,
 * CTP_READOPT_NOT_MINE for an option the command handles itself, else the
 * exit status to end with (a usage error or out of memory, said on stderr
 * as "ctprof-core CMD: ...").
 */
int ctp_readopts_option(const char *cmd, struct ctp_readopts *r, int c,
			const char *arg);

/* A command's own options: like ctp_readopts_option, -1 when taken, else
 * the exit status to end with (its --help, a usage error, and for an option
 * it does not know ctp_readcli_try_help). */
typedef int (*ctp_readopts_own_fn)(void *ctx, int c, const char *arg);

/*
 * A reader command's option loop: getopt_long over argv (from the start,
 * whatever used getopt before) with shortopts and lopts; each option goes
 * to ctp_readopts_option, and what is not a shared option to own(ctx, ...).
 * Records in r->given which shared options were given. Returns -1 after the
 * last option (optind at the first operand), else the exit status the first
 * option that ended the parse returned.
 */
int ctp_readopts_parse(const char *cmd, struct ctp_readopts *r, int argc,
		       char **argv, const char *shortopts,
		       const struct option *lopts, ctp_readopts_own_fn own,
		       void *ctx);

/* Whether shared option `code` (CTP_READOPT_GROUP_BY...) was on the
 * command line ctp_readopts_parse read into r. */
static inline bool ctp_readopts_given(const struct ctp_readopts *r, int code)
{
	return code >= CTP_READOPT_GROUP_BY && code <= CTP_READOPT_COLOR &&
	       r->given >> (code - CTP_READOPT_GROUP_BY) & 1;
}

/*
 * After the options: exactly `want` operands (names as for
 * ctp_readcli_operands), the cap resolved (ctp_readcli_cap), and the
 * grouping parsed from r->group_by when set (--no-normalize and --flatten
 * without it are a usage error). Returns -1 to go on, else the exit
 * status.
 */
int ctp_readopts_finish(const char *cmd, struct ctp_readopts *r, int argc,
			char **argv, int want, const char *const *names);

/* Free what r's members point into. */
void ctp_readopts_done(struct ctp_readopts *r);

/*
 * The reader cap (docs/FORMAT.md "Size cap") for command `cmd`: `cap_arg`
 * (--max-decompressed, with the config's size suffixes) when not NULL,
 * else max_decompressed_bytes of the config `config` (--config) when not
 * NULL, else of the default config when that file exists, else the
 * built-in default. An explicit `config` is loaded and checked even when
 * `cap_arg` is given. Returns 0 and *cap, or prints "ctprof-core CMD: what
 * is wrong" on stderr and returns CTP_EXIT_USAGE.
 */
int ctp_readcli_cap(const char *cmd, const char *config, const char *cap_arg,
		    uint64_t *cap);

/*
 * Check that argv[first..argc) holds exactly the `want` operands named in
 * `names` (e.g. {"BASE", "CAND"}). Returns 0, or prints which operand is
 * missing or which argument is extra, then a pointer to --help, and returns
 * CTP_EXIT_USAGE.
 */
int ctp_readcli_operands(const char *cmd, int argc, char **argv, int first,
			 int want, const char *const *names);

/* "Try 'ctprof-core CMD --help'." on stderr, after a getopt error (which
 * getopt has already described); returns CTP_EXIT_USAGE. */
int ctp_readcli_try_help(const char *cmd);

/* The screen a reader prints to: $COLUMNS / $LINES, else the terminal's,
 * else 80 columns and no height (0). */
void ctp_readcli_term(size_t *w, size_t *h);

/*
 * The human-readable output of a reader (show, compare, views as tables,
 * not their csv or json) goes to the screen by the terminal's rule: stdout
 * becomes a ctp_term_stream over it until ctp_readcli_screen_done. So no
 * byte of a snapshot or a view file a terminal acts on reaches it, whatever
 * line prints it. Returns what to hand to ctp_readcli_screen_done (stdout
 * as it was; stdout is left as it is when out of memory).
 */
FILE *ctp_readcli_screen(void);
/* Flush the screen's stream and give stdout back; its fclose() result. */
int ctp_readcli_screen_done(FILE *screen);

#endif
