/* SPDX-License-Identifier: MIT */
/*
 * Crash containment, the capture's side. A supervised capture runs in a
 * child process; before the child calls into a plugin, the calling thread
 * writes which plugin, which callback and which task into its own slot of
 * a page shared with the parent (two relaxed stores; one more when it
 * returns). A fatal signal (SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT,
 * SIGSYS, SIGTRAP) is caught on an alternate stack only to note which slot
 * took it, then delivered again with the default action, so the child dies
 * of it as it would have. The parent (core/cli/supervisor.c) reads the page
 * after waitpid and knows who crashed: the plugin to leave out of the next
 * attempt, or nobody (a crash of the core, which fails).
 *
 * Nothing here allocates in the per-task path; everything is a no-op in a
 * process that ctp_sv_child_setup was not called in (tests, --no-supervise).
 */
#ifndef CTP_CORE_SUPERVISE_H
#define CTP_CORE_SUPERVISE_H

#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

/* What a thread is doing in a plugin (0: nothing, it is in the core). */
enum ctp_sv_what {
	CTP_SV_CORE = 0,
	CTP_SV_LOAD, /* dlopen: the library's constructors */
	CTP_SV_INIT,
	CTP_SV_HOST,
	CTP_SV_PROCESS,
	CTP_SV_THREAD,
	CTP_SV_CGROUP,
	CTP_SV_FINISH,
	CTP_SV_FINI,
};

/* Slot 0 is the main thread; worker w (of several) is slot w + 1. */
#define CTP_SV_SLOTS	257
#define CTP_SV_PATH_MAX 120

/* One thread's slot, on a cache line (two) of its own. */
struct ctp_sv_slot {
	_Atomic uint32_t plugin; /* plugin index + 1; 0: none */
	_Atomic uint32_t what;	 /* enum ctp_sv_what */
	_Atomic int32_t task;	 /* tid (thread), tgid (process), or 0 */
	/* Written by the slot's own thread when a fatal signal hits it,
	 * before it tries to become crashed_slot. */
	_Atomic int32_t crash_sig, crash_tid;
	/* The cgroup a cgroup callback is on (NUL-terminated, truncated). */
	char path[CTP_SV_PATH_MAX];
};

/* The shared page(s): mapped by the parent before fork. */
struct ctp_sv {
	uint32_t magic;
	/* The slot of the thread a fatal signal hit, -1 while none did;
	 * the first such thread wins. Its signal and thread are in the slot:
	 * written there before this is set, they are never half-published
	 * when a second crashing thread ends the process first. */
	_Atomic int32_t crashed_slot;
	struct ctp_sv_slot slot[CTP_SV_SLOTS];
	/* The first plugin (index + 1; 0: none) whose callback said it ran
	 * out of memory (-ENOMEM) in a child under a memory ceiling. */
	_Atomic uint32_t oom_plugin;
	/* Monotonic ns since the child started loading plugins or a capture
	 * (0: it is between captures): the supervisor's deadline. */
	_Atomic uint64_t busy_since_ns;
};

/* The calling thread's slot (NULL when not supervised). */
extern _Thread_local struct ctp_sv_slot *ctp_sv_self;

/* Map the shared region (MAP_SHARED | MAP_ANONYMOUS, zeroed, no slot
 * crashed). Returns 0 or -errno. */
int ctp_sv_map(struct ctp_sv **out);
void ctp_sv_unmap(struct ctp_sv *sv);

/* In the child: remember sv, install the fatal-signal handlers and take
 * slot 0 for the calling (main) thread. Returns 0 or -errno. */
int ctp_sv_child_setup(struct ctp_sv *sv);

/* In a child of a supervised child that must not speak for it (a probe):
 * forget the shared page and restore the fatal signals' default action. */
void ctp_sv_detach(void);

/* A worker thread takes slot `slot` (with an alternate signal stack of
 * its own) / gives it back before it ends. No-ops when not supervised. */
void ctp_sv_thread_begin(uint32_t slot);
void ctp_sv_thread_end(void);

/* What a worker thread blocks: every signal but the fatal ones above
 * (a blocked fault would bypass the handler). A signal sent to the process
 * then goes to a thread that waits for it, never to a parked worker. */
void ctp_sv_worker_mask(sigset_t *set);

/* The calling thread enters plugin `plugin`'s callback `what` for task
 * `task` (0: none) / returns from it. */
static inline void ctp_sv_enter(uint32_t plugin, enum ctp_sv_what what,
				int32_t task)
{
	struct ctp_sv_slot *s = ctp_sv_self;
	if (!s)
		return;
	atomic_store_explicit(&s->task, task, memory_order_relaxed);
	atomic_store_explicit(&s->what, (uint32_t)what, memory_order_relaxed);
	atomic_store_explicit(&s->plugin, plugin + 1, memory_order_relaxed);
}

static inline void ctp_sv_leave(void)
{
	struct ctp_sv_slot *s = ctp_sv_self;
	if (s)
		atomic_store_explicit(&s->plugin, 0, memory_order_relaxed);
}

/* ctp_sv_enter for a cgroup callback: also notes the cgroup's path. */
void ctp_sv_enter_cgroup(uint32_t plugin, const char *path);

/* In the child: at most `bytes` of data (RLIMIT_DATA; 0: none), so that
 * a plugin's allocations past it fail with ENOMEM. None in an
 * AddressSanitizer build, whose reserved shadow counts as data. Returns 0
 * or -errno. */
int ctp_sv_memory_ceiling(uint64_t bytes);

/* A plugin's callback returned -ENOMEM: note it (the first one wins) for
 * the supervisor, which leaves the plugin out. No-op when not supervised. */
void ctp_sv_note_oom(uint32_t plugin);

/* Did a plugin's callback run out of memory (ctp_sv_note_oom)? */
bool ctp_sv_oom_pending(void);

/* The child starts (on) or ends (off) loading plugins or a capture: the
 * supervisor's deadline runs meanwhile. No-op when not supervised. */
void ctp_sv_busy(bool on);

/* What the parent learns from a child that died of signal `sig`. */
struct ctp_sv_crash {
	int sig;
	int32_t plugin; /* plugin index, -1: the core (or unknown) */
	enum ctp_sv_what what;
	int32_t task;
	int32_t thread_tid; /* 0 when the handler did not run */
	char path[CTP_SV_PATH_MAX];
};

/* Read the shared region after the child died of `sig` (the caller knows
 * it from waitpid). When the handler ran, the crashed slot's record (its
 * own signal, which is the one to report when two threads crashed at
 * once); without it (a signal that cannot be caught, like SIGKILL) nobody
 * is blamed: plugin -1, thread_tid 0, sig as given. */
void ctp_sv_crash_read(const struct ctp_sv *sv, int sig,
		       struct ctp_sv_crash *out);

/* "thread callback", "init", ... for messages and reasons. */
/* The child did not answer in time: where is it? Samples the slots twice,
 * `gap_ns` apart, and takes the first slot inside a plugin that did not
 * move between the two (else the first inside a plugin at all). Fills
 * *out as ctp_sv_crash_read does (sig 0, thread_tid the slot's index + 1);
 * returns 0, or -ENOENT when no thread is in a plugin. */
int ctp_sv_busy_read(const struct ctp_sv *sv, uint64_t gap_ns,
		     struct ctp_sv_crash *out);

/* Where a crash (or, sig false, a stuck thread) was: "SIGSEGV in thread
 * callback (tid 12)", "host callback", "cgroup callback (cgroup /a/b)". */
void ctp_sv_where(const struct ctp_sv_crash *c, bool sig, char *buf,
		  size_t len);

const char *ctp_sv_what_name(enum ctp_sv_what what);

/* Clear the crash record and every slot before another attempt. */
void ctp_sv_reset(struct ctp_sv *sv);

#endif
