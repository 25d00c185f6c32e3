/* SPDX-License-Identifier: MIT */
/* What the capture commands share (capture_util.c). Private to the core. */
#ifndef CTP_CORE_CAPTURE_UTIL_H
#define CTP_CORE_CAPTURE_UTIL_H

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>

#include "config.h"
#include "model.h"

/* Load `path` and apply the host rules for this machine (or a host named
 * as_host). 0, or the exit status after a FILE:LINE:COL message. */
int ctp_cli_load_config(const char *path, const char *as_host,
			struct ctp_config **ret);
uint64_t ctp_cli_realtime_ns(void);
/* The configuration file used without --config (paths.h). */
const char *ctp_cli_default_config(void);
/* A capture starts: its realtime, monotonic and boot clocks. */
void ctp_cli_capture_begin(struct ctp_capture *cap);
struct ctp_engine;
/*
 * For a process that captures again and again (record, serve, top): tell
 * jemalloc, when it is this process's malloc, to keep freed pages for a
 * minute instead of returning them at once (main.c's malloc_conf, which
 * gives a one-shot capture its lowest peak). Each capture frees its tables
 * and the next allocates the same again: returned pages would be faulted
 * in and zeroed anew every capture. MALLOC_CONF naming dirty_decay_ms
 * wins. ctp_cli_capture_again calls it once.
 */
void ctp_cli_keep_pages(void);
/* One more capture of an engine kept loaded (record, serve): re-armed,
 * its clocks and capturing processes (supervised: the supervisor too)
 * recorded, walked, its end clocks set. Returns 0, or a negative errno
 * with what failed in *what ("cannot start a capture", "capture
 * failed"). */
int ctp_cli_capture_again(struct ctp_engine *eng, bool supervised,
			  const char **what);
/* With --strict: did a plugin's callback fail often enough in a row to be
 * disabled for the rest of the capture? Names each on stderr. */
bool ctp_cli_plugin_gave_up(const struct ctp_capture *cap);
/* Record in cap the capturing processes (capture.self_tgids): this one,
 * and its supervisor when `supervised`. */
void ctp_cli_record_self(struct ctp_capture *cap, bool supervised);
/* Under the supervisor, a plugin's callback ran out of memory under the
 * ceiling: end this child with CTP_EXIT_OOM_PLUGIN, the capture unwritten,
 * for the supervisor to start again without the plugin. Else nothing. */
void ctp_cli_oom_exit(void);
#define CTP_EXIT_OOM_PLUGIN 86 /* between a child and its supervisor only */

/*
 * Before the plugins are loaded (capabilities and seccomp filters are per
 * thread, and a plugin may start threads when it loads): become `user`
 * keeping only the capabilities the enabled plugins declare, with
 * NoNewPrivs and the capture's seccomp filter (core/util/priv.h). What
 * they declare is learnt by loading them once in a short-lived child (a
 * probe, bounded by service.capture_deadline; quiet). Once per process (a
 * reload keeps what the first one kept). 0, or -errno after a message.
 */
int ctp_cli_confine(const char *user, const struct ctp_config *cfg);

/*
 * After the plugins' init in a process ctp_cli_confine confined: when a
 * plugin declared CAP_BPF (it loads BPF programs in init, the only time
 * it may), bpf() keeps only the commands that use what init made
 * (ctp_priv_end_load) and CAP_BPF, CAP_PERFMON and CAP_SYS_ADMIN go. A
 * later reload's init can then load no program: such a plugin falls back
 * as it does without the privilege. 0 (also when there was nothing to
 * do), or -errno after a message.
 */
int ctp_cli_confine_loaded(void);

/* A third capturing process, recorded beside those when not 0: the
 * process of a service that asked for the capture (serve's HTTP). */
extern uint32_t ctp_cli_peer;
/* Write the finished capture to outpath (temp file and rename), with the
 * header facts known only now; *stop set cancels it. With `report`, the
 * line saying what was written (ctp_cli_report, "ctprof-core: OUTPATH")
 * goes to stderr unless -q. Returns the exit status; the file's bytes in
 * *written (may be NULL). */
int ctp_cli_write(struct ctp_capture *cap, const struct ctp_config *cfg,
		  const char *outpath, const volatile sig_atomic_t *stop,
		  uint64_t *written, bool report);
/* The one line a finished capture prints on stderr: "SUBJECT: N threads,
 * N processes, N cgroups in T, N bytes; plugins failed: ...", ending with
 * "; short of resources" for a spoiled capture (ctp_capture_spoiled; the
 * reason is the caller's to say). */
void ctp_cli_report(const struct ctp_capture *cap, const char *subject,
		    uint64_t bytes);
/* ctp_cli_write with a failure's one line in err instead of on stderr (the
 * caller decides what to say, e.g. once for failures in a row). Returns 0,
 * -ECANCELED after the "interrupted" line, or a negative errno. */
int ctp_cli_write_to(struct ctp_capture *cap, const struct ctp_config *cfg,
		     const char *outpath, const volatile sig_atomic_t *stop,
		     uint64_t *written, bool report, char *err, size_t errlen);

#endif
