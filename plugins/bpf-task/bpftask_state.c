/* bpf-task's times across captures: the state file (bpftask_state.h). */
#include "bpftask_state.h"
#include "statedir.h"

#include <ctprof/plugin-util.h>

#include <errno.h>
#include <stddef.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

_Static_assert(sizeof(struct ctp_bpftask_state_hdr) == 48,
	       "the header keeps the entries 8-byte aligned");
_Static_assert(sizeof(struct ctp_bpftask_ticks) == 40, "an entry's size");

static const char *const why_names[CTP_BTS_N_WHY] = {
	[CTP_BTS_OK] = "ok",
	[CTP_BTS_SHORT] = "short",
	[CTP_BTS_MAGIC] = "not a state file",
	[CTP_BTS_VERSION] = "another version",
	[CTP_BTS_BOOT] = "another boot",
	[CTP_BTS_BIG] = "too many entries",
	[CTP_BTS_COUNT] = "length unlike its counts",
	[CTP_BTS_ORDER] = "entries not sorted",
};

const char *ctp_bpftask_state_why_name(enum ctp_bpftask_state_why why)
{
	return (unsigned)why < CTP_BTS_N_WHY ? why_names[why] : "?";
}

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

int ctp_bpftask_boot_id(const char *text, size_t len, uint8_t out[16])
{
	uint8_t b[16];
	size_t k = 0;

	if (len && text[len - 1] == '\n')
		len--;
	if (len != 36)
		return -EINVAL;
	for (size_t i = 0; i < len; i++) {
		int hi, lo;
		if (i == 8 || i == 13 || i == 18 || i == 23) {
			if (text[i] != '-')
				return -EINVAL;
			continue;
		}
		if (i + 1 >= len || (hi = hexval(text[i])) < 0 ||
		    (lo = hexval(text[i + 1])) < 0)
			return -EINVAL;
		b[k++] = (uint8_t)(hi << 4 | lo);
		i++;
	}
	if (k != 16)
		return -EINVAL;
	memcpy(out, b, 16);
	return 0;
}

/* Whether a (n entries) is strictly increasing by tgid then tid, and
 * (procs) each entry's tid its tgid. */
static int sorted(const struct ctp_bpftask_ticks *a, size_t n, int procs)
{
	for (size_t i = 0; i < n; i++) {
		if (procs && a[i].tid != a[i].tgid)
			return 0;
		if (i &&
		    !(a[i - 1].tgid < a[i].tgid ||
		      (a[i - 1].tgid == a[i].tgid && a[i - 1].tid < a[i].tid)))
			return 0;
	}
	return 1;
}

/* The entries' size of h's version, or 0 for a version not read. */
static uint64_t entry_size(const struct ctp_bpftask_state_hdr *h)
{
	if (h->version == CTP_BPFTASK_STATE_VERSION)
		return sizeof(struct ctp_bpftask_ticks);
	return h->version == 1 ? CTP_BPFTASK_STATE_V1_ENTRY : 0;
}

_Static_assert(offsetof(struct ctp_bpftask_ticks, exec_id) ==
		       CTP_BPFTASK_STATE_V1_ENTRY,
	       "version 2 appended exec_id to version 1's entry");

void ctp_bpftask_state_widen(struct ctp_bpftask_ticks *e, size_t n)
{
	const size_t v1 = CTP_BPFTASK_STATE_V1_ENTRY;

	/* Back to front: entry i moves from 32 i to 40 i, never onto an
	 * entry not yet moved. */
	for (size_t i = n; i-- > 0;) {
		struct ctp_bpftask_ticks t = {0};
		memcpy(&t, (const char *)e + i * v1, v1);
		e[i] = t;
	}
}

enum ctp_bpftask_state_why
ctp_bpftask_state_check_header(const struct ctp_bpftask_state_hdr *h,
			       uint64_t len, const uint8_t boot_id[16],
			       size_t max_entries)
{
	uint64_t es = entry_size(h);

	if (len < sizeof(*h))
		return CTP_BTS_SHORT;
	if (memcmp(h->magic, CTP_BPFTASK_STATE_MAGIC, sizeof(h->magic)))
		return CTP_BTS_MAGIC;
	if (!es || h->entry_size != es)
		return CTP_BTS_VERSION;
	if (memcmp(h->boot_id, boot_id, sizeof(h->boot_id)))
		return CTP_BTS_BOOT;
	if (h->n_tasks > max_entries || h->n_procs > max_entries)
		return CTP_BTS_BIG;
	/* Both at most max_entries (a size_t): no overflow in 64 bits. */
	if (len - sizeof(*h) != (h->n_tasks + h->n_procs) * es)
		return CTP_BTS_COUNT;
	return CTP_BTS_OK;
}

enum ctp_bpftask_state_why ctp_bpftask_state_check_entries(
	const struct ctp_bpftask_ticks *tasks, size_t n_tasks,
	const struct ctp_bpftask_ticks *procs, size_t n_procs)
{
	return sorted(tasks, n_tasks, 0) && sorted(procs, n_procs, 1)
		       ? CTP_BTS_OK
		       : CTP_BTS_ORDER;
}

enum ctp_bpftask_state_why
ctp_bpftask_state_parse(const void *buf, size_t len, const uint8_t boot_id[16],
			size_t max_entries,
			const struct ctp_bpftask_ticks **tasks, size_t *n_tasks,
			const struct ctp_bpftask_ticks **procs, size_t *n_procs)
{
	struct ctp_bpftask_state_hdr h;
	const struct ctp_bpftask_ticks *e;
	enum ctp_bpftask_state_why why;

	if (len < sizeof(h))
		return CTP_BTS_SHORT;
	memcpy(&h, buf, sizeof(h));
	why = ctp_bpftask_state_check_header(&h, len, boot_id, max_entries);
	if (why != CTP_BTS_OK)
		return why;
	/* In place: only this version's entries are the array. */
	if (h.version != CTP_BPFTASK_STATE_VERSION)
		return CTP_BTS_VERSION;
	e = (const struct ctp_bpftask_ticks *)(const void *)((const char *)buf +
							     sizeof(h));
	why = ctp_bpftask_state_check_entries(e, h.n_tasks, e + h.n_tasks,
					      h.n_procs);
	if (why != CTP_BTS_OK)
		return why;
	*tasks = e;
	*n_tasks = h.n_tasks;
	*procs = e + h.n_tasks;
	*n_procs = h.n_procs;
	return CTP_BTS_OK;
}

void ctp_bpftask_state_header(struct ctp_bpftask_state_hdr *h,
			      const uint8_t boot_id[16], size_t n_tasks,
			      size_t n_procs)
{
	memset(h, 0, sizeof(*h));
	memcpy(h->magic, CTP_BPFTASK_STATE_MAGIC, sizeof(h->magic));
	h->version = CTP_BPFTASK_STATE_VERSION;
	h->entry_size = sizeof(struct ctp_bpftask_ticks);
	h->n_tasks = n_tasks;
	h->n_procs = n_procs;
	memcpy(h->boot_id, boot_id, sizeof(h->boot_id));
}

int ctp_bpftask_state_load(int dirfd, const uint8_t boot_id[16],
			   size_t max_entries, struct ctp_bpftask_ticks **tasks,
			   size_t *cap_tasks, size_t *n_tasks,
			   struct ctp_bpftask_ticks **procs, size_t *cap_procs,
			   size_t *n_procs, struct stat *sb,
			   enum ctp_bpftask_state_why *why)
{
	struct ctp_bpftask_state_hdr h;
	int fd = ctp_statedir_open_file(dirfd, CTP_BPFTASK_STATE_FILE, sb);
	size_t nt, np, es;
	int r;

	*why = CTP_BTS_OK;
	if (fd < 0)
		return fd;
	/* The header first: the counts bound what is read after it. */
	memset(&h, 0, sizeof(h));
	if ((uint64_t)sb->st_size >= sizeof(h) &&
	    (r = ctp_statedir_read_at(fd, &h, sizeof(h), 0)) < 0)
		goto out;
	*why = ctp_bpftask_state_check_header(&h, (uint64_t)sb->st_size,
					      boot_id, max_entries);
	r = -EINVAL;
	if (*why != CTP_BTS_OK)
		goto out;
	nt = (size_t)h.n_tasks;
	np = (size_t)h.n_procs;
	es = (size_t)h.entry_size; /* this version's or version 1's */
	if ((r = CTP_GROW(*tasks, *cap_tasks, nt, 1024)) < 0 ||
	    (r = CTP_GROW(*procs, *cap_procs, np, 256)) < 0 ||
	    (r = ctp_statedir_read_at(fd, *tasks, nt * es, sizeof(h))) < 0 ||
	    (r = ctp_statedir_read_at(fd, *procs, np * es,
				      (off_t)(sizeof(h) + nt * es))) < 0)
		goto out;
	if (h.version != CTP_BPFTASK_STATE_VERSION) {
		ctp_bpftask_state_widen(*tasks, nt);
		ctp_bpftask_state_widen(*procs, np);
	}
	*why = ctp_bpftask_state_check_entries(*tasks, nt, *procs, np);
	r = -EINVAL;
	if (*why != CTP_BTS_OK)
		goto out;
	*n_tasks = nt;
	*n_procs = np;
	r = 0;
out:
	close(fd);
	return r;
}

int ctp_bpftask_state_write(int dirfd, const struct ctp_bpftask_state_hdr *h,
			    const struct ctp_bpftask_ticks *tasks,
			    const struct ctp_bpftask_ticks *procs,
			    struct stat *sbp)
{
	const struct iovec iov[3] = {
		{(void *)h, sizeof(*h)},
		{(void *)tasks, h->n_tasks * sizeof(*tasks)},
		{(void *)procs, h->n_procs * sizeof(*procs)},
	};

	return ctp_statedir_replace(dirfd, CTP_BPFTASK_STATE_FILE, iov, 3, sbp);
}
