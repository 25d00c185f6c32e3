/*
 * bpf-task's times across captures (README.md "stat's times across
 * captures"): the utime and stime ticks the last pass handed out, kept in a
 * file so that the next run of ctprof-core on the same boot raises its own
 * to at least them (ctp_bpftask_keep_monotonic). The file: a header (magic,
 * version, entry size, the two counts, the boot id) and the entries, the
 * tasks' then the processes', each sorted by tgid then tid, in this host's
 * byte order (the file never leaves the boot that wrote it).
 */
#ifndef CTP_BPFTASK_STATE_H
#define CTP_BPFTASK_STATE_H

#include "bpftask_rec.h"

#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/types.h>

#define CTP_BPFTASK_STATE_MAGIC	  "ctpbtt\n\0"
#define CTP_BPFTASK_STATE_VERSION 2u /* 2: the entries' exec_id */
/* Version 1's entries: struct ctp_bpftask_ticks without exec_id. A file of
 * a build before version 2 is loaded widened (exec_id 0: unknown), so the
 * times handed out before an upgrade stay a floor after it. */
#define CTP_BPFTASK_STATE_V1_ENTRY 32u
#define CTP_BPFTASK_STATE_FILE	   "bpf-task-times"

struct ctp_bpftask_state_hdr {
	char magic[8];
	uint32_t version;
	uint32_t entry_size; /* sizeof(struct ctp_bpftask_ticks) */
	uint64_t n_tasks, n_procs;
	uint8_t boot_id[16]; /* /proc/sys/kernel/random/boot_id */
};

/* Why a state file was not used (ctp_bpftask_state_parse). */
enum ctp_bpftask_state_why {
	CTP_BTS_OK = 0,
	CTP_BTS_SHORT,	 /* shorter than the header */
	CTP_BTS_MAGIC,	 /* not a state file */
	CTP_BTS_VERSION, /* another version or entry size */
	CTP_BTS_BOOT,	 /* written on another boot */
	CTP_BTS_BIG,	 /* more entries than max_entries */
	CTP_BTS_COUNT,	 /* its length is not the counts' */
	CTP_BTS_ORDER,	 /* entries not sorted, repeated or a process entry
			    with tid != tgid */
	CTP_BTS_N_WHY
};

/* "short", "magic"... */
const char *ctp_bpftask_state_why_name(enum ctp_bpftask_state_why why);

/* The 16 bytes of a boot id's text ("8-4-4-4-12" hex digits, a '\n' or
 * not): 0, or -EINVAL. Pure. */
int ctp_bpftask_boot_id(const char *text, size_t len, uint8_t out[16]);

/* A header against this boot's id, a bound on each count and the file's
 * length (its version's entry size: version 1's too): CTP_BTS_OK or why
 * not (SHORT .. COUNT). Pure. */
enum ctp_bpftask_state_why
ctp_bpftask_state_check_header(const struct ctp_bpftask_state_hdr *h,
			       uint64_t len, const uint8_t boot_id[16],
			       size_t max_entries);

/* Each array sorted by tgid then tid without repeats, a process entry's
 * tid its tgid: CTP_BTS_OK or CTP_BTS_ORDER. Pure; O(n). */
enum ctp_bpftask_state_why ctp_bpftask_state_check_entries(
	const struct ctp_bpftask_ticks *tasks, size_t n_tasks,
	const struct ctp_bpftask_ticks *procs, size_t n_procs);

/* Version 1's n entries at the start of e (room for n of this version's)
 * made this version's in place, exec_id 0. Pure. */
void ctp_bpftask_state_widen(struct ctp_bpftask_ticks *e, size_t n);

/*
 * Check a state file's bytes (buf, len, 8-byte aligned) of this version
 * against this boot's id and a bound on each count: CTP_BTS_OK with
 * *tasks and *procs pointing into buf and their counts set, else why it
 * is not used (the outputs untouched; a version 1 file: CTP_BTS_VERSION,
 * its entries being another size). Pure; O(len).
 */
enum ctp_bpftask_state_why
ctp_bpftask_state_parse(const void *buf, size_t len, const uint8_t boot_id[16],
			size_t max_entries,
			const struct ctp_bpftask_ticks **tasks, size_t *n_tasks,
			const struct ctp_bpftask_ticks **procs,
			size_t *n_procs);

/* The header of a file of n_tasks then n_procs entries. Pure. */
void ctp_bpftask_state_header(struct ctp_bpftask_state_hdr *h,
			      const uint8_t boot_id[16], size_t n_tasks,
			      size_t n_procs);

/*
 * Load the state file of dirfd (a directory of ctp_statedir_open; the file
 * opened by ctp_statedir_open_file: not a link, a regular file of this user):
 * its header read and checked first (ctp_bpftask_state_check_header, the
 * file's size as its length), then its entries read straight into *tasks
 * and *procs (CTP_GROW with *cap_tasks, *cap_procs; version 1's widened)
 * and checked
 * (ctp_bpftask_state_check_entries). 0 with *n_tasks and *n_procs set; -ENOENT
 * where there is none; -EPERM for a symlink, another owner or type; -EINVAL
 * with *why for a file not used; else read's errno or -ENOMEM. The arrays'
 * contents are undefined after an error (the counts untouched). *sb: the
 * file's.
 */
int ctp_bpftask_state_load(int dirfd, const uint8_t boot_id[16],
			   size_t max_entries, struct ctp_bpftask_ticks **tasks,
			   size_t *cap_tasks, size_t *n_tasks,
			   struct ctp_bpftask_ticks **procs, size_t *cap_procs,
			   size_t *n_procs, struct stat *sb,
			   enum ctp_bpftask_state_why *why);

/* Write the state file of dirfd through a temp file (0600, O_EXCL |
 * O_NOFOLLOW) and rename: 0 with *sb the new file's, or a negative
 * errno (no temp file left). */
int ctp_bpftask_state_write(int dirfd, const struct ctp_bpftask_state_hdr *h,
			    const struct ctp_bpftask_ticks *tasks,
			    const struct ctp_bpftask_ticks *procs,
			    struct stat *sb);

#endif /* CTP_BPFTASK_STATE_H */
