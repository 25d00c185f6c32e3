// SPDX-License-Identifier: MIT
/*
 * LD_PRELOAD'ed into ctprof-core by test_foreign_files.c: after every
 * lookup of a path with CTP_SWAP_MARK in it and a last component f<N> or
 * x<N> (open, openat, stat, lstat, fstatat, statx, access, realpath), the
 * two names are exchanged (renameat2 RENAME_EXCHANGE): the file and the
 * FIFO beside it trade places. The worst timing a local user's swap loop
 * (tests/foreign_swap.c) reaches by chance, made certain: code that looks
 * a foreign file up twice by its path meets the FIFO the second time.
 * Test code only.
 */
#include <dlfcn.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define EXPORT __attribute__((visibility("default")))

static void swap_after(const char *path)
{
	const char *mark = getenv("CTP_SWAP_MARK"), *base, *d;
	char other[PATH_MAX];

	if (!path || !mark || !*mark || !strstr(path, mark))
		return;
	base = strrchr(path, '/');
	base = base ? base + 1 : path;
	if ((base[0] != 'f' && base[0] != 'x') || !base[1])
		return;
	for (d = base + 1; *d; d++)
		if (*d < '0' || *d > '9')
			return;
	if (snprintf(other, sizeof(other), "%.*s%c%s", (int)(base - path), path,
		     base[0] == 'f' ? 'x' : 'f',
		     base + 1) >= (int)sizeof(other))
		return;
	renameat2(AT_FDCWD, path, AT_FDCWD, other, RENAME_EXCHANGE);
}

#define REAL(name) ((__typeof__(&name))dlsym(RTLD_NEXT, #name))

static mode_t mode_arg(int flags, va_list ap)
{
	return flags & (O_CREAT | O_TMPFILE) ? (mode_t)va_arg(ap, int) : 0;
}

EXPORT int open(const char *path, int flags, ...)
{
	va_list ap;
	va_start(ap, flags);
	mode_t m = mode_arg(flags, ap);
	va_end(ap);
	int r = REAL(open)(path, flags, m);
	swap_after(path);
	return r;
}

EXPORT int open64(const char *path, int flags, ...)
{
	va_list ap;
	va_start(ap, flags);
	mode_t m = mode_arg(flags, ap);
	va_end(ap);
	int r = REAL(open64)(path, flags, m);
	swap_after(path);
	return r;
}

EXPORT int openat(int dirfd, const char *path, int flags, ...)
{
	va_list ap;
	va_start(ap, flags);
	mode_t m = mode_arg(flags, ap);
	va_end(ap);
	int r = REAL(openat)(dirfd, path, flags, m);
	swap_after(path);
	return r;
}

EXPORT int openat64(int dirfd, const char *path, int flags, ...)
{
	va_list ap;
	va_start(ap, flags);
	mode_t m = mode_arg(flags, ap);
	va_end(ap);
	int r = REAL(openat64)(dirfd, path, flags, m);
	swap_after(path);
	return r;
}

EXPORT int stat(const char *path, struct stat *sb)
{
	int r = REAL(stat)(path, sb);
	swap_after(path);
	return r;
}

EXPORT int lstat(const char *path, struct stat *sb)
{
	int r = REAL(lstat)(path, sb);
	swap_after(path);
	return r;
}

EXPORT int fstatat(int dirfd, const char *path, struct stat *sb, int flags)
{
	int r = REAL(fstatat)(dirfd, path, sb, flags);
	swap_after(path);
	return r;
}

EXPORT int statx(int dirfd, const char *path, int flags, unsigned mask,
		 struct statx *sb)
{
	int r = REAL(statx)(dirfd, path, flags, mask, sb);
	swap_after(path);
	return r;
}

EXPORT int access(const char *path, int mode)
{
	int r = REAL(access)(path, mode);
	swap_after(path);
	return r;
}

EXPORT char *realpath(const char *path, char *resolved)
{
	char *r = REAL(realpath)(path, resolved);
	swap_after(path);
	return r;
}
