/* SPDX-License-Identifier: MIT */
/*
 * Helpers shared by the end-to-end tests (test_e2e.c, test_live.c): temp
 * trees, running the ctprof-core binary, writing capture configs and
 * rendering snapshot values. Test code only; nothing here is in the core.
 *
 * Functions that can fail return >= 0 or a negative errno, like the core.
 */
#ifndef CTP_TEST_E2E_UTIL_H
#define CTP_TEST_E2E_UTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "reader.h"

/* A fresh private directory under $TMPDIR (else /tmp), path in buf. */
int e2e_tmpdir(const char *tag, char *buf, size_t len);
/* snprintf into a path buffer; -ENAMETOOLONG instead of truncating. */
int e2e_pathf(char *buf, size_t len, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
#define E2E_PATHF(buf, ...) e2e_pathf(buf, sizeof(buf), __VA_ARGS__)
/* Remove a tree without following symbolic links; a missing path is fine. */
int e2e_rm_rf(const char *path);
/* Copy the file src to dst (mode 0640). */
int e2e_copy_file(const char *src, const char *dst);
/* Copy directories and regular files of src into dst (created). */
int e2e_copy_tree(const char *src, const char *dst);
/* Count directory entries other than "." and "..". */
int e2e_count_entries(const char *dir, size_t *n);
/* A child process named `name` with `threads` sleeping threads besides
 * its main one (64 KiB stacks), something of the test's own for a capture
 * to walk; it dies with the caller (PR_SET_PDEATHSIG). Returns its pid
 * once every thread exists, or a negative errno; the caller kills
 * (SIGKILL) and reaps it. */
pid_t e2e_crowd(unsigned threads, const char *name);
/* The size of a soak or a stress (label soak, stress): the number in the
 * environment variable `var` when it is set, else `full` when CTP_FULL_SIZE
 * is set (not "0"; `tools/dev.sh soak`), else `gate`, the size CI runs. */
unsigned long e2e_size(const char *var, unsigned long gate, unsigned long full);
/* Run fn as pid 1 of a pid namespace of its own, with a /proc of its own
 * mounted in a mount namespace of its own: a live capture there walks
 * only what the test made, whatever else the host runs, and taskstats
 * still answers (the proc root is this kernel's /proc). Returns fn's exit
 * status (fn ends with exit(), its handlers run), 77 saying why on stderr
 * when the namespaces cannot be made (not root), 1 when fn did not exit.
 * The namespace is made in a child, so the caller keeps its own for what
 * it forks (the sanitizers' leak check forks a tracer at exit). */
int e2e_in_own_proc(int (*fn)(void));
/* A proc root at dir (made here, it must not exist) holding only the
 * processes pids of the live host, each a symbolic link to /proc/PID,
 * beside a link to every entry of /proc that is not a process (stat,
 * self, sys...). A capture with roots.proc there walks what the test made,
 * however many tasks the host runs beside it. */
int e2e_proc_root(const char *dir, const pid_t *pids, size_t n);
/* Is `line` a whole line of text? */
bool e2e_has_line(const char *text, const char *line);
/* The same, 0 when dir cannot be read (a recording not started yet). */
size_t e2e_files(const char *dir);
/* Open each file of dir (not dot files; name order, so a recording's in
 * capture order) with a 2 GiB budget and call fn on it. Returns how many,
 * or a negative errno with a message in err. */
int e2e_each_snapshot(const char *dir,
		      void (*fn)(const struct ctp_snap *s, const char *path,
				 void *arg),
		      void *arg, char *err, size_t errlen);

int e2e_write_file(const char *path, const char *data, size_t len);
/* Whole file into a malloc'ed NUL-terminated buffer the caller frees. */
int e2e_read_file(const char *path, char **buf, size_t *len);
/* Print a file to stderr (a child's log, when a check failed). */
void e2e_show_file(const char *what, const char *path);
/* out (len bytes) against the golden file at path, failing the running
 * test with what it got; with CTP_REGEN_GOLDEN set in the environment, it
 * writes the file instead (review the diff before committing it). */
void e2e_golden(const char *path, const char *out, size_t len);

/* What a capture config says; NULL members are left out of the file. */
struct e2e_cfg {
	const char *proc, *sys, *cgroup;
	const char *output;
	unsigned workers;	/* 0: not set */
	unsigned split_threads; /* 0: not set (the default) */
	bool required;		/* procfs-stat required: true */
	/* Extra lines under plugins.procfs-stat.options, e.g.
	 * "affinity: status", or NULL. */
	const char *options;
};
int e2e_write_config(const char *path, const struct e2e_cfg *c);

/*
 * Start CTP_TEST_BINARY with args (NULL-terminated), stdout and stderr
 * redirected to files (NULL: /dev/null). *pid is the child.
 */
int e2e_spawn(const char *const *args, const char *out, const char *err,
	      pid_t *pid);
/* Children a test started and has not waited for (at most 8), for its
 * teardown to stop when a check failed first: add when started, done once
 * waited for, stop_all (SIGTERM, then wait) in the teardown. */
void e2e_started_add(pid_t pid);
void e2e_started_done(pid_t pid);
void e2e_started_stop_all(void);
/* A child holding `mib` MiB of its own anonymous memory, touched page by
 * page (resident), growing to each next size asked on fd `in` (a byte of
 * MiB; 0 or EOF: stop asking), answering a byte on `ack` once touched;
 * then it waits for a signal. Returns its pid. */
pid_t e2e_mem_holder(unsigned mib, int in, int ack);
/* Read the one byte e2e_mem_holder answers on fd (a failed test if none). */
void e2e_read_ack(int fd);
/* `record --config config -o dir --count 1` (a failed test, its stderr
 * shown, if it fails). */
void e2e_record_once(const char *config, const char *dir);

/* Start `ctprof-core serve ...` (args from "serve" on, stderr to log) as a
 * started child, and wait for its "listening on SCHEME://127.0.0.1:PORT"
 * line (scheme "http" or "https"): the pid, PORT in *port. Fails the
 * running test, showing the log, when none comes in 20 s. */
pid_t e2e_serve_start(const char *const *args, const char *log,
		      const char *scheme, unsigned *port);
/* A TCP connection to 127.0.0.1:port, or -1 (nothing listens yet). */
int e2e_connect_loopback(unsigned port);
/* The same from 127.0.0.<host>, as another local client would: -1 when it
 * cannot connect. */
int e2e_connect_loopback_from(unsigned port, unsigned char host);
/* A loopback TCP port that was free a moment ago. */
unsigned e2e_free_port(void);
/* Debian's Prometheus (/usr/bin/prometheus) with the config file yml, its
 * data under data, its output in log, its API on 127.0.0.1:port; a started
 * child (stop it with SIGTERM). */
pid_t e2e_prometheus_start(const char *yml, const char *data, const char *log,
			   unsigned port);
/* The same scraping job "ctprof" at 127.0.0.1:target every second, its
 * config, data and log (prometheus.yml, tsdb, prometheus.log) in dir. */
pid_t e2e_prometheus_scrape(const char *dir, unsigned target, unsigned port);
/* Wait for a child; *status is the raw wait status. */
int e2e_wait(pid_t pid, int *status);
/* CLOCK_MONOTONIC in milliseconds. */
uint64_t e2e_now_ms(void);

/* What a task's /proc/PID/status says of its privileges. */
struct e2e_privs {
	uint32_t uid[4], gid[4];	  /* real, effective, saved, fs */
	uint64_t inh, prm, eff, bnd, amb; /* CapInh ... CapAmb */
	int nnp;			  /* NoNewPrivs */
	int seccomp;			  /* 0 none, 1 strict, 2 filter */
};
/* Parse status text (pure); 0, or -EINVAL when a line is missing. */
int e2e_privs_parse(const char *text, struct e2e_privs *p);
/* Read and parse /proc/PID/status (pid 0: this process). 0 or -errno. */
int e2e_task_privs(pid_t pid, struct e2e_privs *p);
/* Wait for a child at most limit_ms: its exit code, or 128 + the signal
 * that killed it. One still running then is killed and the running test
 * fails, naming `what` (a hang fails, never blocks the suite). */
int e2e_wait_bounded(pid_t pid, uint64_t limit_ms, const char *what);
/* Spawn and wait. Returns the exit code (0..255), or -1000 - signal when a
 * signal killed the child, or a negative errno when it could not start. */
int e2e_run(const char *const *args, const char *out, const char *err);
/* `ctprof-core VERB ARGS...` (ARGS NULL-terminated, at most 22) with its
 * stdout and stderr in out.txt and err.txt of the current directory, read
 * back into *out and *err (either may be NULL; free them); the exit status
 * as e2e_run returns it. */
int e2e_run_verb(const char *verb, char **out, char **err, ...);
/* e2e_run that kills the child after limit_s seconds: a command that hangs
 * is a failure (-ETIME), not a stuck suite. The limit guards a hang only;
 * set it far above any run's time on a busy host. */
int e2e_run_within(const char *const *args, const char *out, const char *err,
		   unsigned limit_s);
/* Run `ctprof-core --config cfg -o out`, stderr to `log`, and open the
 * snapshot (decompression cap 2 GiB). Unlike the rest of this file it
 * fails the running cmocka test, showing the config and the log, when the
 * run exits non-zero or the snapshot does not read. */
struct ctp_snap *e2e_capture(const char *cfg, const char *out, const char *log);
/* A capture of the live host with the build's plugins: config, snapshot
 * and log as dir/tag.{yaml,ctprof.zst,log}, `workers`, and `plugins` the
 * lines under "plugins:" (e.g. "  io: {required: true}\n"). */
struct ctp_snap *e2e_capture_plugins(const char *dir, const char *tag,
				     unsigned workers, const char *plugins);

/* ---- procfs-stat's thread fields, and reading them from /proc text ------ */

enum {
	F_MINFLT,
	F_MAJFLT,
	F_UTIME,
	F_STIME,
	F_PRIORITY,
	F_NICE,
	F_START_TIME,
	F_PROCESSOR,
	F_RT_PRIORITY,
	F_POLICY,
	F_STATE,
	F_VCSW,
	F_NVCSW,
	F_AFFINITY,
	F_COUNT
};

struct e2e_fdef {
	const char *name; /* snapshot field name */
	uint8_t type;	  /* enum ctp_type */
	unsigned stat_no; /* proc(5) stat field number, 0 when not from stat */
};
extern const struct e2e_fdef e2e_fdef[F_COUNT];
#define E2E_NR_THREADS "procfs.nr_threads"

/*
 * Token of stat field `no` (3 and up, counted after the comm's last ')')
 * into out. Returns 1 when found and followed by ' ' or '\n'; 0 when the
 * field is missing or runs into the end of the text (cut by a short read).
 * A deliberately naive reader, independent of the plugin's parser.
 */
int e2e_stat_token(const char *text, unsigned no, char *out, size_t len);
/* The value of a "Key:\t" line of a status text; 1 found, 0 not. */
int e2e_status_value(const char *text, const char *key, char *out, size_t len);
/* The 0:: line's path of a cgroup file into out, or NULL when none. */
const char *e2e_cgroup_v2(const char *text, char *out, size_t len);
/* "SCHED_OTHER"... for a policy number, "unknown(N)" otherwise. */
const char *e2e_policy_name(long long n, char *buf, size_t len);

/* ---- Reading a snapshot in a test (each fails the running test) -------- */

/* The value of field `name` in `row` of its scope's table. */
struct ctp_value e2e_value(const struct ctp_snap *s, const char *name,
			   size_t row);
/* The same, which must be a U64 (an I64, a STRING equal to want). */
uint64_t e2e_u64(const struct ctp_snap *s, const char *name, size_t row);
int64_t e2e_i64(const struct ctp_snap *s, const char *name, size_t row);
void e2e_assert_str(const struct ctp_snap *s, const char *name, size_t row,
		    const char *want);
/* Index of per-task file `name` in the read-failure tally. */
size_t e2e_tally_slot(const struct ctp_snap_readfail *rf, const char *name);

/* The row of a process (by tgid, CTP_SCOPE_PROCESS) or a thread (by tid,
 * CTP_SCOPE_THREAD), or -1. */
long e2e_row(const struct ctp_snap *s, uint8_t scope, long id);
/* Plugin `name`'s entry (fails the test without). */
const struct ctp_snap_plugin *e2e_plugin(const struct ctp_snap *s,
					 const char *name);
/* Summary counter `name` of plugin `plugin` (fails the test without). */
uint64_t e2e_summary(const struct ctp_snap *s, const char *plugin,
		     const char *name);

/*
 * The stop-free proof: `ctprof-core --config cfg -o dir/tag.ctprof` under
 * `strace -f -e trace=ptrace` (log dir/tag.strace, stderr dir/tag.log),
 * the snapshot opened into *snap. Returns how many ptrace requests named
 * `needle` the whole capture made ("PTRACE_SEIZE"; "ptrace(" for any), or
 * -1 when it did not run or read (its log shown).
 */
int e2e_traced_capture(const char *cfg, const char *dir, const char *tag,
		       const char *needle, struct ctp_snap **snap);
/* The same with strace's `-e trace=SYSCALLS` ("openat,open,openat2"):
 * 0 with the snapshot in *snap and the whole trace in *trace (the caller
 * frees it), or -1 (its log shown). LeakSanitizer cannot run under the
 * tracer: the traced capture gets detect_leaks=0. */
int e2e_strace_capture(const char *cfg, const char *dir, const char *tag,
		       const char *syscalls, struct ctp_snap **snap,
		       char **trace);
/* The same with strace -y: each descriptor argument shows its path
 * (`openat(5</proc/42>, "maps", ...)`). */
int e2e_strace_capture_fds(const char *cfg, const char *dir, const char *tag,
			   const char *syscalls, struct ctp_snap **snap,
			   char **trace);

/* Bytes equal to a C string. */
bool e2e_bytes_eq(struct ctp_bytes b, const char *s);
/* A CPUSET value as the kernel prints a cpu list ("0,2-3"), "" if empty. */
void e2e_cpuset_str(const struct ctp_value *v, char *buf, size_t len);

#endif
