/* SPDX-License-Identifier: MIT */
/*
 * appstats: per-thread counters an application publishes for ctprof-core
 * to read without stopping it (docs/APPSTATS.md). Header-only, for C11
 * (<stdatomic.h>) and C++11 or later (<atomic>: the same layout), GCC or
 * Clang; copy it into any program (MIT). It compiles without a warning
 * with -Wall -Wextra at every optimization level (tests/public_headers.sh).
 *
 *   int a = ctp_app_field("arena_bytes", CTP_UNIT_BYTES, CTP_KIND_GAUGE,
 *                         CTP_RULE_MAX);      // once, before threads publish
 *   ctp_app_set(a, bytes);                     // this thread's value
 *   ctp_app_add(r, 1);                         // this thread's counter
 *
 * One registry per process, whatever number of objects include this
 * header: the weak, default-visibility symbol `ctprof_appstats_v1`, zero
 * (in .bss) until the first field is declared. A thread's first set or
 * add claims a slot by a compare-and-swap of its tid; an update is then one
 * relaxed atomic store or add; the slot is given back when the thread
 * exits (a thread-specific-data destructor), and after fork() the child
 * starts with every slot free. With every slot taken an update is dropped
 * and counted. The layout is versioned and checked by its reader; change
 * nothing here without changing APPSTATS.md's version.
 *
 * The reader shares out what every publisher may cost (APPSTATS.md, "What
 * one publisher may cost the others"): a name recorded as app.<name> is
 * the first declaration's it saw, with that unit, kind and rule (another
 * process's declaration of it otherwise is left out, and named); a process
 * adds at most 64 new names, a registry is read only up to 1 MiB, and the
 * reads of a capture stop at a time budget (the collector's options).
 */
#ifndef CTPROF_APPSTATS_H
#define CTPROF_APPSTATS_H

#include <errno.h>
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "ctprof/plugin.h" /* enum ctp_unit, ctp_kind, ctp_rule */

/* C's _Atomic(T) or C++'s std::atomic<T> (the same size and alignment
 * with GCC and Clang), and the few operations used, by their C names. */
#ifdef __cplusplus
#include <atomic>
#define CTP__APP_ATOMIC(T)	 std::atomic<T>
#define CTP__APP_TLS		 thread_local
#define CTP__APP_RELAXED	 std::memory_order_relaxed
#define CTP__APP_ACQUIRE	 std::memory_order_acquire
#define CTP__APP_RELEASE	 std::memory_order_release
#define CTP__APP_SEQ_CST	 std::memory_order_seq_cst
#define CTP__APP_LOAD(p, mo)	 (p)->load(mo)
#define CTP__APP_STORE(p, v, mo) (p)->store((v), mo)
#define CTP__APP_ADD(p, v, mo)	 (p)->fetch_add((v), mo)
#define CTP__APP_CAS(p, e, v)	 (p)->compare_exchange_strong(*(e), (v))
#define CTP__APP_CAS_ACQUIRE(p, e, v)                                          \
	(p)->compare_exchange_weak(*(e), (v), std::memory_order_acquire,       \
				   std::memory_order_relaxed)
#else
#include <stdatomic.h>
#define CTP__APP_ATOMIC(T)	 _Atomic(T)
#define CTP__APP_TLS		 _Thread_local
#define CTP__APP_RELAXED	 memory_order_relaxed
#define CTP__APP_ACQUIRE	 memory_order_acquire
#define CTP__APP_RELEASE	 memory_order_release
#define CTP__APP_SEQ_CST	 memory_order_seq_cst
#define CTP__APP_LOAD(p, mo)	 atomic_load_explicit((p), mo)
#define CTP__APP_STORE(p, v, mo) atomic_store_explicit((p), (v), mo)
#define CTP__APP_ADD(p, v, mo)	 atomic_fetch_add_explicit((p), (v), mo)
#define CTP__APP_CAS(p, e, v)	 atomic_compare_exchange_strong((p), (e), (v))
#define CTP__APP_CAS_ACQUIRE(p, e, v)                                          \
	atomic_compare_exchange_weak_explicit(                                 \
		(p), (e), (v), memory_order_acquire, memory_order_relaxed)
#endif

/* The layout's constants (APPSTATS.md). A program may not change them:
 * every object of a process must agree, and the reader checks them. */
#define CTP_APP_MAGIC	   0x3154535041505443ull /* "CTPAPST1" */
#define CTP_APP_VERSION	   1u
#define CTP_APP_MAX_FIELDS 32u
#define CTP_APP_MAX_SLOTS  1024u
#define CTP_APP_NAME_MAX   48u /* with its NUL */

struct ctprof_appstats_field {
	char name[CTP_APP_NAME_MAX]; /* [a-z0-9_.], NUL-terminated */
	uint8_t unit, kind, rule;    /* enum ctp_unit, ctp_kind, ctp_rule */
	uint8_t reserved[5];
};

struct ctprof_appstats_slot {
	/* 0 free, -1 changing hands, else the owner thread's tid */
	CTP__APP_ATOMIC(int32_t) tid;
	/* even when stable; a reader keeps a slot only when it reads the
	 * same even seq before and after */
	CTP__APP_ATOMIC(uint32_t) seq;
	CTP__APP_ATOMIC(uint64_t) values[CTP_APP_MAX_FIELDS];
};

struct ctprof_appstats {
	uint64_t magic; /* CTP_APP_MAGIC once set up; 0 before */
	uint32_t version;
	uint32_t size; /* sizeof(struct ctprof_appstats) */
	uint32_t max_fields, max_slots;
	uint32_t field_size, slot_size;
	uint32_t fields_off, slots_off;	    /* from the start of this struct */
	CTP__APP_ATOMIC(uint32_t) n_fields; /* fields [0, n_fields) valid */
	CTP__APP_ATOMIC(uint32_t) lock;	    /* declarations and set-up */
	CTP__APP_ATOMIC(uint64_t) dropped;  /* updates lost: slots all taken */
	CTP__APP_ATOMIC(uint64_t) fork_gen; /* bumped in each fork() child */
	struct ctprof_appstats_field fields[CTP_APP_MAX_FIELDS];
	struct ctprof_appstats_slot slots[CTP_APP_MAX_SLOTS];
};

/* The process's registry: the first definition the linker and dynamic
 * linker bind wins, the others are never used. */
#ifdef __cplusplus
extern "C" {
#endif
__attribute__((
	weak, visibility("default"))) struct ctprof_appstats ctprof_appstats_v1;
#ifdef __cplusplus
}
#endif

/* ---- Internals (per translation unit: an object including this header
 * must stay loaded, APPSTATS.md) ----------------------------------------- */

static CTP__APP_TLS struct ctprof_appstats_slot *ctp__app_mine;
/* Set once this thread gave its slot back at exit: a later update (from
 * another thread-specific-data destructor) is dropped, not written into a
 * slot another thread may hold by now. */
static CTP__APP_TLS int ctp__app_gone;
static int ctp__app_key_ok;
static CTP__APP_TLS uint64_t ctp__app_gen;
static pthread_key_t ctp__app_key;
static pthread_once_t ctp__app_once = PTHREAD_ONCE_INIT;

static inline void ctp__app_lock(struct ctprof_appstats *r)
{
	uint32_t z = 0;
	while (!CTP__APP_CAS_ACQUIRE(&r->lock, &z, 1))
		z = 0;
}

static inline void ctp__app_unlock(struct ctprof_appstats *r)
{
	CTP__APP_STORE(&r->lock, 0, CTP__APP_RELEASE);
}

/* Slot s from owner tid (or -1 meaning any) to free: the reader sees it
 * change hands (odd seq) and drops what it read meanwhile. */
static inline void ctp__app_free(struct ctprof_appstats_slot *s, int32_t tid)
{
	if (tid >= 0 && !CTP__APP_CAS(&s->tid, &tid, (int32_t)-1))
		return; /* not ours any more */
	CTP__APP_ADD(&s->seq, 1, CTP__APP_SEQ_CST);
	for (uint32_t f = 0; f < CTP_APP_MAX_FIELDS; f++)
		CTP__APP_STORE(&s->values[f], 0, CTP__APP_RELAXED);
	CTP__APP_ADD(&s->seq, 1, CTP__APP_SEQ_CST);
	CTP__APP_STORE(&s->tid, 0, CTP__APP_SEQ_CST);
}

/* Thread exit: give the slot back, if it is still this thread's. */
static inline void ctp__app_exit(void *p)
{
	ctp__app_mine = NULL;
	ctp__app_gone = 1;
	ctp__app_free((struct ctprof_appstats_slot *)p,
		      (int32_t)syscall(SYS_gettid));
}

/* fork() child: only the forking thread lives on, under another tid; no
 * slot of the parent's threads is anyone's here. */
static inline void ctp__app_forked(void)
{
	struct ctprof_appstats *r = &ctprof_appstats_v1;
	for (uint32_t i = 0; i < CTP_APP_MAX_SLOTS; i++) {
		struct ctprof_appstats_slot *s = &r->slots[i];
		uint32_t q = CTP__APP_LOAD(&s->seq, CTP__APP_SEQ_CST);
		if (CTP__APP_LOAD(&s->tid, CTP__APP_SEQ_CST) == 0 && !(q & 1))
			continue;
		/* A parent thread may have been mid-claim or mid-release:
		 * make seq even again before freeing, or the slot would read
		 * as changing forever. */
		CTP__APP_STORE(&s->tid, -1, CTP__APP_SEQ_CST);
		if (q & 1)
			CTP__APP_STORE(&s->seq, q + 1, CTP__APP_SEQ_CST);
		ctp__app_free(s, -1);
	}
	/* A parent thread may have held the declarations' lock. */
	CTP__APP_STORE(&r->lock, 0, CTP__APP_SEQ_CST);
	CTP__APP_ADD(&r->fork_gen, 1, CTP__APP_SEQ_CST);
}

static inline void ctp__app_init_once(void)
{
	ctp__app_key_ok = pthread_key_create(&ctp__app_key, ctp__app_exit) == 0;
	pthread_atfork(NULL, NULL, ctp__app_forked);
}

/* This thread's slot: found (another object of the process may have
 * claimed it for this thread), claimed, or NULL with every slot taken. */
static inline struct ctprof_appstats_slot *ctp__app_claim(void)
{
	struct ctprof_appstats *r = &ctprof_appstats_v1;
	int32_t tid = (int32_t)syscall(SYS_gettid);
	struct ctprof_appstats_slot *s = NULL;

	pthread_once(&ctp__app_once, ctp__app_init_once);
	for (uint32_t i = 0; i < CTP_APP_MAX_SLOTS && !s; i++)
		if (CTP__APP_LOAD(&r->slots[i].tid, CTP__APP_SEQ_CST) == tid)
			s = &r->slots[i];
	for (uint32_t i = 0; i < CTP_APP_MAX_SLOTS && !s; i++) {
		int32_t z = 0;
		if (!CTP__APP_CAS(&r->slots[i].tid, &z, -1))
			continue;
		s = &r->slots[i];
		CTP__APP_ADD(&s->seq, 1, CTP__APP_SEQ_CST);
		for (uint32_t f = 0; f < CTP_APP_MAX_FIELDS; f++)
			CTP__APP_STORE(&s->values[f], 0, CTP__APP_RELAXED);
		CTP__APP_ADD(&s->seq, 1, CTP__APP_SEQ_CST);
		CTP__APP_STORE(&s->tid, tid, CTP__APP_SEQ_CST);
	}
	if (!s)
		return NULL;
	ctp__app_mine = s;
	ctp__app_gen = CTP__APP_LOAD(&r->fork_gen, CTP__APP_SEQ_CST);
	/* Without a key (every key taken) the slot is not given back at
	 * exit; a reader then ignores it once the tid is gone. */
	if (ctp__app_key_ok)
		pthread_setspecific(ctp__app_key, s);
	return s;
}

static inline struct ctprof_appstats_slot *ctp__app_slot(int field)
{
	struct ctprof_appstats *r = &ctprof_appstats_v1;
	if (field < 0 ||
	    (uint32_t)field >= CTP__APP_LOAD(&r->n_fields, CTP__APP_ACQUIRE))
		return NULL;
	if (ctp__app_mine &&
	    ctp__app_gen == CTP__APP_LOAD(&r->fork_gen, CTP__APP_RELAXED))
		return ctp__app_mine;
	if (ctp__app_gone)
		return NULL;
	struct ctprof_appstats_slot *s = ctp__app_claim();
	if (!s)
		CTP__APP_ADD(&r->dropped, 1, CTP__APP_RELAXED);
	return s;
}

/* The rules each kind allows, as the collector checks them (counters add
 * up; a reading, a peak or a label does not). */
static inline int ctp__app_rule_fits(enum ctp_kind kind, enum ctp_rule rule)
{
	switch (kind) {
	case CTP_KIND_COUNTER:
		return rule == CTP_RULE_SUM;
	case CTP_KIND_PEAK:
		return rule == CTP_RULE_MAX || rule == CTP_RULE_MIN;
	case CTP_KIND_GAUGE:
		return rule == CTP_RULE_MAX || rule == CTP_RULE_MIN ||
		       rule == CTP_RULE_RANGE;
	case CTP_KIND_CATEGORICAL:
		return rule == CTP_RULE_MODE;
	case CTP_KIND_ORDINAL:
		return rule != CTP_RULE_SUM && rule != CTP_RULE_UNION;
	default:
		return 0;
	}
}

/* ---- The interface ------------------------------------------------------- */

/*
 * Declare a field (once per name, before threads publish it): its index
 * (>= 0; the same index again for the same name, unit, kind and rule), or
 * -EINVAL (a name not of 1 to 47 bytes of [a-z0-9_.] with no dot first,
 * last or next to another, a unit, kind or
 * rule the collector does not know, or a rule the kind does not allow:
 * counter: sum; peak: max, min; gauge: max, min, range; categorical:
 * mode; ordinal: max, min, mode, range), -EEXIST (the name with another unit,
 * kind or rule), -ENOSPC (CTP_APP_MAX_FIELDS declared).
 */
static inline int ctp_app_field(const char *name, enum ctp_unit unit,
				enum ctp_kind kind, enum ctp_rule rule)
{
	struct ctprof_appstats *r = &ctprof_appstats_v1;
	size_t len = 0;
	int ret = -ENOSPC;

	/* A loop, not strnlen: GCC warns of the bound when the name is a
	 * literal shorter than it (-Wstringop-overread). */
	while (name && len < CTP_APP_NAME_MAX && name[len])
		len++;
	if (len == 0 || len >= CTP_APP_NAME_MAX || (int)unit < 0 ||
	    unit > CTP_UNIT_CENTIPCT || kind < CTP_KIND_COUNTER ||
	    kind > CTP_KIND_ORDINAL || rule < CTP_RULE_SUM ||
	    rule > CTP_RULE_RANGE || !ctp__app_rule_fits(kind, rule))
		return -EINVAL;
	/* A dot neither first nor last, nor after another (looking back:
	 * a look ahead at a literal's end is an -Warray-bounds at -O3). */
	for (size_t i = 0; i < len; i++)
		if (!((name[i] >= 'a' && name[i] <= 'z') ||
		      (name[i] >= '0' && name[i] <= '9') || name[i] == '_' ||
		      (name[i] == '.' && i > 0 && i + 1 < len &&
		       name[i - 1] != '.')))
			return -EINVAL;
	pthread_once(&ctp__app_once, ctp__app_init_once);
	ctp__app_lock(r);
	if (r->magic != CTP_APP_MAGIC) {
		r->version = CTP_APP_VERSION;
		r->size = (uint32_t)sizeof(*r);
		r->max_fields = CTP_APP_MAX_FIELDS;
		r->max_slots = CTP_APP_MAX_SLOTS;
		r->field_size = (uint32_t)sizeof(r->fields[0]);
		r->slot_size = (uint32_t)sizeof(r->slots[0]);
		r->fields_off =
			(uint32_t)offsetof(struct ctprof_appstats, fields);
		r->slots_off =
			(uint32_t)offsetof(struct ctprof_appstats, slots);
		/* The magic last: a reader that sees it sees the rest. */
		__atomic_store_n(&r->magic, CTP_APP_MAGIC, __ATOMIC_RELEASE);
	}
	uint32_t n = CTP__APP_LOAD(&r->n_fields, CTP__APP_SEQ_CST);
	for (uint32_t i = 0; i < n; i++) {
		struct ctprof_appstats_field *f = &r->fields[i];
		if (strcmp(f->name, name) != 0)
			continue;
		ret = f->unit == unit && f->kind == kind && f->rule == rule
			      ? (int)i
			      : -EEXIST;
		ctp__app_unlock(r);
		return ret;
	}
	if (n < CTP_APP_MAX_FIELDS) {
		struct ctprof_appstats_field *f = &r->fields[n];
		memcpy(f->name, name, len);
		f->name[len] = '\0';
		f->unit = (uint8_t)unit;
		f->kind = (uint8_t)kind;
		f->rule = (uint8_t)rule;
		CTP__APP_STORE(&r->n_fields, n + 1, CTP__APP_RELEASE);
		ret = (int)n;
	}
	ctp__app_unlock(r);
	return ret;
}

/* This thread's value of a field (a gauge, a label). */
static inline void ctp_app_set(int field, uint64_t value)
{
	struct ctprof_appstats_slot *s = ctp__app_slot(field);
	if (s)
		CTP__APP_STORE(&s->values[field], value, CTP__APP_RELAXED);
}

/* Add to this thread's counter of a field. */
static inline void ctp_app_add(int field, uint64_t delta)
{
	struct ctprof_appstats_slot *s = ctp__app_slot(field);
	if (s)
		CTP__APP_ADD(&s->values[field], delta, CTP__APP_RELAXED);
}

#endif /* CTPROF_APPSTATS_H */
