/* SPDX-License-Identifier: MIT */
/*
 * What the snapshot readers (`show`, `dump`, `compare`) share on their
 * command line: the decompression cap from --max-decompressed or the
 * configuration, and usage errors that say what was wrong. Private to the
 * core.
 */
#ifndef CTP_CORE_READCLI_H
#define CTP_CORE_READCLI_H

#include <stdint.h>

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

#endif
