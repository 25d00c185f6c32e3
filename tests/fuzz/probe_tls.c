/* SPDX-License-Identifier: MIT */
/*
 * jemalloc-probe's reads of target memory (ctp_jep_read_thread_db): glibc's
 * libthread_db through the proc_service callbacks of jep_ps.c (td_ta_new,
 * the thread walk, td_thr_tls_get_addr / td_thr_tlsbase), the descriptors'
 * tids, the walk of _r_debug's link_maps, and the counter reads, all
 * against a fake memory (ctp_jep_mem) served from the input: no process
 * is read.
 *
 * Input, little-endian:
 *   u8 flags     bit 0: jemalloc in the executable (td_thr_tlsbase of
 *                module 1), else in a DSO (its link_map, by dyn_vaddr)
 *                bit 1: the _thread_db_* descriptors from the input too
 *                (honoured only with CTP_FUZZ_TLS_RAW=1, see below)
 *   u8 n_syms    (at most MAX_SYMS)
 *   u8 pad[6]
 *   u64 tsd_value, off_alloc, off_dealloc, dyn_vaddr, bias
 *   n_syms times: name, NUL, u64 address      the target's symbols
 *   then up to the end: u64 addr, u32 len, len bytes   memory segments
 *
 * A read is served when it lies within one segment. The _thread_db_*
 * symbols are glibc's descriptions of its own structures (sizes, field
 * offsets), constants of libc's read-only data: libthread_db trusts them
 * (an alloca of the size it reads, fields copied at the offsets it reads),
 * so they are served from this process's own libc, which matches the
 * libthread_db it links, and the input drives everything a process keeps
 * in writable memory. (A fully static glibc has a few descriptors of its
 * own, for variables libc.so keeps in _rtld_global: those come from the
 * input.) CTP_FUZZ_TLS_RAW=1 takes them from the input too, to
 * reproduce what libthread_db does with hostile descriptors (README.md).
 *
 * Seed: tests/fuzz/gen_probe_tls_seed.sh records a live jemalloc worker
 * through this same seam (probe_tls_record.c).
 */
#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <link.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "jep.h"

#define HEADER	     48
#define MAX_SYMS     64
#define MAX_SEGS     512
#define NAME_MAX_LEN 127
#define CAP	     16 /* threads the walk may report */

struct seg {
	uint64_t addr;
	size_t len;
	const uint8_t *bytes;
};

struct image {
	struct {
		const char *name;
		uint64_t addr;
	} sym[MAX_SYMS];
	size_t n_sym;
	struct seg seg[MAX_SEGS];
	size_t n_seg;
	bool raw;	/* descriptors from the input */
	uint64_t reads; /* made so far (trace_read) */
};

/* The descriptors found in this process, kept across inputs (libthread_db
 * knows some sixty names; bounded anyway). */
#define MAX_SELF 128
static struct {
	char *name;
	uint64_t addr;
	size_t len;
} self[MAX_SELF];
static size_t n_self;

/*
 * libthread_db is not instrumented, so libFuzzer would not see which of
 * its paths an input takes. Each read it asks for marks one of these
 * counters (libFuzzer's extra counters: new ones count as new coverage),
 * by its rank in the input's reads, its size class and where it was
 * served from, so a mutation that leads it one step further is kept.
 */
#define TRACE_READS 64
__attribute__((used, section("__libfuzzer_extra_counters"))) static uint8_t
	trace[TRACE_READS * 17 * 3];

static void trace_read(struct image *im, size_t len, int from)
{
	size_t rank = im->reads < TRACE_READS ? im->reads : TRACE_READS - 1;
	size_t cls = 0;

	while (cls < 16 && (size_t)1 << cls < len)
		cls++;
	im->reads++;
	trace[(rank * 17 + cls) * 3 + (size_t)from]++;
}

static uint64_t le64(const uint8_t *p)
{
	uint64_t v = 0;

	for (int i = 7; i >= 0; i--)
		v = v << 8 | p[i];
	return v;
}

static uint32_t le32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
	       (uint32_t)p[3] << 24;
}

static bool within(uint64_t addr, size_t len, uint64_t start, size_t size)
{
	return addr >= start && len <= size && addr - start <= size - len;
}

static int self_lookup(const char *name, uint64_t *addr)
{
	const ElfW(Sym) *sym = NULL;
	Dl_info info;
	void *p;

	for (size_t i = 0; i < n_self; i++)
		if (!strcmp(self[i].name, name)) {
			*addr = self[i].addr;
			return 0;
		}
	p = dlsym(RTLD_DEFAULT, name);
	if (!p || n_self == MAX_SELF ||
	    !dladdr1(p, &info, (void **)&sym, RTLD_DL_SYMENT) || !sym ||
	    !sym->st_size)
		return -1;
	self[n_self].name = strdup(name);
	if (!self[n_self].name)
		return -1;
	self[n_self].addr = (uint64_t)(uintptr_t)p;
	self[n_self].len = sym->st_size;
	*addr = self[n_self++].addr;
	return 0;
}

static int img_lookup(void *arg, const char *name, uint64_t *addr)
{
	struct image *im = arg;

	if (!im->raw && !strncmp(name, "_thread_db_", 11) &&
	    !self_lookup(name, addr))
		return 0;
	for (size_t i = 0; i < im->n_sym; i++)
		if (!strcmp(im->sym[i].name, name)) {
			*addr = im->sym[i].addr;
			return 0;
		}
	return -ENOENT;
}

static int img_read(void *arg, uint64_t addr, void *buf, size_t len)
{
	struct image *im = arg;

	if (!im->raw)
		for (size_t i = 0; i < n_self; i++)
			if (within(addr, len, self[i].addr, self[i].len)) {
				memcpy(buf, (const char *)(uintptr_t)addr, len);
				trace_read(im, len, 0);
				return 0;
			}
	for (size_t i = 0; i < im->n_seg; i++) {
		const struct seg *s = &im->seg[i];

		if (within(addr, len, s->addr, s->len)) {
			memcpy(buf, s->bytes + (addr - s->addr), len);
			trace_read(im, len, 1);
			return 0;
		}
	}
	trace_read(im, len, 2);
	return -EFAULT;
}

/* Symbols then segments after the header; false when malformed. */
static bool parse(const uint8_t *d, size_t size, size_t n_syms,
		  struct image *im)
{
	size_t off = HEADER;

	for (size_t i = 0; i < n_syms; i++) {
		const uint8_t *nul = memchr(d + off, 0, size - off);

		if (!nul || (size_t)(nul - (d + off)) > NAME_MAX_LEN ||
		    size - (size_t)(nul + 1 - d) < 8)
			return false;
		im->sym[i].name = (const char *)(d + off);
		im->sym[i].addr = le64(nul + 1);
		off = (size_t)(nul + 1 - d) + 8;
	}
	im->n_sym = n_syms;
	while (size - off >= 12 && im->n_seg < MAX_SEGS) {
		struct seg *s = &im->seg[im->n_seg++];
		uint32_t len = le32(d + off + 8);

		s->addr = le64(d + off);
		off += 12;
		s->len = len < size - off ? (size_t)len : size - off;
		s->bytes = d + off;
		off += s->len;
	}
	return true;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct image im;
	static struct ctp_jep_counters out[CAP];
	struct ctp_jep_mem mem = {img_read, img_lookup, &im};
	struct ctp_jep_file file = {0};
	struct ctp_jep_target t = {0};
	enum ctp_jep_tag tag = CTP_JEP_NOT_JEMALLOC;
	const char *raw = getenv("CTP_FUZZ_TLS_RAW");
	size_t n = 0;

	if (size < HEADER || data[1] > MAX_SYMS)
		return 0;
	memset(&im, 0, sizeof(im));
	im.raw = (data[0] & 2) && raw && !strcmp(raw, "1");
	if (!parse(data, size, data[1], &im))
		return 0;
	file.found = true;
	file.tsd_value = le64(data + 8);
	file.off_alloc = le64(data + 16);
	file.off_dealloc = le64(data + 24);
	file.dyn_vaddr = le64(data + 32);
	t.pid = 1; /* never read: every read goes to mem */
	t.file = &file;
	t.bias = le64(data + 40);
	t.in_main_exe = data[0] & 1;
	t.mem = &mem;
	ctp_jep_read_thread_db(&t, out, CAP, &n, &tag);
	if (n > CAP)
		abort();
	for (size_t i = 0; i < n; i++) {
		if (out[i].tid <= 0 || out[i].err > 0)
			abort();
		/* gen_probe_tls_seed.sh checks that a seed reaches the
		 * counters, and reads the values the recording read. */
		if (getenv("CTP_FUZZ_TLS_PRINT"))
			printf("tid %d err %d allocated %llu deallocated "
			       "%llu\n",
			       (int)out[i].tid, out[i].err,
			       (unsigned long long)out[i].allocated,
			       (unsigned long long)out[i].deallocated);
	}
	return 0;
}
