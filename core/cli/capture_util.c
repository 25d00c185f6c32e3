/* SPDX-License-Identifier: MIT */
/*
 * What the capture commands share (the default command in main.c and
 * `record` in record.c): loading the config for this host, the capture's
 * clock, writing a finished capture. Private to the core.
 */
#include "capture_util.h"
#include "clock.h"
#include "loader.h"
#include "log.h"
#include "priv.h"
#include "supervise.h"

#include <dlfcn.h>
#include <errno.h>
#include <sys/wait.h>
#include <fcntl.h>
#include <poll.h>
#include <inttypes.h>
#include <limits.h>
#include <linux/capability.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "build_config.h"
#include "cli.h"
#include "ctprof/plugin-util.h"
#include "engine.h"
#include "paths.h"
#include "writer.h"

int ctp_cli_load_config(const char *path, const char *as_host,
			struct ctp_config **ret)
{
	char err[1024];
	struct ctp_config *cfg;
	int r = ctp_config_load(path, &cfg, err, sizeof(err));
	if (r < 0) {
		fprintf(stderr, "ctprof-core: %s\n", err);
		return CTP_EXIT_USAGE;
	}
	struct utsname u;
	uname(&u);
	struct ctp_host_facts facts = {
		.hostname = as_host ? as_host : u.nodename,
		.release = u.release,
	};
	r = ctp_config_apply_hosts(cfg, &facts);
	if (r < 0) {
		fprintf(stderr, "ctprof-core: %s: applying host rules: %s\n",
			path, strerror(-r));
		ctp_config_free(cfg);
		return CTP_EXIT_USAGE;
	}
	*ret = cfg;
	return 0;
}

uint64_t ctp_cli_realtime_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

const char *ctp_cli_default_config(void)
{
	static char path[PATH_MAX];
	ctp_paths_config_file(path, sizeof(path));
	return path;
}

void ctp_cli_capture_begin(struct ctp_capture *cap)
{
	cap->start_realtime_ns = ctp_cli_realtime_ns();
	cap->start_mono_ns = ctp_now_ns();
	cap->start_boottime_ns = ctp_boottime_ns();
}

/* How long jemalloc keeps the pages a capture freed in a process that
 * captures again (ctp_cli_keep_pages): longer than the usual interval. */
#define KEEP_PAGES_MS 60000

void ctp_cli_keep_pages(void)
{
	typedef int (*mallctl_fn)(const char *, void *, size_t *, void *,
				  size_t);
	const char *env = getenv("MALLOC_CONF");
	ssize_t ms = KEEP_PAGES_MS;
	unsigned n = 0;
	size_t nlen = sizeof(n);
	mallctl_fn mc;

	/* The user's own setting wins, as it does over malloc_conf. */
	if (env && strstr(env, "dirty_decay_ms"))
		return;
	mc = (mallctl_fn)(uintptr_t)dlsym(RTLD_DEFAULT, "mallctl");
	if (!mc)
		return; /* glibc's malloc: it keeps freed pages itself */
	/* Arenas made from now on, then each one there is (the setting has
	 * no "all arenas" form; one not made yet fails, and takes the
	 * default when it is). A failure costs only the faults. */
	(void)mc("arenas.dirty_decay_ms", NULL, NULL, &ms, sizeof(ms));
	if (mc("arenas.narenas", &n, &nlen, NULL, 0) != 0)
		return;
	for (unsigned i = 0; i < n; i++) {
		char name[48];

		snprintf(name, sizeof(name), "arena.%u.dirty_decay_ms", i);
		(void)mc(name, NULL, NULL, &ms, sizeof(ms));
	}
}

int ctp_cli_capture_again(struct ctp_engine *eng, bool supervised,
			  const char **what)
{
	static bool kept;
	struct ctp_capture *cap = eng->cap;
	if (!kept) {
		kept = true;
		ctp_cli_keep_pages();
	}
	int r = ctp_engine_rearm(eng);
	*what = "cannot start a capture";
	if (r < 0)
		return r;
	ctp_cli_capture_begin(cap);
	ctp_cli_record_self(cap, supervised);
	ctp_sv_busy(true);
	r = ctp_engine_capture(eng);
	ctp_sv_busy(false);
	cap->end_realtime_ns = ctp_cli_realtime_ns();
	cap->end_mono_ns = ctp_now_ns();
	*what = "capture failed";
	return r;
}

bool ctp_cli_plugin_gave_up(const struct ctp_capture *cap)
{
	bool any = false;
	for (uint32_t i = 0; i < cap->n_plugins; i++) {
		const struct ctp_plugin_rt *rt = cap->plugins[i].rt;
		for (int cb = 0; rt && cb < CB_COUNT; cb++) {
			if (!atomic_load(&rt->cb_disabled[cb]))
				continue;
			ctp_log(CTP_LOG_ERR,
				"--strict: plugin %s had a callback disabled "
				"after repeated errors: no snapshot written",
				cap->plugins[i].name);
			any = true;
			break;
		}
	}
	return any;
}

void ctp_cli_report(const struct ctp_capture *cap, const char *subject,
		    uint64_t bytes)
{
	char failed[512] = "";
	size_t used = 0;
	for (uint32_t i = 0; i < cap->n_plugins; i++) {
		if (cap->plugins[i].status != CTP_PST_FAILED)
			continue;
		int n = snprintf(failed + used, sizeof(failed) - used, "%s%s",
				 used ? ", " : "", cap->plugins[i].name);
		if (n > 0 && (size_t)n < sizeof(failed) - used)
			used += (size_t)n;
	}
	/* Marked only: the reason is said by whoever runs the captures,
	 * once while it lasts (record), not on every capture's line. */
	fprintf(stderr,
		"%s: %" PRIu64 " threads, %zu processes, "
		"%" PRIu32 " cgroups in %.2fs, %" PRIu64
		" bytes; plugins failed: %s%s\n",
		subject, cap->rf.tids_recorded, cap->n_spans,
		cap->cgroups.nrows,
		(double)(cap->end_mono_ns - cap->start_mono_ns) / 1e9, bytes,
		used ? failed : "none",
		ctp_capture_spoiled(cap, NULL, 0) ? "; short of resources"
						  : "");
}

/* CAP_SYS_PTRACE in this thread's effective set (capget(2), no libcap):
 * what another user's io, smaps_rollup or maps needs. */
static bool cap_sys_ptrace(void)
{
	struct __user_cap_header_struct h = {
		.version = _LINUX_CAPABILITY_VERSION_3};
	struct __user_cap_data_struct d[2];
	if (syscall(SYS_capget, &h, d) < 0)
		return false;
	return (d[CAP_SYS_PTRACE / 32].effective >> (CAP_SYS_PTRACE % 32)) & 1;
}

int ctp_cli_write_to(struct ctp_capture *cap, const struct ctp_config *cfg,
		     const char *outpath, const volatile sig_atomic_t *stop,
		     uint64_t *written, bool report, char *err, size_t errlen)
{
	cap->ptrace_capable = cap_sys_ptrace();
	struct utsname u;
	if (uname(&u) == 0) {
		/* Again on a retry of the same capture (record). */
		free(cap->kernel_release);
		free(cap->hostname);
		cap->kernel_release = strdup(u.release);
		cap->hostname =
			cfg->record_hostname ? strdup(u.nodename) : NULL;
	}
	uint64_t bytes = 0;
	int r = ctp_writer_write(cap, outpath, cfg->compression_level,
				 CTP_VERSION, stop, &bytes, err, errlen);
	if (r == -ECANCELED) {
		fprintf(stderr,
			"ctprof-core: interrupted; no snapshot written\n");
		return r;
	}
	if (r < 0)
		return r;
	if (report && ctp_verbosity >= 0) {
		char subject[PATH_MAX + 32];
		snprintf(subject, sizeof(subject), "ctprof-core: %s",
			 strcmp(outpath, "-") == 0 ? "<stdout>" : outpath);
		ctp_cli_report(cap, subject, bytes);
	}
	if (written)
		*written = bytes;
	return 0;
}

int ctp_cli_write(struct ctp_capture *cap, const struct ctp_config *cfg,
		  const char *outpath, const volatile sig_atomic_t *stop,
		  uint64_t *written, bool report)
{
	char err[1024];
	int r = ctp_cli_write_to(cap, cfg, outpath, stop, written, report, err,
				 sizeof(err));
	if (r == -ECANCELED)
		return CTP_EXIT_INTERRUPTED;
	if (r < 0) {
		fprintf(stderr, "ctprof-core: %s\n", err);
		return CTP_EXIT_FAILURE;
	}
	return CTP_EXIT_OK;
}

/* The capturing processes as the proc root numbers them: this one (its
 * <proc>/self), and the supervisor when there is one and the root is this
 * process's own pid namespace. None under a root without self (a fixture
 * tree). */
uint32_t ctp_cli_peer;

/* The union of the capabilities the plugins of cfg declare, learnt by
 * loading them in a child. 0, or -errno. */
static int probe_caps(const struct ctp_config *cfg, uint64_t *mask)
{
	int p[2];
	if (pipe2(p, O_CLOEXEC) < 0)
		return -errno;
	fflush(NULL);
	pid_t pid = fork();
	if (pid < 0) {
		int e = errno;
		close(p[0]);
		close(p[1]);
		return -e;
	}
	if (pid == 0) {
		static volatile sig_atomic_t never;
		struct ctp_capture *cap = NULL;
		struct ctp_engine eng;
		close(p[0]);
		ctp_sv_detach(); /* a crash here is the probe's alone */
		ctp_verbosity = -1;
		if (ctp_capture_new(1, &cap) == 0 &&
		    ctp_engine_init(&eng, cfg, cap, &never) >= 0 &&
		    ctp_engine_load(&eng) >= 0) {
			uint64_t m = ctp_engine_caps(&eng);
			if (write(p[1], &m, sizeof(m)) != (ssize_t)sizeof(m))
				_exit(1);
		}
		_exit(0);
	}
	close(p[1]);
	uint64_t until = ctp_now_ns() + cfg->service.deadline_ns;
	int r = -ETIMEDOUT;
	for (;;) {
		uint64_t now = ctp_now_ns();
		if (now >= until)
			break;
		struct pollfd pf = {.fd = p[0], .events = POLLIN};
		int n = poll(&pf, 1, (int)((until - now) / 1000000 + 1));
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		ssize_t got = read(p[0], mask, sizeof(*mask));
		r = got == (ssize_t)sizeof(*mask) ? 0 : -EIO;
		break;
	}
	close(p[0]);
	kill(pid, SIGKILL);
	while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
		;
	return r;
}

/* What ctp_cli_confine did: confined at all, with bpf() open for the
 * plugins' init (a plugin declared CAP_BPF), and whether
 * ctp_cli_confine_loaded closed it. */
static bool confined, confined_load, load_ended;

int ctp_cli_confine(const char *user, const struct ctp_config *cfg)
{
	char why[256], caps[256];
	uint64_t mask = 0;
	if (confined)
		return 0;
	int r = probe_caps(cfg, &mask);
	if (r < 0) {
		ctp_log(CTP_LOG_ERR,
			"cannot capture as %s: loading the plugins to learn "
			"their capabilities failed: %s",
			user, strerror(-r));
		return r;
	}
	/* What a plugin declares that this kernel does not know, no process
	 * holds: left out (the plugin then fails as without it, and says
	 * why). */
	mask = ctp_priv_caps_known(mask, ctp_priv_kernel_cap_last());
	confined_load = mask >> CAP_BPF & 1;
	r = ctp_priv_keep_caps(user, mask,
			       confined_load ? CTP_PRIV_FILTER_CAPTURE_LOAD
					     : CTP_PRIV_FILTER_CAPTURE,
			       why, sizeof(why));
	if (r < 0) {
		ctp_log(CTP_LOG_ERR, "cannot capture as %s: %s", user, why);
		return r;
	}
	confined = true;
	ctp_priv_caps_format(mask, caps, sizeof(caps));
	if (ctp_verbosity >= 1)
		ctp_log(CTP_LOG_INFO, "capturing as %s with %s", user, caps);
	return 0;
}

int ctp_cli_confine_loaded(void)
{
	char why[256];
	if (!confined_load || load_ended)
		return 0;
	load_ended = true;
	int r = ctp_priv_end_load(UINT64_C(1) << CAP_BPF |
					  UINT64_C(1) << CAP_PERFMON |
					  UINT64_C(1) << CAP_SYS_ADMIN,
				  why, sizeof(why));
	if (r < 0)
		ctp_log(CTP_LOG_ERR,
			"closing bpf() after the plugins' init: %s", why);
	return r;
}

void ctp_cli_oom_exit(void)
{
	if (ctp_sv_oom_pending()) {
		fflush(NULL);
		_exit(CTP_EXIT_OOM_PLUGIN);
	}
}

void ctp_cli_record_self(struct ctp_capture *cap, bool supervised)
{
	char path[PATH_MAX], link[32];
	int w = snprintf(path, sizeof(path), "%s/self", cap->proc_root);
	ssize_t n = w > 0 && (size_t)w < sizeof(path)
			    ? readlink(path, link, sizeof(link) - 1)
			    : -1;
	uint64_t pid;
	if (n <= 0)
		return;
	link[n] = '\0';
	if (ctp_parse_u64_str(link, &pid) < 0 || !pid || pid > UINT32_MAX)
		return;
	cap->self_tgid[cap->n_self++] = (uint32_t)pid;
	if (supervised && pid == (uint64_t)getpid()) {
		cap->self_tgid[cap->n_self++] = (uint32_t)getppid();
		if (ctp_cli_peer && ctp_cli_peer != (uint32_t)getppid())
			cap->self_tgid[cap->n_self++] = ctp_cli_peer;
	}
}
