/*
 * The exit program (task_exit.bpf.c) in user space: load and attach it,
 * take the records of exited threads from its ring buffer, and drain the
 * per-process totals it kept when the ring was full. Needs libbpf, the
 * kernel's BTF and CAP_BPF + CAP_PERFMON (or CAP_SYS_ADMIN).
 *
 * Threads: ctp_bpfexit_consume from one thread at a time (a listener);
 * ctp_bpfexit_take_sums and ctp_bpfexit_counts from one thread at a time
 * (the drain), which may be another.
 */
#ifndef CTP_BPFEXIT_H
#define CTP_BPFEXIT_H

#include "exit_rec.h"

#include <stddef.h>
#include <stdint.h>

struct ctp_bpfexit;

/* The ring's default size and bounds, bytes (a power of 2). */
#define CTP_BPFEXIT_RING_DEFAULT (8u << 20)
#define CTP_BPFEXIT_RING_MIN	 4096u
#define CTP_BPFEXIT_RING_MAX	 (256u << 20)
/* Processes `sums` holds per generation by default. */
#define CTP_BPFEXIT_PROCS_DEFAULT 4096u

struct ctp_bpfexit_opts {
	size_t ring_bytes;  /* rounded up to a power of 2 in [MIN, MAX]; 0:
			       the default */
	uint32_t max_procs; /* 0: the default */
};

/*
 * Open, size the maps, load (the verifier runs here, once) and attach.
 * Returns 0 with *ret, or a negative errno with the failing step and why
 * in why (-ENOENT: no /sys/kernel/btf/vmlinux; -EPERM: bpf() refused,
 * privileges, lockdown or a seccomp filter).
 */
int ctp_bpfexit_open(const struct ctp_bpfexit_opts *opts,
		     struct ctp_bpfexit **ret, char *why, size_t whylen);
void ctp_bpfexit_free(struct ctp_bpfexit *b);

/* A descriptor that polls readable when the ring holds records. */
int ctp_bpfexit_fd(const struct ctp_bpfexit *b);

typedef void (*ctp_bpfexit_rec_fn)(void *arg, const struct ctp_bpfexit_rec *r);
typedef void (*ctp_bpfexit_sum_fn)(void *arg, uint32_t tgid,
				   const struct ctp_bpfexit_sum *s);

/* Every record in the ring now, parsed, to fn; a record that does not
 * parse is counted in *bad. Returns the records handed to fn, or a
 * negative errno. Never blocks. */
int ctp_bpfexit_consume(struct ctp_bpfexit *b, ctp_bpfexit_rec_fn fn, void *arg,
			uint64_t *bad);

/*
 * The per-process totals kept since the last call, each to fn once, then
 * deleted: flips the generation the program writes to, waits (bounded)
 * until no program is still writing the old one, and drains it. Returns
 * the totals handed over, or a negative errno.
 */
int ctp_bpfexit_take_sums(struct ctp_bpfexit *b, ctp_bpfexit_sum_fn fn,
			  void *arg);

/* Since open: records summed into totals (detail lost, sums kept), and
 * records lost whole (the totals map full). */
void ctp_bpfexit_counts(const struct ctp_bpfexit *b, uint64_t *folded,
			uint64_t *lost);

#endif /* CTP_BPFEXIT_H */
