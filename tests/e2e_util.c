/* SPDX-License-Identifier: MIT */
/* Helpers for the end-to-end tests; see e2e_util.h. */
#include "e2e_util.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <signal.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <sys/mman.h>
#include <unistd.h>

extern char **environ;

int e2e_tmpdir(const char *tag, char *buf, size_t len)
{
	const char *base = getenv("TMPDIR");
	if (!base || !*base)
		base = "/tmp";
	int n = snprintf(buf, len, "%s/ctprof-%s.XXXXXX", base, tag);
	if (n < 0 || (size_t)n >= len)
		return -ENAMETOOLONG;
	return mkdtemp(buf) ? 0 : -errno;
}

int e2e_pathf(char *buf, size_t len, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(buf, len, fmt, ap);
	va_end(ap);
	return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}

static int rm_one(const char *path, const struct stat *st, int flag,
		  struct FTW *ftw)
{
	(void)st;
	(void)ftw;
	if (flag == FTW_DP)
		return rmdir(path) < 0 ? -1 : 0;
	/* A directory we could not enter (mode 000 in a test): open it up. */
	if (flag == FTW_DNR) {
		chmod(path, 0700);
		return 0;
	}
	return unlink(path) < 0 ? -1 : 0;
}

int e2e_rm_rf(const char *path)
{
	struct stat st;
	if (lstat(path, &st) < 0)
		return errno == ENOENT ? 0 : -errno;
	if (nftw(path, rm_one, 16, FTW_DEPTH | FTW_PHYS) < 0)
		return -errno;
	return 0;
}

int e2e_write_file(const char *path, const char *data, size_t len)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		return -errno;
	size_t off = 0;
	while (off < len) {
		ssize_t n = write(fd, data + off, len - off);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			int err = -errno;
			close(fd);
			return err;
		}
		off += (size_t)n;
	}
	return close(fd) < 0 ? -errno : 0;
}

int e2e_read_file(const char *path, char **buf, size_t *len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	size_t cap = 4096, off = 0;
	char *b = malloc(cap);
	int ret = 0;
	if (!b) {
		close(fd);
		return -ENOMEM;
	}
	for (;;) {
		if (off + 1 >= cap) {
			char *nb = realloc(b, cap * 2);
			if (!nb) {
				ret = -ENOMEM;
				break;
			}
			b = nb;
			cap *= 2;
		}
		ssize_t n = read(fd, b + off, cap - off - 1);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			ret = -errno;
			break;
		}
		if (n == 0)
			break;
		off += (size_t)n;
	}
	close(fd);
	if (ret < 0) {
		free(b);
		return ret;
	}
	b[off] = '\0';
	*buf = b;
	if (len)
		*len = off;
	return 0;
}

void e2e_show_file(const char *what, const char *path)
{
	char *b;
	size_t n;
	if (e2e_read_file(path, &b, &n) < 0)
		return;
	fprintf(stderr, "---- %s (%s) ----\n%s%s---- end ----\n", what, path, b,
		n && b[n - 1] != '\n' ? "\n" : "");
	free(b);
}

static int copy_file(const char *src, const char *dst, mode_t mode)
{
	char *b;
	size_t n;
	int r = e2e_read_file(src, &b, &n);
	if (r < 0)
		return r;
	r = e2e_write_file(dst, b, n);
	free(b);
	if (r == 0 && chmod(dst, mode & 07777) < 0)
		r = -errno;
	return r;
}

int e2e_copy_file(const char *src, const char *dst)
{
	return copy_file(src, dst, 0640);
}

int e2e_copy_tree(const char *src, const char *dst)
{
	if (mkdir(dst, 0755) < 0 && errno != EEXIST)
		return -errno;
	DIR *d = opendir(src);
	if (!d)
		return -errno;
	int ret = 0;
	struct dirent *e;
	while (ret == 0 && (e = readdir(d))) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		char s[PATH_MAX], t[PATH_MAX];
		if ((size_t)snprintf(s, sizeof(s), "%s/%s", src, e->d_name) >=
			    sizeof(s) ||
		    (size_t)snprintf(t, sizeof(t), "%s/%s", dst, e->d_name) >=
			    sizeof(t)) {
			ret = -ENAMETOOLONG;
			break;
		}
		struct stat st;
		if (lstat(s, &st) < 0)
			ret = -errno;
		else if (S_ISDIR(st.st_mode))
			ret = e2e_copy_tree(s, t);
		else if (S_ISREG(st.st_mode))
			ret = copy_file(s, t, st.st_mode);
		/* Nothing else belongs in a fixture tree. */
		else
			ret = -EINVAL;
	}
	closedir(d);
	return ret;
}

/* fn in a child (ending with exit(), its exit handlers run, or with
 * _exit()): its exit status, 1 when it did not exit. */
static int in_child(int (*fn)(void), bool handlers)
{
	fflush(NULL);
	pid_t pid = fork();
	if (pid < 0)
		return 1;
	if (pid == 0) {
		int r = fn();
		if (handlers)
			exit(r);
		_exit(r);
	}
	int st;
	if (waitpid(pid, &st, 0) < 0)
		return 1;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 1;
}

static int (*own_proc_fn)(void);

/* Pid 1 of the new namespace: a /proc of its own, then fn. */
static int own_proc_inside(void)
{
	if (unshare(CLONE_NEWNS) < 0 ||
	    mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0 ||
	    mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC,
		  NULL) < 0) {
		fprintf(stderr, "skipped: no /proc of our own: %s\n",
			strerror(errno));
		return 77;
	}
	return own_proc_fn();
}

static int own_proc_namespace(void)
{
	if (unshare(CLONE_NEWPID) < 0) {
		fprintf(stderr, "skipped: no pid namespace: %s\n",
			strerror(errno));
		return 77;
	}
	return in_child(own_proc_inside, true);
}

int e2e_in_own_proc(int (*fn)(void))
{
	own_proc_fn = fn;
	return in_child(own_proc_namespace, false);
}

static void *crowd_sleeper(void *arg)
{
	for (;;)
		pause();
	return arg;
}

static void crowd_main(int ready, unsigned threads, const char *name)
{
	pthread_attr_t a;
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	prctl(PR_SET_NAME, name);
	pthread_attr_init(&a);
	pthread_attr_setstacksize(&a, 64 * 1024);
	for (unsigned i = 0; i < threads; i++) {
		pthread_t t;
		if (pthread_create(&t, &a, crowd_sleeper, NULL) != 0)
			_exit(1);
	}
	if (write(ready, "k", 1) != 1)
		_exit(1);
	for (;;)
		pause();
}

pid_t e2e_crowd(unsigned threads, const char *name)
{
	int p[2];
	char c;
	if (pipe2(p, O_CLOEXEC) < 0)
		return -errno;
	pid_t pid = fork();
	if (pid == 0) {
		close(p[0]);
		crowd_main(p[1], threads, name);
	}
	int err = pid < 0 ? -errno : 0;
	close(p[1]);
	if (pid > 0 && read(p[0], &c, 1) != 1) {
		/* It could not start every thread, and exited. */
		waitpid(pid, NULL, 0);
		err = -EAGAIN;
	}
	close(p[0]);
	return err < 0 ? err : pid;
}

unsigned long e2e_size(const char *var, unsigned long gate, unsigned long full)
{
	const char *v = getenv(var), *f = getenv("CTP_FULL_SIZE");
	if (v && *v)
		return strtoul(v, NULL, 10);
	return f && *f && strcmp(f, "0") != 0 ? full : gate;
}

int e2e_proc_root(const char *dir, const pid_t *pids, size_t n)
{
	if (mkdir(dir, 0755) < 0)
		return -errno;
	int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0)
		return -errno;
	DIR *d = opendir("/proc");
	int ret = d ? 0 : -errno;
	struct dirent *e;
	char to[64], name[16];
	while (ret == 0 && d && (e = readdir(d))) {
		const char *c = e->d_name;
		while (*c >= '0' && *c <= '9')
			c++;
		/* Every other process of the host is left out. */
		if (!*c || !strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		if ((size_t)snprintf(to, sizeof(to), "/proc/%s", e->d_name) >=
		    sizeof(to))
			continue; /* no entry of /proc is that long */
		if (symlinkat(to, dfd, e->d_name) < 0)
			ret = -errno;
	}
	for (size_t i = 0; ret == 0 && i < n; i++) {
		snprintf(to, sizeof(to), "/proc/%d", (int)pids[i]);
		snprintf(name, sizeof(name), "%d", (int)pids[i]);
		if (symlinkat(to, dfd, name) < 0)
			ret = -errno;
	}
	if (d)
		closedir(d);
	close(dfd);
	return ret;
}

bool e2e_has_line(const char *text, const char *line)
{
	size_t n = strlen(line);
	for (const char *p = text; (p = strstr(p, line)); p++)
		if ((p == text || p[-1] == '\n') && (p[n] == '\n' || !p[n]))
			return true;
	return false;
}

size_t e2e_files(const char *dir)
{
	size_t n = 0;
	return e2e_count_entries(dir, &n) == 0 ? n : 0;
}

static int not_dot(const struct dirent *e)
{
	return e->d_name[0] != '.';
}

int e2e_each_snapshot(const char *dir,
		      void (*fn)(const struct ctp_snap *s, const char *path,
				 void *arg),
		      void *arg, char *err, size_t errlen)
{
	struct dirent **names;
	int n = scandir(dir, &names, not_dot, alphasort), r = 0;
	if (n < 0) {
		r = -errno;
		snprintf(err, errlen, "%s: %s", dir, strerror(-r));
		return r;
	}
	for (int i = 0; i < n; i++) {
		char path[PATH_MAX];
		struct ctp_snap *s;
		if (r == 0 &&
		    (r = E2E_PATHF(path, "%s/%s", dir, names[i]->d_name)) ==
			    0 &&
		    (r = ctp_snap_open(path, 1ull << 31, &s, err, errlen)) ==
			    0) {
			fn(s, path, arg);
			ctp_snap_free(s);
		}
		free(names[i]);
	}
	free(names);
	return r < 0 ? r : n;
}

int e2e_count_entries(const char *dir, size_t *n)
{
	DIR *d = opendir(dir);
	if (!d)
		return -errno;
	size_t c = 0;
	struct dirent *e;
	while ((e = readdir(d)))
		if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
			c++;
	closedir(d);
	*n = c;
	return 0;
}

/* A YAML double-quoted scalar, so any path survives. */
static void put_quoted(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++) {
		if (*s == '"' || *s == '\\')
			fputc('\\', f);
		fputc(*s, f);
	}
	fputc('"', f);
}

int e2e_write_config(const char *path, const struct e2e_cfg *c)
{
	FILE *f = fopen(path, "we");
	if (!f)
		return -errno;
	fputs("# written by the ctprof-core end-to-end tests\n", f);
	fputs("plugin_dirs:\n  - ", f);
	put_quoted(f, CTP_TEST_PLUGIN_DIR);
	fputc('\n', f);
	if (c->output) {
		fputs("output: ", f);
		put_quoted(f, c->output);
		fputc('\n', f);
	}
	if (c->workers)
		fprintf(f, "workers: %u\n", c->workers);
	if (c->split_threads)
		fprintf(f, "split_threads: %u\n", c->split_threads);
	if (c->proc || c->sys || c->cgroup) {
		fputs("roots:\n", f);
		const char *keys[] = {"proc", "sys", "cgroup"};
		const char *vals[] = {c->proc, c->sys, c->cgroup};
		for (int i = 0; i < 3; i++) {
			if (!vals[i])
				continue;
			fprintf(f, "  %s: ", keys[i]);
			put_quoted(f, vals[i]);
			fputc('\n', f);
		}
	}
	fprintf(f,
		"plugins:\n  procfs-stat:\n    enabled: true\n"
		"    required: %s\n",
		c->required ? "true" : "false");
	if (c->options)
		fprintf(f, "    options:\n      %s\n", c->options);
	int bad = ferror(f);
	if (fclose(f) != 0 || bad)
		return -EIO;
	return 0;
}

int e2e_spawn(const char *const *args, const char *out, const char *err,
	      pid_t *pid)
{
	const char *argv[64];
	size_t n = 0;
	argv[n++] = CTP_TEST_BINARY;
	for (; args && *args && n < 63; args++)
		argv[n++] = *args;
	argv[n] = NULL;

	posix_spawn_file_actions_t fa;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, STDIN_FILENO, "/dev/null",
					 O_RDONLY, 0);
	posix_spawn_file_actions_addopen(&fa, STDOUT_FILENO,
					 out ? out : "/dev/null",
					 O_WRONLY | O_CREAT | O_TRUNC, 0644);
	posix_spawn_file_actions_addopen(&fa, STDERR_FILENO,
					 err ? err : "/dev/null",
					 O_WRONLY | O_CREAT | O_TRUNC, 0644);
	int r = posix_spawn(pid, CTP_TEST_BINARY, &fa, NULL,
			    (char *const *)argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	return -r;
}

static pid_t started[8];
static size_t n_started;

void e2e_started_add(pid_t pid)
{
	if (n_started < sizeof(started) / sizeof(started[0]))
		started[n_started++] = pid;
}

void e2e_started_done(pid_t pid)
{
	for (size_t i = 0; i < n_started; i++)
		if (started[i] == pid)
			started[i] = 0;
}

void e2e_started_stop_all(void)
{
	for (size_t i = 0; i < n_started; i++)
		if (started[i] > 0 && kill(started[i], SIGTERM) == 0)
			waitpid(started[i], NULL, 0);
	n_started = 0;
}

pid_t e2e_serve_start(const char *const *args, const char *log,
		      const char *scheme, unsigned *port)
{
	char want[32];
	pid_t pid;
	snprintf(want, sizeof(want), "%s://127.0.0.1:", scheme);
	assert_int_equal(e2e_spawn(args, NULL, log, &pid), 0);
	e2e_started_add(pid);
	for (int i = 0; i < 400; i++) {
		char *text;
		size_t len;
		if (e2e_read_file(log, &text, &len) == 0) {
			const char *at = strstr(text, want);
			bool got = at &&
				   sscanf(at + strlen(want), "%u", port) == 1;
			free(text);
			if (got)
				return pid;
		}
		usleep(50000);
	}
	e2e_show_file("serve", log);
	fail_msg("serve did not say where it listens (%s)", want);
	return -1;
}

int e2e_connect_loopback(unsigned port)
{
	struct sockaddr_in a = {.sin_family = AF_INET,
				.sin_port = htons((uint16_t)port)};
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd >= 0 && connect(fd, (struct sockaddr *)&a, sizeof(a)) < 0) {
		close(fd);
		fd = -1;
	}
	return fd;
}

int e2e_connect_loopback_from(unsigned port, unsigned char host)
{
	struct sockaddr_in a = {.sin_family = AF_INET,
				.sin_port = htons((uint16_t)port)};
	struct sockaddr_in from = {.sin_family = AF_INET};
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	from.sin_addr.s_addr = htonl(0x7f000000u | host);
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd >= 0 && (bind(fd, (struct sockaddr *)&from, sizeof(from)) < 0 ||
			connect(fd, (struct sockaddr *)&a, sizeof(a)) < 0)) {
		close(fd);
		fd = -1;
	}
	return fd;
}

unsigned e2e_free_port(void)
{
	struct sockaddr_in a = {.sin_family = AF_INET};
	socklen_t l = sizeof(a);
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	assert_true(fd >= 0);
	assert_int_equal(bind(fd, (struct sockaddr *)&a, sizeof(a)), 0);
	assert_int_equal(getsockname(fd, (struct sockaddr *)&a, &l), 0);
	close(fd);
	return ntohs(a.sin_port);
}

pid_t e2e_prometheus_start(const char *yml, const char *data, const char *log,
			   unsigned port)
{
	char cfgarg[PATH_MAX + 32], dataarg[PATH_MAX + 32], listen[64];
	snprintf(cfgarg, sizeof(cfgarg), "--config.file=%s", yml);
	snprintf(dataarg, sizeof(dataarg), "--storage.tsdb.path=%s", data);
	snprintf(listen, sizeof(listen), "--web.listen-address=127.0.0.1:%u",
		 port);
	pid_t p = fork();
	assert_true(p >= 0);
	if (p == 0) {
		int fd = open(log, O_WRONLY | O_CREAT | O_TRUNC, 0600);
		dup2(fd, 1);
		dup2(fd, 2);
		execl("/usr/bin/prometheus", "prometheus", cfgarg, dataarg,
		      listen, (char *)NULL);
		_exit(127);
	}
	e2e_started_add(p);
	return p;
}

pid_t e2e_prometheus_scrape(const char *dir, unsigned target, unsigned port)
{
	char yml[PATH_MAX], data[PATH_MAX], log[PATH_MAX], text[512];
	assert_int_equal(E2E_PATHF(yml, "%s/prometheus.yml", dir), 0);
	assert_int_equal(E2E_PATHF(data, "%s/tsdb", dir), 0);
	assert_int_equal(E2E_PATHF(log, "%s/prometheus.log", dir), 0);
	int n = snprintf(text, sizeof(text),
			 "global: {scrape_interval: 1s, evaluation_interval: "
			 "1s}\n"
			 "scrape_configs:\n"
			 "  - job_name: ctprof\n"
			 "    static_configs: [{targets: ['127.0.0.1:%u']}]\n",
			 target);
	assert_true(n > 0 && (size_t)n < sizeof(text));
	assert_int_equal(e2e_write_file(yml, text, (size_t)n), 0);
	return e2e_prometheus_start(yml, data, log, port);
}

int e2e_wait(pid_t pid, int *status)
{
	while (waitpid(pid, status, 0) < 0)
		if (errno != EINTR)
			return -errno;
	return 0;
}

uint64_t e2e_now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

int e2e_wait_bounded(pid_t pid, uint64_t limit_ms, const char *what)
{
	uint64_t t0 = e2e_now_ms();
	for (;;) {
		int st;
		pid_t r = waitpid(pid, &st, WNOHANG);
		assert_true(r >= 0);
		if (r == pid)
			return WIFEXITED(st) ? WEXITSTATUS(st)
					     : 128 + WTERMSIG(st);
		if (e2e_now_ms() - t0 > limit_ms) {
			kill(pid, SIGKILL);
			waitpid(pid, NULL, 0);
			fail_msg("%s: still running after %llu ms", what,
				 (unsigned long long)limit_ms);
		}
		struct timespec ts = {.tv_nsec = 10 * 1000 * 1000};
		nanosleep(&ts, NULL);
	}
}

int e2e_run_verb(const char *verb, char **out, char **err, ...)
{
	const char *args[24] = {verb};
	size_t n = 1, len;
	va_list ap;
	va_start(ap, err);
	for (const char *a; n < 23 && (a = va_arg(ap, const char *));)
		args[n++] = a;
	va_end(ap);
	args[n] = NULL;
	int rc = e2e_run(args, "out.txt", "err.txt");
	if (out)
		assert_int_equal(e2e_read_file("out.txt", out, &len), 0);
	if (err)
		assert_int_equal(e2e_read_file("err.txt", err, &len), 0);
	return rc;
}

int e2e_run(const char *const *args, const char *out, const char *err)
{
	pid_t pid;
	int st, r = e2e_spawn(args, out, err, &pid);
	if (r < 0)
		return r;
	if ((r = e2e_wait(pid, &st)) < 0)
		return r;
	if (WIFSIGNALED(st))
		return -1000 - WTERMSIG(st);
	return WEXITSTATUS(st);
}

int e2e_run_within(const char *const *args, const char *out, const char *err,
		   unsigned limit_s)
{
	pid_t pid;
	int st, r = e2e_spawn(args, out, err, &pid);
	if (r < 0)
		return r;
	for (unsigned tick = 0;; tick++) {
		pid_t w = waitpid(pid, &st, WNOHANG);
		if (w == pid)
			break;
		if (w < 0 && errno != EINTR)
			return -errno;
		if (tick >= limit_s * 10u) {
			kill(pid, SIGKILL);
			e2e_wait(pid, &st);
			return -ETIME;
		}
		usleep(100000);
	}
	if (WIFSIGNALED(st))
		return -1000 - WTERMSIG(st);
	return WEXITSTATUS(st);
}

bool e2e_bytes_eq(struct ctp_bytes b, const char *s)
{
	return b.ptr && b.len == strlen(s) && memcmp(b.ptr, s, b.len) == 0;
}

void e2e_cpuset_str(const struct ctp_value *v, char *buf, size_t len)
{
	size_t off = 0;
	buf[0] = '\0';
	for (size_t i = 0; i < v->cpuset.n && off < len; i++) {
		uint32_t lo = v->cpuset.r[2 * i], hi = v->cpuset.r[2 * i + 1];
		int n = lo == hi ? snprintf(buf + off, len - off, "%s%u",
					    i ? "," : "", lo)
				 : snprintf(buf + off, len - off, "%s%u-%u",
					    i ? "," : "", lo, hi);
		if (n < 0)
			break;
		off += (size_t)n;
	}
}

const struct e2e_fdef e2e_fdef[F_COUNT] = {
	[F_MINFLT] = {"procfs.minflt", CTP_TYPE_U64, 10},
	[F_MAJFLT] = {"procfs.majflt", CTP_TYPE_U64, 12},
	[F_UTIME] = {"procfs.utime", CTP_TYPE_U64, 14},
	[F_STIME] = {"procfs.stime", CTP_TYPE_U64, 15},
	[F_PRIORITY] = {"procfs.priority", CTP_TYPE_I64, 18},
	[F_NICE] = {"procfs.nice", CTP_TYPE_I64, 19},
	[F_START_TIME] = {"procfs.start_time", CTP_TYPE_U64, 22},
	[F_PROCESSOR] = {"procfs.processor", CTP_TYPE_I64, 39},
	[F_RT_PRIORITY] = {"procfs.rt_priority", CTP_TYPE_U64, 40},
	[F_POLICY] = {"procfs.policy", CTP_TYPE_STRING, 41},
	[F_STATE] = {"procfs.state", CTP_TYPE_CHAR, 0},
	[F_VCSW] = {"procfs.voluntary_csw", CTP_TYPE_U64, 0},
	[F_NVCSW] = {"procfs.nonvoluntary_csw", CTP_TYPE_U64, 0},
	[F_AFFINITY] = {"procfs.cpu_affinity", CTP_TYPE_CPUSET, 0},
};

int e2e_stat_token(const char *text, unsigned no, char *out, size_t len)
{
	const char *p = strrchr(text, ')');
	if (!p || no < 3)
		return 0;
	p++;
	for (unsigned n = 3; n <= no; n++) {
		if (*p != ' ')
			return 0;
		p++;
		size_t t = strcspn(p, " \n");
		if (n == no) {
			if (p[t] == '\0' || t == 0 || t >= len)
				return 0;
			memcpy(out, p, t);
			out[t] = '\0';
			return 1;
		}
		p += t;
	}
	return 0;
}

/* Next line of a text, or NULL past the last one. */
static const char *next_line(const char *l)
{
	l = strchr(l, '\n');
	return l && l[1] ? l + 1 : NULL;
}

int e2e_status_value(const char *text, const char *key, char *out, size_t len)
{
	size_t kl = strlen(key);
	for (const char *l = *text ? text : NULL; l; l = next_line(l)) {
		if (strncmp(l, key, kl) || l[kl] != ':' || l[kl + 1] != '\t')
			continue;
		const char *v = l + kl + 2;
		size_t n = strcspn(v, "\n");
		if (n >= len)
			return 0;
		memcpy(out, v, n);
		out[n] = '\0';
		return 1;
	}
	return 0;
}

const char *e2e_cgroup_v2(const char *text, char *out, size_t len)
{
	for (const char *l = *text ? text : NULL; l; l = next_line(l)) {
		if (strncmp(l, "0::", 3))
			continue;
		size_t n = strcspn(l + 3, "\n");
		if (n >= len)
			return NULL;
		memcpy(out, l + 3, n);
		out[n] = '\0';
		return out;
	}
	return NULL;
}

const char *e2e_policy_name(long long n, char *buf, size_t len)
{
	/* include/uapi/linux/sched.h; 4 was never used. */
	static const char *const names[] = {
		"SCHED_OTHER", "SCHED_FIFO", "SCHED_RR",       "SCHED_BATCH",
		NULL,	       "SCHED_IDLE", "SCHED_DEADLINE", "SCHED_EXT"};
	if (n >= 0 && n < 8 && names[n])
		return names[n];
	snprintf(buf, len, "unknown(%lld)", n);
	return buf;
}

void e2e_golden(const char *path, const char *out, size_t len)
{
	char *want;
	size_t wlen;
	if (getenv("CTP_REGEN_GOLDEN")) {
		assert_int_equal(e2e_write_file(path, out, len), 0);
		return;
	}
	if (e2e_read_file(path, &want, &wlen) < 0)
		fail_msg("%s: missing (CTP_REGEN_GOLDEN=1 writes it)", path);
	bool same = len == wlen && memcmp(out, want, len) == 0;
	free(want);
	if (!same)
		fail_msg("%s differs; got:\n%.*s", path, (int)len, out);
}

struct ctp_snap *e2e_capture(const char *cfg, const char *out, const char *log)
{
	const char *args[] = {"--config", cfg, "-o", out, NULL};
	int rc = e2e_run(args, NULL, log);
	if (rc != 0) {
		e2e_show_file("config", cfg);
		e2e_show_file("ctprof-core stderr", log);
		fail_msg("ctprof-core --config %s -o %s exited with %d", cfg,
			 out, rc);
	}
	struct ctp_snap *s = NULL;
	char err[512];
	if (ctp_snap_open(out, 1ull << 31, &s, err, sizeof(err)) < 0)
		fail_msg("cannot read the snapshot: %s", err);
	return s;
}

struct ctp_snap *e2e_capture_plugins(const char *dir, const char *tag,
				     unsigned workers, const char *plugins)
{
	char cfg[PATH_MAX], out[PATH_MAX], log[PATH_MAX];
	if (E2E_PATHF(cfg, "%s/%s.yaml", dir, tag) < 0 ||
	    E2E_PATHF(out, "%s/%s.ctprof.zst", dir, tag) < 0 ||
	    E2E_PATHF(log, "%s/%s.log", dir, tag) < 0)
		fail_msg("path too long under %s", dir);
	FILE *f = fopen(cfg, "we");
	if (!f)
		fail_msg("%s: %s", cfg, strerror(errno));
	fprintf(f, "plugin_dirs: [\"%s\"]\nworkers: %u\nplugins:\n%s",
		CTP_TEST_PLUGIN_DIR, workers, plugins);
	if (fclose(f) != 0)
		fail_msg("%s: %s", cfg, strerror(errno));
	return e2e_capture(cfg, out, log);
}

/* ---- Reading a snapshot in a test ---------------------------------------- */

struct ctp_value e2e_value(const struct ctp_snap *s, const char *name,
			   size_t row)
{
	const struct ctp_snap_field *f = ctp_snap_field_find(s, name);
	if (!f)
		fail_msg("field %s not in the snapshot", name);
	return ctp_snap_get(s, f, row);
}

uint64_t e2e_u64(const struct ctp_snap *s, const char *name, size_t row)
{
	struct ctp_value v = e2e_value(s, name, row);
	if (v.type != CTP_TYPE_U64)
		fail_msg("%s row %zu: type %u, wanted a u64", name, row,
			 v.type);
	return v.u64;
}

int64_t e2e_i64(const struct ctp_snap *s, const char *name, size_t row)
{
	struct ctp_value v = e2e_value(s, name, row);
	if (v.type != CTP_TYPE_I64)
		fail_msg("%s row %zu: type %u, wanted an i64", name, row,
			 v.type);
	return v.i64;
}

void e2e_assert_str(const struct ctp_snap *s, const char *name, size_t row,
		    const char *want)
{
	struct ctp_value v = e2e_value(s, name, row);
	if (v.type != CTP_TYPE_STRING || !e2e_bytes_eq(v.str, want))
		fail_msg("%s row %zu: type %u '%.*s', wanted the string '%s'",
			 name, row, v.type,
			 v.type == CTP_TYPE_STRING ? (int)v.str.len : 0,
			 v.type == CTP_TYPE_STRING ? v.str.ptr : "", want);
}

size_t e2e_tally_slot(const struct ctp_snap_readfail *rf, const char *name)
{
	for (size_t i = 0; i < rf->n_files; i++)
		if (strcmp(rf->file[i], name) == 0)
			return i;
	fail_msg("no read-failure tally for %s", name);
	return 0;
}

/* ---- Rows, summaries, the stop-free proof ----------------------------------
 */

long e2e_row(const struct ctp_snap *s, uint8_t scope, long id)
{
	const struct ctp_snap_table *t = ctp_snap_table(s, scope);
	for (size_t r = 0; t && r < t->rows; r++)
		if ((scope == CTP_SCOPE_PROCESS ? t->tgid[r] : t->tid[r]) ==
		    (uint64_t)id)
			return (long)r;
	return -1;
}

const struct ctp_snap_plugin *e2e_plugin(const struct ctp_snap *s,
					 const char *name)
{
	const struct ctp_snap_plugin *p = ctp_snap_plugins(s);

	for (size_t i = 0; i < ctp_snap_n_plugins(s); i++)
		if (!strcmp(p[i].name, name))
			return &p[i];
	fail_msg("no plugin %s in the snapshot", name);
	return NULL;
}

uint64_t e2e_summary(const struct ctp_snap *s, const char *plugin,
		     const char *name)
{
	const struct ctp_snap_plugin *p = e2e_plugin(s, plugin);

	for (size_t k = 0; p && k < p->n_summary; k++)
		if (!strcmp(p->summary_name[k], name))
			return p->summary[k];
	fail_msg("no summary counter %s of %s", name, plugin);
	return 0;
}

/* LeakSanitizer cannot run under a tracer (it ptraces itself): the
 * traced child gets detect_leaks=0, and ours is put back. */
static void asan_no_leaks(char *saved, size_t len, bool *had)
{
	const char *o = getenv("ASAN_OPTIONS");
	char aopts[1024];

	snprintf(aopts, sizeof(aopts), "%s%sdetect_leaks=0", o ? o : "",
		 o && *o ? ":" : "");
	snprintf(saved, len, "%s", o ? o : "");
	*had = o != NULL;
	setenv("ASAN_OPTIONS", aopts, 1);
}

static int strace_capture(const char *cfg, const char *dir, const char *tag,
			  const char *syscalls, bool fds,
			  struct ctp_snap **snap, char **trace)
{
	char out[PATH_MAX], slog[PATH_MAX], elog[PATH_MAX], expr[128];
	char err[512], saved[1024];
	/* -y (fds): every descriptor argument with its path. */
	const char *argv[] = {
		"strace", fds ? "-fy" : "-f", "-qq",	  "-e", expr, "-o",
		slog,	  CTP_TEST_BINARY,    "--config", cfg,	"-o", out,
		NULL};
	posix_spawn_file_actions_t fa;
	int st;
	bool had;
	pid_t pid;

	if (E2E_PATHF(expr, "trace=%s", syscalls) < 0 ||
	    E2E_PATHF(out, "%s/%s.ctprof", dir, tag) < 0 ||
	    E2E_PATHF(slog, "%s/%s.strace", dir, tag) < 0 ||
	    E2E_PATHF(elog, "%s/%s.log", dir, tag) < 0)
		return -1;
	asan_no_leaks(saved, sizeof(saved), &had);
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, STDOUT_FILENO, "/dev/null",
					 O_WRONLY, 0);
	posix_spawn_file_actions_addopen(&fa, STDERR_FILENO, elog,
					 O_WRONLY | O_CREAT | O_TRUNC, 0644);
	st = posix_spawnp(&pid, "strace", &fa, NULL, (char *const *)argv,
			  environ);
	posix_spawn_file_actions_destroy(&fa);
	if (had)
		setenv("ASAN_OPTIONS", saved, 1);
	else
		unsetenv("ASAN_OPTIONS");
	if (st || e2e_wait(pid, &st) < 0 || !WIFEXITED(st) ||
	    WEXITSTATUS(st) != 0) {
		e2e_show_file("strace ctprof-core", elog);
		return -1;
	}
	if (ctp_snap_open(out, 1ull << 31, snap, err, sizeof(err)) < 0) {
		fprintf(stderr, "%s\n", err);
		return -1;
	}
	if (e2e_read_file(slog, trace, NULL) < 0) {
		ctp_snap_free(*snap);
		*snap = NULL;
		return -1;
	}
	return 0;
}

int e2e_strace_capture(const char *cfg, const char *dir, const char *tag,
		       const char *syscalls, struct ctp_snap **snap,
		       char **trace)
{
	return strace_capture(cfg, dir, tag, syscalls, false, snap, trace);
}

int e2e_strace_capture_fds(const char *cfg, const char *dir, const char *tag,
			   const char *syscalls, struct ctp_snap **snap,
			   char **trace)
{
	return strace_capture(cfg, dir, tag, syscalls, true, snap, trace);
}

int e2e_traced_capture(const char *cfg, const char *dir, const char *tag,
		       const char *needle, struct ctp_snap **snap)
{
	char *text;
	int n = 0;

	if (e2e_strace_capture(cfg, dir, tag, "ptrace", snap, &text) < 0)
		return -1;
	for (const char *q = text; (q = strstr(q, needle)); q++)
		n++;
	free(text);
	return n;
}

/* The value after "\nKEY" in text, in base; -1 when the line is missing. */
static int status_num(const char *text, const char *key, int base,
		      uint64_t *out)
{
	const char *p = strstr(text, key);
	char *end;
	if (!p)
		return -1;
	*out = strtoull(p + strlen(key), &end, base);
	return end == p + strlen(key) ? -1 : 0;
}

int e2e_privs_parse(const char *text, struct e2e_privs *p)
{
	static const char *const caps[] = {
		"\nCapInh:", "\nCapPrm:", "\nCapEff:", "\nCapBnd:",
		"\nCapAmb:"};
	uint64_t *const dst[] = {&p->inh, &p->prm, &p->eff, &p->bnd, &p->amb};
	uint64_t v;
	const char *u = strstr(text, "\nUid:"), *g = strstr(text, "\nGid:");
	if (!u || !g ||
	    sscanf(u + 5, "%u %u %u %u", &p->uid[0], &p->uid[1], &p->uid[2],
		   &p->uid[3]) != 4 ||
	    sscanf(g + 5, "%u %u %u %u", &p->gid[0], &p->gid[1], &p->gid[2],
		   &p->gid[3]) != 4)
		return -EINVAL;
	for (size_t i = 0; i < 5; i++)
		if (status_num(text, caps[i], 16, dst[i]) < 0)
			return -EINVAL;
	if (status_num(text, "\nNoNewPrivs:", 10, &v) < 0)
		return -EINVAL;
	p->nnp = (int)v;
	if (status_num(text, "\nSeccomp:", 10, &v) < 0)
		return -EINVAL;
	p->seccomp = (int)v;
	return 0;
}

int e2e_task_privs(pid_t pid, struct e2e_privs *p)
{
	char path[64], buf[8192];
	ssize_t n;
	int fd, err;
	if (pid)
		snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	else
		snprintf(path, sizeof(path), "/proc/self/status");
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = read(fd, buf, sizeof(buf) - 1);
	err = errno;
	close(fd);
	if (n < 0)
		return -err;
	buf[n] = '\0';
	return e2e_privs_parse(buf, p);
}

pid_t e2e_mem_holder(unsigned mib, int in, int ack)
{
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid)
		return pid;
	unsigned char want = (unsigned char)mib;
	do {
		/* A mapping of its own, touched page by page: resident. */
		size_t n = (size_t)want << 20;
		char *p = mmap(NULL, n, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (p == MAP_FAILED)
			_exit(1);
		for (size_t i = 0; i < n; i += 4096)
			p[i] = 1;
		if (write(ack, "k", 1) != 1)
			_exit(1);
	} while (read(in, &want, 1) == 1 && want);
	pause();
	_exit(0);
}

void e2e_read_ack(int fd)
{
	char c;
	assert_int_equal(read(fd, &c, 1), 1);
}

void e2e_record_once(const char *config, const char *dir)
{
	const char *args[] = {"record", "--config", config, "-o",
			      dir,	"--count",  "1",    NULL};
	if (e2e_run(args, NULL, "rec-err.txt") != 0) {
		e2e_show_file("record", "rec-err.txt");
		fail_msg("record failed");
	}
}
