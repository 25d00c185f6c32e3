/* SPDX-License-Identifier: MIT */
/*
 * jemalloc-probe internals: finding jemalloc's per-thread counters in a live
 * process and reading them. Split from the plugin so tests can drive each
 * step against real workers and feed the pure parts hand-made input.
 */
#ifndef CTP_JEP_H
#define CTP_JEP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "procelf.h" /* struct ctp_map */

/* ---- Failure vocabulary (README.md) --------------------------------------
 * Stable strings: they name summary counters and appear in snapshots. The
 * first two are routine outcomes, not failures. */
#define CTP_JEP_TAGS(X)                                                        \
	X(CTP_JEP_NOT_JEMALLOC, "not-jemalloc") /* routine */                  \
	X(CTP_JEP_EXITED, "process-exited")	/* routine */                  \
	X(CTP_JEP_MAPS, "maps-read")                                           \
	X(CTP_JEP_ELF, "elf-open")                                             \
	X(CTP_JEP_NO_DEBUGINFO, "no-debuginfo")                                \
	X(CTP_JEP_NO_TSD_LAYOUT, "tsd-layout")                                 \
	X(CTP_JEP_LINK_MAP, "link-map")                                        \
	X(CTP_JEP_THREAD_DB, "thread-db")                                      \
	X(CTP_JEP_TLS_DEFERRED, "tls-not-allocated")                           \
	X(CTP_JEP_PTRACE_SEIZE, "ptrace-seize")                                \
	X(CTP_JEP_PTRACE_STOP, "ptrace-stop")                                  \
	X(CTP_JEP_PTRACE_REGS, "ptrace-regs")                                  \
	X(CTP_JEP_STATIC_TLS, "static-tls")                                    \
	X(CTP_JEP_VM_READV, "process-vm-readv")                                \
	X(CTP_JEP_LAYOUT_MISMATCH, "layout-mismatch")                          \
	X(CTP_JEP_TABLE_PTRACE, "table-ptrace")

enum ctp_jep_tag {
#define CTP_JEP_TAG_ID(id, name) id,
	CTP_JEP_TAGS(CTP_JEP_TAG_ID)
#undef CTP_JEP_TAG_ID
		CTP_JEP_N_TAGS
};
const char *ctp_jep_tag_name(enum ctp_jep_tag t);
/* True for the tags that are not failures (not jemalloc, exited). */
bool ctp_jep_tag_routine(enum ctp_jep_tag t);
/* The most frequent failure tag in counts[CTP_JEP_N_TAGS] (ties: the lower
 * tag); -1 when no failure was counted. */
int ctp_jep_dominant(const uint64_t *counts);

/* ---- Who each failure tag hit, and the hint -------------------------------
 * Every failure tag keeps the first few processes it hit, so the hint and
 * the -v log name them ("no-debuginfo: redis-server (pid 1234): ..."). */
#define CTP_JEP_EXAMPLES 3

struct ctp_jep_example {
	int32_t pid;
	char comm[16]; /* NUL-terminated; control bytes replaced by '?' */
};

struct ctp_jep_seen {
	uint64_t denied; /* failures of this tag with EPERM/EACCES */
	uint32_t n;	 /* examples kept */
	struct ctp_jep_example ex[CTP_JEP_EXAMPLES];
};

/* Keep (pid, comm) unless the tag has its examples or that pid already. */
void ctp_jep_seen_add(struct ctp_jep_seen *s, int32_t pid, const char *comm);

/* "a (pid 1), b (pid 2)", with ", ... <count> in all" when count is more
 * than the examples. Returns what snprintf would (bytes wanted). */
int ctp_jep_examples(char *buf, size_t len, const struct ctp_jep_seen *s,
		     uint64_t count);

/* ctp_jep_hint flags. */
#define CTP_JEP_HINT_PRIVILEGED	  (1u << 0) /* CAP_SYS_PTRACE is effective */
#define CTP_JEP_HINT_FALLBACK_OFF (1u << 1) /* method: thread_db */

/*
 * The one-line hint: the failure tags by count (ties: the lower tag), at
 * most three, each as "<tag>: <examples>: <cause and remedy>", joined by
 * "; ". A tag whose failures are mostly permission denials names the
 * cause that applies: without CAP_SYS_PTRACE, the missing privilege; with
 * it, the process refusing access (nothing a privilege would fix).
 * counts and seen are indexed by tag; routine tags and tls-not-allocated
 * are not failures. Returns the length written (0: no failure, buf "").
 */
size_t ctp_jep_hint(char *buf, size_t len, const uint64_t *counts,
		    const struct ctp_jep_seen *seen, unsigned flags);

/* ---- tsd_s member names ---------------------------------------------------
 * jemalloc 5.x hides tsd members behind a prefix; 4.x uses the bare name.
 * Returns 1 for thread_allocated, 2 for thread_deallocated, 0 otherwise. */
int ctp_jep_member_kind(const char *name);
/* True for a TSD TLS symbol name: tsd_tls, je_tsd_tls, <prefix>_tsd_tls. */
bool ctp_jep_is_tsd_symbol(const char *name);

/* ---- Static TLS arithmetic (the ptrace fallback) --------------------------
 * Address of a variable at `st_value` in the main executable's TLS block,
 * given the thread pointer and the executable's PT_TLS size and alignment.
 * x86_64 (TLS variant II): the block ends at tp. arm64 (variant I): it
 * starts after the 16-byte TCB, aligned. 0 on success, -EINVAL when the
 * alignment is not a power of two or the result wraps. */
int ctp_jep_tls_x86_64(uint64_t tp, uint64_t memsz, uint64_t align,
		       uint64_t st_value, uint64_t *addr);
int ctp_jep_tls_arm64(uint64_t tp, uint64_t memsz, uint64_t align,
		      uint64_t st_value, uint64_t *addr);

/* ---- Layouts without DWARF (jep_layout.c) ---------------------------------
 * A known build's tsd_s: where the tsd sits in the module's TLS block and
 * where its state byte and two counters sit in the tsd. A build is known by
 * its version string, architecture and TLS block size. */
struct ctp_jep_layout {
	char name[48]; /* [A-Za-z0-9._-] */
	char version
		[80];  /* e.g. 5.3.0-0-g54eaed1d8b56b1aa528be3bdd1877e59c56fa90c
			*/
	char arch[16]; /* x86_64, aarch64 */
	uint64_t tls_size, tsd_offset;
	uint64_t off_state, off_alloc, off_dealloc;
	/* Bytes after state that are padding, 0 to 7 (zero in every live
	 * tsd: validation reads them). */
	uint64_t state_pad;
};

struct ctp_jep_layouts {
	struct ctp_jep_layout *v;
	size_t n, cap;
};

#define CTP_JEP_LAYOUTS_MAX_BYTES (1u << 20)
#define CTP_JEP_LAYOUTS_MAX	  4096

/*
 * Append the entries of a layouts file's text to *out: one per line,
 * `name version arch tls_size tsd_offset state allocated deallocated
 * state_pad`,
 * blank-separated, numbers decimal or 0x; '#' starts a comment; LF or
 * CRLF line ends. 0, or -EINVAL (-E2BIG) with *line, *col (1-based: the
 * word at fault, 1 for a check over the whole entry) and *why, -EFBIG
 * with *why and *line 0 (over CTP_JEP_LAYOUTS_MAX_BYTES); -ENOMEM.
 * Entries before a bad line stay in *out.
 */
int ctp_jep_layouts_parse(const char *buf, size_t len,
			  struct ctp_jep_layouts *out, size_t *line,
			  size_t *col, const char **why);
/* Read and parse one regular file (at most CTP_JEP_LAYOUTS_MAX_BYTES;
 * opened without blocking: a FIFO or a device is refused, "FILE: not a
 * regular file") and append all its entries to *out, or none; on failure
 * "FILE:LINE:COL: reason" (or "FILE: error") in err. */
int ctp_jep_layouts_load(const char *path, struct ctp_jep_layouts *out,
			 char *err, size_t errlen);
void ctp_jep_layouts_free(struct ctp_jep_layouts *l);
/* The first entry for this build, or NULL. */
const struct ctp_jep_layout *
ctp_jep_layout_find(const struct ctp_jep_layouts *l, const char *version,
		    const char *arch, uint64_t tls_size);
/* The first jemalloc version string in buf ("5.3.0-0-g" and 40 hex
 * digits) that fits out: 0, or -ENOENT. */
int ctp_jep_find_version(const char *buf, size_t len, char *out, size_t outlen);
/* "x86_64", "aarch64", or NULL for another e_machine. */
const char *ctp_jep_arch_name(unsigned e_machine);
/* A valid entry name: 1 to 47 bytes of [A-Za-z0-9._-]. */
bool ctp_jep_layout_name_ok(const char *name);
/* An entry as a line of the file (no newline); snprintf's return. */
int ctp_jep_layout_line(const struct ctp_jep_layout *e, char *buf, size_t len);

/* ---- Per-file analysis (cached by the plugin by dev+inode) --------------- */
struct ctp_jep_file {
	enum ctp_jep_tag tag; /* NOT_JEMALLOC, a failure, or EXITED unused */
	bool found;	      /* jemalloc TSD located with offsets */
	uint64_t tsd_value;   /* st_value of the TSD TLS symbol (TLS offset) */
	uint64_t off_alloc, off_dealloc; /* member offsets in tsd_s */
	uint64_t dyn_vaddr;		 /* PT_DYNAMIC p_vaddr (0: none) */
	uint64_t first_load_vaddr;	 /* lowest PT_LOAD p_vaddr, aligned */
	uint64_t tls_memsz, tls_align;	 /* PT_TLS */
	bool is_dyn;			 /* ET_DYN */
	char symbol[64];		 /* the TSD symbol's name */
	/* Where the offsets came from: DWARF, or the layouts table (then
	 * `layout` names the entry and every read is validated). */
	bool from_table;
	uint64_t off_state; /* tsd_s.state, from DWARF or the table */
	bool have_state;
	uint64_t state_pad; /* padding bytes after state (DWARF: up to the
			     * next member, at most 7) */
	unsigned machine;   /* e_machine */
	char version[80];   /* jemalloc's version string, "" unknown */
	char layout[48];    /* the table entry's name */
	/* The answer came from the file alone (no jemalloc in its own
	 * symbols and contents): no debuginfo, layouts table or server was
	 * asked, so a later run may take it for the same file. */
	bool file_only;
};
/*
 * Look at one ELF file: its .symtab, .dynsym, then separate debuginfo (by
 * build-id under /usr/lib/debug or debuginfod, through libdwfl, or by its
 * .gnu_debuglink beside it) for a TSD TLS symbol, then the tsd_s DWARF for
 * the two members. `path` names a regular file (ctp_open_regular: never a
 * FIFO) the user named (jemalloc-layout), so debuginfod is asked when
 * DEBUGINFOD_URLS is set; a file of another process is probed by
 * ctp_jep_file_probe_fd instead. Returns 0 with *out filled (out->found or a
 * tag), or a negative errno when the file cannot be opened.
 */
int ctp_jep_file_probe(const char *path, struct ctp_jep_file *out);
/* The same for the file open on fd (read only through fd; the caller
 * keeps it), which is at `path` (its name, and where its debuglink is
 * looked for), and where DWARF does not give the offsets, the first entry
 * of `layouts` (may be NULL) for the file's version, architecture and TLS
 * block size. Debuginfod is asked (when DEBUGINFOD_URLS is set) only with
 * `debuginfod`; without, libdebuginfod is never called. 0, or -errno
 * without a descriptor to spare. */
int ctp_jep_file_probe_fd(int fd, const char *path,
			  const struct ctp_jep_layouts *layouts,
			  bool debuginfod, struct ctp_jep_file *out);
/* A layouts entry for a build with DWARF (`ctprof-core jemalloc-layout`):
 * 0 with *out filled (name "<version>-<arch>", the caller may rename), or
 * a negative errno with *why. */
int ctp_jep_layout_learn(const char *path, struct ctp_jep_layout *out,
			 const char **why);

/* ---- Reading a live process ---------------------------------------------- */

/*
 * Where the reads of target memory and libthread_db's symbol lookups go.
 * The plugin leaves ctp_jep_target.mem NULL: process_vm_readv of the pid,
 * and the symbols of the glibc files the process maps. The fuzz harness
 * tests/fuzz/probe_tls.c serves both from an image made of its input, so
 * libthread_db and this code meet hostile memory without a real process.
 */
struct ctp_jep_mem {
	/* All len bytes at addr into buf: 0, or a negative errno. */
	int (*read)(void *arg, uint64_t addr, void *buf, size_t len);
	/* A global symbol of the target: 0 and *addr, or a negative errno. */
	int (*lookup)(void *arg, const char *name, uint64_t *addr);
	void *arg;
};

struct ctp_jep_counters {
	int32_t tid;
	int err; /* 0: values valid; else a negative errno */
	enum ctp_jep_tag tag;
	uint64_t allocated, deallocated;
};

/* Where the jemalloc module sits in the process. */
struct ctp_jep_target {
	pid_t pid;
	const struct ctp_jep_file *file;
	uint64_t bias;	  /* load bias of the jemalloc module */
	bool in_main_exe; /* jemalloc is in the executable */
	const char *root; /* "/proc/<pid>/root" prefix for file paths */
	/* Every file mapping of the process (libc, ld.so, ...), for symbol
	 * lookups of libthread_db. */
	const struct ctp_map *maps;
	size_t n_maps;
	const struct ctp_jep_mem *mem; /* NULL: the process itself (above) */
};

/*
 * Stop-free read through libthread_db: enumerate threads, find each one's
 * TSD through td_thr_tls_get_addr / td_thr_tlsbase, and read the two
 * counters with process_vm_readv. Fills at most `cap` entries of `out`,
 * sorted by tid, one per tid, and sets *n. A descriptor without a thread
 * (tid 0) has no entry; a thread whose descriptor changed during its read
 * has err -ESRCH and tag EXITED (README.md). Returns 0, or -tag-errno
 * style failure: a negative errno and *tag set to the failure tag
 * (THREAD_DB, LINK_MAP, ...).
 */
int ctp_jep_read_thread_db(const struct ctp_jep_target *t,
			   struct ctp_jep_counters *out, size_t cap, size_t *n,
			   enum ctp_jep_tag *tag);

/*
 * The fallback: PTRACE_SEIZE + INTERRUPT each tid, read the thread pointer,
 * detach, compute the static TLS address of the executable's TSD, read.
 * Only for jemalloc in the main executable. `tids` lists the threads;
 * `timeout_ms` bounds each wait for the stop.
 */
int ctp_jep_read_ptrace(const struct ctp_jep_target *t, const int32_t *tids,
			size_t n_tids, struct ctp_jep_counters *out,
			unsigned timeout_ms);

/* The target's global `name` as libthread_db's lookups find it: in the
 * glibc files it maps (or through t->mem). 0 and *addr, or -ENOENT. */
int ctp_jep_symbol(const struct ctp_jep_target *t, const char *name,
		   uint64_t *addr);

/* Read two u64 at addr in pid with one process_vm_readv. */
int ctp_jep_read_pair(pid_t pid, uint64_t a, uint64_t b, uint64_t *va,
		      uint64_t *vb);

/* Free what the lookups cached (plugin fini). */
void ctp_jep_cleanup(void);

/* Process-wide count of ptrace(2) requests this library made (tests prove
 * the stop-free path makes none). */
uint64_t ctp_jep_ptrace_calls(void);

#endif /* CTP_JEP_H */
