/* SPDX-License-Identifier: MIT */
/*
 * procelf: what plugins that look inside live processes share (jemalloc-
 * probe, appstats): a process's file mappings from /proc/<pid>/maps, the
 * identity of its executable, ELF program headers and symbols, a cache of
 * per-file answers keyed by (dev, inode), a cache of per-process answers
 * keyed by the identity of every executable mapping, and a per-capture
 * store of per-thread results for processes whose threads the core walks
 * on several workers (CTP_PLUGIN_SPLITTABLE).
 */
#ifndef CTP_PROCELF_H
#define CTP_PROCELF_H

#include <gelf.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/types.h>

struct ctp_api;
struct ctp_task;

/* ---- /proc/<pid>/maps --------------------------------------------------- */
struct ctp_map {
	uint64_t start, end, offset;
	uint64_t dev; /* makedev(major, minor) */
	uint64_t ino;
	bool exec;
	const char *path; /* points into the parsed buffer; "" for anonymous */
	size_t path_len;
};
/* Parse one maps line (without its newline). 0, or -EINVAL. Pure. */
int ctp_maps_line(const char *buf, size_t len, struct ctp_map *out);

/* A process's file mappings (those with an inode and an absolute path),
 * in address order; the buffers are reused from one process to the next.
 * Each path points into the bytes parsed (buf, or the caller's). */
struct ctp_maps {
	char *buf;
	size_t cap;
	struct ctp_map *v;
	size_t n, alloc;
};
/* The file mappings of maps text buf (len bytes), kept in m->v: 0, or
 * -ENOMEM. Lines without a '/' (anonymous mappings) are skipped before
 * any field of theirs is parsed. Pure; the paths point into buf. */
int ctp_maps_parse(struct ctp_maps *m, const char *buf, size_t len);
/* Read <dirfd>/maps whole into m->buf and parse it: 0, or a negative
 * errno. */
int ctp_maps_read(struct ctp_maps *m, int dirfd);
void ctp_maps_free(struct ctp_maps *m);
/* The identity of the executable mappings, independent of their order. */
uint64_t ctp_maps_exec_hash(const struct ctp_maps *m);
/* The load bias of file (dev, ino) as mapped (its offset-0 mapping): 0
 * with *bias, or -ENOENT. first_load_vaddr and is_dyn: ctp_elf_info. */
int ctp_maps_bias(const struct ctp_map *v, size_t n, uint64_t dev, uint64_t ino,
		  uint64_t first_load_vaddr, bool is_dyn, uint64_t *bias);

/* The executable's (dev, inode) from <dirfd>/exe: 0, or a negative errno
 * (-ENOENT for kernel threads and zombies). */
int ctp_exe_ident(int dirfd, uint64_t *dev, uint64_t *ino);

/* The tids listed in <dirfd>/task into *tids (grown as needed, *cap its
 * room): 0 with *n, or a negative errno. */
int ctp_task_tids(int dirfd, int32_t **tids, size_t *cap, size_t *n);

/* Capability number cap (<linux/capability.h>, 0..63) in this thread's
 * effective set (capget(2)); false when capget fails. */
bool ctp_cap_effective(unsigned cap);

/* CAP_SYS_PTRACE in this thread's effective set: what reading other users'
 * processes (maps, process_vm_readv) needs. */
bool ctp_cap_sys_ptrace(void);

/* ---- ELF ------------------------------------------------------------------
 */
struct ctp_elf_info {
	bool is_dyn;		       /* ET_DYN */
	unsigned machine;	       /* e_machine */
	uint64_t dyn_vaddr;	       /* PT_DYNAMIC p_vaddr (0: none) */
	uint64_t first_load_vaddr;     /* lowest PT_LOAD p_vaddr, aligned */
	uint64_t tls_memsz, tls_align; /* PT_TLS */
};
void ctp_elf_info(Elf *elf, struct ctp_elf_info *out);

/* Call fn for every defined symbol of .symtab and .dynsym, in section
 * order, until it returns false. */
typedef bool (*ctp_elf_sym_fn)(void *arg, const char *name,
			       const GElf_Sym *sym);
void ctp_elf_each_symbol(Elf *elf, ctp_elf_sym_fn fn, void *arg);

/* ---- Files of other processes --------------------------------------------
 * A file opened on behalf of another process (a file it maps, one beside
 * it that a debuglink names) sits where that process's user can put a
 * FIFO, a device node, a symbolic link or another file under its name
 * between any two system calls. It is looked up once, O_PATH|O_NOFOLLOW,
 * which opens nothing (no FIFO to block on, no driver's open to run);
 * checked on that descriptor (a regular file, and the expected device and
 * inode when there are some); then opened for reading through
 * /proc/thread-self/fd, which reaches that very inode whatever its name
 * is by now, and read only through the descriptor returned. A file that
 * someone other than root may write (not root's, or group or world
 * writable) can be truncated while libelf maps it, and a page past its
 * new end is SIGBUS: it is read from a sealed copy in memory instead (at
 * most CTP_FOREIGN_COPY_MAX bytes; larger ones are refused). */

#define CTP_FOREIGN_COPY_MAX (256ull << 20)

/* The file at path (relative to dirfd, or absolute): a descriptor open
 * O_RDONLY|O_NONBLOCK|O_NOCTTY|O_CLOEXEC on a regular file, with *st
 * filled (the file's, also when the descriptor is a copy); when want_dev
 * or want_ino is not 0, the file must be that one. -ELOOP (a symbolic
 * link), -EINVAL (not a regular file), -ESTALE (another file than the one
 * wanted), -EFBIG (a file to copy larger than CTP_FOREIGN_COPY_MAX), or
 * the open's or the copy's negative errno. */
int ctp_foreign_open(int dirfd, const char *path, uint64_t want_dev,
		     uint64_t want_ino, struct stat *st);

/* "/proc/<pid>/root<path of m>" into buf (the file as the process sees
 * it: a container's files are its own): 0, or -ENAMETOOLONG. */
int ctp_map_path(pid_t pid, const struct ctp_map *m, char *buf, size_t len);

/* ---- Per-file answers by (dev, inode) -------------------------------------
 * `probe` fills `out` (size bytes, zeroed) for the file mapped: fd is open
 * on the very file (ctp_foreign_open; closed after the probe returns) and
 * is all the probe may read; path is where it is (ctp_map_path), for
 * messages and for finding files beside it, with ctp_foreign_open only. */
typedef void (*ctp_file_probe_fn)(void *arg, int fd, const char *path,
				  void *out);

/* What identifies a file's contents to a later run: device, inode, size,
 * modification and change times (ctime moves on every write and every
 * metadata change, and no call sets it back). */
struct ctp_file_key {
	uint64_t dev, ino, size;
	int64_t mtime_s, mtime_ns, ctime_s, ctime_ns;
};

struct ctp_file_cache {
	pthread_mutex_t lock;
	struct ctp_file_ent *head;
	size_t size; /* of one answer */
	/* Answers an earlier run kept (ctp_file_cache_keep): entries of
	 * sizeof(struct ctp_file_key) + size bytes, sorted by key. */
	unsigned char *kept;
	size_t n_kept;
	bool (*keepable)(const void *answer);
	size_t added;	       /* keepable answers probed in this run */
	size_t saved;	       /* of them, written by ctp_file_cache_save */
	_Atomic uint64_t hits; /* answers taken from what was kept */
	uint64_t hits_told;    /* of them, returned by capture_end */
	bool save_failed;      /* said once */
	int dirfd;	       /* the state directory (statedir.h), -1: none */
	char name[64];	       /* the file in it */
	struct ctp_file_key self; /* the plugin's own .so: a rebuilt one
				     keeps nothing of the old one's */
};
void ctp_file_cache_init(struct ctp_file_cache *c, size_t size);

/*
 * Keep the answers that depend on the file alone (`keepable`: its own
 * symbols and headers, nothing beside it, no config, no network) across
 * runs of ctprof-core, in file `name` of the state directory an option
 * names (`opt`: "auto", "off" or a directory; statedir.h): what an earlier
 * run kept is loaded now and taken in place of a probe for the same file
 * (struct ctp_file_key); ctp_file_cache_save writes what this run added.
 * The file holds at most CTP_FILE_KEEP_MAX answers and is bound to the
 * build of the plugin whose code `self_addr` is in (another build keeps
 * nothing of it). 0 (also when there was no file yet), -ENOENT when
 * nothing is kept (off, or no directory for this user), -ESTALE for a file
 * another build wrote (after an upgrade: this run's answers replace it),
 * or another negative errno; why says what in each case. The cache works
 * as without when it fails.
 */
#define CTP_FILE_KEEP_MAX 4096
int ctp_file_cache_keep(struct ctp_file_cache *c, const char *opt,
			const char *name, bool (*keepable)(const void *answer),
			const void *self_addr, char *why, size_t whylen);
/* A plugin's side of it: ctp_file_cache_keep with its option
 * `answers_state` (default auto), the outcome logged (debug when kept,
 * info when off, without a directory or another build's file, notice
 * otherwise). */
struct ctp_api;
struct ctp_ctx;
void ctp_file_cache_keep_opt(struct ctp_file_cache *c,
			     const struct ctp_api *api, struct ctp_ctx *ctx,
			     const char *name,
			     bool (*keepable)(const void *answer),
			     const void *self_addr);
/* At the end of a capture: what this run added written
 * (ctp_file_cache_save; a failure logged once), and the answers taken from
 * what was kept since the last call returned, for the plugin's summary
 * counter. api may be NULL (nothing logged). */
uint64_t ctp_file_cache_capture_end(struct ctp_file_cache *c,
				    const struct ctp_api *api,
				    struct ctp_ctx *ctx);
/* Write the kept answers with those this run added, when it added any
 * since the last save, under the directory's lock (0.2 s at most), taking
 * in those another run wrote meanwhile: 1 written, 0 nothing to write, or
 * a negative errno. */
int ctp_file_cache_save(struct ctp_file_cache *c);
/* The answer for mapping m of process pid, cached or probed now; NULL
 * without memory or when the file there is not the mapped one (replaced,
 * swapped for something else, unreachable, the process gone): that is not
 * cached, a later process mapping the file probes it. Valid until
 * ctp_file_cache_fini. */
void *ctp_file_cache_get(struct ctp_file_cache *c, pid_t pid,
			 const struct ctp_map *m, ctp_file_probe_fn probe,
			 void *arg);
void ctp_file_cache_fini(struct ctp_file_cache *c);

/* ---- Per-process answers by identity --------------------------------------
 * A process is known by its executable and the set of its executable
 * mappings (ctp_maps_exec_hash): a repeat costs one maps read. */
struct ctp_ident {
	uint64_t exe_dev, exe_ino, maps_hash;
	int tag;    /* the plugin's outcome */
	bool found; /* the answer is file (dev, ino) */
	uint64_t dev, ino;
};
struct ctp_ident_cache {
	pthread_mutex_t lock;
	struct ctp_ident_ent *head;
};
void ctp_ident_cache_init(struct ctp_ident_cache *c);
/* 0 and *out, or -ENOENT. */
int ctp_ident_find(struct ctp_ident_cache *c, uint64_t exe_dev,
		   uint64_t exe_ino, uint64_t maps_hash, struct ctp_ident *out);
void ctp_ident_add(struct ctp_ident_cache *c, const struct ctp_ident *id);
void ctp_ident_cache_fini(struct ctp_ident_cache *c);
/* The index in v of the first executable mapping of (dev, ino), or -1. */
long ctp_maps_find_exec(const struct ctp_map *v, size_t n, uint64_t dev,
			uint64_t ino);

/* ---- The maps of the capture before
 * ------------------------------------------ A process's file mappings and
 * executable as a capture read them, kept by tgid with the process source's
 * MM_GEN of that capture (source-process.h): while a later capture's MM_GEN is
 * the same, the mappings are too, and ctp_proc_find takes them from here
 * instead of reading the maps. Entries that no capture used since the last
 * sweep are dropped by the next (ctp_maps_memo_sweep, once a capture), so the
 * memo holds at most the processes of two captures. Thread-safe. */
struct ctp_maps_memo_ent;
struct ctp_maps_memo {
	pthread_mutex_t lock;
	struct ctp_maps_memo_ent **tab; /* by tgid, chained */
	size_t n;
	uint32_t epoch;
};
void ctp_maps_memo_init(struct ctp_maps_memo *m);
/* The maps kept for (tgid, gen) into *maps (their paths in maps->buf) and
 * the executable's identity: 0, or -ENOENT (none kept, or of another
 * generation), -ENOMEM. */
int ctp_maps_memo_get(struct ctp_maps_memo *m, int32_t tgid, uint64_t gen,
		      struct ctp_maps *maps, uint64_t *exe_dev,
		      uint64_t *exe_ino);
/* Keep maps and the executable's identity for (tgid, gen), replacing what
 * was kept for tgid: 0, or -ENOMEM (then nothing is kept for tgid). */
int ctp_maps_memo_put(struct ctp_maps_memo *m, int32_t tgid, uint64_t gen,
		      const struct ctp_maps *maps, uint64_t exe_dev,
		      uint64_t exe_ino);
/* Drop what was not used since the last sweep. */
void ctp_maps_memo_sweep(struct ctp_maps_memo *m);
void ctp_maps_memo_fini(struct ctp_maps_memo *m);

/* ---- Which mapped file holds what a plugin seeks ----------------------------
 * The executable mappings of a process, each distinct file once, in maps
 * order, through the file cache; the outcome is cached by the process's
 * identity. `verdict` judges one file's answer: 1 it holds what is sought
 * (the scan stops), 0 not here, -1 not here but *tag is worth reporting
 * (the last such tag is the process's when nothing is found).
 *
 * The maps come from the core: the plugin declares the lazy process file
 * "?+maps" (CTP_PROCELF_MAPS_FILE: lazy, read to its end) at index maps_file of
 * its process_files, and every plugin that declares it shares one read per
 * process and capture (ctp_api.file_get). */
#define CTP_PROCELF_MAPS_FILE "?+maps"
struct ctp_proc_scan {
	struct ctp_file_cache *files;
	struct ctp_ident_cache *idents;
	ctp_file_probe_fn probe;
	void *arg;
	int (*verdict)(const void *answer, int *tag);
	int none_tag; /* the outcome when no file has anything to say */
	const struct ctp_api *api; /* file_get, source_get */
	uint32_t maps_file;	   /* "?maps" in the plugin's process_files */
	/* The maps of the capture before, taken while the process source's
	 * MM_GEN says they hold (NULL: the maps are read every capture). */
	struct ctp_maps_memo *memo;
};
struct ctp_proc_found {
	uint64_t exe_dev, exe_ino;
	const void *answer; /* the file's answer; NULL: nothing found */
	size_t idx;	    /* its mapping in maps->v */
	int tag;	    /* without an answer: the outcome */
	bool cache_hit;	    /* the identity cache answered */
	bool maps_kept;	    /* the maps came from the memo, not read */
};
/* The process's maps into *maps (their paths valid while the process
 * callback that got task runs) and the file: 0 with *out; -ENOENT (no
 * executable, or no file mapping: a kernel thread, a zombie), -ESRCH
 * (vanished meanwhile), another negative errno (maps unreadable). Call
 * from the process callback that got task. */
int ctp_proc_find(const struct ctp_proc_scan *s, struct ctp_maps *maps,
		  const struct ctp_task *task, struct ctp_proc_found *out);

/* ---- One capture's per-thread results, for split processes ----------------
 * A plugin reads a whole process in its process callback; when the core
 * walks that process's threads on several workers, the other workers find
 * the results here. Each record starts with its int32_t tid; a process's
 * records are kept sorted by tid. */
struct ctp_shared {
	pthread_mutex_t lock;
	struct ctp_shared_ent *head;
	_Atomic size_t n; /* read without the lock: none, no lock taken */
};
void ctp_shared_init(struct ctp_shared *s);
/* Keep a copy of n records of `size` bytes (sorted by tid) of tgid;
 * -ENOMEM (then the other workers' threads go without values). */
int ctp_shared_put(struct ctp_shared *s, int32_t tgid, const void *recs,
		   size_t n, size_t size);
/* The record of tid in tgid's copy, or NULL. Valid until ctp_shared_clear. */
const void *ctp_shared_find(struct ctp_shared *s, int32_t tgid, int32_t tid);
/* Drop every copy (the capture's end). */
void ctp_shared_clear(struct ctp_shared *s);
void ctp_shared_fini(struct ctp_shared *s);
/* qsort/bsearch order of records that start with an int32_t tid. */
int ctp_cmp_tid(const void *a, const void *b);

#endif /* CTP_PROCELF_H */
