/* SPDX-License-Identifier: MIT */
/* The in-memory capture model: blob interning, field registry, tables. */
#include "model.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "grow.h"
#include "hash.h"

/* ---- Blob pool ----------------------------------------------------------- */

/*
 * Blobs are stored in fixed pages of entry pointers so readers can index
 * without the lock while writers append; lookup by content goes through an
 * open-addressing hash of ids, rebuilt under the lock when it grows.
 */
#define BLOB_PAGE  4096
#define BLOB_PAGES 16384

struct blob {
	uint32_t len;
	uint32_t hash;
	char data[]; /* len bytes + NUL */
};

/* A pool freed and another allocated at the same address must not hit
 * stale cache entries: every pool gets a generation number. */
static _Atomic uint64_t pool_generation;

struct ctp_blobpool {
	pthread_mutex_t lock;
	struct blob **pages[BLOB_PAGES];
	_Atomic uint32_t n;
	uint32_t *slots; /* id + 1, 0 = empty */
	uint64_t gen;	 /* for per-thread caches */
	uint32_t nslots;
};

int ctp_blobpool_new(struct ctp_blobpool **ret)
{
	struct ctp_blobpool *pool = calloc(1, sizeof(*pool));
	if (!pool)
		return -ENOMEM;
	pool->nslots = 1024;
	pool->slots = calloc(pool->nslots, sizeof(*pool->slots));
	if (!pool->slots) {
		free(pool);
		return -ENOMEM;
	}
	pthread_mutex_init(&pool->lock, NULL);
	pool->gen = atomic_fetch_add(&pool_generation, 1) + 1;
	*ret = pool;
	return 0;
}

void ctp_blobpool_free(struct ctp_blobpool *pool)
{
	if (!pool)
		return;
	uint32_t n = atomic_load(&pool->n);
	for (uint32_t i = 0; i < n; i++)
		free(pool->pages[i / BLOB_PAGE][i % BLOB_PAGE]);
	for (uint32_t p = 0; p < BLOB_PAGES && pool->pages[p]; p++)
		free(pool->pages[p]);
	free(pool->slots);
	pthread_mutex_destroy(&pool->lock);
	free(pool);
}

static struct blob *blob_at(const struct ctp_blobpool *pool, uint32_t id)
{
	return pool->pages[id / BLOB_PAGE][id % BLOB_PAGE];
}

static int grow_slots(struct ctp_blobpool *pool)
{
	uint32_t nslots = pool->nslots * 2;
	uint32_t *slots = calloc(nslots, sizeof(*slots));
	if (!slots)
		return -ENOMEM;
	uint32_t n = atomic_load_explicit(&pool->n, memory_order_relaxed);
	for (uint32_t id = 0; id < n; id++) {
		uint32_t i = blob_at(pool, id)->hash & (nslots - 1);
		while (slots[i])
			i = (i + 1) & (nslots - 1);
		slots[i] = id + 1;
	}
	free(pool->slots);
	pool->slots = slots;
	pool->nslots = nslots;
	return 0;
}

int64_t ctp_blobpool_intern(struct ctp_blobpool *pool, const void *data,
			    size_t len)
{
	if (len > UINT32_MAX - 1)
		return -E2BIG;
	uint32_t h = ctp_hash_bytes(data, len);
	int64_t ret;

	pthread_mutex_lock(&pool->lock);
	uint32_t i = h & (pool->nslots - 1);
	while (pool->slots[i]) {
		struct blob *b = blob_at(pool, pool->slots[i] - 1);
		if (b->hash == h && b->len == len &&
		    memcmp(b->data, data, len) == 0) {
			ret = pool->slots[i] - 1;
			goto out;
		}
		i = (i + 1) & (pool->nslots - 1);
	}

	uint32_t id = atomic_load_explicit(&pool->n, memory_order_relaxed);
	if (id >= (uint32_t)BLOB_PAGE * BLOB_PAGES) {
		ret = -ENOSPC;
		goto out;
	}
	/* Keep the load factor at most one half, so probing terminates. */
	if ((uint64_t)(id + 1) * 2 > pool->nslots) {
		ret = grow_slots(pool);
		if (ret < 0)
			goto out;
		i = h & (pool->nslots - 1);
		while (pool->slots[i])
			i = (i + 1) & (pool->nslots - 1);
	}
	struct blob ***page = &pool->pages[id / BLOB_PAGE];
	if (!*page) {
		*page = calloc(BLOB_PAGE, sizeof(**page));
		if (!*page) {
			ret = -ENOMEM;
			goto out;
		}
	}
	struct blob *b = malloc(sizeof(*b) + len + 1);
	if (!b) {
		ret = -ENOMEM;
		goto out;
	}
	b->len = (uint32_t)len;
	b->hash = h;
	if (len)
		memcpy(b->data, data, len);
	b->data[len] = '\0';
	(*page)[id % BLOB_PAGE] = b;
	pool->slots[i] = id + 1;
	atomic_store_explicit(&pool->n, id + 1, memory_order_release);
	ret = id;
out:
	pthread_mutex_unlock(&pool->lock);
	return ret;
}

/* Two ways of ICACHE_SETS sets: a thread's handful of values (names,
 * policies, masks, a path per cgroup hierarchy) rarely evict each other.
 * text: the bytes hold no NUL (a string's check, answered by a hit). */
#define ICACHE_SETS  32 /* at most 64: icache_set() */
#define ICACHE_BYTES 48

struct icache_slot {
	const struct ctp_blobpool *pool;
	uint64_t gen;
	uint64_t hash; /* icache_hash of the bytes */
	int64_t id;
	uint32_t len;
	bool text;
	char data[ICACHE_BYTES];
};

static _Thread_local struct icache_slot icache[2 * ICACHE_SETS];

/* Bytes p[0..len) as one word when len is below 8, each of them in it
 * (overlapping loads: a copy byte by byte into a word stalls its load). */
static inline __attribute__((always_inline)) uint64_t
short_word(const unsigned char *p, size_t len)
{
	uint32_t a, b;

	if (len >= 4) {
		memcpy(&a, p, 4);
		memcpy(&b, p + len - 4, 4);
		return (uint64_t)a << 32 | b;
	}
	return len ? (uint64_t)p[0] << 16 | (uint64_t)p[len / 2] << 8 |
			       p[len - 1]
		   : 0;
}

/* A hash of len (at most ICACHE_BYTES) bytes, eight bytes a step (the
 * pool's FNV-1a goes a byte a step); its top bits pick the cache set.
 * Below 8 bytes it is a bijection of short_word, which holds every byte:
 * equal hashes of equal lengths are equal bytes. */
static inline uint64_t icache_hash(const unsigned char *p, size_t len)
{
	uint64_t h = (len + 1) * 0x9e3779b97f4a7c15ull, x;

	if (len < 8)
		return (h ^ short_word(p, len)) * 0xff51afd7ed558ccdull;
	/* Whole words, the last one overlapping the one before. */
	for (size_t i = 0; i < len; i += 8) {
		memcpy(&x, p + (i + 8 <= len ? i : len - 8), 8);
		h = (h ^ x) * 0xff51afd7ed558ccdull;
	}
	return h;
}

/* The top bits: the only ones every input bit reaches. */
static inline uint32_t icache_set(uint64_t h)
{
	return (uint32_t)(h >> 58) % ICACHE_SETS;
}

/* Whether a[0..len) and b[0..len) (8 to ICACHE_BYTES bytes) are equal:
 * whole words, the last one overlapping the one before. Inline: a call
 * to memcmp cost more than the compare of a name or a path. */
static inline bool icache_eq(const unsigned char *a, const unsigned char *b,
			     size_t len)
{
	uint64_t x, y;

	for (size_t i = 0; i + 8 < len; i += 8) {
		memcpy(&x, a + i, 8);
		memcpy(&y, b + i, 8);
		if (x != y)
			return false;
	}
	memcpy(&x, a + len - 8, 8);
	memcpy(&y, b + len - 8, 8);
	return x == y;
}

/* Slot e holds data's len bytes of hash h for pool: below 8 bytes the
 * hash says it alone. */
static inline bool icache_hit(const struct icache_slot *e,
			      const struct ctp_blobpool *pool, uint64_t h,
			      const void *data, size_t len)
{
	return e->hash == h && e->len == len && e->pool == pool &&
	       e->gen == pool->gen &&
	       (len < 8 ||
		icache_eq((const unsigned char *)e->data, data, len));
}

/* A miss of set e (or bytes too long for the cache): the pool, and the
 * bytes into the set. Apart from the hit path, which it would otherwise
 * burden with its saved registers. */
static __attribute__((noinline)) int64_t
intern_miss(struct ctp_blobpool *pool, struct icache_slot *e, uint64_t h,
	    const void *data, size_t len, bool text)
{
	int64_t id;
	bool t;

	if (len > ICACHE_BYTES) {
		if (text && memchr(data, '\0', len))
			return -EINVAL;
		return ctp_blobpool_intern(pool, data, len);
	}
	t = !len || !memchr(data, '\0', len);
	if (text && !t)
		return -EINVAL;
	id = ctp_blobpool_intern(pool, data, len);
	if (id >= 0) {
		/* The newer first; the older one stays in the other way. */
		e[1] = e[0];
		e->pool = pool;
		e->gen = pool->gen;
		e->hash = h;
		e->id = id;
		e->len = (uint32_t)len;
		e->text = t;
		memcpy(e->data, data, len);
	}
	return id;
}

/* The id of data's bytes through the cache, into it; -EINVAL when text
 * and they hold a NUL (searched for only when the cache has not them). */
static inline int64_t intern_cached(struct ctp_blobpool *pool, const void *data,
				    size_t len, bool text)
{
	struct icache_slot *e;
	uint64_t h;

	if (len > ICACHE_BYTES)
		return intern_miss(pool, NULL, 0, data, len, text);
	h = icache_hash(data, len);
	e = &icache[2 * icache_set(h)];
	if (icache_hit(&e[0], pool, h, data, len))
		return text && !e[0].text ? -EINVAL : e[0].id;
	if (icache_hit(&e[1], pool, h, data, len))
		return text && !e[1].text ? -EINVAL : e[1].id;
	return intern_miss(pool, e, h, data, len, text);
}

int64_t ctp_blobpool_intern_cached(struct ctp_blobpool *pool, const void *data,
				   size_t len)
{
	return intern_cached(pool, data, len, false);
}

int64_t ctp_blobpool_intern_text(struct ctp_blobpool *pool, const char *s,
				 size_t len)
{
	return intern_cached(pool, s, len, true);
}

/* The pool's generation as a handle holds it: 31 bits, so that a handle
 * is >= 0. */
static inline uint64_t handle_gen(const struct ctp_blobpool *pool)
{
	return pool->gen & 0x7fffffff;
}

int64_t ctp_blobpool_handle(const struct ctp_blobpool *pool, int64_t id)
{
	return (int64_t)(handle_gen(pool) << 32 | (uint64_t)id);
}

void ctp_blobpool_handle_span(const struct ctp_blobpool *pool, uint64_t *gen,
			      uint32_t *n)
{
	*n = atomic_load_explicit(&((struct ctp_blobpool *)pool)->n,
				  memory_order_acquire);
	*gen = handle_gen(pool);
}

int64_t ctp_blobpool_handle_id(const struct ctp_blobpool *pool, int64_t handle)
{
	uint64_t gen;
	uint32_t n;

	ctp_blobpool_handle_span(pool, &gen, &n);
	if (handle < 0 || (uint64_t)handle >> 32 != gen ||
	    (uint32_t)handle >= n)
		return -ESTALE;
	return (uint32_t)handle;
}

const char *ctp_blobpool_get(const struct ctp_blobpool *pool, uint64_t id,
			     size_t *len)
{
	uint32_t n = atomic_load_explicit(&((struct ctp_blobpool *)pool)->n,
					  memory_order_acquire);
	if (id >= n)
		return NULL;
	struct blob *b = blob_at(pool, (uint32_t)id);
	if (len)
		*len = b->len;
	return b->data;
}

size_t ctp_blobpool_count(const struct ctp_blobpool *pool)
{
	return atomic_load_explicit(&((struct ctp_blobpool *)pool)->n,
				    memory_order_acquire);
}

/* ---- Registry -------------------------------------------------------------
 */

int ctp_registry_init(struct ctp_registry *reg)
{
	memset(reg, 0, sizeof(*reg));
	pthread_mutex_init(&reg->lock, NULL);
	return 0;
}

void ctp_registry_done(struct ctp_registry *reg)
{
	uint32_t n = ctp_registry_count(reg);
	for (uint32_t i = 0; i < n; i++) {
		struct ctp_field *f = ctp_registry_get(reg, i);
		free(f->name);
		free(f->help);
		free(f->section);
		free(f->dims);
	}
	for (uint32_t p = 0; p < CTP_FIELD_PAGES; p++)
		free(reg->pages[p]);
	pthread_mutex_destroy(&reg->lock);
}

bool ctp_name_ok(const char *name)
{
	size_t n = 0;
	if (!name || !*name || *name == '.')
		return false;
	for (const char *p = name; *p; p++, n++) {
		char c = *p;
		if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
		      c == '_' || c == '.' || c == '-'))
			return false;
		if (c == '.' && (p[1] == '.' || p[1] == '\0'))
			return false;
	}
	return n <= 128;
}

/* Which rules fit which kind; a kind also constrains the value type. */
static bool rule_fits(uint8_t kind, uint8_t rule)
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
		return rule == CTP_RULE_RANGE || rule == CTP_RULE_MIN ||
		       rule == CTP_RULE_MAX || rule == CTP_RULE_MODE;
	case CTP_KIND_CPUSET:
		return rule == CTP_RULE_UNION;
	}
	return false;
}

static bool type_fits(uint8_t kind, uint8_t type)
{
	bool numeric = type == CTP_TYPE_U64 || type == CTP_TYPE_I64;
	switch (kind) {
	case CTP_KIND_COUNTER:
	case CTP_KIND_PEAK:
	case CTP_KIND_GAUGE:
		return numeric;
	case CTP_KIND_CATEGORICAL:
		return type != CTP_TYPE_CPUSET;
	case CTP_KIND_ORDINAL:
		return numeric || type == CTP_TYPE_CHAR;
	case CTP_KIND_CPUSET:
		return type == CTP_TYPE_CPUSET;
	}
	return false;
}

/* A section name, or with `pairs` a "key=value,key=value" list, of
 * [a-z0-9_.-] words, 1 to 256 bytes. */
static bool label_ok(const char *s, bool pairs)
{
	size_t n = strlen(s);
	bool want_value = false, empty = true;
	if (n == 0 || n > 256)
		return false;
	for (const char *p = s; *p; p++) {
		char c = *p;
		bool word = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
			    c == '_' || c == '.' || c == '-';
		if (word) {
			empty = false;
			continue;
		}
		if (!pairs || empty || (c != '=' && c != ','))
			return false;
		if ((c == '=') == want_value)
			return false;
		want_value = c == '=';
		empty = true;
	}
	return !empty && (!pairs || want_value);
}

/* The flags a description may carry for its scope, type, unit and kind. */
static int flags_check(const struct ctp_field_desc *d, const char **why)
{
	unsigned roles = d->flags & CTP_FIELD_ROLES;
	bool time = d->unit == CTP_UNIT_NS || d->unit == CTP_UNIT_US ||
		    d->unit == CTP_UNIT_TICKS;
	bool task =
		d->scope == CTP_SCOPE_THREAD || d->scope == CTP_SCOPE_PROCESS;
	if (roles & (roles - 1)) {
		*why = "a field has one role at most (CTP_FIELD_START_TIME, "
		       "CTP_FIELD_ELAPSED, CTP_FIELD_REAPED, CTP_FIELD_PARENT, "
		       "CTP_FIELD_CGROUP)";
		return -EINVAL;
	}
	if ((d->flags & CTP_FIELD_START_TIME) &&
	    (!task || d->type != CTP_TYPE_U64 || d->kind != CTP_KIND_ORDINAL ||
	     !time)) {
		*why = "CTP_FIELD_START_TIME is for a thread or process u64 "
		       "ordinal field in ns, us or ticks";
		return -EINVAL;
	}
	if ((d->flags & CTP_FIELD_ELAPSED) &&
	    (d->scope != CTP_SCOPE_EXITED || d->type != CTP_TYPE_U64 ||
	     !time)) {
		*why = "CTP_FIELD_ELAPSED is for an exited-scope u64 field in "
		       "ns, us or ticks";
		return -EINVAL;
	}
	if ((d->flags & CTP_FIELD_PARENT) &&
	    (d->scope != CTP_SCOPE_EXITED || d->type != CTP_TYPE_U64)) {
		*why = "CTP_FIELD_PARENT is for an exited-scope u64 field";
		return -EINVAL;
	}
	if ((d->flags & CTP_FIELD_CGROUP) &&
	    (d->scope != CTP_SCOPE_EXITED || d->type != CTP_TYPE_STRING)) {
		*why = "CTP_FIELD_CGROUP is for an exited-scope string field";
		return -EINVAL;
	}
	if ((d->flags & CTP_FIELD_REAPED) &&
	    (!task || d->kind != CTP_KIND_COUNTER)) {
		*why = "CTP_FIELD_REAPED is for a thread or process counter";
		return -EINVAL;
	}
	if ((d->flags & CTP_FIELD_KIB_STEP) && d->type != CTP_TYPE_U64 &&
	    d->type != CTP_TYPE_I64) {
		*why = "CTP_FIELD_KIB_STEP is for a u64 or i64 field";
		return -EINVAL;
	}
	if ((d->flags & CTP_FIELD_META) &&
	    ((d->section && !label_ok(d->section, false)) ||
	     (d->dims && !label_ok(d->dims, true)))) {
		*why = "section is [a-z0-9_.-]+ and dims \"key=value,...\" "
		       "of those characters";
		return -EINVAL;
	}
	return 0;
}

int ctp_field_desc_check(const struct ctp_field_desc *d, const char **why)
{
	if (!ctp_name_ok(d->name)) {
		*why = "name must be 1-128 of [a-z0-9_.-], dot-separated, "
		       "no empty component";
		return -EINVAL;
	}
	if (d->scope < CTP_SCOPE_HOST || d->scope > CTP_SCOPE_EXITED) {
		*why = "unknown scope";
		return -EINVAL;
	}
	if (d->type < CTP_TYPE_U64 || d->type > CTP_TYPE_CPUSET) {
		*why = "unknown type";
		return -EINVAL;
	}
	if (d->unit > CTP_UNIT_CENTIPCT) {
		*why = "unknown unit";
		return -EINVAL;
	}
	if (d->kind < CTP_KIND_COUNTER || d->kind > CTP_KIND_CPUSET) {
		*why = "unknown kind";
		return -EINVAL;
	}
	if (d->rule < CTP_RULE_SUM || d->rule > CTP_RULE_UNION) {
		*why = "unknown aggregation rule";
		return -EINVAL;
	}
	if (!rule_fits(d->kind, d->rule)) {
		*why = "aggregation rule does not fit the kind (counter: sum; "
		       "peak: max/min; gauge: max/min/range; categorical: "
		       "mode; ordinal: range/min/max/mode; cpuset: union)";
		return -EINVAL;
	}
	if (!type_fits(d->kind, d->type)) {
		*why = "value type does not fit the kind";
		return -EINVAL;
	}
	if ((d->flags &
	     ~(CTP_FIELD_META | CTP_FIELD_ROLES | CTP_FIELD_KIB_STEP)) ||
	    d->reserved) {
		*why = "reserved members (flags, reserved) must be 0";
		return -EINVAL;
	}
	return flags_check(d, why);
}

int ctp_registry_role(const struct ctp_registry *reg, uint8_t scope,
		      uint8_t role)
{
	uint32_t n = ctp_registry_count(reg);
	for (uint32_t i = 0; i < n; i++) {
		const struct ctp_field *f = ctp_registry_get(reg, i);
		if ((f->flags & role) && f->scope == scope)
			return (int)i;
	}
	return -ENOENT;
}

/* FNV-1a of a field's name: loading a capture's plugins looks every new
 * name up among the ones before it (a few hundred), and a compare of
 * hashes is cheaper than a call to strcmp. */
static uint32_t name_hash(const char *name)
{
	uint32_t h = 2166136261u;
	for (const unsigned char *p = (const unsigned char *)name; *p; p++)
		h = (h ^ *p) * 16777619u;
	return h;
}

int ctp_registry_find(const struct ctp_registry *reg, const char *name)
{
	uint32_t n = ctp_registry_count(reg), h = name_hash(name);
	for (uint32_t i = 0; i < n; i++) {
		const struct ctp_field *f = ctp_registry_get(reg, i);
		if (f->name_hash == h && strcmp(f->name, name) == 0)
			return (int)i;
	}
	return -ENOENT;
}

void ctp_registry_truncate(struct ctp_registry *reg, uint32_t n)
{
	pthread_mutex_lock(&reg->lock);
	uint32_t count = ctp_registry_count(reg);
	for (uint32_t id = count; id-- > n;) {
		struct ctp_field *f = ctp_registry_get(reg, id);
		/* Columns are handed out in id order within a scope, so the
		 * newest field of its scope holds the last column. */
		reg->ncols[f->scope] = f->col;
		free(f->name);
		free(f->help);
		free(f->section);
		free(f->dims);
		memset(f, 0, sizeof(*f));
	}
	if (n < count)
		atomic_store_explicit(&reg->n, n, memory_order_release);
	pthread_mutex_unlock(&reg->lock);
}

static bool same_desc(const struct ctp_field *f, uint32_t plugin,
		      const struct ctp_field_desc *d)
{
	return f->plugin == plugin && f->scope == d->scope &&
	       f->type == d->type && f->unit == d->unit && f->kind == d->kind &&
	       f->rule == d->rule && f->n_terms == 0 &&
	       f->flags == (d->flags & (CTP_FIELD_ROLES | CTP_FIELD_KIB_STEP));
}

static int add_locked(struct ctp_registry *reg, uint32_t plugin,
		      const struct ctp_field_desc *d,
		      const struct ctp_field_term *terms, uint8_t n_terms);

int ctp_registry_add(struct ctp_registry *reg, uint32_t plugin,
		     const struct ctp_field_desc *d)
{
	int ret;
	pthread_mutex_lock(&reg->lock);
	ret = ctp_registry_find(reg, d->name);
	if (ret >= 0) {
		if (!same_desc(ctp_registry_get(reg, (uint32_t)ret), plugin, d))
			ret = -EEXIST;
		goto out;
	}
	ret = add_locked(reg, plugin, d, NULL, 0);
out:
	pthread_mutex_unlock(&reg->lock);
	return ret;
}

/* A new entry; the caller holds the lock and checked the name is free. */
static int add_locked(struct ctp_registry *reg, uint32_t plugin,
		      const struct ctp_field_desc *d,
		      const struct ctp_field_term *terms, uint8_t n_terms)
{
	int ret;
	uint32_t id = ctp_registry_count(reg);
	if (id >= CTP_FIELD_PAGE * CTP_FIELD_PAGES) {
		ret = -ENOSPC;
		goto out;
	}
	uint8_t once = d->flags & (CTP_FIELD_START_TIME | CTP_FIELD_ELAPSED |
				   CTP_FIELD_PARENT | CTP_FIELD_CGROUP);
	if (once && ctp_registry_role(reg, d->scope, once) >= 0) {
		ret = -EEXIST; /* one start time (elapsed, parent) per scope */
		goto out;
	}
	struct ctp_field **page = &reg->pages[id / CTP_FIELD_PAGE];
	if (!*page) {
		*page = calloc(CTP_FIELD_PAGE, sizeof(**page));
		if (!*page) {
			ret = -ENOMEM;
			goto out;
		}
	}
	struct ctp_field *f = &(*page)[id % CTP_FIELD_PAGE];
	bool meta = d->flags & CTP_FIELD_META;
	f->name = strdup(d->name);
	f->help = strdup(d->help ? d->help : "");
	f->section = meta && d->section ? strdup(d->section) : NULL;
	f->dims = meta && d->dims ? strdup(d->dims) : NULL;
	if (!f->name || !f->help || (meta && d->section && !f->section) ||
	    (meta && d->dims && !f->dims)) {
		free(f->name);
		free(f->help);
		free(f->section);
		free(f->dims);
		f->name = f->help = f->section = f->dims = NULL;
		ret = -ENOMEM;
		goto out;
	}
	f->plugin = plugin;
	f->scope = d->scope;
	f->type = d->type;
	f->unit = d->unit;
	f->kind = d->kind;
	f->rule = d->rule;
	f->flags = d->flags & (CTP_FIELD_ROLES | CTP_FIELD_KIB_STEP);
	f->col = reg->ncols[d->scope]++;
	f->n_terms = n_terms;
	for (uint8_t i = 0; i < n_terms; i++)
		f->terms[i] = terms[i];
	f->name_hash = name_hash(f->name);
	/* Readers compute derived fields: no setter sets one. */
	f->set_key = n_terms ? CTP_FIELD_UNSETTABLE
			     : ctp_field_set_key(d->scope, d->type, plugin);
	atomic_store_explicit(&reg->n, id + 1, memory_order_release);
	ret = (int)id;
out:
	return ret;
}

/* ---- Derived fields ------------------------------------------------------ */

static bool derived_same(const struct ctp_field *f, uint32_t plugin,
			 const struct ctp_field_desc *d,
			 const struct ctp_field_term *terms, uint8_t n)
{
	if (f->plugin != plugin || f->scope != d->scope || f->type != d->type ||
	    f->unit != d->unit || f->kind != d->kind || f->rule != d->rule ||
	    f->n_terms != n)
		return false;
	for (uint8_t i = 0; i < n; i++)
		if (f->terms[i].input != terms[i].input ||
		    f->terms[i].coef != terms[i].coef ||
		    f->terms[i].max_set != terms[i].max_set)
			return false;
	return true;
}

/* 0 for an ordinary field, else 1 + the deepest input's. */
static unsigned derive_depth(const struct ctp_registry *reg,
			     const struct ctp_field *f)
{
	unsigned d = 0;
	for (uint8_t i = 0; i < f->n_terms; i++) {
		unsigned in = derive_depth(
			reg, ctp_registry_get(reg, f->terms[i].input));
		d = in + 1 > d ? in + 1 : d;
	}
	return d;
}

int ctp_registry_add_derived(struct ctp_registry *reg, uint32_t plugin,
			     const struct ctp_derived_desc *d, const char **why,
			     int *term)
{
	struct ctp_field_term terms[CTP_DERIVE_MAX_TERMS];
	const struct ctp_field_desc *fd = &d->field;
	int ret;

	*term = -1;
	if (d->abi != CTP_ABI_MAJOR ||
	    d->size < offsetof(struct ctp_derived_desc, terms) ||
	    d->size < offsetof(struct ctp_derived_desc, terms) +
			      d->n_terms * sizeof(d->terms[0])) {
		*why = "wrong abi or size in the description";
		return -EINVAL;
	}
	if ((ret = ctp_field_desc_check(fd, why)) < 0)
		return ret;
	if ((fd->type != CTP_TYPE_U64 && fd->type != CTP_TYPE_I64) ||
	    (fd->kind != CTP_KIND_COUNTER && fd->kind != CTP_KIND_PEAK &&
	     fd->kind != CTP_KIND_GAUGE)) {
		*why = "a derived field is U64 or I64, of kind counter, peak "
		       "or gauge";
		return -EINVAL;
	}
	if (d->n_terms < 1 || d->n_terms > CTP_DERIVE_MAX_TERMS) {
		*why = "a formula has 1 to CTP_DERIVE_MAX_TERMS terms";
		return -EINVAL;
	}
	pthread_mutex_lock(&reg->lock);
	for (uint32_t i = 0; i < d->n_terms; i++) {
		const struct ctp_derive_term *t = &d->terms[i];
		*term = (int)i;
		ret = -EINVAL;
		if (t->coef == 0) {
			*why = "a coefficient is 0";
			goto out;
		}
		if (t->reserved[0] || t->reserved[1] || t->reserved[2]) {
			*why = "reserved bytes of a term must be 0";
			goto out;
		}
		if (t->coef < 0 && fd->type == CTP_TYPE_U64) {
			*why = "a negative coefficient needs an I64 result";
			goto out;
		}
		int id = t->field ? ctp_registry_find(reg, t->field) : -ENOENT;
		if (id < 0) {
			*why = "an input is not a registered field";
			ret = -ENOENT;
			goto out;
		}
		const struct ctp_field *in =
			ctp_registry_get(reg, (uint32_t)id);
		ret = -EINVAL;
		if (derive_depth(reg, in) + 1 > CTP_DERIVE_MAX_DEPTH) {
			*why = "derived inputs nest more than "
			       "CTP_DERIVE_MAX_DEPTH deep";
			goto out;
		}
		if (in->scope != fd->scope) {
			*why = "an input is of another scope";
			goto out;
		}
		if (in->type != CTP_TYPE_U64 && in->type != CTP_TYPE_I64) {
			*why = "an input is not U64 or I64";
			goto out;
		}
		/* A group must reduce each input to one number. */
		if (in->rule != CTP_RULE_SUM && in->rule != CTP_RULE_MAX &&
		    in->rule != CTP_RULE_MIN && in->rule != CTP_RULE_MODE) {
			*why = "an input's rule gives no single value (range)";
			goto out;
		}
		terms[i] = (struct ctp_field_term){.input = (uint32_t)id,
						   .coef = t->coef,
						   .max_set = t->max_set};
	}
	*term = -1;
	ret = ctp_registry_find(reg, fd->name);
	if (ret >= 0) {
		if (!derived_same(ctp_registry_get(reg, (uint32_t)ret), plugin,
				  fd, terms, (uint8_t)d->n_terms)) {
			*why = "the name is taken by a different description";
			ret = -EEXIST;
		}
		goto out;
	}
	ret = add_locked(reg, plugin, fd, terms, (uint8_t)d->n_terms);
out:
	pthread_mutex_unlock(&reg->lock);
	return ret;
}

int ctp_field_settable(const struct ctp_registry *reg, int field, uint8_t scope,
		       uint8_t type, uint32_t plugin)
{
	return ctp_field_for_set(reg, field, scope, type, plugin) ? 0 : -EINVAL;
}

/* ---- Tables -----------------------------------------------------------------
 */

#define PRESENT_WORDS (CTP_BLOCK_ROWS / 64)

void ctp_table_init(struct ctp_table *t)
{
	memset(t, 0, sizeof(*t));
}

void ctp_table_done(struct ctp_table *t)
{
	for (uint32_t b = 0; b < t->nblocks; b++) {
		struct ctp_block *blk = &t->blocks[b];
		for (uint32_t c = 0; c < blk->ncols; c++) {
			free(blk->vals[c]);
			free(blk->present[c]);
		}
		free(blk->vals);
		free(blk->lg);
		free(blk->present);
	}
	free(t->blocks);
	memset(t, 0, sizeof(*t));
}

int64_t ctp_table_add_row(struct ctp_table *t)
{
	if (t->nrows == UINT32_MAX)
		return -ENOSPC;
	uint32_t row = t->nrows;
	if (row / CTP_BLOCK_ROWS >= t->nblocks) {
		if (CTP_GROW(t->blocks, t->capblocks, (size_t)t->nblocks + 1,
			     4) < 0)
			return -ENOMEM;
		memset(&t->blocks[t->nblocks], 0, sizeof(t->blocks[0]));
		t->nblocks++;
	}
	t->nrows++;
	return row;
}

void ctp_table_truncate(struct ctp_table *t, uint32_t nrows)
{
	if (nrows >= t->nrows)
		return;
	/* Clear presence of the dropped rows so a re-added row starts
	 * absent; blocks stay allocated for reuse. */
	for (uint32_t r = nrows; r < t->nrows; r++) {
		struct ctp_block *blk = &t->blocks[r / CTP_BLOCK_ROWS];
		uint32_t i = r % CTP_BLOCK_ROWS;
		for (uint32_t c = 0; c < blk->ncols; c++)
			if (blk->present[c])
				blk->present[c][i / 64] &= ~(1ull << (i % 64));
	}
	t->nrows = nrows;
}

static int block_grow_cols(struct ctp_block *blk, uint32_t col)
{
	uint32_t n = blk->ncols ? blk->ncols : 8;
	while (n <= col)
		n *= 2;
	void **v = realloc(blk->vals, n * sizeof(*v));
	if (!v)
		return -ENOMEM;
	blk->vals = v;
	uint8_t *lg = realloc(blk->lg, n);
	if (!lg)
		return -ENOMEM;
	blk->lg = lg;
	uint64_t **p = realloc(blk->present, n * sizeof(*p));
	if (!p)
		return -ENOMEM;
	blk->present = p;
	for (uint32_t c = blk->ncols; c < n; c++) {
		blk->vals[c] = blk->present[c] = NULL;
		blk->lg[c] = 0;
	}
	blk->ncols = n;
	return 0;
}

/* The narrowest cell width that holds v. */
static uint8_t cell_lg(uint64_t v)
{
	uint8_t lg = 0;
	while (!ctp_cell_fits(lg, v))
		lg++;
	return lg;
}

/* Column col of blk to cells of 1 << lg bytes, its values kept. */
static int column_widen(struct ctp_block *blk, uint32_t col, uint8_t lg)
{
	void *wide = malloc((size_t)CTP_BLOCK_ROWS << lg);
	if (!wide)
		return -ENOMEM;
	for (uint32_t i = 0; i < CTP_BLOCK_ROWS; i++)
		ctp_cell_store(wide, lg, i,
			       ctp_cell_load(blk->vals[col], blk->lg[col], i));
	free(blk->vals[col]);
	blk->vals[col] = wide;
	blk->lg[col] = lg;
	return 0;
}

int ctp_table_set_slow(struct ctp_table *t, uint32_t row, uint32_t col,
		       uint64_t v)
{
	if (row >= t->nrows)
		return -EINVAL;
	struct ctp_block *blk = &t->blocks[row / CTP_BLOCK_ROWS];
	uint32_t i = row % CTP_BLOCK_ROWS;
	if (col >= blk->ncols && block_grow_cols(blk, col) < 0)
		return -ENOMEM;
	if (!blk->vals[col]) {
		uint8_t lg = cell_lg(v);
		blk->vals[col] = calloc(CTP_BLOCK_ROWS, (size_t)1 << lg);
		blk->present[col] = calloc(PRESENT_WORDS, sizeof(uint64_t));
		if (!blk->vals[col] || !blk->present[col]) {
			free(blk->vals[col]);
			free(blk->present[col]);
			blk->vals[col] = blk->present[col] = NULL;
			return -ENOMEM;
		}
		blk->lg[col] = lg;
	} else if (!ctp_cell_fits(blk->lg[col], v) &&
		   column_widen(blk, col, cell_lg(v)) < 0) {
		return -ENOMEM;
	}
	ctp_cell_store(blk->vals[col], blk->lg[col], i, v);
	blk->present[col][i / 64] |= 1ull << (i % 64);
	return 0;
}

void ctp_table_clear(struct ctp_table *t, uint32_t row, uint32_t col)
{
	if (row >= t->nrows)
		return;
	struct ctp_block *blk = &t->blocks[row / CTP_BLOCK_ROWS];
	uint32_t i = row % CTP_BLOCK_ROWS;
	if (col < blk->ncols && blk->present[col])
		blk->present[col][i / 64] &= ~(1ull << (i % 64));
}

int ctp_table_move_row(struct ctp_table *t, uint32_t from, uint32_t to)
{
	if (from >= t->nrows || to >= t->nrows)
		return -EINVAL;
	const struct ctp_block *src = &t->blocks[from / CTP_BLOCK_ROWS];
	struct ctp_block *dst = &t->blocks[to / CTP_BLOCK_ROWS];
	uint32_t ncols = src->ncols > dst->ncols ? src->ncols : dst->ncols;
	for (uint32_t c = 0; c < ncols; c++) {
		uint64_t v;
		int r = 0;
		if (ctp_table_get(t, from, c, &v))
			r = ctp_table_set(t, to, c, v);
		else
			ctp_table_clear(t, to, c);
		if (r < 0)
			return r;
	}
	return 0;
}

/* ---- Plugins ---------------------------------------------------------- */

int ctp_summary_register(struct ctp_plugin_info *info, const char *name)
{
	if (!name || !*name)
		return -EINVAL;
	for (uint32_t i = 0; i < info->n_summary; i++)
		if (strcmp(info->summary_name[i], name) == 0)
			return (int)i;
	if (info->n_summary >= CTP_MAX_SUMMARY)
		return -ENOSPC;
	char *dup = strdup(name);
	if (!dup)
		return -ENOMEM;
	info->summary_name[info->n_summary] = dup;
	atomic_store(&info->summary[info->n_summary], 0);
	return (int)info->n_summary++;
}

/* ---- Capture
 * ------------------------------------------------------------------ */

int ctp_capture_new(uint32_t n_workers, struct ctp_capture **ret)
{
	if (n_workers == 0 || n_workers > UINT16_MAX)
		return -EINVAL;
	struct ctp_capture *cap = calloc(1, sizeof(*cap));
	if (!cap)
		return -ENOMEM;
	ctp_registry_init(&cap->reg);
	ctp_table_init(&cap->host);
	ctp_table_init(&cap->cgroups);
	ctp_table_init(&cap->exited);
	cap->n_workers = n_workers;
	cap->ptrace_capable = -1;
	cap->threads = calloc(n_workers, sizeof(*cap->threads));
	cap->procs = calloc(n_workers, sizeof(*cap->procs));
	if (!cap->threads || !cap->procs || ctp_blobpool_new(&cap->blobs) < 0) {
		ctp_capture_free(cap);
		return -ENOMEM;
	}
	for (uint32_t w = 0; w < n_workers; w++) {
		ctp_table_init(&cap->threads[w]);
		ctp_table_init(&cap->procs[w]);
	}
	*ret = cap;
	return 0;
}

int ctp_capture_reset(struct ctp_capture *cap)
{
	struct ctp_blobpool *blobs;
	if (ctp_blobpool_new(&blobs) < 0)
		return -ENOMEM;
	ctp_blobpool_free(cap->blobs);
	cap->blobs = blobs;
	for (uint32_t w = 0; w < cap->n_workers; w++) {
		ctp_table_done(&cap->threads[w]);
		ctp_table_init(&cap->threads[w]);
		ctp_table_done(&cap->procs[w]);
		ctp_table_init(&cap->procs[w]);
	}
	ctp_table_done(&cap->host);
	ctp_table_init(&cap->host);
	ctp_table_done(&cap->cgroups);
	ctp_table_init(&cap->cgroups);
	ctp_table_done(&cap->exited);
	ctp_table_init(&cap->exited);
	free(cap->spans);
	free(cap->xspans);
	cap->spans = cap->xspans = NULL;
	cap->n_spans = cap->n_xspans = 0;
	/* The files read and their gates stay; the tallies start over. */
	struct ctp_readfail *rf = &cap->rf;
	rf->tids_walked = rf->tids_recorded = rf->tids_vanished = 0;
	rf->tgids_walked = rf->tgids_vanished = 0;
	memset(rf->failures, 0, sizeof(rf->failures));
	memset(rf->missing, 0, sizeof(rf->missing));
	memset(rf->denied, 0, sizeof(rf->denied));
	memset(rf->resource, 0, sizeof(rf->resource));
	rf->tids_unread_resource = rf->tgids_unread_resource = 0;
	rf->cgroups_unread_resource = 0;
	rf->resource_err = 0;
	rf->nofile_limit = 0;
	for (uint32_t i = 0; i < cap->n_plugins; i++) {
		struct ctp_plugin_info *p = &cap->plugins[i];
		atomic_store(&p->time_ns, 0);
		atomic_store(&p->calls, 0);
		atomic_store(&p->errors, 0);
		atomic_store(&p->vanished, 0);
		atomic_store(&p->resource, 0);
		atomic_store(&p->resource_err, 0);
		atomic_store(&p->exited_lost, 0);
		for (uint32_t s = 0; s < p->n_summary; s++)
			atomic_store(&p->summary[s], 0);
		/* A capture's hint is its own: a plugin says it again while
		 * its cause holds. init's stays (what the kernel or the
		 * configuration decided once). */
		free(p->hint);
		p->hint = NULL;
	}
	free(cap->hostname);
	free(cap->kernel_release);
	cap->hostname = cap->kernel_release = NULL;
	cap->start_realtime_ns = cap->end_realtime_ns = 0;
	cap->start_mono_ns = cap->end_mono_ns = cap->start_boottime_ns = 0;
	cap->cgroups_boottime_ns = 0;
	cap->n_self = 0;
	cap->walk_source[0] = cap->walk_fallback[0] = '\0';
	cap->walk_fallbacks = 0;
	cap->walk_unlisted = 0;
	return 0;
}

void ctp_capture_free(struct ctp_capture *cap)
{
	if (!cap)
		return;
	for (uint32_t i = 0; i < cap->n_plugins; i++) {
		struct ctp_plugin_info *p = &cap->plugins[i];
		free(p->name);
		free(p->path);
		free(p->version);
		free(p->reason);
		free(p->hint);
		free(p->init_hint);
		for (uint32_t s = 0; s < p->n_summary; s++)
			free(p->summary_name[s]);
	}
	free(cap->plugins);
	if (cap->threads)
		for (uint32_t w = 0; w < cap->n_workers; w++)
			ctp_table_done(&cap->threads[w]);
	if (cap->procs)
		for (uint32_t w = 0; w < cap->n_workers; w++)
			ctp_table_done(&cap->procs[w]);
	free(cap->threads);
	free(cap->procs);
	ctp_table_done(&cap->host);
	ctp_table_done(&cap->cgroups);
	ctp_table_done(&cap->exited);
	free(cap->spans);
	free(cap->xspans);
	for (uint32_t i = 0; i < cap->rf.n_files; i++)
		free(cap->rf.file[i]);
	for (uint32_t i = 0; i < CTP_MAX_FILES; i++)
		free(cap->rf.gate[i]);
	ctp_blobpool_free(cap->blobs);
	ctp_registry_done(&cap->reg);
	free(cap->hostname);
	free(cap->proc_root);
	free(cap->sys_root);
	free(cap->cgroup_root);
	free(cap->config_path);
	free(cap->kernel_release);
	free(cap);
}

const char *ctp_resource_errname(int err)
{
	switch (err < 0 ? -err : err) {
	case EMFILE:
		return "EMFILE";
	case ENFILE:
		return "ENFILE";
	case ENOMEM:
		return "ENOMEM";
	case ENOBUFS:
		return "ENOBUFS";
	default:
		return NULL;
	}
}

/* Append to why[*o .. n) as snprintf would, *o never past n - 1. */
static void say(char *why, size_t n, size_t *o, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static void say(char *why, size_t n, size_t *o, const char *fmt, ...)
{
	va_list ap;
	if (*o + 1 >= n)
		return;
	va_start(ap, fmt);
	int k = vsnprintf(why + *o, n - *o, fmt, ap);
	va_end(ap);
	if (k > 0)
		*o = *o + (size_t)k < n ? *o + (size_t)k : n - 1;
}

bool ctp_capture_spoiled(const struct ctp_capture *cap, char *why, size_t n)
{
	const struct ctp_readfail *rf = &cap->rf;
	uint64_t files = 0, calls = 0;
	for (uint32_t f = 0; f < CTP_MAX_FILES; f++)
		files += rf->resource[f];
	for (uint32_t i = 0; i < cap->n_plugins; i++)
		calls += atomic_load(&cap->plugins[i].resource);
	if (!rf->tgids_unread_resource && !rf->tids_unread_resource &&
	    !rf->cgroups_unread_resource && !files && !calls)
		return false;
	if (!why || !n)
		return true;
	size_t o = 0;
	const char *sep = "";
	why[0] = '\0';
	if (rf->tgids_unread_resource) {
		say(why, n, &o, "%" PRIu64 " of %" PRIu64 " processes unread",
		    rf->tgids_unread_resource, rf->tgids_walked);
		sep = ", ";
	}
	if (rf->tids_unread_resource) {
		say(why, n, &o, "%s%" PRIu64 " of %" PRIu64 " threads unread",
		    sep, rf->tids_unread_resource, rf->tids_walked);
		sep = ", ";
	}
	if (rf->cgroups_unread_resource) {
		say(why, n, &o, "%s%" PRIu64 " cgroups unread", sep,
		    rf->cgroups_unread_resource);
		sep = ", ";
	}
	if (files) {
		say(why, n, &o, "%s%" PRIu64 " file reads failed", sep, files);
		sep = ", ";
	}
	if (calls)
		say(why, n, &o, "%s%" PRIu64 " plugin calls failed", sep,
		    calls);
	const char *name = ctp_resource_errname(rf->resource_err);
	if (name)
		say(why, n, &o, ": %s (%s)", strerror(-rf->resource_err), name);
	if (rf->resource_err == -EMFILE && rf->nofile_limit)
		say(why, n, &o, "; descriptor limit %" PRIu64,
		    rf->nofile_limit);
	return true;
}
