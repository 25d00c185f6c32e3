// SPDX-License-Identifier: MIT
/* Pure helpers of jemalloc-probe: no I/O, unit-tested on their own. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/sysmacros.h>

#include "jep.h"

static const char *const tag_names[CTP_JEP_N_TAGS] = {
#define TAG_NAME(id, name) [id] = name,
	CTP_JEP_TAGS(TAG_NAME)
#undef TAG_NAME
};

const char *ctp_jep_tag_name(enum ctp_jep_tag t)
{
	return (unsigned)t < CTP_JEP_N_TAGS ? tag_names[t] : "unknown";
}

bool ctp_jep_tag_routine(enum ctp_jep_tag t)
{
	return t == CTP_JEP_NOT_JEMALLOC || t == CTP_JEP_EXITED;
}

int ctp_jep_dominant(const uint64_t *counts)
{
	int best = -1;

	for (int t = 0; t < CTP_JEP_N_TAGS; t++) {
		if (ctp_jep_tag_routine((enum ctp_jep_tag)t) || !counts[t])
			continue;
		if (best < 0 || counts[t] > counts[best])
			best = t;
	}
	return best;
}

/* ---- Examples and the hint ------------------------------------------------
 */

void ctp_jep_seen_add(struct ctp_jep_seen *s, int32_t pid, const char *comm)
{
	struct ctp_jep_example *e;
	size_t i;

	if (s->n >= CTP_JEP_EXAMPLES)
		return;
	for (i = 0; i < s->n; i++)
		if (s->ex[i].pid == pid)
			return;
	e = &s->ex[s->n++];
	e->pid = pid;
	for (i = 0; comm && comm[i] && i < sizeof(e->comm) - 1; i++) {
		unsigned char c = (unsigned char)comm[i];

		e->comm[i] = c < 0x20 || c == 0x7f ? '?' : (char)c;
	}
	e->comm[i] = '\0';
}

int ctp_jep_examples(char *buf, size_t len, const struct ctp_jep_seen *s,
		     uint64_t count)
{
	size_t used = 0;
	int n;

	if (len)
		buf[0] = '\0';
	for (uint32_t i = 0; i < s->n && i < CTP_JEP_EXAMPLES; i++) {
		n = snprintf(buf + (used < len ? used : len),
			     used < len ? len - used : 0, "%s%s (pid %d)",
			     i ? ", " : "",
			     s->ex[i].comm[0] ? s->ex[i].comm : "?",
			     (int)s->ex[i].pid);
		if (n < 0)
			return n;
		used += (size_t)n;
	}
	if (count > s->n) {
		n = snprintf(buf + (used < len ? used : len),
			     used < len ? len - used : 0,
			     "%s%" PRIu64 " in all", s->n ? ", ... " : "",
			     count);
		if (n < 0)
			return n;
		used += (size_t)n;
	}
	return (int)used;
}

static const char *remedy(enum ctp_jep_tag t, unsigned flags)
{
	switch (t) {
	case CTP_JEP_MAPS:
		return "its maps could not be read";
	case CTP_JEP_ELF:
		return "a mapped file could not be opened";
	case CTP_JEP_NO_DEBUGINFO:
		return "install its debug symbols or set option debuginfod: "
		       "true with DEBUGINFOD_URLS, or add its tsd_s layout "
		       "(ctprof-core jemalloc-layout)";
	case CTP_JEP_NO_TSD_LAYOUT:
		return "its jemalloc's DWARF has no tsd_s counters (an "
		       "unsupported jemalloc version)";
	case CTP_JEP_LINK_MAP:
		return "jemalloc's link_map was not found through _r_debug";
	case CTP_JEP_THREAD_DB:
		return flags & CTP_JEP_HINT_FALLBACK_OFF
			       ? "libthread_db cannot read it; method: auto "
				 "reads jemalloc in the executable through "
				 "ptrace, stopping each thread briefly"
			       : "libthread_db cannot read it and the ptrace "
				 "fallback did not apply";
	case CTP_JEP_PTRACE_SEIZE:
		return "PTRACE_SEIZE failed";
	case CTP_JEP_PTRACE_STOP:
		return "threads did not stop within ptrace_timeout_ms";
	case CTP_JEP_PTRACE_REGS:
		return "PTRACE_GETREGSET failed";
	case CTP_JEP_STATIC_TLS:
		return "no valid static-TLS address (ptrace reads jemalloc in "
		       "the executable only)";
	case CTP_JEP_VM_READV:
		return "process_vm_readv failed";
	case CTP_JEP_TABLE_PTRACE:
		return "its jemalloc is known by the layouts table, which only "
		       "the stop-free read uses (method: thread_db or auto)";
	case CTP_JEP_LAYOUT_MISMATCH:
		return "the layouts table's entry for its jemalloc read values "
		       "that cannot be its counters; check the entry";
	default:
		return "see plugins/jemalloc-probe/README.md";
	}
}

static bool is_failure(int t)
{
	return !ctp_jep_tag_routine((enum ctp_jep_tag)t) &&
	       t != CTP_JEP_TLS_DEFERRED;
}

size_t ctp_jep_hint(char *buf, size_t len, const uint64_t *counts,
		    const struct ctp_jep_seen *seen, unsigned flags)
{
	bool done[CTP_JEP_N_TAGS] = {false};
	size_t used = 0;
	int shown = 0, left = 0;

	if (!len)
		return 0;
	buf[0] = '\0';
	for (int t = 0; t < CTP_JEP_N_TAGS; t++)
		left += is_failure(t) && counts[t];
	while (left > 0 && shown < 3) {
		char ex[256];
		const char *why;
		int best = -1, n;

		for (int t = 0; t < CTP_JEP_N_TAGS; t++)
			if (is_failure(t) && counts[t] && !done[t] &&
			    (best < 0 || counts[t] > counts[best]))
				best = t;
		done[best] = true;
		left--;
		shown++;
		why = remedy((enum ctp_jep_tag)best, flags);
		if (seen[best].denied * 2 >= counts[best] && seen[best].denied)
			why = flags & CTP_JEP_HINT_PRIVILEGED
				      ? "refused access although ctprof-core "
					"holds CAP_SYS_PTRACE (a protected "
					"process: another user namespace's, "
					"an LSM, or kernel.yama.ptrace_scope "
					"3); no privilege fixes this"
				      : "permission denied: run as root or "
					"grant CAP_SYS_PTRACE, and check "
					"kernel.yama.ptrace_scope";
		ctp_jep_examples(ex, sizeof(ex), &seen[best], counts[best]);
		n = snprintf(buf + used, len - used, "%s%s: %s: %s",
			     used ? "; " : "",
			     ctp_jep_tag_name((enum ctp_jep_tag)best), ex, why);
		if (n < 0 || (size_t)n >= len - used) {
			/* Whole entries only. */
			buf[used] = '\0';
			return used;
		}
		used += (size_t)n;
	}
	if (left > 0) {
		int n = snprintf(buf + used, len - used,
				 "; %d more failure tags (-v lists them)",
				 left);

		if (n > 0 && (size_t)n < len - used)
			used += (size_t)n;
		else
			buf[used] = '\0';
	}
	return used;
}

#define TSD_PREFIX "cant_access_tsd_items_directly_use_a_getter_or_setter_"

int ctp_jep_member_kind(const char *name)
{
	size_t pl = sizeof(TSD_PREFIX) - 1;

	if (!strncmp(name, TSD_PREFIX, pl))
		name += pl;
	if (!strcmp(name, "thread_allocated"))
		return 1;
	if (!strcmp(name, "thread_deallocated"))
		return 2;
	return 0;
}

bool ctp_jep_is_tsd_symbol(const char *name)
{
	size_t n = strlen(name);
	static const char suffix[] = "tsd_tls";
	size_t sl = sizeof(suffix) - 1;

	if (n < sl || strcmp(name + n - sl, suffix))
		return false;
	/* tsd_tls itself, or <prefix>_tsd_tls with a non-empty prefix. */
	return n == sl || (n > sl + 1 && name[n - sl - 1] == '_');
}

static bool pow2(uint64_t a)
{
	return a && !(a & (a - 1));
}

static uint64_t round_up(uint64_t v, uint64_t a)
{
	return (v + a - 1) & ~(a - 1);
}

int ctp_jep_tls_x86_64(uint64_t tp, uint64_t memsz, uint64_t align,
		       uint64_t st_value, uint64_t *addr)
{
	uint64_t block;

	if (!align)
		align = 1;
	if (!pow2(align) || memsz > UINT64_MAX - align)
		return -EINVAL;
	block = round_up(memsz, align);
	if (block > tp || st_value >= block)
		return -EINVAL;
	*addr = tp - block + st_value;
	return 0;
}

int ctp_jep_tls_arm64(uint64_t tp, uint64_t memsz, uint64_t align,
		      uint64_t st_value, uint64_t *addr)
{
	uint64_t off;

	if (!align)
		align = 1;
	if (!pow2(align) || (memsz && st_value >= memsz))
		return -EINVAL;
	off = round_up(16, align);
	if (tp > UINT64_MAX - off - st_value)
		return -EINVAL;
	*addr = tp + off + st_value;
	return 0;
}
