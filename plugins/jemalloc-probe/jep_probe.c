// SPDX-License-Identifier: MIT
/*
 * Locating jemalloc's per-thread counters (ELF symbols + DWARF through
 * elfutils) and reading them from a live process: stop-free through
 * glibc's libthread_db, or by the ptrace fallback.
 */
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwelf.h>
#include <elfutils/libdwfl.h>
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <thread_db.h>
#include <time.h>
#include <unistd.h>
#include <elf.h>
#include <zlib.h>

#include "jep.h"
#include "jep_ps.h"
#include "ctprof/plugin-util.h"

static _Atomic uint64_t n_ptrace;

uint64_t ctp_jep_ptrace_calls(void)
{
	return atomic_load(&n_ptrace);
}

static long xptrace(int req, pid_t tid, void *addr, void *data)
{
	atomic_fetch_add(&n_ptrace, 1);
	return ptrace((enum __ptrace_request)req, tid, addr, data);
}

/* ---- Separate debuginfo ---------------------------------------------------
 * The file probed is another process's and so is its directory: libdwfl's
 * standard search would open the .gnu_debuglink name there, and in .debug/
 * under it, with blocking opens, and libdw looks for a missing dwz alt
 * file (.gnu_debugaltlink) by a path the file names, blocking too. So:
 * libdwfl searches only the collector's own places (the build-id tree
 * under /usr/lib/debug, and debuginfod when the caller allows it and
 * DEBUGINFOD_URLS is set: a build-id read from another process's file is
 * sent to a server only when the configuration says so);
 * the debuglink and the alt file beside the file are looked up here, each
 * candidate opened as a file of another process (ctp_foreign_open:
 * regular, never a FIFO nor a device) and taken only when its CRC (the
 * debuglink's) or build-id (the alt's) matches; and a DWARF read from the
 * process's files without an alt file found that way gets none, before
 * anything reads it, so libdw never goes looking.
 */

static char *debuginfo_path; /* NULL: ":.debug:/usr/lib/debug" */

/* A debuglink candidate larger than this is not read (its CRC would be
 * a read of that much; a process can point its link at a huge file). */
#define DEBUGLINK_MAX_BYTES (1ull << 30)

/* libdw's own mark for "the alt file was looked for and is not there"
 * (dwarf_getalt.c): dwarf_getalt returns NULL and never searches, and
 * dwarf_end leaves an alt it did not open alone. */
#define NO_ALT ((Dwarf *)-1)

struct dbg_ctx {
	const char *path;    /* the probed file's, for the debuglink */
	bool debuginfod;     /* the build-id search may ask debuginfod */
	bool from_debuglink; /* the debug file is the process's own */
	bool alt_set;	     /* libdwfl was handed a trusted alt file */
	/* An alt file found beside the DWARF's file (alt_open). */
	int alt_fd;
	Elf *alt_elf;
	Dwarf *alt;
};

static uint32_t file_crc(int fd, uint64_t size, int *err)
{
	unsigned char buf[65536];
	uLong crc = crc32(0, Z_NULL, 0);
	uint64_t off = 0;

	*err = 0;
	while (off < size) {
		ssize_t n = pread(fd, buf, sizeof(buf), (off_t)off);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			*err = n < 0 ? -errno : -EIO;
			break;
		}
		crc = crc32(crc, buf, (uInt)n);
		off += (uint64_t)n;
	}
	return (uint32_t)crc;
}

/* The length of path's "/proc/PID/root" (the process's own root, as
 * ctp_map_path makes it), or 0. */
static size_t root_len(const char *path)
{
	const char *p = path + 6;

	if (strncmp(path, "/proc/", 6) || !isdigit((unsigned char)*p))
		return 0;
	while (isdigit((unsigned char)*p))
		p++;
	return strncmp(p, "/root/", 6) ? 0 : (size_t)(p + 5 - path);
}

/* The debuglink `link` (crc) beside ctx->path, in .debug/ there, or under
 * /usr/lib/debug with the file's directory, as libdwfl looks for it: the
 * /usr/lib/debug of the process's root (its distribution's debug
 * packages, a container's its own). */
static int debuglink_open(const struct dbg_ctx *c, const char *link,
			  GElf_Word crc, char **name)
{
	const char *slash = strrchr(c->path, '/');
	int dl = slash ? (int)(slash - c->path) : 1;
	const char *dir = slash ? c->path : ".";
	const char *base = slash ? slash + 1 : c->path;
	char cand[3][4200];
	int n = 0;

	if (!*link || strchr(link, '/'))
		return -1; /* a name, not a path */
	if (strcmp(link, base))
		snprintf(cand[n++], sizeof(cand[0]), "%.*s/%s", dl, dir, link);
	snprintf(cand[n++], sizeof(cand[0]), "%.*s/.debug/%s", dl, dir, link);
	if (dir[0] == '/') {
		int rl = (int)root_len(c->path);

		snprintf(cand[n++], sizeof(cand[0]),
			 "%.*s/usr/lib/debug%.*s/%s", rl, dir, dl - rl,
			 dir + rl, link);
	}
	for (int i = 0; i < n; i++) {
		struct stat st;
		int err, fd = ctp_foreign_open(AT_FDCWD, cand[i], 0, 0, &st);

		if (fd < 0)
			continue;
		if ((uint64_t)st.st_size <= DEBUGLINK_MAX_BYTES &&
		    file_crc(fd, (uint64_t)st.st_size, &err) == crc && !err) {
			*name = strdup(cand[i]);
			return fd;
		}
		close(fd);
	}
	return -1;
}

/* An alt file worth handing to libdwfl: one libdw makes a DWARF of. */
static bool has_dwarf(int fd)
{
	Elf *elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	Dwarf *dw = elf ? dwarf_begin_elf(elf, DWARF_C_READ, NULL) : NULL;

	if (dw)
		dwarf_end(dw);
	if (elf)
		elf_end(elf);
	return dw != NULL;
}

/* The alt file of the DWARF of `mod` (read from file_name) into c: the
 * .gnu_debugaltlink name itself when absolute, else beside that file;
 * taken when its build-id is the one the link names and libdw reads it.
 * It is kept here, not handed to libdwfl: were libdwfl to fail on it (its
 * owner may change it meanwhile), libdw would go looking by the name. */
static void alt_open(struct dbg_ctx *c, Dwfl_Module *mod, const char *file_name)
{
	const char *slash = strrchr(file_name ? file_name : "", '/');
	const char *altname;
	const void *want, *got;
	char cand[4200];
	struct stat st;
	Dwarf_Addr bias;
	Dwarf *dw = dwfl_module_getdwarf(mod, &bias); /* the one loading */
	ssize_t n = dw ? dwelf_dwarf_gnu_debugaltlink(dw, &altname, &want) : -1;

	if (n <= 0 || c->alt_fd >= 0)
		return; /* none, or looked for already */
	if (altname[0] == '/' || !slash)
		snprintf(cand, sizeof(cand), "%s", altname);
	else
		snprintf(cand, sizeof(cand), "%.*s/%s",
			 (int)(slash - file_name), file_name, altname);
	c->alt_fd = ctp_foreign_open(AT_FDCWD, cand, 0, 0, &st);
	if (c->alt_fd < 0)
		return;
	c->alt_elf = elf_begin(c->alt_fd, ELF_C_READ_MMAP, NULL);
	if (c->alt_elf && dwelf_elf_gnu_build_id(c->alt_elf, &got) == n &&
	    !memcmp(want, got, (size_t)n))
		c->alt = dwarf_begin_elf(c->alt_elf, DWARF_C_READ, NULL);
}

static void alt_close(struct dbg_ctx *c)
{
	if (c->alt)
		dwarf_end(c->alt);
	if (c->alt_elf)
		elf_end(c->alt_elf);
	if (c->alt_fd >= 0)
		close(c->alt_fd);
}

/* Dwfl_Callbacks.find_debuginfo: the debug file of the probed file
 * (debuglink_crc set, or no debuglink), or the alt file of its DWARF
 * (libdwfl asks with the .gnu_debugaltlink name and a CRC of 0). */
static int find_debuginfo(Dwfl_Module *mod, void **userdata,
			  const char *modname, Dwarf_Addr base,
			  const char *file_name, const char *debuglink_file,
			  GElf_Word debuglink_crc, char **debuginfo_file_name)
{
	struct dbg_ctx *c = *userdata;
	bool alt = debuglink_file && !debuglink_crc;
	int fd;

	if (!c)
		return -1;
	/* Without a file name and a debuglink, libdwfl's standard search
	 * looks by build-id only: its absolute debuginfo_path entries, then
	 * debuginfod (libdebuginfod reads DEBUGINFOD_URLS by itself). The
	 * build-id search alone is the same less debuginfod
	 * (dwfl_standard_find_debuginfo.c): without the caller's leave,
	 * libdebuginfod is never called. */
	fd = (c->debuginfod ? dwfl_standard_find_debuginfo
			    : dwfl_build_id_find_debuginfo)(
		mod, userdata, modname, base, NULL, NULL, 0,
		debuginfo_file_name);
	if (fd >= 0 && alt && !has_dwarf(fd)) {
		close(fd);
		fd = -1;
	}
	if (fd < 0) {
		/* A name left behind is one libdwfl would open() itself. */
		free(*debuginfo_file_name);
		*debuginfo_file_name = NULL;
		if (alt)
			alt_open(c, mod, file_name);
		else if (debuglink_file) {
			fd = debuglink_open(c, debuglink_file, debuglink_crc,
					    debuginfo_file_name);
			c->from_debuglink = fd >= 0;
		}
	}
	c->alt_set |= alt && fd >= 0;
	return fd;
}

/* find_elf (which may ask debuginfod for an executable) is never called:
 * every module is reported with its descriptor. */
static const Dwfl_Callbacks offline_cb = {
	.find_elf = dwfl_build_id_find_elf,
	.find_debuginfo = find_debuginfo,
	.section_address = dwfl_offline_section_address,
	.debuginfo_path = &debuginfo_path,
};

/* The DWARF of the module, its alt file settled (above). */
static Dwarf *module_dwarf(Dwfl_Module *mod, Elf *main_elf,
			   const struct dbg_ctx *c)
{
	Dwarf_Addr bias;
	Dwarf *dw = dwfl_module_getdwarf(mod, &bias);
	bool theirs = dw && (dwarf_getelf(dw) == main_elf || c->from_debuglink);

	if (dw && !c->alt_set && (c->alt || theirs))
		dwarf_setalt(dw, c->alt ? c->alt : NO_ALT);
	return dw;
}

/* ---- One ELF file ---------------------------------------------------------
 */

static void phdrs(Elf *elf, struct ctp_jep_file *out)
{
	struct ctp_elf_info i;

	ctp_elf_info(elf, &i);
	out->is_dyn = i.is_dyn;
	out->machine = i.machine;
	out->dyn_vaddr = i.dyn_vaddr;
	out->first_load_vaddr = i.first_load_vaddr;
	out->tls_memsz = i.tls_memsz;
	out->tls_align = i.tls_align;
}

/* The offsets of the two counters in tsd_s, from the first full definition,
 * and of its state byte when it has one (out->have_state). */
static int tsd_layout(Dwarf *dw, struct ctp_jep_file *out)
{
	Dwarf_Off off = 0, next;
	size_t hsize;

	while (dwarf_nextcu(dw, off, &next, &hsize, NULL, NULL, NULL) == 0) {
		Dwarf_Die cu, die;

		if (!dwarf_offdie(dw, off + hsize, &cu) ||
		    dwarf_child(&cu, &die) != 0) {
			off = next;
			continue;
		}
		do {
			Dwarf_Die m;
			const char *nm;
			int have = 0;
			Dwarf_Word after_state = 0;

			if (dwarf_tag(&die) != DW_TAG_structure_type ||
			    dwarf_hasattr(&die, DW_AT_declaration))
				continue;
			nm = dwarf_diename(&die);
			if (!nm || strcmp(nm, "tsd_s") || dwarf_child(&die, &m))
				continue;
			do {
				Dwarf_Attribute at;
				Dwarf_Word w;
				const char *mn = dwarf_diename(&m);
				int k;

				if (dwarf_tag(&m) != DW_TAG_member || !mn ||
				    !dwarf_attr(&m, DW_AT_data_member_location,
						&at) ||
				    dwarf_formudata(&at, &w))
					continue;
				/* The member after state: where its padding
				 * ends (members come in offset order). */
				if (out->have_state && !after_state)
					after_state = w ? w : 1;
				k = !strcmp(mn, "state")
					    ? 4
					    : ctp_jep_member_kind(mn);
				if (!k)
					continue;
				if (k == 1)
					out->off_alloc = w;
				else if (k == 2)
					out->off_dealloc = w;
				else
					out->off_state = w;
				out->have_state |= k == 4;
				have |= k & 3;
			} while (dwarf_siblingof(&m, &m) == 0);
			/* Validation of a table layout reads the padding
			 * after the state byte: up to the next member. */
			if (out->have_state && after_state > out->off_state)
				out->state_pad =
					after_state - out->off_state - 1;
			if (out->state_pad > 7)
				out->state_pad = 7;
			return have == 3 ? 0 : -ENOENT;
		} while (dwarf_siblingof(&die, &die) == 0);
		off = next;
	}
	return -ENOENT;
}

/* The jemalloc version string in the file's read-only data, if any. */
static void rodata_version(Elf *elf, struct ctp_jep_file *out)
{
	size_t shstrndx;
	Elf_Scn *scn = NULL;

	if (elf_getshdrstrndx(elf, &shstrndx))
		return;
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		const char *n;
		Elf_Data *d;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_PROGBITS ||
		    (sh.sh_flags & (SHF_WRITE | SHF_EXECINSTR)))
			continue;
		n = elf_strptr(elf, shstrndx, sh.sh_name);
		if (!n || strncmp(n, ".rodata", 7))
			continue;
		d = elf_getdata(scn, NULL);
		if (d && d->d_buf &&
		    ctp_jep_find_version(d->d_buf, d->d_size, out->version,
					 sizeof(out->version)) == 0)
			return;
	}
}

/* Where DWARF did not give the offsets: the layouts table's entry for
 * this build (its version string read only now, for jemalloc files). */
static void from_table(Elf *elf, const struct ctp_jep_layouts *layouts,
		       struct ctp_jep_file *out)
{
	const char *arch = ctp_jep_arch_name(out->machine);
	const struct ctp_jep_layout *e;

	if (!layouts || !layouts->n || !arch || !out->tls_memsz)
		return;
	rodata_version(elf, out);
	if (!out->version[0] ||
	    !(e = ctp_jep_layout_find(layouts, out->version, arch,
				      out->tls_memsz)))
		return;
	/* A TSD symbol, where there is one, says where the tsd is. */
	if (!out->symbol[0])
		out->tsd_value = e->tsd_offset;
	out->off_alloc = e->off_alloc;
	out->off_dealloc = e->off_dealloc;
	out->off_state = e->off_state;
	out->state_pad = e->state_pad;
	out->have_state = true;
	out->from_table = true;
	snprintf(out->layout, sizeof(out->layout), "%s", e->name);
	out->found = true;
	out->tag = CTP_JEP_NOT_JEMALLOC;
}

/* A stripped jemalloc: defines malloc and carries its message prefix. */
static bool stripped_jemalloc(Elf *elf)
{
	size_t shstrndx;
	Elf_Scn *scn = NULL;
	bool defines_malloc = false;

	if (elf_getshdrstrndx(elf, &shstrndx))
		return false;
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		Elf_Data *d;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_DYNSYM)
			continue;
		d = elf_getdata(scn, NULL);
		for (size_t i = 0;
		     d && sh.sh_entsize && i < sh.sh_size / sh.sh_entsize;
		     i++) {
			GElf_Sym s;
			const char *n;

			if (!gelf_getsym(d, (int)i, &s) ||
			    s.st_shndx == SHN_UNDEF)
				continue;
			n = elf_strptr(elf, sh.sh_link, s.st_name);
			if (n && !strcmp(n, "malloc"))
				defines_malloc = true;
		}
	}
	if (!defines_malloc)
		return false;
	scn = NULL;
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		const char *n;
		Elf_Data *d;

		if (!gelf_getshdr(scn, &sh))
			continue;
		n = elf_strptr(elf, shstrndx, sh.sh_name);
		if (!n || strcmp(n, ".rodata"))
			continue;
		d = elf_getdata(scn, NULL);
		if (d && d->d_buf &&
		    memmem(d->d_buf, d->d_size, "<jemalloc>", 10))
			return true;
	}
	return false;
}

/*
 * Decide from the file alone whether a separate-debuginfo search is worth
 * it: a file with a .symtab answers for itself, and one without only when
 * its .dynsym or contents show jemalloc. Otherwise every stripped DSO of the
 * host would cost a debuginfo search (a network query when debuginfod is
 * allowed) for nothing.
 */
static bool worth_looking(int fd, bool *own_symtab)
{
	Elf_Scn *scn = NULL;
	bool symtab = false, hint = false;
	Elf *elf;

	elf_version(EV_CURRENT);
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!elf)
		return true; /* let libdwfl report the error */
	while ((scn = elf_nextscn(elf, scn)) && !symtab && !hint) {
		GElf_Shdr sh;
		Elf_Data *d;

		if (!gelf_getshdr(scn, &sh))
			continue;
		if (sh.sh_type == SHT_SYMTAB) {
			symtab = true;
			break;
		}
		if (sh.sh_type != SHT_DYNSYM || !sh.sh_entsize)
			continue;
		d = elf_getdata(scn, NULL);
		for (size_t i = 0; d && i < sh.sh_size / sh.sh_entsize; i++) {
			GElf_Sym sym;
			const char *n;
			size_t l;

			if (!gelf_getsym(d, (int)i, &sym) ||
			    sym.st_shndx == SHN_UNDEF)
				continue;
			n = elf_strptr(elf, sh.sh_link, sym.st_name);
			if (!n)
				continue;
			l = strlen(n);
			/* mallctl, je_mallctl, <prefix>_mallctl: jemalloc's
			 * public API; or the TSD symbol itself. */
			if (ctp_jep_is_tsd_symbol(n) ||
			    (l >= 7 && !strcmp(n + l - 7, "mallctl")))
				hint = true;
		}
	}
	if (!symtab && !hint)
		hint = stripped_jemalloc(elf);
	elf_end(elf);
	*own_symtab = symtab;
	return symtab || hint;
}

int ctp_jep_file_probe(const char *path, struct ctp_jep_file *out)
{
	int r, fd = ctp_open_regular(AT_FDCWD, path);

	if (fd < 0)
		return fd;
	r = ctp_jep_file_probe_fd(fd, path, NULL, true, out);
	close(fd);
	return r;
}

int ctp_jep_file_probe_fd(int fd, const char *path,
			  const struct ctp_jep_layouts *layouts,
			  bool debuginfod, struct ctp_jep_file *out)
{
	struct dbg_ctx ctx = {
		.path = path, .debuginfod = debuginfod, .alt_fd = -1};
	Dwfl *dwfl;
	Dwfl_Module *mod;
	Elf *elf;
	GElf_Addr bias;
	Dwarf *dw;
	void **userdata;
	bool own_symtab = false;
	int dfd, n;

	memset(out, 0, sizeof(*out));
	if (!worth_looking(fd, &own_symtab)) {
		out->tag = CTP_JEP_NOT_JEMALLOC;
		out->file_only = true;
		return 0;
	}
	dfd = fcntl(fd, F_DUPFD_CLOEXEC, 0);
	if (dfd < 0)
		return -errno;
	dwfl = dwfl_begin(&offline_cb);
	if (!dwfl) {
		close(dfd);
		return -ENOMEM;
	}
	/* dwfl owns dfd from here; path only names the module. */
	mod = dwfl_report_offline(dwfl, "", path, dfd);
	dwfl_report_end(dwfl, NULL, NULL);
	if (!mod) {
		out->tag = CTP_JEP_ELF;
		goto done;
	}
	/* The debuginfo search's context (find_debuginfo). */
	if (dwfl_module_info(mod, &userdata, NULL, NULL, NULL, NULL, NULL,
			     NULL))
		*userdata = &ctx;
	elf = dwfl_module_getelf(mod, &bias);
	if (!elf) {
		out->tag = CTP_JEP_ELF;
		goto done;
	}
	phdrs(elf, out);
	out->tag = CTP_JEP_NOT_JEMALLOC;
	n = dwfl_module_getsymtab(mod);
	for (int i = 1; i < n; i++) {
		GElf_Sym sym;
		GElf_Addr addr;
		const char *nm = dwfl_module_getsym_info(mod, i, &sym, &addr,
							 NULL, NULL, NULL);

		if (!nm || GELF_ST_TYPE(sym.st_info) != STT_TLS ||
		    sym.st_shndx == SHN_UNDEF || !ctp_jep_is_tsd_symbol(nm))
			continue;
		/* st_value of a TLS symbol is its offset in the module's
		 * TLS block; libdwfl leaves it unadjusted. */
		out->tsd_value = sym.st_value;
		snprintf(out->symbol, sizeof(out->symbol), "%s", nm);
		out->tag = CTP_JEP_NO_DEBUGINFO;
		break;
	}
	if (out->tag == CTP_JEP_NOT_JEMALLOC) {
		if (stripped_jemalloc(elf)) {
			out->tag = CTP_JEP_NO_DEBUGINFO;
			from_table(elf, layouts, out);
		} else {
			/* libdwfl read the file's own .symtab, before any
			 * debuginfo: the answer is the file's. */
			out->file_only = own_symtab;
		}
		goto done;
	}
	dw = module_dwarf(mod, elf, &ctx);
	if (!dw) {
		from_table(elf, layouts, out); /* else NO_DEBUGINFO */
		goto done;
	}
	if (tsd_layout(dw, out)) {
		out->tag = CTP_JEP_NO_TSD_LAYOUT;
		from_table(elf, layouts, out);
		goto done;
	}
	rodata_version(elf, out); /* what jemalloc-layout prints */
	out->found = true;
	out->tag = CTP_JEP_NOT_JEMALLOC;
done:
	dwfl_end(dwfl);
	alt_close(&ctx); /* after the DWARF that used it */
	return 0;
}

int ctp_jep_layout_learn(const char *path, struct ctp_jep_layout *out,
			 const char **why)
{
	struct ctp_jep_file f;
	const char *arch;
	int r = ctp_jep_file_probe(path, &f);

	memset(out, 0, sizeof(*out));
	*why = NULL;
	if (r < 0) {
		*why = strerror(-r);
		return r;
	}
	if (!f.found) {
		*why = f.tag == CTP_JEP_ELF ? "not an ELF file it can read"
		       : f.tag == CTP_JEP_NOT_JEMALLOC
			       ? "not a jemalloc build (no tsd TLS symbol)"
			       : "no DWARF for tsd_s (a build with -g, or its "
				 "debug package, is needed)";
		return -ENOENT;
	}
	if (!f.have_state) {
		*why = "tsd_s has no state member (jemalloc before 5.0?)";
		return -ENOENT;
	}
	if (!(arch = ctp_jep_arch_name(f.machine))) {
		*why = "an architecture other than x86_64 and aarch64";
		return -ENOTSUP;
	}
	if (!f.version[0]) {
		*why = "no jemalloc version string in .rodata";
		return -ENOENT;
	}
	if (!f.tls_memsz) {
		*why = "no PT_TLS segment";
		return -ENOENT;
	}
	snprintf(out->version, sizeof(out->version), "%s", f.version);
	snprintf(out->arch, sizeof(out->arch), "%s", arch);
	snprintf(out->name, sizeof(out->name), "%.*s-%s",
		 (int)strcspn(f.version, "-"), f.version, arch);
	out->tls_size = f.tls_memsz;
	out->tsd_offset = f.tsd_value;
	out->off_state = f.off_state;
	out->state_pad = f.state_pad;
	out->off_alloc = f.off_alloc;
	out->off_dealloc = f.off_dealloc;
	return 0;
}

/* ---- Symbols of the target for libthread_db ------------------------------
 * libthread_db asks for a few dozen glibc-private globals (nptl_version,
 * _thread_db_*, _rtld_global, ...). Each file's matching symbols are
 * extracted once per collector run and shared by every process mapping it.
 */

struct symset {
	struct symset *next;
	uint64_t dev, ino;
	uint64_t first_load_vaddr;
	bool is_dyn;
	size_t n;
	struct {
		char *name;
		uint64_t value;
	} * v;
};

static pthread_mutex_t sym_lock = PTHREAD_MUTEX_INITIALIZER;
static struct symset *symsets;

static bool wanted(const char *n)
{
	static const char *const pfx[] = {
		"_thread_db_", "nptl_",	       "__nptl_",  "_rtld_",
		"_dl_",	       "__stack_user", "_r_debug", "stack_used"};

	for (size_t i = 0; i < sizeof(pfx) / sizeof(pfx[0]); i++)
		if (!strncmp(n, pfx[i], strlen(pfx[i])))
			return true;
	return false;
}

static bool symset_add(void *arg, const char *n, const GElf_Sym *sym)
{
	struct symset *s = arg;
	void *nv;

	if (!wanted(n))
		return true;
	nv = realloc(s->v, (s->n + 1) * sizeof(*s->v));
	if (!nv)
		return false;
	s->v = nv;
	s->v[s->n].name = strdup(n);
	if (!s->v[s->n].name)
		return false;
	s->v[s->n].value = sym->st_value;
	s->n++;
	return true;
}

/* The symbols of the file at path, mapped as (dev, ino); NULL when it
 * cannot be opened as that file now (not kept: a later lookup tries
 * again). */
static struct symset *symset_get(const char *path, uint64_t dev, uint64_t ino)
{
	struct symset *s;
	struct ctp_jep_file f;
	struct stat st;
	Elf *elf;
	int fd;

	pthread_mutex_lock(&sym_lock);
	for (s = symsets; s; s = s->next)
		if (s->dev == dev && s->ino == ino)
			goto out;
	fd = ctp_foreign_open(AT_FDCWD, path, dev, ino, &st);
	if (fd < 0)
		goto out;
	s = calloc(1, sizeof(*s));
	if (!s) {
		close(fd);
		goto out;
	}
	s->dev = dev;
	s->ino = ino;
	elf_version(EV_CURRENT);
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (elf) {
		memset(&f, 0, sizeof(f));
		phdrs(elf, &f);
		s->first_load_vaddr = f.first_load_vaddr;
		s->is_dyn = f.is_dyn;
		ctp_elf_each_symbol(elf, symset_add, s);
		elf_end(elf);
	}
	close(fd);
	s->next = symsets;
	symsets = s;
out:
	pthread_mutex_unlock(&sym_lock);
	return s;
}

void ctp_jep_cleanup(void)
{
	pthread_mutex_lock(&sym_lock);
	while (symsets) {
		struct symset *s = symsets;

		symsets = s->next;
		for (size_t i = 0; i < s->n; i++)
			free(s->v[i].name);
		free(s->v);
		free(s);
	}
	pthread_mutex_unlock(&sym_lock);
}

static bool glibc_object(const char *p, size_t len)
{
	const char *b = memrchr(p, '/', len);
	size_t bl;

	b = b ? b + 1 : p;
	bl = len - (size_t)(b - p);
	return (bl >= 7 && !strncmp(b, "libc.so", 7)) ||
	       (bl >= 10 && !strncmp(b, "libpthread", 10)) ||
	       (bl >= 3 && !strncmp(b, "ld-", 3));
}

struct lookup_ctx {
	const struct ctp_jep_target *t;
};

static int target_path(const struct ctp_jep_target *t, const struct ctp_map *m,
		       char *buf, size_t sz)
{
	int n = snprintf(buf, sz, "%s%.*s", t->root ? t->root : "",
			 (int)m->path_len, m->path);

	return n > 0 && (size_t)n < sz ? 0 : -ENAMETOOLONG;
}

static int lookup(void *arg, const char *object, const char *name,
		  uint64_t *addr)
{
	struct lookup_ctx *lc = arg;
	const struct ctp_jep_target *t = lc->t;
	char path[4096];

	(void)object; /* glibc names libc or ld.so; search both, as gdb does */
	if (t->mem)
		return t->mem->lookup(t->mem->arg, name, addr);
	for (size_t i = 0; i < t->n_maps; i++) {
		const struct ctp_map *m = &t->maps[i];
		struct symset *s;
		uint64_t bias;

		/* The first mapping of each glibc file, plus the executable
		 * (a static binary carries glibc itself). */
		if (m->offset != 0 || !m->path_len || m->path[0] != '/' ||
		    (i != 0 && !glibc_object(m->path, m->path_len)))
			continue;
		if (target_path(t, m, path, sizeof(path)))
			continue;
		s = symset_get(path, m->dev, m->ino);
		if (!s)
			continue;
		for (size_t k = 0; k < s->n; k++) {
			if (strcmp(s->v[k].name, name))
				continue;
			if (ctp_maps_bias(t->maps, t->n_maps, m->dev, m->ino,
					  s->first_load_vaddr, s->is_dyn,
					  &bias))
				break;
			*addr = bias + s->v[k].value;
			return 0;
		}
	}
	return -ENOENT;
}

int ctp_jep_symbol(const struct ctp_jep_target *t, const char *name,
		   uint64_t *addr)
{
	struct lookup_ctx lc = {t};

	return lookup(&lc, NULL, name, addr);
}

/* n (1 to 3) spans of the target, all or nothing: 0, or a negative errno.
 * One process_vm_readv, or with a ctp_jep_mem one read per span. */
static int read_spans(pid_t pid, const struct ctp_jep_mem *mem,
		      const struct iovec *local, const struct iovec *remote,
		      int n)
{
	ssize_t want = 0, got;

	if (mem) {
		for (int i = 0; i < n; i++) {
			int r = mem->read(
				mem->arg,
				(uint64_t)(uintptr_t)remote[i].iov_base,
				local[i].iov_base, local[i].iov_len);

			if (r)
				return r;
		}
		return 0;
	}
	for (int i = 0; i < n; i++)
		want += (ssize_t)local[i].iov_len;
	got = process_vm_readv(pid, local, (unsigned long)n, remote,
			       (unsigned long)n, 0);
	if (got != want)
		return got < 0 ? -errno : -EIO;
	return 0;
}

/*
 * The two u64 at a and b, and when `then` is set, the 4 bytes at then_at
 * after them: one process_vm_readv, whose spans the kernel copies one
 * after another (with a ctp_jep_mem, one read per span, in order).
 */
static int read_pair_then(pid_t pid, const struct ctp_jep_mem *mem, uint64_t a,
			  uint64_t b, uint64_t *va, uint64_t *vb,
			  uint64_t then_at, int32_t *then)
{
	uint64_t lo = a < b ? a : b, hi = a < b ? b : a;
	uint64_t buf[4];
	struct iovec local[3], remote[3];
	int n = 0, r;

	/* The two counters sit next to each other in 5.x: one span. */
	bool one = hi - lo + 8 <= sizeof(buf);

	if (one) {
		local[n] = (struct iovec){buf, (size_t)(hi - lo + 8)};
		remote[n++] =
			(struct iovec){(void *)(uintptr_t)lo, local[0].iov_len};
	} else {
		local[n] = (struct iovec){va, 8};
		remote[n++] = (struct iovec){(void *)(uintptr_t)a, 8};
		local[n] = (struct iovec){vb, 8};
		remote[n++] = (struct iovec){(void *)(uintptr_t)b, 8};
	}
	if (then) {
		local[n] = (struct iovec){then, sizeof(*then)};
		remote[n++] = (struct iovec){(void *)(uintptr_t)then_at,
					     sizeof(*then)};
	}
	r = read_spans(pid, mem, local, remote, n);
	if (r || !one)
		return r;
	memcpy(va, (char *)buf + (a - lo), 8);
	memcpy(vb, (char *)buf + (b - lo), 8);
	return 0;
}

static int read_pair(pid_t pid, const struct ctp_jep_mem *mem, uint64_t a,
		     uint64_t b, uint64_t *va, uint64_t *vb)
{
	return read_pair_then(pid, mem, a, b, va, vb, 0, NULL);
}

int ctp_jep_read_pair(pid_t pid, uint64_t a, uint64_t b, uint64_t *va,
		      uint64_t *vb)
{
	return read_pair(pid, NULL, a, b, va, vb);
}

/* ---- libthread_db ---------------------------------------------------------
 */

/*
 * The reads libthread_db may make for one td_ta_new and thread walk
 * (ps_prochandle.max_reads): a fixed part (version, list heads, ...) and
 * a part per thread the walk may report. A real walk makes about 15 per
 * thread, the counter reads included (64 for a 4-thread worker, counted by
 * tests/fuzz/probe_tls_record.c); the bound is far above that and only
 * stops a walk that a looping list in the target would keep going forever
 * (tests/fuzz/regressions/probe_tls/thread-list-loop hung without it).
 */
#define TDB_READS_FIXED	     4096
#define TDB_READS_PER_THREAD 256

/*
 * A table layout is trusted per read (README.md, "Layouts without DWARF"):
 * the state byte is one of tsd_state_t's values (nominal 0 to
 * uninitialized 6 in jemalloc 5.x) and the entry's padding bytes after
 * it (7 in 5.3, where a uint64_t follows; none in 5.2, where flags do) are
 * zero, as the TLS image leaves them; and both counters, read again, have
 * not gone back and stay below 2^46 (64 TiB allocated by one thread over its
 * life, a day at 700 MB/s: far above real ones). A misplaced offset lands
 * on another member: a pointer (user-space addresses of x86_64 and
 * aarch64 heaps and mappings, 0x55.. and 0x7f.., are above 2^46), a
 * threshold, a flag. A thread that does pass this with wrong offsets can:
 * the checks catch likely mistakes, they prove nothing.
 */
#define TSD_STATE_MAX	 6
#define COUNTER_SANE_MAX (1ull << 46)

static void validate(const struct ctp_jep_target *t, uint64_t tsd,
		     struct ctp_jep_counters *c)
{
	const struct ctp_jep_file *f = t->file;
	uint8_t state[8] = {0xff};
	size_t n = 1 + (f->state_pad < 8 ? f->state_pad : 7);
	uint64_t a2, d2;
	struct iovec l = {state, n};
	struct iovec r = {(void *)(uintptr_t)(tsd + f->off_state), n};
	int e = read_spans(t->pid, t->mem, &l, &r, 1);
	bool padded = true;

	for (size_t i = 1; i < n; i++)
		padded &= state[i] == 0;
	if (!e)
		e = read_pair(t->pid, t->mem, tsd + f->off_alloc,
			      tsd + f->off_dealloc, &a2, &d2);
	if (e) {
		c->err = e;
		c->tag = e == -ESRCH ? CTP_JEP_EXITED : CTP_JEP_VM_READV;
		return;
	}
	if (state[0] > TSD_STATE_MAX || !padded || a2 < c->allocated ||
	    d2 < c->deallocated || a2 >= COUNTER_SANE_MAX ||
	    d2 >= COUNTER_SANE_MAX) {
		c->err = -EPROTO;
		c->tag = CTP_JEP_LAYOUT_MISMATCH;
		return;
	}
	c->allocated = a2;
	c->deallocated = d2;
}

/* A table layout holds for the process when every thread read passed and
 * some thread allocated (jemalloc's own start allocates on the thread that
 * called it first): with misplaced offsets pointing at zeros, none would
 * have. */
static bool table_fits(const struct ctp_jep_counters *c, size_t n)
{
	bool allocated = false;

	for (size_t i = 0; i < n; i++) {
		if (c[i].tag == CTP_JEP_LAYOUT_MISMATCH)
			return false;
		allocated |= !c[i].err && c[i].allocated > 0;
	}
	return allocated;
}

struct iter_ctx {
	const struct ctp_jep_target *t;
	uint64_t link_map; /* 0: use module id 1 (the executable) */
	uint64_t tid_off;  /* of the tid in a descriptor */
	struct ctp_jep_counters *out;
	size_t cap, n;
};

/*
 * The thread a descriptor is now: its tid, or 0 when it has none (tid 0:
 * the thread is not started yet, or the kernel has ended it and its
 * descriptor, stack and TLS may be reused for the next thread at any
 * moment) or it cannot be read. Read where td_thr_get_info reads it, which
 * would report tid 0 as the process's pid: the main thread's tid.
 * libthread_db's fake handle for the main thread before libpthread's
 * start (th_unique 0) is the main thread.
 */
static int32_t thread_lwp(const struct iter_ctx *ic, const td_thrhandle_t *th)
{
	int32_t tid;
	struct iovec l = {&tid, sizeof(tid)};
	struct iovec r = {
		(void *)((uintptr_t)th->th_unique + (uintptr_t)ic->tid_off),
		sizeof(tid)};

	if (!th->th_unique)
		return ic->t->pid;
	if (read_spans(ic->t->pid, ic->t->mem, &l, &r, 1))
		return 0;
	return tid > 0 ? tid : 0;
}

/* Where struct pthread keeps the tid, from glibc's description of it for
 * libthread_db (_thread_db_pthread_tid: size in bits, count, offset; what
 * td_thr_get_info reads it by): 0 and *off, or -ENOENT. */
static int tid_offset(const struct ctp_jep_target *t, struct lookup_ctx *lc,
		      uint64_t *off)
{
	uint32_t d[3];
	uint64_t at;
	struct iovec l = {d, sizeof(d)};
	struct iovec r;

	if (lookup(lc, NULL, "_thread_db_pthread_tid", &at))
		return -ENOENT;
	r = (struct iovec){(void *)(uintptr_t)at, sizeof(d)};
	if (read_spans(t->pid, t->mem, &l, &r, 1) || d[0] != 32 || d[1] != 1)
		return -ENOENT;
	*off = d[2];
	return 0;
}

/*
 * One descriptor of the walk, c->tid its thread when the walk met it: the
 * counters, or why not. Nothing is stopped: the thread may end while its
 * TLS is read, and once the kernel clears its tid the descriptor, with its
 * stack and TLS, goes to the next thread made. A tid is never the next
 * one's, so the same tid read after the counters (in the same
 * process_vm_readv where it can be) says the descriptor was this thread's
 * all along, a sequence check; else what was read may be another
 * thread's, and the thread is gone: nothing recorded (process-exited).
 */
static void read_thread(struct iter_ctx *ic, const td_thrhandle_t *th,
			struct ctp_jep_counters *c)
{
	const struct ctp_jep_target *t = ic->t;
	const struct ctp_jep_file *f = t->file;
	bool seq = th->th_unique != 0, checked = false;
	int32_t now = 0;
	psaddr_t base = 0;
	td_err_e e;
	uint64_t a;

	if (ic->link_map)
		e = td_thr_tls_get_addr(th, (psaddr_t)(uintptr_t)ic->link_map,
					(size_t)f->tsd_value, &base);
	else
		e = td_thr_tlsbase(th, 1, &base);
	if (e == TD_TLSDEFER || e == TD_NOTALLOC) {
		/* This thread never touched jemalloc's TLS: nothing to read. */
		c->err = -ENODATA;
		c->tag = CTP_JEP_TLS_DEFERRED;
	} else if (e != TD_OK) {
		c->err = -EIO;
		c->tag = CTP_JEP_THREAD_DB;
	} else {
		a = (uint64_t)(uintptr_t)base;
		if (!ic->link_map)
			a += f->tsd_value;
		/* A table layout reads the counters again (validate). */
		checked = seq && !f->from_table;
		c->err = read_pair_then(
			t->pid, t->mem, a + f->off_alloc, a + f->off_dealloc,
			&c->allocated, &c->deallocated,
			(uint64_t)(uintptr_t)th->th_unique + ic->tid_off,
			checked ? &now : NULL);
		checked &= !c->err;
		if (c->err)
			c->tag = c->err == -ESRCH ? CTP_JEP_EXITED
						  : CTP_JEP_VM_READV;
		else if (f->from_table)
			validate(t, a, c);
	}
	if (seq && !checked)
		now = thread_lwp(ic, th);
	if (seq && now != c->tid) {
		c->err = -ESRCH;
		c->tag = CTP_JEP_EXITED;
	}
}

static int thr_cb(const td_thrhandle_t *th, void *arg)
{
	struct iter_ctx *ic = arg;
	struct ctp_jep_counters *c;
	int32_t lwp;

	if (ic->n >= ic->cap)
		return 1;
	lwp = thread_lwp(ic, th);
	if (lwp <= 0)
		return 0;
	c = &ic->out[ic->n++];
	memset(c, 0, sizeof(*c));
	c->tid = lwp;
	read_thread(ic, th, c);
	return 0;
}

/* Sort by tid and keep one entry per tid: a walk that races the thread
 * lists (they change under it) may meet a descriptor twice. The one kept
 * was read, and of two reads the later (the counters only grow). */
static size_t unique_tids(struct ctp_jep_counters *c, size_t n)
{
	size_t k = 0;

	qsort(c, n, sizeof(*c), ctp_cmp_tid);
	for (size_t i = 0; i < n; i++) {
		struct ctp_jep_counters *p = k ? &c[k - 1] : NULL;

		if (!p || p->tid != c[i].tid) {
			c[k++] = c[i];
			continue;
		}
		if (c[i].err)
			continue;
		if (p->err || c[i].allocated > p->allocated)
			*p = c[i];
	}
	return k;
}

/* The link_map of the jemalloc module, matched by its dynamic section. */
static int find_link_map(const struct ctp_jep_target *t, struct lookup_ctx *lc,
			 uint64_t *out)
{
	uint64_t rdebug, lm, want = t->bias + t->file->dyn_vaddr;
	uint64_t v[4];

	if (!t->file->dyn_vaddr || lookup(lc, NULL, "_r_debug", &rdebug))
		return -ENOENT;
	if (read_pair(t->pid, t->mem, rdebug + 8, rdebug + 8, &lm, &v[0]))
		return -EIO;
	for (int guard = 0; lm && guard < 4096; guard++) {
		struct iovec l = {v, sizeof(v)};
		struct iovec r = {(void *)(uintptr_t)lm, sizeof(v)};

		/* l_addr, l_name, l_ld, l_next */
		if (read_spans(t->pid, t->mem, &l, &r, 1))
			return -EIO;
		if (v[2] == want) {
			*out = lm;
			return 0;
		}
		lm = v[3];
	}
	return -ENOENT;
}

int ctp_jep_read_thread_db(const struct ctp_jep_target *t,
			   struct ctp_jep_counters *out, size_t cap, size_t *n,
			   enum ctp_jep_tag *tag)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;
	struct lookup_ctx lc = {t};
	struct ps_prochandle ph = {.pid = t->pid,
				   .mem = t->mem,
				   .lookup = lookup,
				   .arg = &lc,
				   .max_reads = TDB_READS_FIXED +
						TDB_READS_PER_THREAD * cap};
	struct iter_ctx ic = {.t = t, .out = out, .cap = cap};
	td_thragent_t *ta = NULL;
	td_err_e e;

	*n = 0;
	pthread_once(&once, (void (*)(void))td_init);
	if (!t->in_main_exe && find_link_map(t, &lc, &ic.link_map)) {
		*tag = CTP_JEP_LINK_MAP;
		return -ENOENT;
	}
	/* Without it td_thr_get_info fails for every thread too. */
	if (tid_offset(t, &lc, &ic.tid_off)) {
		*tag = CTP_JEP_THREAD_DB;
		return -ENOTSUP;
	}
	e = td_ta_new(&ph, &ta);
	if (e != TD_OK) {
		*tag = CTP_JEP_THREAD_DB;
		return -ENOTSUP;
	}
	e = td_ta_thr_iter(ta, thr_cb, &ic, TD_THR_ANY_STATE,
			   TD_THR_LOWEST_PRIORITY, TD_SIGNO_MASK,
			   TD_THR_ANY_USER_FLAGS);
	td_ta_delete(ta);
	ic.n = unique_tids(out, ic.n);
	*n = ic.n;
	if (e != TD_OK && !ic.n) {
		*tag = CTP_JEP_THREAD_DB;
		return -EIO;
	}
	if (t->file->from_table && !table_fits(out, ic.n)) {
		*n = 0;
		*tag = CTP_JEP_LAYOUT_MISMATCH;
		return -EPROTO;
	}
	return 0;
}

/* ---- ptrace fallback ------------------------------------------------------
 * Each thread is seized, interrupted, its thread pointer read, and detached
 * at once; SIGINT and SIGTERM are blocked in this thread for that window so
 * the detach always completes first (were the process to die some other
 * way, the kernel detaches a ptrace-stopped tracee and resumes it).
 */

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* Wait for the interrupt stop; 0, -ETIMEDOUT, or -ESRCH (gone). */
static int wait_stop(pid_t tid, unsigned timeout_ms)
{
	uint64_t end = now_ms() + timeout_ms;
	struct timespec nap = {0, 200000};

	for (;;) {
		int st;
		pid_t r = waitpid(tid, &st, __WALL | WNOHANG);

		if (r == tid) {
			if (WIFEXITED(st) || WIFSIGNALED(st))
				return -ESRCH;
			if (WIFSTOPPED(st))
				return 0;
		} else if (r < 0 && errno != EINTR) {
			return -ESRCH;
		}
		if (now_ms() >= end)
			return -ETIMEDOUT;
		nanosleep(&nap, NULL);
	}
}

static int thread_pointer(pid_t tid, uint64_t *tp)
{
#if defined(__x86_64__)
	struct user_regs_struct regs;
	struct iovec iov = {&regs, sizeof(regs)};

	if (xptrace(PTRACE_GETREGSET, tid, (void *)(uintptr_t)NT_PRSTATUS,
		    &iov) < 0)
		return -errno;
	*tp = regs.fs_base;
	return 0;
#elif defined(__aarch64__)
	uint64_t tpidr;
	struct iovec iov = {&tpidr, sizeof(tpidr)};

	if (xptrace(PTRACE_GETREGSET, tid, (void *)(uintptr_t)NT_ARM_TLS,
		    &iov) < 0)
		return -errno;
	*tp = tpidr;
	return 0;
#else
	(void)tid, (void)tp;
	return -ENOTSUP;
#endif
}

static int tls_addr(const struct ctp_jep_file *f, uint64_t tp, uint64_t *a)
{
#if defined(__aarch64__)
	return ctp_jep_tls_arm64(tp, f->tls_memsz, f->tls_align, f->tsd_value,
				 a);
#else
	return ctp_jep_tls_x86_64(tp, f->tls_memsz, f->tls_align, f->tsd_value,
				  a);
#endif
}

static void probe_one(const struct ctp_jep_target *t, int32_t tid,
		      struct ctp_jep_counters *c, unsigned timeout_ms)
{
	sigset_t block, old;
	uint64_t tp = 0, a;
	int r;

	memset(c, 0, sizeof(*c));
	c->tid = tid;
	sigemptyset(&block);
	sigaddset(&block, SIGINT);
	sigaddset(&block, SIGTERM);
	pthread_sigmask(SIG_BLOCK, &block, &old);
	if (xptrace(PTRACE_SEIZE, tid, NULL, NULL) < 0) {
		c->err = -errno;
		c->tag = c->err == -ESRCH ? CTP_JEP_EXITED
					  : CTP_JEP_PTRACE_SEIZE;
		goto out;
	}
	if (xptrace(PTRACE_INTERRUPT, tid, NULL, NULL) < 0) {
		c->err = -errno;
		c->tag =
			c->err == -ESRCH ? CTP_JEP_EXITED : CTP_JEP_PTRACE_STOP;
		goto detach;
	}
	r = wait_stop(tid, timeout_ms);
	if (r == -ETIMEDOUT) {
		/* The interrupt is pending; the stop will come, and only a
		 * stopped tracee can be detached. Wait for it, longer. */
		r = wait_stop(tid, timeout_ms * 20);
		c->err = -ETIMEDOUT;
		c->tag = CTP_JEP_PTRACE_STOP;
		if (r)
			goto out; /* detached by the kernel at our exit */
		goto detach;
	}
	if (r) {
		c->err = r;
		c->tag = CTP_JEP_EXITED;
		goto out;
	}
	r = thread_pointer(tid, &tp);
	if (r) {
		c->err = r;
		c->tag = CTP_JEP_PTRACE_REGS;
	}
detach:
	xptrace(PTRACE_DETACH, tid, NULL, NULL);
out:
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (c->err)
		return;
	if (tls_addr(t->file, tp, &a)) {
		c->err = -EINVAL;
		c->tag = CTP_JEP_STATIC_TLS;
		return;
	}
	c->err = read_pair(t->pid, t->mem, a + t->file->off_alloc,
			   a + t->file->off_dealloc, &c->allocated,
			   &c->deallocated);
	if (c->err)
		c->tag = c->err == -ESRCH ? CTP_JEP_EXITED : CTP_JEP_VM_READV;
}

int ctp_jep_read_ptrace(const struct ctp_jep_target *t, const int32_t *tids,
			size_t n_tids, struct ctp_jep_counters *out,
			unsigned timeout_ms)
{
	if (!t->in_main_exe)
		return -ENOTSUP;
	for (size_t i = 0; i < n_tids; i++)
		probe_one(t, tids[i], &out[i], timeout_ms);
	return 0;
}
