/* SPDX-License-Identifier: MIT */
/* serve's libraries, dlopen'ed (httplib.h). */
#include "httplib.h"

#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>

#define CTP_HTTPLIB_DEFINE(lib, f) __typeof__(f) *sym_##f;
CTP_HTTPLIB_SYMS(CTP_HTTPLIB_DEFINE)
#undef CTP_HTTPLIB_DEFINE

/* The sonames the build linked against (CMakeLists.txt reads them from the
 * libraries pkg-config found). */
static const char *const sonames[] = {CTP_MHD_SONAME, CTP_GNUTLS_SONAME,
				      CTP_LIBCRYPT_SONAME};

static pthread_once_t once = PTHREAD_ONCE_INIT;
static int loaded;
static char why[256];

static void load(void)
{
	void *h[3];

	for (size_t i = 0; i < 3; i++) {
		h[i] = dlopen(sonames[i], RTLD_NOW | RTLD_LOCAL);
		if (!h[i]) {
			snprintf(why, sizeof(why), "cannot load %s: %s",
				 sonames[i], dlerror());
			loaded = -ENOENT;
			return;
		}
	}
	/* The handles stay open for the process's life: the pointers are. */
#define CTP_HTTPLIB_RESOLVE(lib, f)                                            \
	if (!(sym_##f = (__typeof__(f) *)dlsym(h[lib], #f))) {                 \
		snprintf(why, sizeof(why), "%s: no %s: %s", sonames[lib], #f,  \
			 dlerror());                                           \
		loaded = -ENOENT;                                              \
		return;                                                        \
	}
	CTP_HTTPLIB_SYMS(CTP_HTTPLIB_RESOLVE)
#undef CTP_HTTPLIB_RESOLVE
}

int ctp_httplib_load(char *err, size_t errlen)
{
	pthread_once(&once, load);
	if (loaded < 0 && err && errlen)
		snprintf(err, errlen, "%s", why);
	return loaded;
}
