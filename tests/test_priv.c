/* SPDX-License-Identifier: MIT */
/*
 * core/util/priv.c: each function runs in a forked child, which reports
 * its /proc/self/status (Uid, the five capability sets, NoNewPrivs,
 * Seccomp) to the parent. Under the serving filter the child runs a real
 * libmicrohttpd server (thread per connection) the parent asks over TCP,
 * decodes a real snapshot from a memfd and writes one into a directory
 * with the record writer's temporary file and rename; calls outside the
 * list are refused. Under the capture child's capabilities of the default
 * configuration, a real capture as `nobody` reads the /proc/PID/io of a
 * process of a third uid, equal to root's capture of it; without them it
 * does not. Needs root (else 77).
 */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <linux/bpf.h>
#include <linux/capability.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <pthread.h>
#include <pwd.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

#include <setjmp.h>
#include <cmocka.h>

#include "capture_util.h"
#include "config.h"
#include "ctprof/plugin.h"
#include "e2e_util.h"
#include "engine.h"
#include "loader.h"
#include "model.h"
#include "outfile.h"
#include "priv.h"
#include "reader.h"

#define BIT(c)	 (UINT64_C(1) << (c))
#define ALL_CAPS ((BIT(ctp_priv_cap_last()) << 1) - 1)

/* What a child reports of itself. */
struct status {
	int ok; /* 1: the function under test returned 0 */
	char why[256];
	struct e2e_privs ps;
	/* Results of calls made after the drop: 0, or -errno. */
	int r[16];
};

static void read_status(struct status *st)
{
	if (e2e_task_privs(0, &st->ps) < 0)
		snprintf(st->why, sizeof(st->why), "/proc/self/status unread");
}

/* Run fn(arg, st) in a child; the parent gets st back. */
static void in_child(void (*fn)(void *arg, struct status *st), void *arg,
		     struct status *st)
{
	int p[2];
	assert_int_equal(pipe2(p, O_CLOEXEC), 0);
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		struct status s;
		memset(&s, 0, sizeof(s));
		close(p[0]);
		fn(arg, &s);
		ssize_t w = write(p[1], &s, sizeof(s));
		_exit(w == (ssize_t)sizeof(s) ? 0 : 1);
	}
	close(p[1]);
	memset(st, 0, sizeof(*st));
	ssize_t got = read(p[0], st, sizeof(*st));
	close(p[0]);
	int wst;
	assert_int_equal(waitpid(pid, &wst, 0), pid);
	if (got != (ssize_t)sizeof(*st))
		fail_msg("child reported %zd bytes, wait status 0x%x", got,
			 wst);
	if (!st->ok)
		fail_msg("child: %s", st->why);
}

static uid_t nobody_uid(void)
{
	uid_t u;
	gid_t g;
	assert_int_equal(ctp_priv_lookup_user("nobody", &u, &g), 0);
	return u;
}

/* All four uids are uid, all four gids the user's primary group. */
static void expect_user(const struct status *st, uid_t uid)
{
	struct passwd *pw = getpwuid(uid);
	assert_non_null(pw);
	for (int i = 0; i < 4; i++) {
		assert_int_equal(st->ps.uid[i], uid);
		assert_int_equal(st->ps.gid[i], pw->pw_gid);
	}
}

/* The status parser on a literal kernel 6.18 /proc/PID/status excerpt. */
static void test_privs_parse(void **state)
{
	static const char text[] =
		"Name:\tctprof-core\nUmask:\t0027\nState:\tS (sleeping)\n"
		"Uid:\t65534\t65534\t65534\t65534\n"
		"Gid:\t65534\t65534\t65534\t65534\nFDSize:\t64\n"
		"CapInh:\t0000000000000000\nCapPrm:\t0000000000081004\n"
		"CapEff:\t0000000000081004\nCapBnd:\t0000000000081004\n"
		"CapAmb:\t0000000000000000\nNoNewPrivs:\t1\nSeccomp:\t2\n"
		"Seccomp_filters:\t1\n";
	struct e2e_privs p;
	(void)state;
	assert_int_equal(e2e_privs_parse(text, &p), 0);
	assert_int_equal(p.uid[3], 65534);
	assert_int_equal(p.gid[0], 65534);
	assert_int_equal(p.prm, 0x81004);
	assert_int_equal(p.eff, 0x81004);
	assert_int_equal(p.bnd, 0x81004);
	assert_int_equal(p.inh | p.amb, 0);
	assert_int_equal(p.nnp, 1);
	assert_int_equal(p.seccomp, 2);
	/* A kernel without the line: refused, not zero. */
	assert_int_equal(e2e_privs_parse("Uid:\t0\t0\t0\t0\n"
					 "Gid:\t0\t0\t0\t0\n",
					 &p),
			 -EINVAL);
}

/* ---- ctp_priv_drop_to_user, no filter ------------------------------------ */

static void drop_plain(void *arg, struct status *st)
{
	(void)arg;
	st->ok = ctp_priv_drop_to_user("nobody", CTP_PRIV_FILTER_NONE, st->why,
				       sizeof(st->why)) == 0;
	read_status(st);
	/* A uid-0 file it could read as root, refused now. */
	int fd = open("/proc/1/environ", O_RDONLY | O_CLOEXEC);
	st->r[0] = fd < 0 ? -errno : 0;
	if (fd >= 0)
		close(fd);
}

static void test_drop_no_caps(void **state)
{
	struct status st;
	(void)state;
	in_child(drop_plain, NULL, &st);
	expect_user(&st, nobody_uid());
	assert_int_equal(st.ps.eff, 0);
	assert_int_equal(st.ps.prm, 0);
	assert_int_equal(st.ps.inh, 0);
	assert_int_equal(st.ps.amb, 0);
	assert_int_equal(st.ps.bnd, 0);
	assert_int_equal(st.ps.nnp, 1);
	assert_int_equal(st.ps.seccomp, 0);
	assert_int_equal(st.r[0], -EACCES);
}

static void drop_root(void *arg, struct status *st)
{
	(void)arg;
	int r = ctp_priv_drop_to_user("root", CTP_PRIV_FILTER_NONE, st->why,
				      sizeof(st->why));
	st->ok = 1;
	st->r[0] = r;
	read_status(st);
}

static void test_drop_refuses_root(void **state)
{
	struct status st;
	(void)state;
	in_child(drop_root, NULL, &st);
	assert_int_equal(st.r[0], -EINVAL);
	assert_non_null(strstr(st.why, "root"));
}

/* ---- ctp_priv_drop_to_user, the serving allow-list ----------------------- */

#define BODY "ctprof under seccomp\n"

static enum MHD_Result answer(void *cls, struct MHD_Connection *c,
			      const char *url, const char *method,
			      const char *version, const char *upload,
			      size_t *upload_size, void **con_cls)
{
	(void)cls, (void)url, (void)method, (void)version, (void)upload;
	(void)upload_size, (void)con_cls;
	struct MHD_Response *r = MHD_create_response_from_buffer(
		strlen(BODY), (void *)BODY, MHD_RESPMEM_PERSISTENT);
	enum MHD_Result ret = MHD_queue_response(c, MHD_HTTP_OK, r);
	MHD_destroy_response(r);
	return ret;
}

struct serve_arg {
	int snap_fd;   /* a memfd holding a snapshot */
	int dir_fd;    /* a directory nobody may write */
	char dir[256]; /* its path */
	int port_w;    /* write the port here, then wait */
	int go_r;      /* the parent's "asked": read one byte */
};

static void drop_serve(void *arg, struct status *st)
{
	struct serve_arg *a = arg;
	int i = 0;
	/* Listen before the drop, as serve does (a port below 1024 needs
	 * CAP_NET_BIND_SERVICE); everything else after. */
	int s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	struct sockaddr_in sa = {.sin_family = AF_INET,
				 .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	socklen_t sl = sizeof(sa);
	if (s < 0 || bind(s, (struct sockaddr *)&sa, sizeof(sa)) < 0 ||
	    listen(s, 8) < 0 || getsockname(s, (struct sockaddr *)&sa, &sl)) {
		snprintf(st->why, sizeof(st->why), "listen: %s",
			 strerror(errno));
		return;
	}
	if (ctp_priv_drop_to_user("nobody", CTP_PRIV_FILTER_SERVE, st->why,
				  sizeof(st->why)) < 0)
		return;
	read_status(st);

	/* libmicrohttpd, configured as serve configures it. */
	struct MHD_Daemon *d = MHD_start_daemon(
		MHD_USE_INTERNAL_POLLING_THREAD |
			MHD_USE_THREAD_PER_CONNECTION | MHD_USE_AUTO,
		0, NULL, NULL, answer, NULL, MHD_OPTION_LISTEN_SOCKET, s,
		MHD_OPTION_CONNECTION_TIMEOUT, 10u, MHD_OPTION_END);
	st->r[i++] = d ? 0 : -EIO;
	uint16_t port = ntohs(sa.sin_port);
	if (write(a->port_w, &port, sizeof(port)) != sizeof(port))
		st->r[i - 1] = -EPIPE;
	char c;
	st->r[i++] = read(a->go_r, &c, 1) == 1 ? 0 : -EPIPE;
	if (d)
		MHD_stop_daemon(d);

	/* The snapshot handed over as a memfd: zstd, MessagePack. */
	struct ctp_snap *snap = NULL;
	char err[256];
	lseek(a->snap_fd, 0, SEEK_SET);
	st->r[i++] = ctp_snap_open_fd(a->snap_fd, "memfd", 64u << 20, &snap,
				      err, sizeof(err));
	ctp_snap_free(snap);

	/* record's writer: a temporary file in the directory, fsync,
	 * rename, the directory fsync; then retention's unlink. */
	char path[512];
	snprintf(path, sizeof(path), "%s/snap.ctprof.zst", a->dir);
	struct ctp_outfile t;
	ctp_outfile_init(&t);
	int r = ctp_outfile_open(&t, path, err, sizeof(err));
	if (!r && write(t.fd, "x", 1) != 1)
		r = -errno;
	if (!r)
		r = ctp_outfile_commit(&t, path, NULL, err, sizeof(err));
	ctp_outfile_close(&t);
	st->r[i++] = r;
	st->r[i++] = unlinkat(a->dir_fd, "snap.ctprof.zst", 0) < 0 ? -errno : 0;

	/* record's exit timer, paths.c's own binary. */
	st->r[i++] = alarm(0) == (unsigned)-1 ? -errno : 0;
	char exe[256];
	st->r[i++] =
		readlink("/proc/self/exe", exe, sizeof(exe)) < 0 ? -errno : 0;

	/* Refused. */
	st->r[i++] = ptrace(PTRACE_TRACEME, 0, NULL, NULL) < 0 ? -errno : 0;
	char buf[8];
	struct iovec l = {buf, sizeof(buf)}, rm = {buf, sizeof(buf)};
	st->r[i++] =
		process_vm_readv(getpid(), &l, 1, &rm, 1, 0) < 0 ? -errno : 0;
	st->r[i++] = mount("none", a->dir, "tmpfs", 0, NULL) < 0 ? -errno : 0;
	st->r[i++] = unshare(CLONE_NEWUSER) < 0 ? -errno : 0;
	st->r[i++] = socket(AF_NETLINK, SOCK_RAW, 0) < 0 ? -errno : 0;
	char *const argv[] = {"/bin/true", NULL};
	st->r[i++] = execve(argv[0], argv, argv + 1) < 0 ? -errno : 0;
	st->ok = 1;
}

/* One GET from the asker process (no cmocka there): the response in resp,
 * or an empty one when the exchange failed. */
static void ask(uint16_t port, char *resp, size_t len)
{
	int s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	struct sockaddr_in sa = {.sin_family = AF_INET,
				 .sin_port = htons(port),
				 .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	const char req[] = "GET /metrics HTTP/1.1\r\nHost: x\r\n"
			   "Connection: close\r\n\r\n";
	size_t got = 0;
	ssize_t n;
	resp[0] = '\0';
	if (s < 0)
		return;
	if (connect(s, (struct sockaddr *)&sa, sizeof(sa)) == 0 &&
	    write(s, req, sizeof(req) - 1) == (ssize_t)sizeof(req) - 1)
		while (got + 1 < len &&
		       (n = read(s, resp + got, len - 1 - got)) > 0)
			got += (size_t)n;
	resp[got] = '\0';
	close(s);
}

/* A real snapshot in a memfd: the writer's, through the binary, of this
 * process alone (a proc root of one, e2e_proc_root): its size is the
 * test's, not the host's (30,000 threads beside the test decode past the
 * 64 MiB the serving child allows itself). */
static int snapshot_memfd(void)
{
	int fd = memfd_create("snap", MFD_CLOEXEC);
	char out[64], dir[PATH_MAX], proc[PATH_MAX], cfg[PATH_MAX];
	pid_t me = getpid();
	assert_true(fd >= 0);
	snprintf(out, sizeof(out), "/dev/fd/%d", fd);
	assert_int_equal(e2e_tmpdir("privsnap", dir, sizeof(dir)), 0);
	assert_int_equal(E2E_PATHF(proc, "%s/proc", dir), 0);
	assert_int_equal(E2E_PATHF(cfg, "%s/c.yaml", dir), 0);
	assert_int_equal(e2e_proc_root(proc, &me, 1), 0);
	struct e2e_cfg c = {.proc = proc, .required = true};
	assert_int_equal(e2e_write_config(cfg, &c), 0);
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		int nul = open("/dev/null", O_WRONLY);
		dup2(nul, 2);
		fcntl(fd, F_SETFD, 0);
		execl(CTP_TEST_BINARY, "ctprof-core", "--config", cfg, "-o",
		      out, "-q", "--no-supervise", (char *)NULL);
		_exit(127);
	}
	int wst;
	assert_int_equal(waitpid(pid, &wst, 0), pid);
	e2e_rm_rf(dir);
	assert_true(WIFEXITED(wst) && WEXITSTATUS(wst) == 0);
	assert_true(lseek(fd, 0, SEEK_END) > 0);
	return fd;
}

static void test_serve_filter(void **state)
{
	struct serve_arg a = {.snap_fd = snapshot_memfd()};
	int pp[2], gp[2];
	struct status st;
	(void)state;
	assert_int_equal(e2e_tmpdir("priv", a.dir, sizeof(a.dir)), 0);
	assert_int_equal(chown(a.dir, nobody_uid(), (gid_t)-1), 0);
	a.dir_fd = open(a.dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	assert_true(a.dir_fd >= 0);
	assert_int_equal(pipe2(pp, O_CLOEXEC), 0);
	assert_int_equal(pipe2(gp, O_CLOEXEC), 0);
	a.port_w = pp[1];
	a.go_r = gp[0];

	/* The child waits for the request between its port and its other
	 * calls: ask from a second process while in_child waits. */
	pid_t asker = fork();
	assert_true(asker >= 0);
	if (asker == 0) {
		uint16_t port;
		char resp[2048];
		/* EOF, not a hang, when the server child is gone. */
		close(pp[1]);
		close(gp[0]);
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (read(pp[0], &port, sizeof(port)) != sizeof(port))
			_exit(3);
		ask(port, resp, sizeof(resp));
		int ok = strncmp(resp, "HTTP/1.1 200", 12) == 0 &&
			 strstr(resp, BODY) != NULL;
		if (!ok)
			fprintf(stderr, "response: %s\n", resp);
		_exit(write(gp[1], "g", 1) == 1 && ok ? 0 : 4);
	}
	/* Only the asker says "go": the server child sees EOF if it dies. */
	close(gp[1]);
	in_child(drop_serve, &a, &st);
	int wst;
	assert_int_equal(waitpid(asker, &wst, 0), asker);
	assert_true(WIFEXITED(wst));
	assert_int_equal(WEXITSTATUS(wst), 0);

	expect_user(&st, nobody_uid());
	assert_int_equal(
		st.ps.eff | st.ps.prm | st.ps.inh | st.ps.amb | st.ps.bnd, 0);
	assert_int_equal(st.ps.nnp, 1);
	assert_int_equal(st.ps.seccomp, 2);
	int i = 0;
	assert_int_equal(st.r[i++], 0); /* MHD started */
	assert_int_equal(st.r[i++], 0); /* answered */
	assert_int_equal(st.r[i++], 0); /* snapshot decoded */
	assert_int_equal(st.r[i++], 0); /* file written */
	assert_int_equal(st.r[i++], 0); /* and removed */
	assert_int_equal(st.r[i++], 0); /* alarm */
	assert_int_equal(st.r[i++], 0); /* readlink */
	for (; i < 13; i++)
		assert_int_equal(st.r[i], -EPERM);
	close(a.snap_fd);
	close(a.dir_fd);
	e2e_rm_rf(a.dir);
	close(pp[0]), close(pp[1]), close(gp[0]);
}

/* ---- ctp_priv_keep_caps: a real capture as nobody ------------------------ */

/* A process of a third uid that wrote exactly 1 MiB, then waits. */
#define TARGET_UID 47111
static pid_t start_target(void)
{
	int p[2];
	pid_t parent = getpid();
	assert_int_equal(pipe2(p, O_CLOEXEC), 0);
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		static char buf[1 << 16];
		gid_t g = TARGET_UID;
		if (setgroups(1, &g) || setresgid(g, g, g) ||
		    setresuid(TARGET_UID, TARGET_UID, TARGET_UID))
			_exit(1);
		/* Gone with the test, even one killed by a timeout (set
		 * after setresuid, which clears it). */
		if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0 || getppid() != parent)
			_exit(1);
		int nul = open("/dev/null", O_WRONLY);
		for (int i = 0; i < 16; i++)
			if (write(nul, buf, sizeof(buf)) != sizeof(buf))
				_exit(1);
		if (write(p[1], "r", 1) != 1)
			_exit(1);
		for (;;)
			pause();
	}
	char c;
	close(p[1]);
	assert_int_equal(read(p[0], &c, 1), 1);
	close(p[0]);
	return pid;
}

struct cap_arg {
	const char *user; /* NULL: stay root, keep everything */
	bool no_caps;	  /* keep none instead of the engine's */
	int out_fd;	  /* the snapshot goes here */
	const char *cfg;  /* the default configuration, this build's plugins */
};

/* config/collectors.yaml with the build tree's plugin directory. */
static void default_config(char *dir, size_t dlen, char *path, size_t plen)
{
	char src[512], *text = NULL, *both = NULL;
	size_t len = 0;
	assert_int_equal(e2e_tmpdir("privcfg", dir, dlen), 0);
	snprintf(src, sizeof(src), "%s/config/collectors.yaml",
		 CTP_TEST_SOURCE_DIR);
	assert_int_equal(e2e_read_file(src, &text, &len), 0);
	assert_true(asprintf(&both, "%s\nplugin_dirs:\n  - %s\n", text,
			     CTP_TEST_PLUGIN_DIR) > 0);
	snprintf(path, plen, "%s/collectors.yaml", dir);
	assert_int_equal(e2e_write_file(path, both, strlen(both)), 0);
	free(text);
	free(both);
}

static pid_t target = -1;

static int stop_target(void **state)
{
	(void)state;
	if (target > 0) {
		kill(target, SIGKILL);
		waitpid(target, NULL, 0);
	}
	target = -1;
	return 0;
}

static void capture_as(void *arg, struct status *st)
{
	struct cap_arg *a = arg;
	struct ctp_config *cfg = NULL;
	struct ctp_capture *cap = NULL;
	struct ctp_engine eng;
	static volatile sig_atomic_t stop;
	char out[64];
	const char *cfgpath = a->cfg;
	snprintf(out, sizeof(out), "/dev/fd/%d", a->out_fd);
	if (ctp_cli_load_config(cfgpath, NULL, &cfg) != 0 ||
	    ctp_capture_new(1, &cap) < 0 ||
	    ctp_engine_init(&eng, cfg, cap, &stop) < 0) {
		snprintf(st->why, sizeof(st->why), "engine setup failed");
		return;
	}
	if (ctp_engine_load(&eng) < 0) {
		snprintf(st->why, sizeof(st->why), "plugins failed to load");
		return;
	}
	/* The default configuration's capture child. */
	st->r[0] = (int)(ctp_engine_caps(&eng) & 0x7fffffff);
	st->r[1] = (int)(ctp_engine_caps(&eng) >> 31);
	if (a->user &&
	    ctp_priv_keep_caps(a->user, a->no_caps ? 0 : ctp_engine_caps(&eng),
			       CTP_PRIV_FILTER_CAPTURE, st->why,
			       sizeof(st->why)) < 0)
		return;
	read_status(st);
	ctp_cli_capture_begin(cap);
	if (ctp_engine_capture(&eng) < 0 ||
	    ctp_cli_write_to(cap, cfg, out, &stop, NULL, false, st->why,
			     sizeof(st->why)) < 0)
		return;
	st->ok = 1;
	if (!a->user)
		return;
	/* A namespace is still refused under the wider filter. */
	st->r[2] = unshare(CLONE_NEWUSER) < 0 ? -errno : 0;
	/* A worker's own descriptor table (CTP_PLUGIN_FD_LOCAL) is not. */
	st->r[4] = unshare(CLONE_FILES) < 0 ? -errno : 0;
	st->r[3] = execve("/bin/true", (char *[]){"true", NULL},
			  (char *[]){NULL}) < 0
			   ? -errno
			   : 0;
}

/* The target's io.process.wchar in the snapshot of fd (absent: false). */
static bool target_wchar(int fd, pid_t pid, uint64_t *wchar)
{
	struct ctp_snap *snap = NULL;
	char err[256];
	lseek(fd, 0, SEEK_SET);
	if (ctp_snap_open_fd(fd, "memfd", 512u << 20, &snap, err, sizeof(err)) <
	    0)
		fail_msg("%s", err);
	const struct ctp_snap_field *f =
		ctp_snap_field_find(snap, "io.process.wchar");
	const struct ctp_snap_table *t =
		ctp_snap_table(snap, CTP_SCOPE_PROCESS);
	assert_non_null(f);
	long row = ctp_snap_row(t, (uint64_t)pid, 0);
	assert_true(row >= 0);
	struct ctp_value v = ctp_snap_get(snap, f, (size_t)row);
	bool have = v.type != CTP_VALUE_ABSENT;
	if (have)
		*wchar = v.u64;
	ctp_snap_free(snap);
	return have;
}

static void test_capture_as_nobody(void **state)
{
	char dir[256], cfg[512];
	(void)state;
	default_config(dir, sizeof(dir), cfg, sizeof(cfg));
	target = start_target();
	struct cap_arg root = {.out_fd = memfd_create("root", MFD_CLOEXEC),
			       .cfg = cfg};
	struct cap_arg nob = {.user = "nobody",
			      .out_fd = memfd_create("nobody", MFD_CLOEXEC),
			      .cfg = cfg};
	struct cap_arg bare = {.user = "nobody",
			       .no_caps = true,
			       .out_fd = memfd_create("bare", MFD_CLOEXEC),
			       .cfg = cfg};
	struct status sr, sn, sb;
	uint64_t w_root = 0, w_nob = 0, w_bare = 0;

	in_child(capture_as, &root, &sr);
	in_child(capture_as, &nob, &sn);
	in_child(capture_as, &bare, &sb);
	e2e_rm_rf(dir);

	/* Every shipped plugin of the default configuration, declared:
	 * io's CAP_DAC_READ_SEARCH and CAP_SYS_PTRACE, taskstats'
	 * CAP_NET_ADMIN, smaps', jemalloc-probe's and appstats'
	 * CAP_SYS_PTRACE; where the build has BPF, bpf-task's and taskstats'
	 * exit program's CAP_BPF and CAP_PERFMON, both or neither (a capture
	 * child drops them after init: test_capture_bpf_load). */
	uint64_t bpf = BIT(CAP_BPF) | BIT(CAP_PERFMON);
	uint64_t want = BIT(CAP_DAC_READ_SEARCH) | BIT(CAP_SYS_PTRACE) |
			BIT(CAP_NET_ADMIN);
	uint64_t got = (uint64_t)(uint32_t)sn.r[0] | (uint64_t)sn.r[1] << 31;
	assert_int_equal(got & ~bpf, want);
	assert_true((got & bpf) == 0 || (got & bpf) == bpf);
	want = got;

	expect_user(&sn, nobody_uid());
	assert_int_equal(sn.ps.eff, want);
	assert_int_equal(sn.ps.prm, want);
	assert_int_equal(sn.ps.inh, 0);
	assert_int_equal(sn.ps.amb, 0);
	assert_int_equal(sn.ps.bnd, want);
	assert_int_equal(sn.ps.nnp, 1);
	assert_int_equal(sn.ps.seccomp, 2);
	assert_int_equal(sn.r[2], -EPERM);
	assert_int_equal(sn.r[3], -EPERM);
	assert_int_equal(sn.r[4], 0);
	assert_int_equal(sb.ps.eff | sb.ps.prm | sb.ps.bnd, 0);

	/* 1 MiB and the one-byte "ready" it wrote, read by root and by
	 * nobody with the kept capabilities alike; not without them. */
	assert_true(target_wchar(root.out_fd, target, &w_root));
	assert_true(w_root >= (1u << 20) + 1);
	assert_true(target_wchar(nob.out_fd, target, &w_nob));
	assert_int_equal(w_nob, w_root);
	assert_false(target_wchar(bare.out_fd, target, &w_bare));
	close(root.out_fd), close(nob.out_fd), close(bare.out_fd);
	stop_target(NULL);
}

/* ---- ctp_priv_keep_caps refusals, names ---------------------------------- */

static void keep_unheld(void *arg, struct status *st)
{
	(void)arg;
	char why[256];
	/* Drop to ptrace only as root, then ask for more. */
	st->ok = ctp_priv_keep_caps(NULL, BIT(CAP_SYS_PTRACE),
				    CTP_PRIV_FILTER_NONE, st->why,
				    sizeof(st->why)) == 0;
	st->r[0] = ctp_priv_keep_caps(NULL,
				      BIT(CAP_SYS_PTRACE) | BIT(CAP_NET_ADMIN),
				      CTP_PRIV_FILTER_NONE, why, sizeof(why));
	snprintf(st->why, sizeof(st->why), "%s", why);
	read_status(st);
}

static void test_keep_refuses_unheld(void **state)
{
	struct status st;
	(void)state;
	in_child(keep_unheld, NULL, &st);
	assert_int_equal(st.r[0], -EPERM);
	assert_non_null(strstr(st.why, "CAP_NET_ADMIN"));
	expect_user(&st, 0);
	assert_int_equal(st.ps.eff, BIT(CAP_SYS_PTRACE));
	assert_int_equal(st.ps.bnd, BIT(CAP_SYS_PTRACE));
}

/* Started as the user already, with capabilities (a unit's User= and
 * AmbientCapabilities=): --user names the same user, and the drop clears
 * the capabilities without a switch it could not make. */
static void drop_same_user(void *arg, struct status *st)
{
	(void)arg;
	if (ctp_priv_keep_caps("nobody", BIT(CAP_SYS_PTRACE),
			       CTP_PRIV_FILTER_NONE, st->why,
			       sizeof(st->why)) < 0)
		return;
	st->ok = ctp_priv_drop_to_user("nobody", CTP_PRIV_FILTER_SERVE, st->why,
				       sizeof(st->why)) == 0;
	read_status(st);
}

static void test_drop_same_user(void **state)
{
	struct status st;
	(void)state;
	in_child(drop_same_user, NULL, &st);
	expect_user(&st, nobody_uid());
	assert_int_equal(st.ps.eff | st.ps.prm | st.ps.inh | st.ps.amb, 0);
	assert_int_equal(st.ps.nnp, 1);
	assert_int_equal(st.ps.seccomp, 2);
}

/* With a second thread running, which would keep its capabilities and
 * run unfiltered: refused. */
static void *sleeper(void *arg)
{
	(void)arg;
	for (;;)
		pause();
	return NULL;
}

static void drop_threaded(void *arg, struct status *st)
{
	pthread_t t;
	(void)arg;
	st->ok = pthread_create(&t, NULL, sleeper, NULL) == 0;
	st->r[0] = ctp_priv_drop_to_user("nobody", CTP_PRIV_FILTER_SERVE,
					 st->why, sizeof(st->why));
	st->r[1] = ctp_priv_keep_caps(NULL, 0, CTP_PRIV_FILTER_CAPTURE, st->why,
				      sizeof(st->why));
	read_status(st);
}

static void test_refuses_threads(void **state)
{
	struct status st;
	(void)state;
	in_child(drop_threaded, NULL, &st);
	assert_int_equal(st.r[0], -EBUSY);
	assert_int_equal(st.r[1], -EBUSY);
	assert_non_null(strstr(st.why, "2 threads"));
	expect_user(&st, 0);
	assert_int_equal(st.ps.seccomp, 0);
}

/* bpf(cmd) on attr (a union bpf_attr of its own), 0 or -errno; cmd is
 * passed whole, upper half included. */
static long sys_bpf(uint64_t cmd, union bpf_attr *attr)
{
	long r = syscall(SYS_bpf, cmd, attr, sizeof(*attr));
	return r < 0 ? -errno : r;
}

/* A one-entry array map: its fd, or -errno. */
static int array_map(void)
{
	union bpf_attr a;
	memset(&a, 0, sizeof(a));
	a.map_type = BPF_MAP_TYPE_ARRAY;
	a.key_size = 4;
	a.value_size = 8;
	a.max_entries = 1;
	return (int)sys_bpf(BPF_MAP_CREATE, &a);
}

static int map_lookup(int fd)
{
	union bpf_attr a;
	uint32_t key = 0;
	uint64_t val = 1;
	memset(&a, 0, sizeof(a));
	a.map_fd = (uint32_t)fd;
	a.key = (uint64_t)(uintptr_t)&key;
	a.value = (uint64_t)(uintptr_t)&val;
	int r = (int)sys_bpf(BPF_MAP_LOOKUP_ELEM, &a);
	return r < 0 ? r : (int)val; /* an array's entry starts 0 */
}

/*
 * A capture child whose plugin loads BPF: as nobody with CAP_BPF and
 * CAP_PERFMON, bpf() works while plugins initialize; after
 * ctp_priv_end_load nothing new can be made, in any spelling of the
 * command, while what init made still serves, without the capabilities.
 */
static void confine_bpf(void *arg, struct status *st)
{
	uint64_t caps = BIT(CAP_BPF) | BIT(CAP_PERFMON);
	(void)arg;
	if (ctp_priv_keep_caps("nobody", caps, CTP_PRIV_FILTER_CAPTURE_LOAD,
			       st->why, sizeof(st->why)) < 0)
		return;
	int init_map = array_map(); /* a plugin's init */
	st->r[0] = init_map < 0 ? init_map : 0;
	int r = ctp_priv_end_load(caps, st->why, sizeof(st->why));
	if (r < 0)
		return;
	read_status(st);
	int late = array_map();
	st->r[1] = late < 0 ? late : 0;
	st->r[2] = init_map >= 0 ? map_lookup(init_map) : -EBADF;
	union bpf_attr a;
	memset(&a, 0, sizeof(a));
	/* BPF_PROG_LOAD with a bit of the upper half set, and with bit 8:
	 * refused by the filter (the kernel would have seen 5 or said
	 * EINVAL). */
	st->r[3] = (int)sys_bpf(BPF_PROG_LOAD | UINT64_C(1) << 40, &a);
	st->r[4] = (int)sys_bpf(0x100 | BPF_MAP_CREATE, &a);
	/* A kept command on no descriptor reaches the kernel: EBADF. */
	a.map_fd = 999;
	st->r[5] = (int)sys_bpf(BPF_MAP_GET_NEXT_KEY, &a);
	st->ok = 1;
}

/* The plain capture filter refuses bpf() from the start. */
static void confine_plain(void *arg, struct status *st)
{
	(void)arg;
	if (ctp_priv_keep_caps("nobody", BIT(CAP_BPF) | BIT(CAP_PERFMON),
			       CTP_PRIV_FILTER_CAPTURE, st->why,
			       sizeof(st->why)) < 0)
		return;
	int m = array_map();
	st->r[0] = m < 0 ? m : 0;
	st->ok = 1;
}

static void test_capture_bpf_load(void **state)
{
	struct status st, sp;
	(void)state;
	in_child(confine_bpf, NULL, &st);
	assert_int_equal(st.r[0], 0);
	assert_int_equal(st.r[1], -EPERM);
	assert_int_equal(st.r[2], 0);
	assert_int_equal(st.r[3], -EPERM);
	assert_int_equal(st.r[4], -EPERM);
	assert_int_equal(st.r[5], -EBADF);
	assert_int_equal(st.ps.eff | st.ps.prm, 0);
	assert_int_equal(st.ps.seccomp, 2);
	expect_user(&st, nobody_uid());
	in_child(confine_plain, NULL, &sp);
	assert_int_equal(sp.r[0], -EPERM);
}

/* Declared capabilities past the running kernel's last are left out. */
static void test_caps_known(void **state)
{
	(void)state;
	uint64_t decl = BIT(CAP_NET_ADMIN) | BIT(CAP_BPF) | BIT(CAP_PERFMON);
	/* A 5.4 kernel: CAP_AUDIT_READ (37) its last. */
	assert_int_equal(ctp_priv_caps_known(decl, 37), BIT(CAP_NET_ADMIN));
	assert_int_equal(ctp_priv_caps_known(decl, 38),
			 BIT(CAP_NET_ADMIN) | BIT(CAP_PERFMON));
	assert_int_equal(ctp_priv_caps_known(decl, 40), decl);
	assert_int_equal(ctp_priv_caps_known(decl, -1), decl);
	/* This kernel knows them all. */
	assert_true(ctp_priv_kernel_cap_last() >= CAP_BPF);
}

static void test_caps_format(void **state)
{
	char buf[128];
	(void)state;
	ctp_priv_caps_format(0, buf, sizeof(buf));
	assert_string_equal(buf, "none");
	ctp_priv_caps_format(BIT(CAP_NET_ADMIN) | BIT(CAP_DAC_READ_SEARCH) |
				     BIT(CAP_SYS_PTRACE),
			     buf, sizeof(buf));
	assert_string_equal(buf,
			    "CAP_DAC_READ_SEARCH,CAP_NET_ADMIN,CAP_SYS_PTRACE");
	size_t n = ctp_priv_caps_format(BIT(CAP_SYS_PTRACE), buf, 5);
	assert_int_equal(n, strlen("CAP_SYS_PTRACE"));
	assert_string_equal(buf, "CAP_");
	assert_true(ALL_CAPS >> ctp_priv_cap_last() == 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_caps_format),
		cmocka_unit_test(test_caps_known),
		cmocka_unit_test(test_privs_parse),
		cmocka_unit_test(test_drop_no_caps),
		cmocka_unit_test(test_drop_refuses_root),
		cmocka_unit_test(test_serve_filter),
		cmocka_unit_test(test_keep_refuses_unheld),
		cmocka_unit_test(test_drop_same_user),
		cmocka_unit_test(test_refuses_threads),
		cmocka_unit_test(test_capture_bpf_load),
		cmocka_unit_test_teardown(test_capture_as_nobody, stop_target),
	};
	if (geteuid() != 0) {
		fprintf(stderr,
			"test_priv: needs root (setuid, capabilities)\n");
		return 77;
	}
	return cmocka_run_group_tests(tests, NULL, NULL);
}
