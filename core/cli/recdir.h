/* SPDX-License-Identifier: MIT */
/*
 * Reading a recording's directory (docs/RECORD.md): `show DIR`, `export DIR`
 * and `compare DIR --from T --to T` pick files by capture time, and the
 * recorder's retention orders its files by it. A file of a recording is named
 * by the exact grammar below; anything else in the directory is not one.
 * Nothing in a directory is opened blocking or through a link: an entry that
 * is not a regular file is left out unopened. The file picked is decoded to
 * know it is readable, then opened again by its path by the verb (read as
 * any snapshot file is: bounded, never blocking). Private to the core.
 */
#ifndef CTP_CORE_RECDIR_H
#define CTP_CORE_RECDIR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

/* "ctprof-YYYYmmddTHHMMSS.mmmZ.ctprof.zst": the length of a file name. */
#define CTP_RECDIR_NAME_LEN 38
/* How many regular files named like a recording's a pick decodes, newest
 * first, before it gives up. */
#define CTP_RECDIR_TRIES 16

/* A recording's file in dir for a capture that started at ns (realtime):
 * "DIR/ctprof-YYYYmmddTHHMMSS.mmmZ.ctprof.zst" (UTC, so names sort by
 * time). Returns 0, or -ENAMETOOLONG when it does not fit out. */
int ctp_recdir_name(const char *dir, uint64_t ns, char *out, size_t n);
/* The capture time (ns since the epoch) a recording's file name (no
 * directory) says: exactly the grammar above, a real UTC date and time.
 * Returns 0, or -EINVAL for any other name. */
int ctp_recdir_name_time(const char *name, int64_t *ns);

/*
 * A time as `compare --from/--to` take it, against `now_ns` (realtime):
 * "latest" (INT64_MAX), "-D" (D before now: -90s, -10m, -1h, a duration of
 * docs/CONFIG.md), "YYYY-mm-ddTHH:MM[:SS]" (or a space for the T), or
 * "HH:MM[:SS]" (today); two digits each, local time. Returns 0 and ns since
 * the epoch in *ns; -EINVAL for any other text; -ERANGE for a field out of
 * range or a local time that does not exist (a daylight-saving gap).
 */
int ctp_recdir_parse_when(const char *when, int64_t now_ns, int64_t *ns);

/* What picks left out: entries named like a recording's files that are not
 * readable snapshots (a link, a FIFO, a directory, an unreadable or corrupt
 * file), each counted once over the picks that share it. */
struct ctp_recdir_skips {
	unsigned n;
	char first[512]; /* "NAME: why" of the first */
	unsigned n_names;
	char names[4 * CTP_RECDIR_TRIES][CTP_RECDIR_NAME_LEN + 1];
};

/* A pick: in `dir`, the file `when` picks, or with `before` (a file of the
 * recording, else NULL) the newest one before it ("when" unused). */
struct ctp_recdir_pick {
	const char *dir, *when, *before;
	uint64_t cap;			/* the reader's decompression budget */
	struct ctp_recdir_skips *skips; /* required; may be shared by picks */
};

/*
 * The newest file at or before the time that is a readable snapshot (a
 * regular file, not a link, that decodes within p->cap), or, when no file of
 * the recording is at or before it, the first readable one. At most
 * CTP_RECDIR_TRIES files are looked at; those skipped are added to
 * p->skips. Returns 0 and the path in out; -ENOTDIR when dir is no
 * directory; else a negative errno (-EINVAL a bad time, -ERANGE no such
 * time, -ENOENT no readable snapshot) with a message in err.
 */
int ctp_recdir_pick(const struct ctp_recdir_pick *p, char *out, size_t n,
		    char *err, size_t errlen);
/* The one warning line for what picks skipped ("prog: warning: dir: ..."),
 * none when nothing was. */
void ctp_recdir_warn_skips(FILE *f, const char *prog, const char *dir,
			   const struct ctp_recdir_skips *s);
/*
 * When base and cand are files of one recording (the same directory,
 * recording names), the files of it captured strictly between them, oldest
 * first (regular files, not links): returns how many and *out (each path
 * and the array to be freed), 0 when there are none or they are not,
 * -ENOMEM.
 */
int ctp_recdir_between(const char *base, const char *cand, char ***out);
/* ---- Walking a recording: its files in capture order ---- */

/* One file of a recording. */
struct ctp_recdir_file {
	int64_t t;   /* its name's capture time, ns since the epoch */
	mode_t mode; /* what the directory said it is (0: gone) */
	bool bad;    /* not a readable snapshot: left out by walks */
	char name[CTP_RECDIR_NAME_LEN + 1];
};

/* The files of a recording in a time range, listed once, oldest first:
 * the directory held open and each file's name (56 bytes a file), never a
 * snapshot, so a walk's memory is one snapshot at a time whatever the
 * recording's length. Files added after the listing are not in it. */
struct ctp_recdir_files {
	int dfd;
	size_t n;
	struct ctp_recdir_file *v;
};

/*
 * List dir's files from the one `from` picks through the one `to` picks,
 * as compare picks its two: each the newest regular file named as a
 * recording's at or before its time (ctp_recdir_parse_when), the first
 * when none is; from NULL: the first file, to NULL: the latest. Entries
 * named so that are not regular files (links, FIFOs, directories) are
 * listed marked bad and added to skips. Returns 0 and *f (f->n 0: no file
 * of a recording in dir); -ENOTDIR; -EINVAL or -ERANGE for a bad time or
 * a --from after --to; -ENOMEM or an I/O error, with a message in err.
 * Free with ctp_recdir_files_done (also after a failure).
 */
int ctp_recdir_files_open(const char *dir, const char *from, const char *to,
			  struct ctp_recdir_skips *skips,
			  struct ctp_recdir_files *f, char *err, size_t errlen);
void ctp_recdir_files_done(struct ctp_recdir_files *f);

struct ctp_snap;
/* A walk's step: the snapshot of one file, freed when it returns. A
 * negative return stops the walk. */
typedef int (*ctp_recdir_each_fn)(const struct ctp_snap *snap,
				  const struct ctp_recdir_file *file,
				  void *arg);
/*
 * Open each file of f not marked bad, oldest first, as a pick reads them
 * (through no link, never blocking, decoded within cap), and hand it to
 * each. A file that is not a readable snapshot (gone, corrupt, over cap)
 * is marked bad, added to skips (once: a second walk leaves it out
 * unopened) and the walk goes on. Returns the number of snapshots handed
 * to each, or the first negative return of each.
 */
int ctp_recdir_walk(struct ctp_recdir_files *f, uint64_t cap,
		    struct ctp_recdir_skips *skips, ctp_recdir_each_fn each,
		    void *arg);
/* A walk's step that takes the snapshot (it frees it, also on failure). */
typedef int (*ctp_recdir_take_fn)(struct ctp_snap *snap,
				  const struct ctp_recdir_file *file,
				  void *arg);
/* ctp_recdir_walk, each snapshot handed over to take: what keeps a
 * snapshot past its step (a series, whose BASE it becomes). */
int ctp_recdir_walk_take(struct ctp_recdir_files *f, uint64_t cap,
			 struct ctp_recdir_skips *skips,
			 ctp_recdir_take_fn take, void *arg);

/*
 * A path a reader verb was given: when it is a recording's directory,
 * its newest readable snapshot into out (what was skipped said on stderr
 * as `prog: warning: ...`) and *path pointed at out; any other path left
 * as it is. Returns 0, or -1 after the error on stderr.
 */
int ctp_recdir_latest_of(const char **path, uint64_t cap, const char *prog,
			 char *out, size_t n);

/* Free what ctp_recdir_between returned (n paths, n <= 0: none). */
void ctp_recdir_list_free(char **list, int n);
/* Is path a directory? */
int ctp_recdir_is(const char *path);

#endif
