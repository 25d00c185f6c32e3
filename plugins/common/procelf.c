// SPDX-License-Identifier: MIT
/*
 * procelf: mappings, executable identity, ELF headers and symbols, and the
 * caches of plugins that look inside live processes (procelf.h).
 */
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/uio.h>
#include <sys/sendfile.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/syscall.h>
#include <linux/capability.h>
#include <unistd.h>

#include "procelf.h"
#include "statedir.h"
#include "ctprof/plugin-util.h"
#include "ctprof/plugin.h"
#include "ctprof/source-process.h"

/* ---- maps ------------------------------------------------------------------
 */

/* Hex number up to a delimiter; advances *p. */
static int hex(const char **p, const char *end, uint64_t *out)
{
	uint64_t v = 0;
	const char *s = *p;

	if (s >= end)
		return -EINVAL;
	for (; s < end; s++) {
		unsigned d;

		if (*s >= '0' && *s <= '9')
			d = (unsigned)(*s - '0');
		else if (*s >= 'a' && *s <= 'f')
			d = (unsigned)(*s - 'a' + 10);
		else if (*s >= 'A' && *s <= 'F')
			d = (unsigned)(*s - 'A' + 10);
		else
			break;
		if (v >> 60)
			return -EINVAL;
		v = v << 4 | d;
	}
	if (s == *p)
		return -EINVAL;
	*p = s;
	*out = v;
	return 0;
}

static int expect(const char **p, const char *end, char c)
{
	if (*p >= end || **p != c)
		return -EINVAL;
	(*p)++;
	return 0;
}

/* "start-end perms offset major:minor inode   path" */
int ctp_maps_line(const char *buf, size_t len, struct ctp_map *out)
{
	const char *p = buf, *end = buf + len;
	uint64_t maj, min, ino = 0;

	memset(out, 0, sizeof(*out));
	if (hex(&p, end, &out->start) || expect(&p, end, '-') ||
	    hex(&p, end, &out->end) || expect(&p, end, ' '))
		return -EINVAL;
	if (end - p < 5)
		return -EINVAL;
	out->exec = p[2] == 'x';
	p += 4;
	if (expect(&p, end, ' ') || hex(&p, end, &out->offset) ||
	    expect(&p, end, ' ') || hex(&p, end, &maj) ||
	    expect(&p, end, ':') || hex(&p, end, &min) || expect(&p, end, ' '))
		return -EINVAL;
	if (p >= end || *p < '0' || *p > '9')
		return -EINVAL;
	for (; p < end && *p >= '0' && *p <= '9'; p++)
		ino = ino * 10 + (uint64_t)(*p - '0');
	out->dev = makedev((unsigned)maj, (unsigned)min);
	out->ino = ino;
	while (p < end && *p == ' ')
		p++;
	out->path = p;
	out->path_len = (size_t)(end - p);
	return 0;
}

static int slurp(struct ctp_maps *m, int fd, size_t *len)
{
	for (;;) {
		ssize_t r;

		if (m->cap - *len < 4096) {
			size_t nc = m->cap ? m->cap * 2 : 65536;
			char *nb = realloc(m->buf, nc);

			if (!nb)
				return -ENOMEM;
			m->buf = nb;
			m->cap = nc;
		}
		/* To the end: maps is a seq_file of one record per mapping,
		 * handed out a page per read. */
		r = read(fd, m->buf + *len, m->cap - *len - 1);
		if (r < 0)
			return -errno;
		if (!r)
			return 0;
		*len += (size_t)r;
	}
}

int ctp_maps_parse(struct ctp_maps *m, const char *buf, size_t len)
{
	const char *p = buf, *end = buf + len;

	m->n = 0;
	while (p < end) {
		struct ctp_map x;
		/* Only file mappings matter (symbols, biases), and only a
		 * line's path can hold a '/' (the other fields are numbers
		 * and flags): the lines up to the next '/' are anonymous
		 * (a thread's stack and guard, the heap) and skipped
		 * unparsed. */
		const char *s = memchr(p, '/', (size_t)(end - p));
		const char *b, *e;

		if (!s)
			break;
		b = memrchr(p, '\n', (size_t)(s - p));
		b = b ? b + 1 : p;
		e = memchr(s, '\n', (size_t)(end - s));
		if (!e)
			e = end;
		p = e + 1;
		if (ctp_maps_line(b, (size_t)(e - b), &x) || !x.ino ||
		    x.path_len == 0 || x.path[0] != '/')
			continue;
		if (m->n == m->alloc) {
			size_t na = m->alloc ? m->alloc * 2 : 64;
			void *nv = realloc(m->v, na * sizeof(*m->v));

			if (!nv)
				return -ENOMEM;
			m->v = nv;
			m->alloc = na;
		}
		m->v[m->n++] = x;
	}
	return 0;
}

int ctp_maps_read(struct ctp_maps *m, int dirfd)
{
	size_t len = 0;
	int r, fd = openat(dirfd, "maps", O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return -errno;
	r = slurp(m, fd, &len);
	close(fd);
	if (r)
		return r;
	m->buf[len] = '\0';
	return ctp_maps_parse(m, m->buf, len);
}

void ctp_maps_free(struct ctp_maps *m)
{
	free(m->buf);
	free(m->v);
	memset(m, 0, sizeof(*m));
}

static uint64_t fnv(uint64_t h, uint64_t v)
{
	for (int i = 0; i < 8; i++) {
		h ^= (v >> (8 * i)) & 0xff;
		h *= 0x100000001b3ull;
	}
	return h;
}

uint64_t ctp_maps_exec_hash(const struct ctp_maps *m)
{
	uint64_t sum = 0, x = 0;

	for (size_t i = 0; i < m->n; i++) {
		uint64_t h;

		if (!m->v[i].exec)
			continue;
		h = fnv(fnv(0xcbf29ce484222325ull, m->v[i].dev), m->v[i].ino);
		sum += h;
		x ^= h * 31;
	}
	return sum ^ (x << 1);
}

int ctp_maps_bias(const struct ctp_map *v, size_t n, uint64_t dev, uint64_t ino,
		  uint64_t first_load_vaddr, bool is_dyn, uint64_t *bias)
{
	for (size_t i = 0; i < n; i++) {
		if (v[i].dev != dev || v[i].ino != ino || v[i].offset != 0)
			continue;
		*bias = is_dyn ? v[i].start - first_load_vaddr : 0;
		return 0;
	}
	return -ENOENT;
}

long ctp_maps_find_exec(const struct ctp_map *v, size_t n, uint64_t dev,
			uint64_t ino)
{
	for (size_t i = 0; i < n; i++)
		if (v[i].exec && v[i].dev == dev && v[i].ino == ino)
			return (long)i;
	return -1;
}

int ctp_exe_ident(int dirfd, uint64_t *dev, uint64_t *ino)
{
	struct stat sb;

	if (fstatat(dirfd, "exe", &sb, 0) < 0)
		return -errno;
	*dev = sb.st_dev;
	*ino = sb.st_ino;
	return 0;
}

int ctp_task_tids(int dirfd, int32_t **tids, size_t *cap, size_t *n)
{
	int fd;
	DIR *d;
	struct dirent *de;

	*n = 0;
	fd = openat(dirfd, "task", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	d = fdopendir(fd);
	if (!d) {
		close(fd);
		return -ENOMEM;
	}
	while ((de = readdir(d))) {
		uint32_t v;

		if (ctp_parse_pid(de->d_name, &v) < 0 || v == 0)
			continue;
		if (*n == *cap) {
			size_t nc = *cap ? *cap * 2 : 256;
			void *nt = realloc(*tids, nc * sizeof(**tids));

			if (!nt)
				break;
			*tids = nt;
			*cap = nc;
		}
		(*tids)[(*n)++] = (int32_t)v;
	}
	closedir(d);
	return 0;
}

bool ctp_cap_effective(unsigned cap)
{
	struct __user_cap_header_struct h = {
		.version = _LINUX_CAPABILITY_VERSION_3};
	struct __user_cap_data_struct d[2];

	if (cap >= 64 || syscall(SYS_capget, &h, d) < 0)
		return false;
	return (d[cap / 32].effective >> (cap % 32)) & 1;
}

bool ctp_cap_sys_ptrace(void)
{
	return ctp_cap_effective(CAP_SYS_PTRACE);
}

/* ---- ELF ------------------------------------------------------------------
 */

void ctp_elf_info(Elf *elf, struct ctp_elf_info *out)
{
	GElf_Ehdr eh;
	size_t n;
	bool have_load = false;

	memset(out, 0, sizeof(*out));
	if (!gelf_getehdr(elf, &eh) || elf_getphdrnum(elf, &n))
		return;
	out->is_dyn = eh.e_type == ET_DYN;
	out->machine = eh.e_machine;
	for (size_t i = 0; i < n; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(elf, (int)i, &ph))
			continue;
		if (ph.p_type == PT_DYNAMIC)
			out->dyn_vaddr = ph.p_vaddr;
		else if (ph.p_type == PT_TLS) {
			out->tls_memsz = ph.p_memsz;
			out->tls_align = ph.p_align;
		} else if (ph.p_type == PT_LOAD && !have_load) {
			uint64_t a = ph.p_align > 1 ? ph.p_align : 1;

			out->first_load_vaddr = ph.p_vaddr & ~(a - 1);
			have_load = true;
		}
	}
}

void ctp_elf_each_symbol(Elf *elf, ctp_elf_sym_fn fn, void *arg)
{
	Elf_Scn *scn = NULL;

	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		Elf_Data *d;
		size_t cnt;

		if (!gelf_getshdr(scn, &sh) ||
		    (sh.sh_type != SHT_DYNSYM && sh.sh_type != SHT_SYMTAB) ||
		    !sh.sh_entsize)
			continue;
		d = elf_getdata(scn, NULL);
		cnt = sh.sh_size / sh.sh_entsize;
		for (size_t i = 0; d && i < cnt; i++) {
			GElf_Sym sym;
			const char *n;

			if (!gelf_getsym(d, (int)i, &sym) ||
			    sym.st_shndx == SHN_UNDEF)
				continue;
			n = elf_strptr(elf, sh.sh_link, sym.st_name);
			if (n && !fn(arg, n, &sym))
				return;
		}
	}
}

/* ---- Files of other processes
 * ------------------------------------------------------ */

/* Whether someone other than root may shrink the file while the
 * collector maps it: its owner (anyone's but root's, a container's root
 * too), or its group or everyone when they may write it. */
static bool others_can_shrink(const struct stat *st)
{
	return st->st_uid != 0 || (st->st_mode & (S_IWGRP | S_IWOTH));
}

/* A sealed copy in memory of fd's first `size` bytes (fewer if it shrank
 * meanwhile): a descriptor at offset 0, or a negative errno. */
static int sealed_copy(int fd, off_t size)
{
	int m = memfd_create("ctp-foreign", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	off_t done = 0;

	if (m < 0)
		return -errno;
	while (done < size) {
		ssize_t n = sendfile(m, fd, NULL, (size_t)(size - done));

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			int err = -errno;
			close(m);
			return err;
		}
		if (n == 0)
			break;
		done += n;
	}
	if (fcntl(m, F_ADD_SEALS,
		  F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE | F_SEAL_SEAL) <
		    0 ||
	    lseek(m, 0, SEEK_SET) < 0) {
		int err = -errno;
		close(m);
		return err;
	}
	return m;
}

/* The first half of ctp_foreign_open: an O_PATH descriptor on the file at
 * path, checked, with *st; or a negative errno. */
static int foreign_path(int dirfd, const char *path, uint64_t want_dev,
			uint64_t want_ino, struct stat *st)
{
	int pfd, r = 0;

	/* O_PATH opens nothing: a FIFO does not block it, a device's driver
	 * does not see it, and with O_NOFOLLOW a symbolic link is the link. */
	pfd = openat(dirfd, path, O_PATH | O_NOFOLLOW | O_CLOEXEC);
	if (pfd < 0)
		return -errno;
	if (fstat(pfd, st) < 0)
		r = -errno;
	else if (S_ISLNK(st->st_mode))
		r = -ELOOP;
	else if (!S_ISREG(st->st_mode))
		r = -EINVAL;
	else if ((want_dev || want_ino) &&
		 (st->st_dev != want_dev || st->st_ino != want_ino))
		r = -ESTALE;
	if (r) {
		close(pfd);
		return r;
	}
	return pfd;
}

/* The second half: the file pfd holds opened for reading (closes pfd). */
static int foreign_reopen(int pfd, const struct stat *st)
{
	char self[64];
	int fd, r;

	/* The inode pfd holds, whatever is under its name now; this
	 * thread's table (a worker may have a descriptor table of its own,
	 * CTP_PLUGIN_FD_LOCAL). O_NONBLOCK: a regular file ignores it. */
	snprintf(self, sizeof(self), "/proc/thread-self/fd/%d", pfd);
	fd = open(self, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	r = fd < 0 ? -errno : 0;
	close(pfd);
	if (fd < 0 || !others_can_shrink(st))
		return fd < 0 ? r : fd;
	/* libelf and libdw map what they read: a page past the end of a
	 * file its owner truncated meanwhile is SIGBUS in the collector.
	 * Such a file is read from a sealed copy of its own. */
	r = (uint64_t)st->st_size > CTP_FOREIGN_COPY_MAX
		    ? -EFBIG
		    : sealed_copy(fd, st->st_size);
	close(fd);
	return r;
}

int ctp_foreign_open(int dirfd, const char *path, uint64_t want_dev,
		     uint64_t want_ino, struct stat *st)
{
	int pfd = foreign_path(dirfd, path, want_dev, want_ino, st);

	return pfd < 0 ? pfd : foreign_reopen(pfd, st);
}

int ctp_map_path(pid_t pid, const struct ctp_map *m, char *buf, size_t len)
{
	int n = snprintf(buf, len, "/proc/%d/root%.*s", (int)pid,
			 (int)m->path_len, m->path);

	return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}

/* ---- Per-file cache
 * ----------------------------------------------------------
 */

struct ctp_file_ent {
	struct ctp_file_ent *next;
	uint64_t dev, ino;
	struct ctp_file_key key;
	bool keep; /* keepable, probed in this run */
	max_align_t answer[];
};

void ctp_file_cache_init(struct ctp_file_cache *c, size_t size)
{
	memset(c, 0, sizeof(*c));
	pthread_mutex_init(&c->lock, NULL);
	c->size = size;
	c->dirfd = -1;
}

static void key_of(const struct stat *st, struct ctp_file_key *k)
{
	memset(k, 0, sizeof(*k));
	k->dev = st->st_dev;
	k->ino = st->st_ino;
	k->size = (uint64_t)st->st_size;
	k->mtime_s = st->st_mtim.tv_sec;
	k->mtime_ns = st->st_mtim.tv_nsec;
	k->ctime_s = st->st_ctim.tv_sec;
	k->ctime_ns = st->st_ctim.tv_nsec;
}

/* A key's members in the order keys sort by. */
static void key_words(const struct ctp_file_key *k, uint64_t w[7])
{
	w[0] = k->dev;
	w[1] = k->ino;
	w[2] = k->size;
	w[3] = (uint64_t)k->mtime_s;
	w[4] = (uint64_t)k->mtime_ns;
	w[5] = (uint64_t)k->ctime_s;
	w[6] = (uint64_t)k->ctime_ns;
}

static int key_cmp(const struct ctp_file_key *a, const struct ctp_file_key *b)
{
	uint64_t x[7], y[7];

	key_words(a, x);
	key_words(b, y);
	for (size_t i = 0; i < 7; i++)
		if (x[i] != y[i])
			return x[i] < y[i] ? -1 : 1;
	return 0;
}

/* Bytes of one kept entry: its key, then the answer. */
static size_t kept_size(const struct ctp_file_cache *c)
{
	return sizeof(struct ctp_file_key) + c->size;
}

/* The kept answer for key k, or NULL (binary search: sorted by key). */
static const void *kept_find(const struct ctp_file_cache *c,
			     const struct ctp_file_key *k)
{
	size_t lo = 0, hi = c->n_kept, es = kept_size(c);

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const unsigned char *e = c->kept + mid * es;
		struct ctp_file_key ek;
		int r;

		memcpy(&ek, e, sizeof(ek));
		r = key_cmp(k, &ek);
		if (r == 0)
			return e + sizeof(ek);
		if (r < 0)
			hi = mid;
		else
			lo = mid + 1;
	}
	return NULL;
}

void *ctp_file_cache_get(struct ctp_file_cache *c, pid_t pid,
			 const struct ctp_map *m, ctp_file_probe_fn probe,
			 void *arg)
{
	struct ctp_file_ent *e;
	const void *kept;
	struct stat sb;
	char path[4200];
	int fd;

	pthread_mutex_lock(&c->lock);
	for (e = c->head; e; e = e->next)
		if (e->dev == m->dev && e->ino == m->ino)
			break;
	pthread_mutex_unlock(&c->lock);
	if (e)
		return e->answer;
	if (ctp_map_path(pid, m, path, sizeof(path)) < 0)
		return NULL;
	/* One lookup: what is probed is the file mapped, or nothing. */
	fd = foreign_path(AT_FDCWD, path, m->dev, m->ino, &sb);
	if (fd < 0)
		return NULL;
	e = calloc(1, sizeof(*e) + c->size);
	if (!e) {
		close(fd);
		return NULL;
	}
	e->dev = m->dev;
	e->ino = m->ino;
	key_of(&sb, &e->key);
	/* An earlier run's answer for these very contents: no probe, and
	 * the file is not even opened. */
	kept = c->n_kept ? kept_find(c, &e->key) : NULL;
	if (kept) {
		close(fd);
		memcpy(e->answer, kept, c->size);
		atomic_fetch_add_explicit(&c->hits, 1, memory_order_relaxed);
	} else {
		fd = foreign_reopen(fd, &sb);
		if (fd < 0) {
			free(e);
			return NULL;
		}
		probe(arg, fd, path, e->answer);
		close(fd);
		e->keep =
			c->dirfd >= 0 && c->keepable && c->keepable(e->answer);
	}
	pthread_mutex_lock(&c->lock);
	e->next = c->head;
	c->head = e;
	c->added += e->keep;
	pthread_mutex_unlock(&c->lock);
	return e->answer;
}

/* The file's header: magic, version, answer size, count, the plugin's
 * build. */
#define KEEP_MAGIC "ctpfans\n"
struct keep_hdr {
	char magic[8];
	uint32_t version;     /* 1 */
	uint32_t answer_size; /* ctp_file_cache.size */
	uint64_t n;
	struct ctp_file_key self;
};

/* Read the kept file of c's directory into *out (n entries): 0, -ENOENT
 * (none), or another negative errno with why (not used). */
static int kept_read(struct ctp_file_cache *c, unsigned char **out, size_t *n,
		     const char **why)
{
	size_t es = kept_size(c);
	struct keep_hdr h;
	struct stat sb;
	unsigned char *v = NULL;
	int fd = ctp_statedir_open_file(c->dirfd, c->name, &sb);
	int r;

	*out = NULL;
	*n = 0;
	*why = NULL;
	if (fd < 0) {
		if (fd != -ENOENT)
			*why = "not a regular file of this user";
		return fd;
	}
	r = -EINVAL;
	if ((uint64_t)sb.st_size < sizeof(h) ||
	    ctp_statedir_read_at(fd, &h, sizeof(h), 0) < 0 ||
	    memcmp(h.magic, KEEP_MAGIC, sizeof(h.magic)) != 0 ||
	    h.version != 1 || h.answer_size != c->size) {
		*why = "not a file of this version";
		goto out;
	}
	if (key_cmp(&h.self, &c->self) != 0) {
		*why = "written by another build of the plugin";
		r = -ESTALE;
		goto out;
	}
	if (h.n > CTP_FILE_KEEP_MAX ||
	    (uint64_t)sb.st_size != sizeof(h) + h.n * es) {
		*why = "its length is not its count's";
		goto out;
	}
	r = -ENOMEM;
	if (h.n && !(v = malloc(h.n * es)))
		goto out;
	if (h.n && (r = ctp_statedir_read_at(fd, v, h.n * es, sizeof(h))) < 0)
		goto out;
	for (size_t i = 1; i < h.n; i++) {
		struct ctp_file_key a, b;

		memcpy(&a, v + (i - 1) * es, sizeof(a));
		memcpy(&b, v + i * es, sizeof(b));
		if (key_cmp(&a, &b) >= 0) {
			*why = "its entries are not sorted";
			r = -EINVAL;
			goto out;
		}
	}
	*out = v;
	*n = h.n;
	v = NULL;
	r = 0;
out:
	free(v);
	close(fd);
	return r;
}

int ctp_file_cache_keep(struct ctp_file_cache *c, const char *opt,
			const char *name, bool (*keepable)(const void *answer),
			const void *self_addr, char *why, size_t whylen)
{
	char path[4200];
	const char *bad;
	struct stat sb;
	Dl_info dl;
	int dirfd, r;

	if (ctp_statedir_path(opt, path, sizeof(path), &bad) < 0) {
		snprintf(why, whylen, "%s", bad);
		return -ENOENT;
	}
	if (snprintf(c->name, sizeof(c->name), "%s", name) >=
		    (int)sizeof(c->name) ||
	    !dladdr(self_addr, &dl) || !dl.dli_fname ||
	    stat(dl.dli_fname, &sb) < 0) {
		snprintf(why, whylen, "cannot tell this plugin's build");
		return -EINVAL;
	}
	if ((r = ctp_statedir_open(path, &dirfd, why, whylen)) < 0)
		return r;
	key_of(&sb, &c->self);
	c->dirfd = dirfd;
	c->keepable = keepable;
	r = kept_read(c, &c->kept, &c->n_kept, &bad);
	if (r == -ENOENT)
		r = 0;
	if (r < 0)
		snprintf(why, whylen, "%s/%s not used: %s", path, name,
			 bad ? bad : strerror(-r));
	else
		snprintf(why, whylen, "%zu kept in %s/%s", c->n_kept, path,
			 name);
	return r;
}

void ctp_file_cache_keep_opt(struct ctp_file_cache *c,
			     const struct ctp_api *api, struct ctp_ctx *ctx,
			     const char *name,
			     bool (*keepable)(const void *answer),
			     const void *self_addr)
{
	const char *opt = NULL;
	char why[4400];
	int r;

	if (api->opt_str(ctx, "answers_state", &opt) < 0 || !opt)
		opt = "auto";
	r = ctp_file_cache_keep(c, opt, name, keepable, self_addr, why,
				sizeof(why));
	api->log(ctx,
		 r == 0				? CTP_LOG_DEBUG
		 : r == -ENOENT || r == -ESTALE ? CTP_LOG_INFO
						: CTP_LOG_NOTICE,
		 "answers about files across runs: %s", why);
}

uint64_t ctp_file_cache_capture_end(struct ctp_file_cache *c,
				    const struct ctp_api *api,
				    struct ctp_ctx *ctx)
{
	uint64_t h = atomic_load_explicit(&c->hits, memory_order_relaxed);
	uint64_t d = h - c->hits_told;
	int r = ctp_file_cache_save(c);

	c->hits_told = h;
	if (r < 0 && !c->save_failed && api) {
		c->save_failed = true;
		api->log(ctx, CTP_LOG_NOTICE,
			 "answers about files not kept for later runs: %s",
			 strerror(-r));
	}
	return d;
}

/* The entries of a and b (sorted), merged without repeats (a's taken where
 * both have a key), into *out: at most CTP_FILE_KEEP_MAX, a's first. */
static int kept_merge(const struct ctp_file_cache *c, const unsigned char *a,
		      size_t na, const unsigned char *b, size_t nb,
		      unsigned char **out, size_t *n)
{
	size_t es = kept_size(c), i = 0, j = 0, k = 0;
	size_t room = CTP_FILE_KEEP_MAX, take_b;
	unsigned char *v;

	if (na > room)
		na = room;
	take_b = room - na; /* b's entries fill what a leaves */
	v = malloc((na + (nb < take_b ? nb : take_b)) * es + 1);
	if (!v)
		return -ENOMEM;
	while (i < na || (j < nb && take_b)) {
		struct ctp_file_key ka, kb;
		int r;

		if (i < na)
			memcpy(&ka, a + i * es, sizeof(ka));
		if (j < nb)
			memcpy(&kb, b + j * es, sizeof(kb));
		r = i >= na ? 1 : (j >= nb || !take_b) ? -1 : key_cmp(&ka, &kb);
		if (r <= 0) {
			memcpy(v + k++ * es, a + i++ * es, es);
			j += r == 0;
		} else {
			memcpy(v + k++ * es, b + j++ * es, es);
			take_b--;
		}
	}
	*out = v;
	*n = k;
	return 0;
}

static int ent_cmp(const void *x, const void *y)
{
	return key_cmp(*(const struct ctp_file_key *const *)x,
		       *(const struct ctp_file_key *const *)y);
}

int ctp_file_cache_save(struct ctp_file_cache *c)
{
	size_t es = kept_size(c), nn = 0, nm = 0, no = 0, nw = 0;
	unsigned char *mine = NULL, *merged = NULL, *other = NULL, *all = NULL;
	const struct ctp_file_key **keys = NULL;
	struct ctp_file_ent *e;
	struct keep_hdr h;
	struct stat sb;
	const char *why;
	int r;

	pthread_mutex_lock(&c->lock);
	if (c->dirfd < 0 || c->added == c->saved) {
		pthread_mutex_unlock(&c->lock);
		return 0;
	}
	/* This run's answers, sorted, then those it loaded. */
	for (e = c->head; e; e = e->next)
		nn += e->keep;
	r = -ENOMEM;
	keys = malloc((nn + 1) * sizeof(*keys));
	mine = malloc((nn + 1) * es);
	if (!keys || !mine) {
		pthread_mutex_unlock(&c->lock);
		goto out;
	}
	nn = 0;
	for (e = c->head; e; e = e->next)
		if (e->keep)
			keys[nn++] = &e->key;
	qsort(keys, nn, sizeof(*keys), ent_cmp);
	for (size_t i = 0; i < nn; i++) {
		const struct ctp_file_ent *o =
			(const struct ctp_file_ent
				 *)((const char *)keys[i] -
				    offsetof(struct ctp_file_ent, key));
		memcpy(mine + i * es, keys[i], sizeof(*keys[i]));
		memcpy(mine + i * es + sizeof(*keys[i]), o->answer, c->size);
	}
	c->saved = c->added;
	pthread_mutex_unlock(&c->lock);
	if ((r = kept_merge(c, mine, nn, c->kept, c->n_kept, &merged, &nm)) < 0)
		goto out;
	if ((r = ctp_statedir_lock(c->dirfd, 200)) < 0)
		goto out;
	/* What another run wrote since this one loaded: taken in too. */
	if (kept_read(c, &other, &no, &why) == 0 && no &&
	    (r = kept_merge(c, merged, nm, other, no, &all, &nw)) < 0) {
		ctp_statedir_unlock(c->dirfd);
		goto out;
	}
	if (!all) {
		all = merged;
		nw = nm;
		merged = NULL;
	}
	memset(&h, 0, sizeof(h));
	memcpy(h.magic, KEEP_MAGIC, sizeof(h.magic));
	h.version = 1;
	h.answer_size = (uint32_t)c->size;
	h.n = nw;
	h.self = c->self;
	r = ctp_statedir_replace(
		c->dirfd, c->name,
		(const struct iovec[]){{&h, sizeof(h)}, {all, nw * es}}, 2,
		&sb);
	ctp_statedir_unlock(c->dirfd);
	r = r < 0 ? r : 1;
out:
	free(keys);
	free(mine);
	free(merged);
	free(other);
	free(all);
	return r;
}

void ctp_file_cache_fini(struct ctp_file_cache *c)
{
	while (c->head) {
		struct ctp_file_ent *e = c->head;

		c->head = e->next;
		free(e);
	}
	free(c->kept);
	c->kept = NULL;
	c->n_kept = 0;
	if (c->dirfd >= 0)
		close(c->dirfd);
	c->dirfd = -1;
	pthread_mutex_destroy(&c->lock);
}

/* ---- Per-process identity cache
 * ----------------------------------------------
 */

struct ctp_ident_ent {
	struct ctp_ident_ent *next;
	struct ctp_ident id;
};

void ctp_ident_cache_init(struct ctp_ident_cache *c)
{
	pthread_mutex_init(&c->lock, NULL);
	c->head = NULL;
}

int ctp_ident_find(struct ctp_ident_cache *c, uint64_t exe_dev,
		   uint64_t exe_ino, uint64_t maps_hash, struct ctp_ident *out)
{
	int r = -ENOENT;

	pthread_mutex_lock(&c->lock);
	for (struct ctp_ident_ent *e = c->head; e; e = e->next)
		if (e->id.exe_dev == exe_dev && e->id.exe_ino == exe_ino &&
		    e->id.maps_hash == maps_hash) {
			*out = e->id;
			r = 0;
			break;
		}
	pthread_mutex_unlock(&c->lock);
	return r;
}

void ctp_ident_add(struct ctp_ident_cache *c, const struct ctp_ident *id)
{
	struct ctp_ident_ent *e = calloc(1, sizeof(*e));

	if (!e)
		return;
	e->id = *id;
	pthread_mutex_lock(&c->lock);
	e->next = c->head;
	c->head = e;
	pthread_mutex_unlock(&c->lock);
}

void ctp_ident_cache_fini(struct ctp_ident_cache *c)
{
	while (c->head) {
		struct ctp_ident_ent *e = c->head;

		c->head = e->next;
		free(e);
	}
	pthread_mutex_destroy(&c->lock);
}

/* ---- The maps of the capture before
 * ------------------------------------------------
 */

#define MEMO_BUCKETS 4096u

struct ctp_maps_memo_ent {
	struct ctp_maps_memo_ent *next;
	int32_t tgid;
	uint32_t epoch; /* the last sweep's, when used since */
	uint64_t gen, exe_dev, exe_ino;
	size_t n, paths; /* mappings; bytes of their paths */
	struct ctp_map v[];
	/* then the paths, each NUL-terminated */
};

void ctp_maps_memo_init(struct ctp_maps_memo *m)
{
	pthread_mutex_init(&m->lock, NULL);
	m->tab = NULL;
	m->n = 0;
	m->epoch = 0;
}

static struct ctp_maps_memo_ent **memo_slot(struct ctp_maps_memo *m,
					    int32_t tgid)
{
	struct ctp_maps_memo_ent **pp = &m->tab[(uint32_t)tgid % MEMO_BUCKETS];

	while (*pp && (*pp)->tgid != tgid)
		pp = &(*pp)->next;
	return pp;
}

int ctp_maps_memo_get(struct ctp_maps_memo *m, int32_t tgid, uint64_t gen,
		      struct ctp_maps *maps, uint64_t *exe_dev,
		      uint64_t *exe_ino)
{
	struct ctp_maps_memo_ent *e;
	int r = -ENOENT;

	pthread_mutex_lock(&m->lock);
	e = m->tab ? *memo_slot(m, tgid) : NULL;
	if (!e || e->gen != gen)
		goto out;
	/* Into the caller's buffers, as a read would leave them. */
	r = -ENOMEM;
	if (maps->alloc < e->n) {
		void *nv = realloc(maps->v, e->n * sizeof(*maps->v));
		if (!nv)
			goto out;
		maps->v = nv;
		maps->alloc = e->n;
	}
	if (maps->cap < e->paths + 1) {
		char *nb = realloc(maps->buf, e->paths + 1);
		if (!nb)
			goto out;
		maps->buf = nb;
		maps->cap = e->paths + 1;
	}
	const char *src = (const char *)&e->v[e->n];
	memcpy(maps->buf, src, e->paths);
	maps->buf[e->paths] = '\0';
	for (size_t i = 0, off = 0; i < e->n; i++) {
		maps->v[i] = e->v[i];
		maps->v[i].path = maps->buf + off;
		off += e->v[i].path_len + 1;
	}
	maps->n = e->n;
	*exe_dev = e->exe_dev;
	*exe_ino = e->exe_ino;
	e->epoch = m->epoch;
	r = 0;
out:
	pthread_mutex_unlock(&m->lock);
	return r;
}

int ctp_maps_memo_put(struct ctp_maps_memo *m, int32_t tgid, uint64_t gen,
		      const struct ctp_maps *maps, uint64_t exe_dev,
		      uint64_t exe_ino)
{
	size_t paths = 0;
	struct ctp_maps_memo_ent *e, **pp, *old;

	for (size_t i = 0; i < maps->n; i++)
		paths += maps->v[i].path_len + 1;
	e = malloc(sizeof(*e) + maps->n * sizeof(e->v[0]) + paths);
	if (!e)
		return -ENOMEM;
	*e = (struct ctp_maps_memo_ent){.tgid = tgid,
					.gen = gen,
					.exe_dev = exe_dev,
					.exe_ino = exe_ino,
					.n = maps->n,
					.paths = paths};
	char *dst = (char *)&e->v[maps->n];
	for (size_t i = 0; i < maps->n; i++) {
		e->v[i] = maps->v[i];
		e->v[i].path = NULL; /* set where handed out */
		memcpy(dst, maps->v[i].path, maps->v[i].path_len);
		dst[maps->v[i].path_len] = '\0';
		dst += maps->v[i].path_len + 1;
	}
	pthread_mutex_lock(&m->lock);
	if (!m->tab && !(m->tab = calloc(MEMO_BUCKETS, sizeof(*m->tab)))) {
		pthread_mutex_unlock(&m->lock);
		free(e);
		return -ENOMEM;
	}
	e->epoch = m->epoch;
	pp = memo_slot(m, tgid);
	old = *pp;
	e->next = old ? old->next : NULL;
	*pp = e;
	m->n += !old;
	pthread_mutex_unlock(&m->lock);
	free(old);
	return 0;
}

void ctp_maps_memo_sweep(struct ctp_maps_memo *m)
{
	pthread_mutex_lock(&m->lock);
	for (size_t b = 0; m->tab && b < MEMO_BUCKETS; b++) {
		struct ctp_maps_memo_ent **pp = &m->tab[b];
		while (*pp) {
			struct ctp_maps_memo_ent *e = *pp;
			if (e->epoch == m->epoch) {
				pp = &e->next;
				continue;
			}
			*pp = e->next;
			free(e);
			m->n--;
		}
	}
	m->epoch++;
	pthread_mutex_unlock(&m->lock);
}

void ctp_maps_memo_fini(struct ctp_maps_memo *m)
{
	for (size_t b = 0; m->tab && b < MEMO_BUCKETS; b++)
		while (m->tab[b]) {
			struct ctp_maps_memo_ent *e = m->tab[b];
			m->tab[b] = e->next;
			free(e);
		}
	free(m->tab);
	m->tab = NULL;
	m->n = 0;
	pthread_mutex_destroy(&m->lock);
}

/* ---- Finding the file
 * ----------------------------------------------------------
 */

/* Returns false when some file could not be looked at (its answer is not
 * known, so neither is the process's). */
static bool scan(const struct ctp_proc_scan *s, const struct ctp_maps *maps,
		 pid_t pid, struct ctp_proc_found *out)
{
	bool sure = true;

	out->answer = NULL;
	out->tag = s->none_tag;
	for (size_t i = 0; i < maps->n; i++) {
		const struct ctp_map *m = &maps->v[i];
		const void *a;
		int tag = s->none_tag, v;

		if (!m->exec ||
		    ctp_maps_find_exec(maps->v, i, m->dev, m->ino) >= 0)
			continue; /* a file seen already */
		a = ctp_file_cache_get(s->files, pid, m, s->probe, s->arg);
		if (!a) {
			sure = false;
			continue;
		}
		v = s->verdict(a, &tag);
		if (v > 0) {
			out->answer = a;
			out->idx = i;
			out->tag = s->none_tag;
			return true;
		}
		if (v < 0)
			out->tag = tag;
	}
	return sure;
}

/* The process source's MM_GEN for task's process, or 0 (none offered). */
static uint64_t proc_gen(const struct ctp_api *api, const struct ctp_task *task)
{
	const void *data;
	size_t len;
	uint64_t gen;

	if (!CTP_API_HAS(api, source_get) ||
	    api->source_get(task, CTP_SOURCE_PROCESS, &data, &len) ||
	    !ctp_src_process_get(data, len, CTP_SRC_PROC_MM_GEN, &gen))
		return 0;
	return gen;
}

/* The process's maps as the core read them for every plugin that declared
 * the file (once per process and capture), or read here when the core's
 * bound on a file's size refused them (-EFBIG: a process of some 50,000
 * mappings), as they were before the core shared them. */
static int maps_get(const struct ctp_proc_scan *s, struct ctp_maps *maps,
		    const struct ctp_task *task)
{
	const struct ctp_file *f;
	int r = s->api->file_get(task, s->maps_file, &f);

	if (r == -EFBIG)
		return ctp_maps_read(maps, task->dirfd);
	if (r)
		return r;
	if (!f->data)
		return -EIO;
	return ctp_maps_parse(maps, f->data, f->len);
}

int ctp_proc_find(const struct ctp_proc_scan *s, struct ctp_maps *maps,
		  const struct ctp_task *task, struct ctp_proc_found *out)
{
	struct ctp_ident id;
	uint64_t h;
	int dirfd = task->dirfd;
	pid_t pid = task->tgid;
	int r;

	out->answer = NULL;
	out->cache_hit = false;
	out->maps_kept = false;
	/* The maps of the capture before, where the process source says the
	 * mappings are the same (and with them the executable: a new one
	 * comes with an exec, or replaces the mapped one, which unmaps it). */
	uint64_t gen = s->memo ? proc_gen(s->api, task) : 0;
	if (gen && ctp_maps_memo_get(s->memo, pid, gen, maps, &out->exe_dev,
				     &out->exe_ino) == 0) {
		out->maps_kept = true;
		if (maps->n == 0)
			return -ENOENT;
		goto known;
	}
	/* The maps first (the core reads them once for every plugin that
	 * declared them): a kernel thread's, a zombie's are empty, so no
	 * executable is looked up for them. */
	r = maps_get(s, maps, task);
	if (r == 0 && maps->n == 0)
		return -ENOENT;
	if (r)
		return ctp_err_vanished(r) ? -ESRCH : r;
	/* The executable after the maps: the process's identity, and proof
	 * that it lived through the read (dirfd names this process, never a
	 * successor under a reused pid: its lookups fail once it is gone). */
	if (ctp_exe_ident(dirfd, &out->exe_dev, &out->exe_ino))
		return -ESRCH;
	if (gen)
		(void)ctp_maps_memo_put(s->memo, pid, gen, maps, out->exe_dev,
					out->exe_ino);
known:
	h = ctp_maps_exec_hash(maps);
	if (ctp_ident_find(s->idents, out->exe_dev, out->exe_ino, h, &id)) {
		if (!scan(s, maps, pid, out))
			return 0; /* not cached: a file was not looked at */
		id = (struct ctp_ident){.exe_dev = out->exe_dev,
					.exe_ino = out->exe_ino,
					.maps_hash = h,
					.tag = out->tag,
					.found = out->answer != NULL};
		if (out->answer) {
			id.dev = maps->v[out->idx].dev;
			id.ino = maps->v[out->idx].ino;
		}
		ctp_ident_add(s->idents, &id);
		return 0;
	}
	out->cache_hit = true;
	out->tag = id.tag;
	if (!id.found)
		return 0;
	long i = ctp_maps_find_exec(maps->v, maps->n, id.dev, id.ino);
	if (i >= 0) {
		out->idx = (size_t)i;
		out->answer = ctp_file_cache_get(s->files, pid, &maps->v[i],
						 s->probe, s->arg);
	}
	return 0;
}

/* ---- Shared per-thread results
 * -------------------------------------------------
 */

struct ctp_shared_ent {
	struct ctp_shared_ent *next;
	int32_t tgid;
	size_t n, size;
	max_align_t recs[];
};

int ctp_cmp_tid(const void *a, const void *b)
{
	int32_t x, y;

	memcpy(&x, a, sizeof(x));
	memcpy(&y, b, sizeof(y));
	return (x > y) - (x < y);
}

void ctp_shared_init(struct ctp_shared *s)
{
	pthread_mutex_init(&s->lock, NULL);
	s->head = NULL;
	atomic_init(&s->n, 0);
}

int ctp_shared_put(struct ctp_shared *s, int32_t tgid, const void *recs,
		   size_t n, size_t size)
{
	struct ctp_shared_ent *e;

	if (size < sizeof(int32_t) || (n && size > SIZE_MAX / n))
		return -EINVAL;
	e = malloc(sizeof(*e) + n * size);
	if (!e)
		return -ENOMEM;
	e->tgid = tgid;
	e->n = n;
	e->size = size;
	memcpy(e->recs, recs, n * size);
	pthread_mutex_lock(&s->lock);
	e->next = s->head;
	s->head = e;
	atomic_fetch_add(&s->n, 1);
	pthread_mutex_unlock(&s->lock);
	return 0;
}

const void *ctp_shared_find(struct ctp_shared *s, int32_t tgid, int32_t tid)
{
	const void *c = NULL;

	if (!atomic_load_explicit(&s->n, memory_order_acquire))
		return NULL;
	pthread_mutex_lock(&s->lock);
	for (const struct ctp_shared_ent *e = s->head; e; e = e->next)
		if (e->tgid == tgid) {
			c = bsearch(&tid, e->recs, e->n, e->size, ctp_cmp_tid);
			break;
		}
	pthread_mutex_unlock(&s->lock);
	return c;
}

void ctp_shared_clear(struct ctp_shared *s)
{
	pthread_mutex_lock(&s->lock);
	while (s->head) {
		struct ctp_shared_ent *e = s->head;

		s->head = e->next;
		free(e);
	}
	atomic_store(&s->n, 0);
	pthread_mutex_unlock(&s->lock);
}

void ctp_shared_fini(struct ctp_shared *s)
{
	ctp_shared_clear(s);
	pthread_mutex_destroy(&s->lock);
}
