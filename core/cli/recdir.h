/* SPDX-License-Identifier: MIT */
/*
 * Reading a recording's directory (docs/RECORD.md): `show DIR` and
 * `compare DIR --from T --to T` pick files by capture time. Private to the
 * core.
 */
#ifndef CTP_CORE_RECDIR_H
#define CTP_CORE_RECDIR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* A recording's file in dir for a capture that started at ns (realtime):
 * "DIR/ctprof-YYYYmmddTHHMMSS.mmmZ.ctprof.zst" (UTC, so names sort by
 * time). Returns 0, or -ENAMETOOLONG when it does not fit out. */
int ctp_recdir_name(const char *dir, uint64_t ns, char *out, size_t n);
/* Is name (no directory) a recording's file name? */
bool ctp_recdir_is_file(const char *name);

/*
 * The file of the recording in `dir` that `when` picks: "latest", "-D"
 * (D before now: -90s, -10m, -1h), "YYYY-mm-ddTHH:MM[:SS]" or "HH:MM[:SS]"
 * (today), local time; the newest file captured at or before that time,
 * or the first file when the time is before it.
 * With `before` (a file of the recording, else NULL), the newest one
 * before it instead ("when" unused). Returns 0 and the path in out,
 * -ENOTDIR when dir is no directory, else a negative errno with a message
 * in err (no file there, a bad time).
 */
int ctp_recdir_pick(const char *dir, const char *when, const char *before,
		    char *out, size_t n, char *err, size_t errlen);
/*
 * When base and cand are files of one recording (the same directory,
 * recording names), the files of it captured strictly between them,
 * oldest first: returns how many and *out (each path and the array to be
 * freed), 0 when there are none or they are not, -ENOMEM.
 */
int ctp_recdir_between(const char *base, const char *cand, char ***out);
/* Free what ctp_recdir_between returned (n paths, n <= 0: none). */
void ctp_recdir_list_free(char **list, int n);
/* Is path a directory? */
int ctp_recdir_is(const char *path);

#endif
