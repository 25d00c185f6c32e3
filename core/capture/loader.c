/* SPDX-License-Identifier: MIT */
/*
 * Plugin loading: find, validate before trusting (lstat, permissions),
 * dlopen, symbol, ABI and size, field table, then init. Every failure is one
 * log line and a FAILED status in the snapshot; the capture goes on unless
 * the plugin is required.
 */
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "clock.h"
#include "engine.h"
#include "loader.h"
#include "log.h"
#include "supervise.h"
#include "options.h"
#include "paths.h"
#include "priv.h"
#include "suggest.h"

/* The descriptor members this core needs, up to and including `finish`. */
#define DESC_MIN_SIZE                                                          \
	(offsetof(struct ctp_plugin, finish) +                                 \
	 sizeof(((struct ctp_plugin *)0)->finish))
#define FIELD_DESC_MIN_SIZE                                                    \
	(offsetof(struct ctp_field_desc, rule) + sizeof(uint8_t))

int ctp_plugin_dirs(const struct ctp_config *cfg, char ***ret, size_t *n)
{
	const char *env = getenv("CTPROF_PLUGIN_DIR");
	size_t count = cfg && cfg->n_plugin_dirs ? cfg->n_plugin_dirs : 1;
	char **dirs = calloc(count + 1, sizeof(*dirs));
	if (!dirs)
		return -ENOMEM;
	if (cfg && cfg->n_plugin_dirs) {
		for (size_t i = 0; i < count; i++)
			dirs[i] = strdup(cfg->plugin_dirs[i]);
	} else if (env && *env) {
		dirs[0] = strdup(env);
	} else {
		char def[PATH_MAX];
		ctp_paths_plugin_dir(def, sizeof(def));
		dirs[0] = strdup(def);
	}
	for (size_t i = 0; i < count; i++) {
		if (!dirs[i]) {
			for (size_t j = 0; j < count; j++)
				free(dirs[j]);
			free(dirs);
			return -ENOMEM;
		}
	}
	*ret = dirs;
	*n = count;
	return 0;
}

#define INSECURE_HINT "refusing as root (allow_insecure_plugins overrides)"

/*
 * Why directory `dir` (its fstat in st) lets another user replace what is
 * in it, like OpenSSH's StrictModes: owned by someone else than root or us,
 * or writable by group or others without the sticky bit (a sticky
 * directory, /tmp, lets nobody but the owner of an entry and the
 * directory's owner, here root or us, rename or remove it). A group- or
 * other-writable directory is refused whatever its group: membership is
 * not ours to judge. Returns true with why set when unsafe.
 */
static bool dir_unsafe(const char *dir, const struct stat *st, char *why,
		       size_t whylen)
{
	mode_t w = st->st_mode & (S_IWGRP | S_IWOTH);

	if (st->st_uid != 0 && st->st_uid != geteuid()) {
		snprintf(why, whylen, "directory %s is owned by uid %u; %s",
			 dir, (unsigned)st->st_uid, INSECURE_HINT);
		return true;
	}
	if (w && !(st->st_mode & S_ISVTX)) {
		snprintf(why, whylen,
			 "directory %s is writable by %s (mode %04o); %s", dir,
			 w & S_IWOTH ? "others" : "group",
			 (unsigned)(st->st_mode & 07777), INSECURE_HINT);
		return true;
	}
	return false;
}

/*
 * Open directory `dir` and check it and every parent up to "/" with
 * dir_unsafe. Symbolic links in `dir` are resolved first (realpath) and the
 * real chain is what is checked; it is then walked from "/" one component
 * at a time, each opened O_PATH | O_NOFOLLOW relative to the one before
 * and checked on its fstat, so a component turned into a link after
 * realpath is refused, not followed. `real` gets the real path. Returns an
 * O_PATH descriptor of the directory (caller closes), or a negative errno
 * with why.
 */
static int open_dir_chain(const char *dir, char *real, size_t reallen,
			  char *why, size_t whylen)
{
	char buf[PATH_MAX];
	struct stat st;
	int fd, ret = 0;

	if (!realpath(dir, buf)) {
		ret = -errno;
		snprintf(why, whylen, "directory %s: %s", dir, strerror(-ret));
		return ret;
	}
	snprintf(real, reallen, "%s", buf);
	fd = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0) {
		ret = -errno;
		snprintf(why, whylen, "directory /: %s", strerror(-ret));
		return ret;
	}
	/* buf[0, end) is the directory fd stands for ("/" when end is 0). */
	for (size_t end = 0;;) {
		char *name, *next;
		int sub;

		if (fstat(fd, &st) < 0) {
			ret = -errno;
			snprintf(why, whylen, "directory %.*s: %s",
				 end ? (int)end : 1, end ? buf : "/",
				 strerror(-ret));
			break;
		}
		char save = buf[end];
		buf[end] = '\0';
		bool bad = dir_unsafe(end ? buf : "/", &st, why, whylen);
		buf[end] = save;
		if (bad) {
			ret = -EPERM;
			break;
		}
		name = buf + end + 1;
		if (!buf[end] || !*name)
			break;
		next = strchr(name, '/');
		end = next ? (size_t)(next - buf) : strlen(buf);
		save = buf[end];
		buf[end] = '\0';
		sub = openat(fd, name,
			     O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (sub < 0) {
			ret = -errno;
			snprintf(why, whylen, "directory %s: %s%s", buf,
				 strerror(-ret),
				 ret == -ELOOP || ret == -ENOTDIR
					 ? " (changed while checked)"
					 : "");
		}
		buf[end] = save;
		close(fd);
		fd = sub;
		if (fd < 0)
			return ret;
	}
	if (ret < 0) {
		close(fd);
		return ret;
	}
	return fd;
}

/* The directory part of path ("." when none, "/" for a file in /). */
static void dir_of(const char *path, char *dir, size_t dirlen)
{
	const char *slash = strrchr(path, '/');

	if (!slash)
		snprintf(dir, dirlen, ".");
	else
		snprintf(dir, dirlen, "%.*s",
			 slash == path ? 1 : (int)(slash - path), path);
}

/*
 * Refuse what another user could have replaced: not a regular file; and,
 * as root, a file writable by group or others or owned by someone else
 * than root or us, or a directory on its real path that is not safe
 * (open_dir_chain). The file checked is the entry of the directory
 * descriptor the chain walk verified. `load` gets the path to hand
 * dlopen: the verified real path when the checks applied, which nobody
 * but root or us can change since (every directory on it is theirs and
 * closed to others); `path` itself otherwise.
 */
static int check_path_safe(const char *path, bool allow_insecure, char *load,
			   size_t loadlen, char *why, size_t whylen)
{
	char dir[PATH_MAX], real[PATH_MAX];
	const char *base = strrchr(path, '/');
	struct stat st;
	int dfd, ret = 0;

	if (lstat(path, &st) < 0) {
		snprintf(why, whylen, "%s", strerror(errno));
		return -errno;
	}
	if (!S_ISREG(st.st_mode)) {
		snprintf(why, whylen, "not a regular file%s",
			 S_ISLNK(st.st_mode) ? " (symbolic link)" : "");
		return -EPERM;
	}
	snprintf(load, loadlen, "%s", path);
	if (allow_insecure || geteuid() != 0)
		return 0;

	base = base ? base + 1 : path;
	dir_of(path, dir, sizeof(dir));
	dfd = open_dir_chain(dir, real, sizeof(real), why, whylen);
	if (dfd < 0)
		return dfd;
	if (fstatat(dfd, base, &st, AT_SYMLINK_NOFOLLOW) < 0) {
		ret = -errno;
		snprintf(why, whylen, "%s", strerror(-ret));
	} else if (!S_ISREG(st.st_mode)) {
		ret = -EPERM;
		snprintf(why, whylen, "not a regular file%s",
			 S_ISLNK(st.st_mode) ? " (symbolic link)" : "");
	} else if (st.st_mode & (S_IWGRP | S_IWOTH)) {
		ret = -EPERM;
		snprintf(why, whylen,
			 "file is writable by group or others (mode %04o); %s",
			 (unsigned)(st.st_mode & 07777), INSECURE_HINT);
	} else if (st.st_uid != 0 && st.st_uid != geteuid()) {
		ret = -EPERM;
		snprintf(why, whylen,
			 "file is owned by uid %u; refusing as root",
			 (unsigned)st.st_uid);
	} else if (snprintf(load, loadlen, "%s/%s",
			    strcmp(real, "/") ? real : "",
			    base) >= (int)loadlen) {
		ret = -ENAMETOOLONG;
		snprintf(why, whylen, "%s", strerror(-ret));
	}
	close(dfd);
	return ret;
}

/* How deep check_deps_safe follows dependencies of dependencies. */
#define DEP_DEPTH 4

/*
 * One RUNPATH/RPATH entry [e, e + n) as a directory, for an object in
 * `origin`: "$ORIGIN" or "${ORIGIN}" at its start becomes that directory,
 * an empty entry is the working directory (as ld.so takes it). false for
 * an entry with another dynamic string token ($LIB, $PLATFORM), whose
 * expansion is ld.so's business, or one too long.
 */
static bool runpath_dir(const char *e, size_t n, const char *origin, char *out,
			size_t outlen)
{
	const char *rest = e;
	size_t rn = n;
	const char *base = "";
	if (n >= 7 && memcmp(e, "$ORIGIN", 7) == 0) {
		base = origin, rest = e + 7, rn = n - 7;
	} else if (n >= 9 && memcmp(e, "${ORIGIN}", 9) == 0) {
		base = origin, rest = e + 9, rn = n - 9;
	} else if (n == 0) {
		base = ".";
	}
	if (memchr(rest, '$', rn))
		return false;
	int w = snprintf(out, outlen, "%s%.*s", base, (int)rn, rest);
	return w > 0 && (size_t)w < outlen;
}

/* An ELF object's dynamic section and the search list of its own. */
struct dyn {
	Elf *elf;
	Elf_Data *data;
	GElf_Shdr sh;
	size_t n;	    /* entries */
	const char *search; /* RUNPATH, else RPATH, else NULL */
};

/* Open fd's dynamic section; false when there is none (or no ELF). */
static bool dyn_open(int fd, struct dyn *d)
{
	Elf_Scn *scn = NULL;
	GElf_Dyn dyn;
	const char *runpath = NULL, *rpath = NULL;

	*d = (struct dyn){0};
	if (elf_version(EV_CURRENT) == EV_NONE)
		return false;
	d->elf = elf_begin(fd, ELF_C_READ, NULL);
	while (d->elf && (scn = elf_nextscn(d->elf, scn)))
		if (gelf_getshdr(scn, &d->sh) && d->sh.sh_type == SHT_DYNAMIC)
			break;
	d->data = scn ? elf_getdata(scn, NULL) : NULL;
	if (!d->data || !d->sh.sh_entsize)
		return false;
	d->n = d->sh.sh_size / d->sh.sh_entsize;
	for (size_t i = 0; i < d->n && gelf_getdyn(d->data, (int)i, &dyn);
	     i++) {
		if (dyn.d_tag == DT_RUNPATH)
			runpath = elf_strptr(d->elf, d->sh.sh_link,
					     dyn.d_un.d_val);
		else if (dyn.d_tag == DT_RPATH)
			rpath = elf_strptr(d->elf, d->sh.sh_link,
					   dyn.d_un.d_val);
	}
	/* ld.so ignores RPATH when RUNPATH is there. */
	d->search = runpath ? runpath : rpath;
	return true;
}

/* Where DT_NEEDED `name` of an object in `origin` is loaded from, when it
 * is a path or in the object's own search list; "" otherwise (the system's
 * search path). */
static void dep_path(const char *name, const char *search, const char *origin,
		     char *cand, size_t candlen)
{
	cand[0] = '\0';
	if (strchr(name, '/')) {
		snprintf(cand, candlen, "%s", name);
		return;
	}
	/* The first directory of the list that holds it. */
	for (const char *e = search; e && !cand[0];) {
		const char *c = strchr(e, ':');
		size_t len = c ? (size_t)(c - e) : strlen(e);
		char dir[PATH_MAX];

		if (runpath_dir(e, len, origin, dir, sizeof(dir))) {
			int w = snprintf(cand, candlen, "%s/%s", dir, name);
			if (w < 0 || (size_t)w >= candlen ||
			    access(cand, F_OK) != 0)
				cand[0] = '\0';
		}
		e = c ? c + 1 : NULL;
	}
}

/* A link (libfoo.so.1 -> libfoo.so.1.2) is followed, as ld.so does: the
 * directory holding the link and its parents must be safe too. */
static int check_link_dir(const char *cand, char *why, size_t whylen)
{
	char linkdir[PATH_MAX], real[PATH_MAX], sub[PATH_MAX + 128];
	struct stat lst;
	int fd;

	if (lstat(cand, &lst) != 0 || !S_ISLNK(lst.st_mode))
		return 0;
	dir_of(cand, linkdir, sizeof(linkdir));
	fd = open_dir_chain(linkdir, real, sizeof(real), sub, sizeof(sub));
	if (fd < 0) {
		snprintf(why, whylen, "dependency %s: %s", cand, sub);
		return fd;
	}
	close(fd);
	return 0;
}

static int check_deps_safe(const char *path, char *why, size_t whylen,
			   int depth);

/* One dependency found at cand: its link, the file it resolves to, and
 * that file's own dependencies. */
static int check_dep(const char *cand, char *why, size_t whylen, int depth)
{
	char real[PATH_MAX], load[PATH_MAX], sub[PATH_MAX + 128];
	int ret;

	if (!cand[0] || access(cand, F_OK) != 0)
		return 0;
	ret = check_link_dir(cand, why, whylen);
	if (ret < 0 || !realpath(cand, real))
		return ret;
	ret = check_path_safe(real, false, load, sizeof(load), sub,
			      sizeof(sub));
	if (ret < 0)
		snprintf(why, whylen, "dependency %s: %s", real, sub);
	else if (depth + 1 < DEP_DEPTH)
		ret = check_deps_safe(real, why, whylen, depth + 1);
	return ret;
}

/*
 * The libraries the dynamic linker would load for the object at `path`
 * from its own RUNPATH (or RPATH), or by a path in DT_NEEDED, get the
 * checks the plugin itself gets: a library shipped beside a plugin (the
 * jemalloc-probe support library) must not be replaceable by another user
 * either. Libraries found on the system search path are the system's and
 * are not looked at. A file that is not ELF is left to dlopen to refuse.
 */
static int check_deps_safe(const char *path, char *why, size_t whylen,
			   int depth)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC), ret = 0;
	char origin[PATH_MAX], cand[PATH_MAX];
	struct dyn d;
	GElf_Dyn dyn;
	char *slash;

	if (fd < 0)
		return 0;
	snprintf(origin, sizeof(origin), "%s", path);
	slash = strrchr(origin, '/');
	if (slash)
		*slash = '\0';
	else
		snprintf(origin, sizeof(origin), ".");
	if (!dyn_open(fd, &d))
		d.n = 0;
	for (size_t i = 0;
	     ret == 0 && i < d.n && gelf_getdyn(d.data, (int)i, &dyn); i++) {
		const char *name;

		if (dyn.d_tag != DT_NEEDED)
			continue;
		name = elf_strptr(d.elf, d.sh.sh_link, dyn.d_un.d_val);
		if (!name)
			continue;
		dep_path(name, d.search, origin, cand, sizeof(cand));
		ret = check_dep(cand, why, whylen, depth);
	}
	if (d.elf)
		elf_end(d.elf);
	close(fd);
	return ret;
}

/* Largest descriptor or field description accepted: a plugin built for a
 * later ABI minor may be larger, but not without bound. */
#define ABI_STRUCT_MAX 4096

/* Non-zero bytes in [from, to) of p: the index of the first, else -1. */
static long first_nonzero(const void *p, size_t from, size_t to)
{
	const unsigned char *b = p;
	for (size_t i = from; i < to; i++)
		if (b[i])
			return (long)i;
	return -1;
}

/* The descriptor members up to the commands table's. */
#define COMMANDS_END                                                           \
	(offsetof(struct ctp_plugin, command_desc_size) + sizeof(uint32_t))
#define COMMAND_MIN_SIZE                                                       \
	(offsetof(struct ctp_command, run) + sizeof(void (*)(void)))
#define COMMANDS_MAX 16

const char *const ctp_core_commands[] = {
	"capture", "record", "show",	     "dump",	"compare", "export",
	"serve",   "views",  "check-config", "plugins", NULL};

uint32_t ctp_plugin_n_commands(const struct ctp_plugin *d)
{
	/* A descriptor built before the commands were appended stops short
	 * of them: what lies past its size is not its own. */
	return d->size < COMMANDS_END || !d->commands ? 0 : d->n_commands;
}

const struct ctp_command *ctp_plugin_command(const struct ctp_plugin *d,
					     uint32_t i)
{
	if (i >= ctp_plugin_n_commands(d))
		return NULL;
	return (const struct ctp_command *)((const char *)d->commands +
					    (size_t)i * d->command_desc_size);
}

/* The descriptor members up to the capabilities. */
#define CAPS_END (offsetof(struct ctp_plugin, capabilities) + sizeof(uint64_t))

uint64_t ctp_plugin_caps(const struct ctp_plugin *d, bool *declared)
{
	bool decl = d->flags & CTP_PLUGIN_CAPS && d->size >= CAPS_END;
	if (declared)
		*declared = decl;
	return decl ? d->capabilities : CTP_CAPS_UNDECLARED;
}

uint64_t ctp_engine_caps(const struct ctp_engine *eng)
{
	uint64_t caps = 0;
	for (uint32_t i = 0; i < eng->cap->n_plugins; i++) {
		const struct ctp_plugin_rt *rt = eng->cap->plugins[i].rt;
		if (rt && rt->initialized && rt->desc)
			caps |= ctp_plugin_caps(rt->desc, NULL);
	}
	return caps;
}

/* CTP_PLUGIN_CAPS: the member is there and names only capabilities this
 * kernel's headers know. */
static bool caps_invalid(const struct ctp_plugin *d, char *why, size_t whylen)
{
	if (!(d->flags & CTP_PLUGIN_CAPS))
		return false;
	if (d->size < CAPS_END) {
		snprintf(why, whylen,
			 "flag CTP_PLUGIN_CAPS without the capabilities "
			 "member (descriptor size %u)",
			 (unsigned)d->size);
		return true;
	}
	if (d->capabilities >> ctp_priv_cap_last() >> 1) {
		snprintf(why, whylen,
			 "capabilities 0x%llx name capability numbers past "
			 "%u, the last this core knows",
			 (unsigned long long)d->capabilities,
			 ctp_priv_cap_last());
		return true;
	}
	return false;
}

/* A command name: [a-z0-9][a-z0-9-]*, 1 to 32 bytes, none of the core's
 * own commands (which would always win over it). */
static bool command_name_ok(const char *n)
{
	size_t len = n ? strnlen(n, 33) : 0;
	if (len == 0 || len > 32 || n[0] == '-')
		return false;
	for (size_t i = 0; i < len; i++)
		if (!((n[i] >= 'a' && n[i] <= 'z') ||
		      (n[i] >= '0' && n[i] <= '9') || n[i] == '-'))
			return false;
	for (size_t i = 0; ctp_core_commands[i]; i++)
		if (!strcmp(n, ctp_core_commands[i]))
			return false;
	return true;
}

/* The commands table: sizes, names, a run function each. */
static bool commands_invalid(const struct ctp_plugin *d, char *why,
			     size_t whylen)
{
	if (d->size < COMMANDS_END || !d->n_commands)
		return false;
	if (!d->commands || d->n_commands > COMMANDS_MAX ||
	    d->command_desc_size < COMMAND_MIN_SIZE ||
	    d->command_desc_size > ABI_STRUCT_MAX) {
		snprintf(why, whylen,
			 "commands table: %u commands of %u bytes (at most "
			 "%u, of at least %zu bytes)",
			 (unsigned)d->n_commands,
			 (unsigned)d->command_desc_size, COMMANDS_MAX,
			 COMMAND_MIN_SIZE);
		return true;
	}
	for (uint32_t i = 0; i < d->n_commands; i++) {
		const struct ctp_command *c = ctp_plugin_command(d, i);
		long at = first_nonzero(c, sizeof(*c), d->command_desc_size);
		if (!command_name_ok(c->name) || !c->run) {
			snprintf(why, whylen,
				 "command %u: a name of [a-z0-9-] (1 to 32 "
				 "bytes, not a ctprof-core command) and a run "
				 "function are required",
				 (unsigned)i);
			return true;
		}
		if (at >= 0) {
			snprintf(why, whylen,
				 "command '%s': description byte %ld is set: "
				 "past the %zu bytes this core knows",
				 c->name, at, sizeof(*c));
			return true;
		}
	}
	return false;
}

/*
 * What a plugin built for a later ABI may set and this core would ignore:
 * unknown flag bits, non-zero bytes past the descriptor this core knows.
 * Refused by name, so a plugin never runs with a meaning it did not get
 * (libbpf's OPTS_VALID). Returns true, with the reason in why, when so.
 */
static bool abi_extra_invalid(const struct ctp_plugin *d, char *why,
			      size_t whylen)
{
	const uint32_t known = CTP_PLUGIN_MT_SAFE | CTP_PLUGIN_FD_LOCAL |
			       CTP_PLUGIN_OPTIONS | CTP_PLUGIN_SPLITTABLE |
			       CTP_PLUGIN_NO_THREAD_DIR | CTP_PLUGIN_CAPS;
	long at;
	if (d->flags & ~known) {
		snprintf(why, whylen,
			 "descriptor has unknown flag bits 0x%x (this core "
			 "knows 0x%x)",
			 (unsigned)(d->flags & ~known), (unsigned)known);
		return true;
	}
	if (d->size > ABI_STRUCT_MAX || d->field_desc_size > ABI_STRUCT_MAX) {
		snprintf(why, whylen,
			 "descriptor size %u or field description size %u "
			 "is over %u bytes",
			 (unsigned)d->size, (unsigned)d->field_desc_size,
			 ABI_STRUCT_MAX);
		return true;
	}
	if (d->size >= offsetof(struct ctp_plugin, reserved_end) +
			       sizeof(d->reserved_end) &&
	    d->reserved_end) {
		snprintf(why, whylen, "descriptor member reserved_end is set");
		return true;
	}
	if (commands_invalid(d, why, whylen) || caps_invalid(d, why, whylen))
		return true;
	at = first_nonzero(d, sizeof(*d), d->size);
	if (at >= 0) {
		snprintf(why, whylen,
			 "descriptor byte %ld is set: past the %zu bytes this "
			 "core knows",
			 at, sizeof(*d));
		return true;
	}
	for (uint32_t i = 0; d->fields && i < d->n_fields; i++) {
		const char *f = (const char *)d->fields +
				(size_t)i * d->field_desc_size;
		at = first_nonzero(f, sizeof(struct ctp_field_desc),
				   d->field_desc_size);
		if (at >= 0) {
			const char *name =
				((const struct ctp_field_desc *)f)->name;
			snprintf(why, whylen,
				 "field '%s': description byte %ld is set: "
				 "past the %zu bytes this core knows",
				 name ? name : "(null)", at,
				 sizeof(struct ctp_field_desc));
			return true;
		}
	}
	return false;
}

int ctp_plugin_open(const char *path, bool allow_insecure, void **handle,
		    const struct ctp_plugin **desc, char *why, size_t whylen)
{
	char load[PATH_MAX];
	int ret = check_path_safe(path, allow_insecure, load, sizeof(load), why,
				  whylen);
	if (ret < 0)
		return ret;
	if (!allow_insecure && geteuid() == 0) {
		ret = check_deps_safe(load, why, whylen, 0);
		if (ret < 0)
			return ret;
	}

	dlerror();
	void *h = dlopen(load, RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		const char *e = dlerror();
		snprintf(why, whylen, "dlopen failed: %s", e ? e : "unknown");
		return -ENOEXEC;
	}
	dlerror();
	const struct ctp_plugin *d = dlsym(h, CTP_PLUGIN_SYMBOL);
	if (!d) {
		const char *e = dlerror();
		snprintf(why, whylen, "missing symbol %s: %s",
			 CTP_PLUGIN_SYMBOL, e ? e : "symbol is NULL");
		dlclose(h);
		return -ENOENT;
	}
	if (d->abi != CTP_ABI_MAJOR) {
		snprintf(why, whylen,
			 "plugin ABI version %u, this core speaks %u",
			 (unsigned)d->abi, CTP_ABI_MAJOR);
		dlclose(h);
		return -EPROTO;
	}
	if (d->size < DESC_MIN_SIZE) {
		snprintf(why, whylen,
			 "descriptor size %u is smaller than the %zu bytes "
			 "ABI %u requires",
			 (unsigned)d->size, DESC_MIN_SIZE, CTP_ABI_MAJOR);
		dlclose(h);
		return -EPROTO;
	}
	if (!d->name || !*d->name) {
		snprintf(why, whylen, "descriptor has no name");
		dlclose(h);
		return -EPROTO;
	}
	if (abi_extra_invalid(d, why, whylen)) {
		dlclose(h);
		return -EPROTO;
	}
	if (d->n_fields &&
	    (!d->fields || d->field_desc_size < FIELD_DESC_MIN_SIZE)) {
		snprintf(why, whylen,
			 "field table missing or its element "
			 "size is too small");
		dlclose(h);
		return -EPROTO;
	}
	*handle = h;
	*desc = d;
	return 0;
}

static const struct ctp_field_desc *static_field(const struct ctp_plugin *d,
						 uint32_t i)
{
	return (const struct ctp_field_desc *)((const char *)d->fields +
					       (size_t)i * d->field_desc_size);
}

/* Static field i of d is a start time (or an exited task's elapsed time)
 * while its scope already has one (registered, or earlier in d's table):
 * true, with why. */
static bool start_time_clash(const struct ctp_engine *eng,
			     const struct ctp_plugin *d, uint32_t i, char *why,
			     size_t whylen)
{
	const struct ctp_field_desc *f = static_field(d, i);
	uint8_t once = f->flags & (CTP_FIELD_START_TIME | CTP_FIELD_ELAPSED);
	if (!once)
		return false;
	const char *other = NULL;
	int id = ctp_registry_role(&eng->cap->reg, f->scope, once);
	if (id >= 0)
		other = ctp_registry_get(&eng->cap->reg, (uint32_t)id)->name;
	for (uint32_t j = 0; !other && j < i; j++) {
		const struct ctp_field_desc *g = static_field(d, j);
		if ((g->flags & once) && g->scope == f->scope)
			other = g->name;
	}
	if (other)
		snprintf(why, whylen,
			 "field '%s': the %s %s is already field '%s' (one "
			 "per scope)",
			 f->name,
			 f->scope == CTP_SCOPE_THREAD	 ? "thread"
			 : f->scope == CTP_SCOPE_PROCESS ? "process"
							 : "exited",
			 once == CTP_FIELD_ELAPSED ? "elapsed time"
						   : "start time",
			 other);
	return other != NULL;
}

/* Check the whole static table before registering anything, so a bad
 * plugin leaves no half-registered fields behind. */
static int check_fields(struct ctp_engine *eng, const struct ctp_plugin *d,
			char *why, size_t whylen)
{
	for (uint32_t i = 0; i < d->n_fields; i++) {
		const struct ctp_field_desc *f = static_field(d, i);
		const char *reason;
		if ((f->flags & CTP_FIELD_META) &&
		    d->field_desc_size < sizeof(struct ctp_field_desc)) {
			snprintf(why, whylen,
				 "field '%s': CTP_FIELD_META in a description "
				 "of %u bytes, without section and dims",
				 f->name ? f->name : "(null)",
				 (unsigned)d->field_desc_size);
			return -EINVAL;
		}
		if (ctp_field_desc_check(f, &reason) < 0) {
			snprintf(why, whylen, "field '%s': %s",
				 f->name ? f->name : "(null)", reason);
			return -EINVAL;
		}
		if (start_time_clash(eng, d, i, why, whylen))
			return -EINVAL;
		for (uint32_t j = 0; j < i; j++) {
			if (strcmp(static_field(d, j)->name, f->name) == 0) {
				snprintf(why, whylen,
					 "field '%s' is declared twice",
					 f->name);
				return -EEXIST;
			}
		}
		int other = ctp_registry_find(&eng->cap->reg, f->name);
		if (other >= 0) {
			uint32_t owner = ctp_registry_get(&eng->cap->reg,
							  (uint32_t)other)
						 ->plugin;
			snprintf(why, whylen,
				 "field '%s' is already registered by plugin "
				 "'%s'",
				 f->name, eng->cap->plugins[owner].name);
			return -EEXIST;
		}
	}
	return 0;
}

static int map_files(struct ctp_engine *eng, const char *const *names,
		     bool thread, uint8_t *out, uint32_t *n_out, char *why,
		     size_t whylen)
{
	struct ctp_filedef *defs =
		thread ? eng->thread_files : eng->process_files;
	uint32_t *ndefs = thread ? &eng->n_thread_files : &eng->n_process_files;
	*n_out = 0;
	for (size_t i = 0; names && names[i]; i++) {
		const char *name = names[i];
		bool lazy = name[0] == '?';
		name += lazy;
		bool many = name[0] == '+';
		name += many;
		if (!*name || strchr(name, '/') || strcmp(name, ".") == 0 ||
		    strcmp(name, "..") == 0 || strlen(name) > 64) {
			snprintf(why, whylen, "invalid file name '%s'", name);
			return -EINVAL;
		}
		if (*n_out >= CTP_MAX_FILES) {
			snprintf(why, whylen, "too many files declared");
			return -E2BIG;
		}
		uint32_t k;
		for (k = 0; k < *ndefs; k++)
			if (strcmp(defs[k].name, name) == 0)
				break;
		if (k < *ndefs && !lazy)
			defs[k].lazy = false; /* someone wants it up front */
		if (k < *ndefs && many)
			defs[k].many = true;
		if (k == *ndefs) {
			struct ctp_readfail *rf = &eng->cap->rf;
			if (k >= CTP_MAX_FILES ||
			    rf->n_files >= CTP_MAX_FILES) {
				snprintf(why, whylen,
					 "too many distinct files");
				return -E2BIG;
			}
			defs[k].name = strdup(name);
			if (!defs[k].name)
				return -ENOMEM;
			defs[k].thread = thread;
			defs[k].lazy = lazy;
			defs[k].many = many;
			/* Tally names: threads' files bare, process files
			 * under a "process/" prefix when they clash. */
			char tname[80];
			snprintf(tname, sizeof(tname), "%s%s",
				 thread ? "" : "process/", name);
			defs[k].tally = rf->n_files;
			rf->file[rf->n_files] = strdup(tname);
			if (!rf->file[rf->n_files])
				return -ENOMEM;
			rf->n_files++;
			(*ndefs)++;
		}
		out[(*n_out)++] = (uint8_t)k;
	}
	return 0;
}

static int set_str(char **dst, const char *src)
{
	free(*dst);
	*dst = src ? strdup(src) : NULL;
	return src && !*dst ? -ENOMEM : 0;
}

/*
 * What the engine held before a plugin started loading. A plugin that fails
 * anywhere up to the end of its init is rolled back to it: its fields
 * (static and registered from init), the files only it declared, the lazy
 * files it wanted up front, its file gates, summary counters and hint.
 */
struct load_mark {
	uint32_t n_fields;
	uint32_t n_thread_files, n_process_files, n_tally;
	bool thread_lazy[CTP_MAX_FILES], process_lazy[CTP_MAX_FILES];
	bool thread_many[CTP_MAX_FILES], process_many[CTP_MAX_FILES];
	bool gated[CTP_MAX_FILES];
};

static void mark_take(const struct ctp_engine *eng, struct load_mark *m)
{
	const struct ctp_readfail *rf = &eng->cap->rf;
	m->n_fields = ctp_registry_count(&eng->cap->reg);
	m->n_thread_files = eng->n_thread_files;
	m->n_process_files = eng->n_process_files;
	m->n_tally = rf->n_files;
	for (uint32_t i = 0; i < eng->n_thread_files; i++) {
		m->thread_lazy[i] = eng->thread_files[i].lazy;
		m->thread_many[i] = eng->thread_files[i].many;
	}
	for (uint32_t i = 0; i < eng->n_process_files; i++) {
		m->process_lazy[i] = eng->process_files[i].lazy;
		m->process_many[i] = eng->process_files[i].many;
	}
	for (uint32_t i = 0; i < rf->n_files; i++)
		m->gated[i] = rf->gate[i] != NULL;
}

static void drop_files(struct ctp_filedef *defs, uint32_t *n, uint32_t keep,
		       const bool *lazy, const bool *many)
{
	for (uint32_t i = keep; i < *n; i++) {
		free(defs[i].name);
		defs[i].name = NULL;
	}
	*n = keep;
	for (uint32_t i = 0; i < keep; i++) {
		defs[i].lazy = lazy[i];
		defs[i].many = many[i];
	}
}

static void mark_restore(struct ctp_engine *eng, uint32_t idx,
			 const struct load_mark *m)
{
	struct ctp_plugin_info *info = &eng->cap->plugins[idx];
	struct ctp_plugin_rt *rt = info->rt;
	struct ctp_readfail *rf = &eng->cap->rf;

	ctp_registry_truncate(&eng->cap->reg, m->n_fields);
	free(rt->static_ids);
	rt->static_ids = NULL;
	rt->n_static = 0;
	ctp_binds_free(&rt->binds);
	rt->binds.skip = false;
	drop_files(eng->thread_files, &eng->n_thread_files, m->n_thread_files,
		   m->thread_lazy, m->thread_many);
	drop_files(eng->process_files, &eng->n_process_files,
		   m->n_process_files, m->process_lazy, m->process_many);
	rt->n_thread_files = rt->n_process_files = 0;
	for (uint32_t i = 0; i < rf->n_files; i++) {
		if (i < m->n_tally && m->gated[i])
			continue;
		free(rf->gate[i]);
		rf->gate[i] = NULL;
		if (i >= m->n_tally) {
			free(rf->file[i]);
			rf->file[i] = NULL;
		}
	}
	rf->n_files = m->n_tally;
	for (uint32_t i = 0; i < info->n_summary; i++) {
		free(info->summary_name[i]);
		info->summary_name[i] = NULL;
	}
	info->n_summary = 0;
	free(info->hint);
	free(info->init_hint);
	info->hint = info->init_hint = NULL;
}

/* Run plugin idx's fini (when its init succeeded) and unload it; the
 * supervisor's slot names the plugin while its code runs. */
static void plugin_close(uint32_t idx, struct ctp_plugin_rt *rt)
{
	ctp_sv_enter(idx, CTP_SV_FINI, 0);
	if (rt->initialized && rt->desc->fini)
		rt->desc->fini(rt->state);
	rt->initialized = false;
	if (rt->handle)
		dlclose(rt->handle);
	ctp_sv_leave();
	rt->handle = NULL;
	rt->desc = NULL;
}

static void plugin_fail(struct ctp_engine *eng, uint32_t idx, const char *why)
{
	struct ctp_plugin_info *info = &eng->cap->plugins[idx];
	struct ctp_plugin_rt *rt = info->rt;
	info->status = CTP_PST_FAILED;
	set_str(&info->reason, why);
	ctp_log(info->required ? CTP_LOG_ERR : CTP_LOG_WARNING,
		"plugin %s (%s): %s%s", info->name,
		info->path ? info->path : "not found", why,
		info->required ? " [required]" : "");
	plugin_close(idx, rt);
	/* Its sources go with it: nobody may call into unloaded code. */
	uint32_t k = 0;
	for (uint32_t i = 0; i < eng->n_sources; i++)
		if (eng->sources[i].plugin != idx)
			eng->sources[k++] = eng->sources[i];
	eng->n_sources = k;
}

/* The plugin file name (without ".so") in dirs closest to `name`, if one
 * is close enough to be a typo of it; "" when none. */
static void suggest_plugin(char *const *dirs, size_t ndirs, const char *name,
			   char *out, size_t outlen)
{
	unsigned best = UINT_MAX;
	out[0] = '\0';
	for (size_t i = 0; i < ndirs; i++) {
		DIR *d = opendir(dirs[i]);
		if (!d)
			continue;
		struct dirent *e;
		while ((e = readdir(d))) {
			size_t len = strlen(e->d_name);
			if (len <= 3 || len > 67 ||
			    strcmp(e->d_name + len - 3, ".so") != 0)
				continue;
			char base[65];
			snprintf(base, sizeof(base), "%.*s", (int)(len - 3),
				 e->d_name);
			ctp_closest_step(name, base, &best, out, outlen);
		}
		closedir(d);
	}
}

static int find_plugin(char *const *dirs, size_t n, const char *name,
		       char **ret)
{
	for (size_t i = 0; i < n; i++) {
		char path[PATH_MAX];
		int len =
			snprintf(path, sizeof(path), "%s/%s.so", dirs[i], name);
		if (len < 0 || (size_t)len >= sizeof(path))
			continue;
		struct stat st;
		if (lstat(path, &st) == 0) {
			*ret = strdup(path);
			return *ret ? 0 : -ENOMEM;
		}
	}
	return -ENOENT;
}

/* The descriptor members up to the counters table's. */
#define COUNTERS_END                                                           \
	(offsetof(struct ctp_plugin, reserved_end) + sizeof(uint32_t))

/* The summary counters a descriptor declares, registered in its order
 * before init. Returns 0 or a negative errno with why. */
static int register_counters(struct ctp_plugin_info *info,
			     const struct ctp_plugin *d, char *why,
			     size_t whylen)
{
	if (d->size < COUNTERS_END || !d->counters)
		return 0;
	for (uint32_t i = 0; i < d->n_counters; i++) {
		int r = ctp_summary_register(info, d->counters[i]);
		if (r < 0) {
			snprintf(why, whylen, "summary counter %u ('%s'): %s",
				 i, d->counters[i] ? d->counters[i] : "(null)",
				 r == -ENOSPC ? "more than CTP_MAX_SUMMARY"
					      : strerror(-r));
			return r;
		}
		if ((uint32_t)r != i) {
			snprintf(why, whylen,
				 "summary counter '%s' is declared twice",
				 d->counters[i]);
			return -EEXIST;
		}
	}
	return 0;
}

/* Find, open, check and initialize one plugin; on failure the reason is in
 * why and the caller rolls back whatever was registered. */
static int load_checked(struct ctp_engine *eng, uint32_t idx, char **dirs,
			size_t ndirs, char *why, size_t whylen)
{
	struct ctp_plugin_info *info = &eng->cap->plugins[idx];
	struct ctp_plugin_rt *rt = info->rt;

	ctp_sv_enter(idx, CTP_SV_LOAD, 0);
	int ret = ctp_plugin_resolve(
		dirs, ndirs, info->name, eng->cfg->allow_insecure_plugins,
		&info->path, &rt->handle, &rt->desc, why, whylen);
	ctp_sv_leave();
	if (ret < 0)
		return ret;
	const struct ctp_plugin *d = rt->desc;
	set_str(&info->version, d->version ? d->version : "");
	const struct ctp_kv *bad;
	char owhy[1200];
	if (ctp_options_check(d, rt->cfg, &bad, owhy, sizeof(owhy)) < 0 ||
	    ctp_options_check_values(d, rt->cfg, &bad, owhy, sizeof(owhy)) <
		    0) {
		snprintf(why, whylen, "%s:%u:%u: %s",
			 eng->cfg->path ? eng->cfg->path : "(config)",
			 bad ? bad->line : 0, bad ? bad->col : 0, owhy);
		return -EINVAL;
	}
	if (check_fields(eng, d, why, whylen) < 0 ||
	    map_files(eng, d->thread_files, true, rt->thread_files,
		      &rt->n_thread_files, why, whylen) < 0 ||
	    map_files(eng, d->process_files, false, rt->process_files,
		      &rt->n_process_files, why, whylen) < 0)
		return -EINVAL;
	rt->static_ids = calloc(d->n_fields ? d->n_fields : 1, sizeof(int));
	if (!rt->static_ids) {
		snprintf(why, whylen, "out of memory");
		return -ENOMEM;
	}
	rt->n_static = d->n_fields;
	for (uint32_t i = 0; i < d->n_fields; i++) {
		int id = ctp_registry_add(&eng->cap->reg, idx,
					  static_field(d, i));
		if (id < 0) {
			snprintf(why, whylen, "registering field '%s': %s",
				 static_field(d, i)->name, strerror(-id));
			return -EINVAL;
		}
		rt->static_ids[i] = id;
	}
	if ((ret = register_counters(info, d, why, whylen)) < 0)
		return ret;
	rt->mt_safe = d->flags & CTP_PLUGIN_MT_SAFE;
	rt->fd_local =
		(d->flags & CTP_PLUGIN_FD_LOCAL) || (!d->process && !d->thread);
	rt->splittable = (d->flags & CTP_PLUGIN_SPLITTABLE) || !d->thread;
	rt->thread_dir = d->thread && !(d->flags & CTP_PLUGIN_NO_THREAD_DIR);
	if (d->init) {
		uint64_t t0 = ctp_now_ns();
		ctp_sv_enter(idx, CTP_SV_INIT, 0);
		ret = d->init(&rt->ctx, &eng->api, &rt->state);
		ctp_sv_leave();
		atomic_fetch_add(&info->time_ns, ctp_now_ns() - t0);
		if (ret < 0) {
			snprintf(why, whylen, "init failed: %s",
				 strerror(-ret));
			return ret;
		}
		/* What init said holds for the run; captures say their own. */
		info->init_hint = info->hint;
		info->hint = NULL;
	}
	return 0;
}

int ctp_plugin_resolve(char *const *dirs, size_t ndirs, const char *name,
		       bool allow_insecure, char **path, void **handle,
		       const struct ctp_plugin **desc, char *why, size_t whylen)
{
	char near[65];
	*path = NULL;
	if (find_plugin(dirs, ndirs, name, path) < 0) {
		size_t used = (size_t)snprintf(
			why, whylen,
			"%s.so not found in plugin directories: ", name);
		for (size_t i = 0; i < ndirs && used < whylen; i++)
			used += (size_t)snprintf(why + used, whylen - used,
						 "%s%s", i ? ":" : "", dirs[i]);
		suggest_plugin(dirs, ndirs, name, near, sizeof(near));
		if (*near && used < whylen)
			snprintf(why + used, whylen - used,
				 "; did you mean '%s'?", near);
		return *path ? -ENOMEM : -ENOENT;
	}
	int ret = ctp_plugin_open(*path, allow_insecure, handle, desc, why,
				  whylen);
	if (ret < 0)
		return ret;
	if (strcmp((*desc)->name, name) != 0) {
		snprintf(why, whylen,
			 "descriptor names itself '%s', expected '%s': did "
			 "you mean plugin '%s' (in a file %s.so)?",
			 (*desc)->name, name, (*desc)->name, (*desc)->name);
		dlclose(*handle);
		*handle = NULL;
		*desc = NULL;
		return -EINVAL;
	}
	return 0;
}

static void load_one(struct ctp_engine *eng, uint32_t idx, char **dirs,
		     size_t ndirs)
{
	struct ctp_plugin_info *info = &eng->cap->plugins[idx];
	struct ctp_plugin_rt *rt = info->rt;
	char why[4096 + 256];
	struct load_mark *mark = calloc(1, sizeof(*mark));

	if (!mark) {
		plugin_fail(eng, idx, "out of memory");
		return;
	}
	mark_take(eng, mark);
	if (load_checked(eng, idx, dirs, ndirs, why, sizeof(why)) < 0) {
		plugin_fail(eng, idx, why);
		mark_restore(eng, idx, mark);
	} else {
		rt->initialized = true;
		info->status = CTP_PST_LOADED;
	}
	free(mark);
}

int ctp_engine_load(struct ctp_engine *eng)
{
	const struct ctp_config *cfg = eng->cfg;
	struct ctp_capture *cap = eng->cap;
	char **dirs = NULL;
	size_t ndirs = 0;
	int ret = ctp_plugin_dirs(cfg, &dirs, &ndirs);
	if (ret < 0)
		return ret;
	cap->plugins = calloc(cfg->n_plugins ? cfg->n_plugins : 1,
			      sizeof(*cap->plugins));
	if (!cap->plugins) {
		ret = -ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < cfg->n_plugins; i++) {
		struct ctp_plugin_info *info = &cap->plugins[i];
		const struct ctp_plugin_cfg *pc = &cfg->plugins[i];
		cap->n_plugins = (uint32_t)i + 1;
		info->rt = calloc(1, sizeof(*info->rt));
		info->name = strdup(pc->name);
		if (!info->rt || !info->name) {
			ret = -ENOMEM;
			goto out;
		}
		info->required = pc->required;
		info->rt->cfg = pc;
		info->rt->ctx.eng = eng;
		info->rt->ctx.plugin = (uint32_t)i;
		pthread_mutex_init(&info->rt->call_lock, NULL);
		pthread_mutex_init(&info->rt->log_lock, NULL);
		if (!pc->enabled) {
			info->status = CTP_PST_DISABLED;
			set_str(&info->reason, "disabled in configuration");
			continue;
		}
		if (pc->crashed) {
			/* An earlier attempt of this capture crashed in it
			 * (the supervisor said so on stderr): not loaded. */
			info->status = CTP_PST_FAILED;
			set_str(&info->reason, pc->crashed);
			continue;
		}
		load_one(eng, (uint32_t)i, dirs, ndirs);
	}
	ret = 0;
	for (uint32_t i = 0; i < cap->n_plugins; i++) {
		if ((cap->plugins[i].required || eng->strict) &&
		    cap->plugins[i].status == CTP_PST_FAILED) {
			ctp_log(CTP_LOG_ERR,
				"%s plugin %s failed: no snapshot written",
				cap->plugins[i].required ? "required"
							 : "--strict:",
				cap->plugins[i].name);
			ret = -ECANCELED;
		}
	}
out:
	for (size_t i = 0; i < ndirs; i++)
		free(dirs[i]);
	free(dirs);
	return ret;
}

void ctp_plugins_unload(struct ctp_engine *eng)
{
	struct ctp_capture *cap = eng->cap;
	if (!cap)
		return;
	for (uint32_t i = 0; i < cap->n_plugins; i++) {
		struct ctp_plugin_rt *rt = cap->plugins[i].rt;
		if (!rt)
			continue;
		plugin_close(i, rt);
		free(rt->static_ids);
		ctp_binds_free(&rt->binds);
		pthread_mutex_destroy(&rt->call_lock);
		pthread_mutex_destroy(&rt->log_lock);
		free(rt);
		cap->plugins[i].rt = NULL;
	}
	for (uint32_t i = 0; i < eng->n_thread_files; i++)
		free(eng->thread_files[i].name);
	for (uint32_t i = 0; i < eng->n_process_files; i++)
		free(eng->process_files[i].name);
	eng->n_thread_files = eng->n_process_files = 0;
}
