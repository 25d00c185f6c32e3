/* SPDX-License-Identifier: MIT */
/* Crash containment, the capture's side (see supervise.h). */
#include "supervise.h"

#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"

#define SV_MAGIC 0x43545356u /* "CTSV" */

/* Room for the handler: it calls nothing but atomics, two system calls
 * and sigaction, but sanitizer runtimes may run on this stack too. */
#define SV_ALTSTACK (64 * 1024)

_Thread_local struct ctp_sv_slot *ctp_sv_self;

static struct ctp_sv *sv_shared;
/* The calling thread's alternate stack, NULL when it has none. */
static _Thread_local void *sv_altstack;

static const int fatal_signals[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL,
				    SIGABRT, SIGSYS, SIGTRAP};

int ctp_sv_map(struct ctp_sv **out)
{
	struct ctp_sv *sv = mmap(NULL, sizeof(*sv), PROT_READ | PROT_WRITE,
				 MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (sv == MAP_FAILED)
		return -errno;
	sv->magic = SV_MAGIC;
	ctp_sv_reset(sv);
	*out = sv;
	return 0;
}

void ctp_sv_unmap(struct ctp_sv *sv)
{
	if (sv)
		munmap(sv, sizeof(*sv));
}

void ctp_sv_reset(struct ctp_sv *sv)
{
	memset(sv->slot, 0, sizeof(sv->slot));
	atomic_store(&sv->crashed_slot, -1);
	atomic_store(&sv->oom_plugin, 0);
	atomic_store(&sv->busy_since_ns, 0);
}

/*
 * A fatal signal in the child. Note which slot took it (the first thread
 * to get here wins: a second crash while the first is dying says nothing
 * new), then die of the same signal with its default action: the
 * disposition is reset only once this thread's record is published (with
 * SA_RESETHAND a second thread crashing a moment later would kill the
 * process before any record exists), and the signal sent here to this
 * thread, blocked while the handler runs, is delivered as soon as it
 * returns. A fault would also recur on its own; abort() and kill() would
 * not.
 */
static void on_fatal(int sig)
{
	int saved = errno;
	struct ctp_sv *sv = sv_shared;
	struct ctp_sv_slot *me = ctp_sv_self;
	if (sv && me) {
		int32_t none = -1;
		atomic_store(&me->crash_sig, sig);
		atomic_store(&me->crash_tid, (int32_t)syscall(SYS_gettid));
		atomic_compare_exchange_strong(&sv->crashed_slot, &none,
					       (int32_t)(me - sv->slot));
	}
	struct sigaction dfl = {.sa_handler = SIG_DFL};
	sigemptyset(&dfl.sa_mask);
	sigaction(sig, &dfl, NULL);
	syscall(SYS_tgkill, getpid(), (pid_t)syscall(SYS_gettid), sig);
	errno = saved;
}

/* An alternate signal stack for the calling thread, so that a plugin
 * that overflowed its stack can still be named. */
static void altstack_on(void)
{
	void *p = mmap(NULL, SV_ALTSTACK, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
	if (p == MAP_FAILED)
		return;
	stack_t ss = {.ss_sp = p, .ss_size = SV_ALTSTACK};
	if (sigaltstack(&ss, NULL) < 0) {
		munmap(p, SV_ALTSTACK);
		return;
	}
	sv_altstack = p;
}

static void altstack_off(void)
{
	if (!sv_altstack)
		return;
	stack_t ss = {.ss_flags = SS_DISABLE};
	if (sigaltstack(&ss, NULL) == 0)
		munmap(sv_altstack, SV_ALTSTACK);
	sv_altstack = NULL;
}

void ctp_sv_worker_mask(sigset_t *set)
{
	sigfillset(set);
	for (size_t i = 0; i < sizeof(fatal_signals) / sizeof(*fatal_signals);
	     i++)
		sigdelset(set, fatal_signals[i]);
}

int ctp_sv_child_setup(struct ctp_sv *sv)
{
	struct sigaction sa = {.sa_handler = on_fatal, .sa_flags = SA_ONSTACK};
	sigemptyset(&sa.sa_mask);
	sv_shared = sv;
	for (size_t i = 0; i < sizeof(fatal_signals) / sizeof(*fatal_signals);
	     i++)
		if (sigaction(fatal_signals[i], &sa, NULL) < 0)
			return -errno;
	ctp_sv_thread_begin(0);
	return 0;
}

void ctp_sv_detach(void)
{
	struct sigaction dfl = {.sa_handler = SIG_DFL};
	sigemptyset(&dfl.sa_mask);
	for (size_t i = 0; i < sizeof(fatal_signals) / sizeof(*fatal_signals);
	     i++)
		sigaction(fatal_signals[i], &dfl, NULL);
	sv_shared = NULL;
	ctp_sv_self = NULL;
}

void ctp_sv_thread_begin(uint32_t slot)
{
	if (!sv_shared || slot >= CTP_SV_SLOTS)
		return;
	altstack_on();
	ctp_sv_self = &sv_shared->slot[slot];
}

void ctp_sv_thread_end(void)
{
	if (!sv_shared)
		return;
	ctp_sv_self = NULL;
	altstack_off();
}

void ctp_sv_enter_cgroup(uint32_t plugin, const char *path)
{
	struct ctp_sv_slot *s = ctp_sv_self;
	if (!s)
		return;
	/* Written before the slot says "in a cgroup callback"; the parent
	 * reads it only after the child is gone. */
	size_t n = strnlen(path, sizeof(s->path) - 1);
	memcpy(s->path, path, n);
	s->path[n] = '\0';
	ctp_sv_enter(plugin, CTP_SV_CGROUP, 0);
}

void ctp_sv_crash_read(const struct ctp_sv *sv, int sig,
		       struct ctp_sv_crash *out)
{
	memset(out, 0, sizeof(*out));
	out->sig = sig;
	out->plugin = -1;
	int32_t idx = atomic_load(&sv->crashed_slot);
	if (sv->magic != SV_MAGIC || idx < 0 || idx >= CTP_SV_SLOTS)
		return;
	const struct ctp_sv_slot *s = &sv->slot[idx];
	if (atomic_load(&s->crash_sig) > 0)
		out->sig = atomic_load(&s->crash_sig);
	out->thread_tid = atomic_load(&s->crash_tid);
	uint32_t plugin = atomic_load(&s->plugin);
	if (plugin == 0)
		return;
	out->plugin = (int32_t)(plugin - 1);
	out->what = (enum ctp_sv_what)atomic_load(&s->what);
	out->task = atomic_load(&s->task);
	if (out->what == CTP_SV_CGROUP) {
		memcpy(out->path, s->path, sizeof(out->path));
		out->path[sizeof(out->path) - 1] = '\0';
	}
}

#if defined(__SANITIZE_ADDRESS__)
#define SV_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define SV_ASAN 1
#endif
#endif
#ifndef SV_ASAN
#define SV_ASAN 0
#endif

int ctp_sv_memory_ceiling(uint64_t bytes)
{
	struct rlimit rl = {.rlim_cur = bytes, .rlim_max = bytes};
	if (!bytes || SV_ASAN)
		return 0;
	return setrlimit(RLIMIT_DATA, &rl) < 0 ? -errno : 0;
}

void ctp_sv_note_oom(uint32_t plugin)
{
	uint32_t none = 0;
	if (sv_shared)
		atomic_compare_exchange_strong(&sv_shared->oom_plugin, &none,
					       plugin + 1);
}

bool ctp_sv_oom_pending(void)
{
	return sv_shared && atomic_load(&sv_shared->oom_plugin) != 0;
}

void ctp_sv_busy(bool on)
{
	if (sv_shared)
		atomic_store(&sv_shared->busy_since_ns, on ? ctp_now_ns() : 0);
}

/* One slot's place, as the parent sees it. */
struct sv_place {
	uint32_t plugin, what;
	int32_t task;
};

static void sv_places(const struct ctp_sv *sv, struct sv_place *p)
{
	for (int i = 0; i < CTP_SV_SLOTS; i++) {
		p[i].plugin = atomic_load(&sv->slot[i].plugin);
		p[i].what = atomic_load(&sv->slot[i].what);
		p[i].task = atomic_load(&sv->slot[i].task);
	}
}

int ctp_sv_busy_read(const struct ctp_sv *sv, uint64_t gap_ns,
		     struct ctp_sv_crash *out)
{
	static struct sv_place a[CTP_SV_SLOTS], b[CTP_SV_SLOTS];
	struct timespec ts = {.tv_sec = (time_t)(gap_ns / 1000000000u),
			      .tv_nsec = (long)(gap_ns % 1000000000u)};
	memset(out, 0, sizeof(*out));
	out->plugin = -1;
	sv_places(sv, a);
	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
	sv_places(sv, b);
	int pick = -1;
	for (int i = 0; i < CTP_SV_SLOTS && pick < 0; i++)
		if (b[i].plugin && memcmp(&a[i], &b[i], sizeof(a[i])) == 0)
			pick = i;
	for (int i = 0; i < CTP_SV_SLOTS && pick < 0; i++)
		if (b[i].plugin)
			pick = i;
	if (pick < 0)
		return -ENOENT;
	out->plugin = (int32_t)(b[pick].plugin - 1);
	out->what = (enum ctp_sv_what)b[pick].what;
	out->task = b[pick].task;
	out->thread_tid = pick + 1;
	if (out->what == CTP_SV_CGROUP) {
		memcpy(out->path, sv->slot[pick].path, sizeof(out->path));
		out->path[sizeof(out->path) - 1] = '\0';
	}
	return 0;
}

void ctp_sv_where(const struct ctp_sv_crash *c, bool sig, char *buf, size_t len)
{
	int n = 0;
	if (sig) {
		const char *ab = sigabbrev_np(c->sig);
		n = ab ? snprintf(buf, len, "SIG%s in ", ab)
		       : snprintf(buf, len, "signal %d in ", c->sig);
	}
	if (n < 0 || (size_t)n >= len)
		return;
	int m = snprintf(buf + n, len - (size_t)n, "%s",
			 ctp_sv_what_name(c->what));
	if (m < 0 || (size_t)(n + m) >= len)
		return;
	n += m;
	if (c->what == CTP_SV_THREAD)
		snprintf(buf + n, len - (size_t)n, " (tid %d)", c->task);
	else if (c->what == CTP_SV_PROCESS)
		snprintf(buf + n, len - (size_t)n, " (pid %d)", c->task);
	else if (c->what == CTP_SV_CGROUP)
		snprintf(buf + n, len - (size_t)n, " (cgroup %s)", c->path);
}

const char *ctp_sv_what_name(enum ctp_sv_what what)
{
	static const char *const names[] = {
		[CTP_SV_CORE] = "the core",
		[CTP_SV_LOAD] = "loading (dlopen)",
		[CTP_SV_INIT] = "init",
		[CTP_SV_HOST] = "host callback",
		[CTP_SV_PROCESS] = "process callback",
		[CTP_SV_THREAD] = "thread callback",
		[CTP_SV_CGROUP] = "cgroup callback",
		[CTP_SV_FINISH] = "finish callback",
		[CTP_SV_FINI] = "fini",
	};
	return (unsigned)what < sizeof(names) / sizeof(*names) && names[what]
		       ? names[what]
		       : "?";
}
