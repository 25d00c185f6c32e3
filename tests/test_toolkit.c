/* SPDX-License-Identifier: MIT */
/*
 * The plugin toolkit's own contract (include/ctprof/plugin-util.h):
 * ctp_attach against cores of another ABI, too old, or refusing a handle or
 * a counter; a task's declared and lazy files; ctp_kv_u64 on status text;
 * ctp_read_grow on files past its first buffer, at its bound, not regular;
 * ctp_keyval_lines keeping each key once up to its cap; ctp_handle_cache
 * registering each name once, also from racing threads.
 * The api table here is the smallest one that lets each path be taken and
 * records how the toolkit called it; every shipped plugin runs ctp_attach
 * against the real core in the e2e tests.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "ctprof/plugin-util.h"

/* What the table below saw. */
static struct {
	char log[256];
	int log_level, n_log;
	const char *registered[8];
	int n_registered;
	int refuse_counter;  /* index whose summary_register fails */
	int refuse_field;    /* table index field_handle refuses */
	int n_get;	     /* file_get calls */
	int get_err;	     /* what file_get returns */
	struct ctp_file got; /* what file_get hands out */
} seen;

/* Descriptor the plugin would export. Two fields, two counters. */
static const struct ctp_field_desc fields[] = {
	CTP_FIELD_COUNTER("t.a", THREAD, COUNT, "a"),
	CTP_FIELD_GAUGE("t.b", THREAD, BYTES, MAX, "b"),
};
static const char *const counters[] = {"first", "second"};
#define desc ctp_plugin_v1 /* what CTP_ATTACH hands to ctp_attach */
const struct ctp_plugin ctp_plugin_v1 = {
	CTP_PLUGIN_HEADER,
	.name = "t",
	CTP_PLUGIN_FIELDS(fields),
	CTP_PLUGIN_COUNTER_TABLE(counters),
};

static void __attribute__((format(printf, 3, 4)))
t_log(struct ctp_ctx *ctx, int level, const char *fmt, ...)
{
	va_list ap;

	(void)ctx;
	va_start(ap, fmt);
	vsnprintf(seen.log, sizeof(seen.log), fmt, ap);
	va_end(ap);
	seen.log_level = level;
	seen.n_log++;
}

static int t_field_handle(struct ctp_ctx *ctx, size_t i)
{
	(void)ctx;
	return (int)i == seen.refuse_field ? -ENOENT : 100 + (int)i;
}

static int t_summary_register(struct ctp_ctx *ctx, const char *name)
{
	(void)ctx;
	if (seen.n_registered == seen.refuse_counter)
		return -ENOSPC;
	seen.registered[seen.n_registered] = name;
	return 40 + seen.n_registered++;
}

static int t_file_get(const struct ctp_task *task, uint32_t i,
		      const struct ctp_file **out)
{
	(void)task;
	(void)i;
	seen.n_get++;
	*out = &seen.got;
	return seen.get_err;
}

static struct ctp_api api_full(void)
{
	struct ctp_api api = {
		.abi = CTP_ABI_MAJOR,
		.size = sizeof(struct ctp_api),
		.log = t_log,
		.field_handle = t_field_handle,
		.summary_register = t_summary_register,
		.file_get = t_file_get,
	};
	return api;
}

static int setup(void **state)
{
	(void)state;
	memset(&seen, 0, sizeof(seen));
	seen.refuse_counter = seen.refuse_field = -1;
	return 0;
}

static int attach(const struct ctp_api *api, size_t need, int *fh, int *ch)
{
	const struct ctp_attach a = {
		.api_need = need,
		.field_handles = fh,
		.n_fields = 2,
		.counter_handles = ch,
		.n_counters = 2,
	};
	return ctp_attach(NULL, api, &desc, &a);
}

static void attach_fills_handles(void **state)
{
	struct ctp_api api = api_full();
	int fh[2] = {-1, -1}, ch[2] = {-1, -1};

	(void)state;
	assert_int_equal(attach(&api, CTP_API_THROUGH(file_get), fh, ch), 0);
	assert_int_equal(fh[0], 100);
	assert_int_equal(fh[1], 101);
	/* Counters by name, in table order. */
	assert_int_equal(seen.n_registered, 2);
	assert_string_equal(seen.registered[0], "first");
	assert_string_equal(seen.registered[1], "second");
	assert_int_equal(ch[0], 40);
	assert_int_equal(ch[1], 41);
	assert_int_equal(seen.n_log, 0);
}

static void attach_refuses_other_cores(void **state)
{
	struct ctp_api api = api_full();
	int fh[2], ch[2];

	(void)state;
	assert_int_equal(attach(NULL, 0, fh, ch), -ENOTSUP);
	api.abi = CTP_ABI_MAJOR + 1;
	assert_int_equal(attach(&api, 0, fh, ch), -ENOTSUP);
	assert_int_equal(seen.n_log, 0); /* another ABI's log is not ours */
	/* An ABI 1 core whose table ends before what the plugin needs. */
	api = api_full();
	api.size = (uint32_t)CTP_API_THROUGH(roots);
	assert_int_equal(attach(&api, CTP_API_THROUGH(file_get), fh, ch),
			 -ENOTSUP);
	assert_int_equal(seen.log_level, CTP_LOG_ERR);
	assert_non_null(strstr(seen.log, "update ctprof-core"));
	assert_int_equal(seen.n_registered, 0);
	/* Whatever the plugin says, the summary members are needed. */
	api.size = (uint32_t)CTP_API_THROUGH(set_cpuset);
	assert_int_equal(attach(&api, 0, fh, ch), -ENOTSUP);
	/* Exactly enough is enough. */
	api.size = (uint32_t)CTP_API_THROUGH(file_get);
	assert_int_equal(attach(&api, CTP_API_THROUGH(file_get), fh, ch), 0);
}

static void attach_refused_field_is_skipped(void **state)
{
	struct ctp_api api = api_full();
	int fh[2], ch[2];

	(void)state;
	seen.refuse_field = 1;
	assert_int_equal(attach(&api, 0, fh, ch), 0);
	assert_int_equal(fh[0], 100);
	assert_int_equal(fh[1], -ENOENT);
	assert_int_equal(seen.log_level, CTP_LOG_DEBUG);
	assert_non_null(strstr(seen.log, "t.b"));
}

static void attach_refused_counter_fails(void **state)
{
	struct ctp_api api = api_full();
	int fh[2], ch[2];

	(void)state;
	seen.refuse_counter = 1;
	assert_int_equal(attach(&api, 0, fh, ch), -ENOSPC);
	assert_int_equal(seen.log_level, CTP_LOG_ERR);
	assert_non_null(strstr(seen.log, "second"));
}

static void attach_checks_its_own_tables(void **state)
{
	struct ctp_api api = api_full();
	int fh[2], ch[3];
	struct ctp_attach a = {
		.field_handles = fh,
		.n_fields = 2,
		.counter_handles = ch,
		.n_counters = 3, /* more than the descriptor declares */
	};

	(void)state;
	assert_int_equal(ctp_attach(NULL, &api, &desc, &a), -EINVAL);
	a.n_counters = 1;
	a.counter_handles = NULL;
	assert_int_equal(ctp_attach(NULL, &api, &desc, &a), -EINVAL);
	/* More field handles than the descriptor declares. */
	a.n_fields = 3;
	a.n_counters = 0;
	assert_int_equal(ctp_attach(NULL, &api, &desc, &a), -EINVAL);
	a.n_fields = 2;
	/* No counters asked for: none registered. */
	a.n_counters = 0;
	assert_int_equal(ctp_attach(NULL, &api, &desc, &a), 0);
	assert_int_equal(seen.n_registered, 0);
}

/* The one-line form takes the arrays' sizes. */
static void attach_macro(void **state)
{
	struct ctp_api api = api_full();
	int fh[2] = {-1, -1}, ch[2] = {-1, -1};

	(void)state;
	assert_int_equal(CTP_ATTACH(NULL, &api, CTP_API_THROUGH(roots), fh, ch),
			 0);
	assert_int_equal(fh[1], 101);
	assert_int_equal(ch[1], 41);
	/* Without counters: no array to size (a NULL would not compile
	 * cleanly with -Wsizeof-pointer-div). */
	int fh2[2] = {-1, -1};
	assert_int_equal(
		CTP_ATTACH_FIELDS(NULL, &api, CTP_API_THROUGH(roots), fh2), 0);
	assert_int_equal(fh2[1], 101);
}

static void task_files(void **state)
{
	struct ctp_file files[3] = {
		{.data = "abc", .len = 3},
		{.err = -ESRCH},
		{.err = -ENODATA}, /* lazy, not fetched */
	};
	struct ctp_task task = {.abi = CTP_ABI_MAJOR,
				.size = sizeof(task),
				.files = files,
				.n_files = 3};
	struct ctp_api api = api_full();
	const char *d = NULL;
	size_t n = 0;

	(void)state;
	assert_int_equal(ctp_task_file(&task, 0, &d, &n), 0);
	assert_string_equal(d, "abc");
	assert_int_equal(n, 3);
	assert_int_equal(ctp_task_file(&task, 1, &d, &n), -ESRCH);
	assert_true(ctp_err_vanished(-ESRCH));
	assert_true(ctp_err_vanished(-ENOENT));
	assert_false(ctp_err_vanished(-EACCES));
	assert_false(ctp_err_vanished(0));
	assert_int_equal(ctp_task_file(&task, 2, &d, &n), -ENODATA);
	/* Fewer files than declared, or a task struct without them. */
	assert_int_equal(ctp_task_file(&task, 3, &d, &n), -EPROTO);
	task.size = (uint32_t)offsetof(struct ctp_task, files);
	assert_int_equal(ctp_task_file(&task, 0, &d, &n), -EPROTO);
	task.size = sizeof(task);
	/* No error but no bytes is no file. */
	files[0].data = NULL;
	assert_int_equal(ctp_task_file(&task, 0, &d, &n), -ENODATA);

	/* A lazy file is fetched; a read one is not fetched again. */
	seen.got = (struct ctp_file){.data = "lazy", .len = 4};
	assert_int_equal(ctp_task_fetch(&api, &task, 2, &d, &n), 0);
	assert_string_equal(d, "lazy");
	assert_int_equal(n, 4);
	assert_int_equal(seen.n_get, 1);
	files[0] = (struct ctp_file){.data = "abc", .len = 3};
	assert_int_equal(ctp_task_fetch(&api, &task, 0, &d, &n), 0);
	assert_int_equal(seen.n_get, 1);
	assert_int_equal(ctp_task_fetch(&api, &task, 1, &d, &n), -ESRCH);
	assert_int_equal(seen.n_get, 1);
	/* The fetch fails: its error. */
	seen.get_err = -EACCES;
	seen.got = (struct ctp_file){.err = -EACCES};
	assert_int_equal(ctp_task_fetch(&api, &task, 2, &d, &n), -EACCES);
	/* A core without file_get: the lazy file stays unread. */
	api.size = (uint32_t)CTP_API_THROUGH(roots);
	assert_int_equal(ctp_task_fetch(&api, &task, 2, &d, &n), -ENODATA);
	assert_int_equal(seen.n_get, 2);
}

static void kv_u64(void **state)
{
	static const char status[] = "Name:\tcat\n"
				     "VmRSS:\t    1234 kB\n"
				     "voluntary_ctxt_switches:\t12\n"
				     "nonvoluntary_ctxt_switches:\t7";
	static const char bad[] = "a:\t12x\n"
				  "b:\n"
				  "c:\t18446744073709551616\n"
				  "d:\t-1\n"
				  "e:\t18446744073709551615\n";
	uint64_t v = 0;

	(void)state;
	assert_int_equal(ctp_kv_u64(status, sizeof(status) - 1,
				    "voluntary_ctxt_switches", &v),
			 0);
	assert_int_equal(v, 12);
	/* Last line without a newline. */
	assert_int_equal(ctp_kv_u64(status, sizeof(status) - 1,
				    "nonvoluntary_ctxt_switches", &v),
			 0);
	assert_int_equal(v, 7);
	/* A unit after the number. */
	assert_int_equal(ctp_kv_u64(status, sizeof(status) - 1, "VmRSS", &v),
			 0);
	assert_int_equal(v, 1234);
	/* Keys match whole: no prefix, no suffix. */
	assert_int_equal(ctp_kv_u64(status, sizeof(status) - 1, "VmRS", &v),
			 -ENOENT);
	assert_int_equal(
		ctp_kv_u64(status, sizeof(status) - 1, "voluntary", &v),
		-ENOENT);
	/* A number not on its own is not a number. */
	v = 99;
	assert_int_equal(ctp_kv_u64(bad, sizeof(bad) - 1, "a", &v), -EINVAL);
	assert_int_equal(ctp_kv_u64(bad, sizeof(bad) - 1, "b", &v), -EINVAL);
	assert_int_equal(ctp_kv_u64(bad, sizeof(bad) - 1, "c", &v), -ERANGE);
	assert_int_equal(ctp_kv_u64(bad, sizeof(bad) - 1, "d", &v), -EINVAL);
	assert_int_equal(v, 99);
	assert_int_equal(ctp_kv_u64(bad, sizeof(bad) - 1, "e", &v), 0);
	assert_true(v == UINT64_MAX);
	/* The length bounds the search: no NUL is needed or read. */
	assert_int_equal(ctp_kv_u64(status, 10, "VmRSS", &v), -ENOENT);
	assert_int_equal(ctp_kv_u64(status, 23, "VmRSS", &v), 0);
	assert_int_equal(v, 12); /* "VmRSS:\t    12" */
}

/* Directory names of /proc as tgids and tids. */
static void parse_pid(void **state)
{
	uint32_t v = 7;

	(void)state;
	assert_int_equal(ctp_parse_pid("1", &v), 0);
	assert_int_equal(v, 1);
	assert_int_equal(ctp_parse_pid("2147483647", &v), 0);
	assert_int_equal(v, 2147483647u);
	assert_int_equal(ctp_parse_pid("2147483648", &v), -ERANGE);
	assert_int_equal(ctp_parse_pid("99999999999999999999999", &v), -ERANGE);
	assert_int_equal(ctp_parse_pid("self", &v), -EINVAL);
	assert_int_equal(ctp_parse_pid("", &v), -EINVAL);
	assert_int_equal(ctp_parse_pid("12a", &v), -EINVAL);
	assert_int_equal(ctp_parse_pid("-1", &v), -EINVAL);
	assert_int_equal(ctp_parse_pid("+1", &v), -EINVAL);
	assert_int_equal(v, 2147483647u);
}

static void write_bytes(int dirfd, const char *name, size_t n)
{
	int fd = openat(dirfd, name, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC,
			0600);

	assert_true(fd >= 0);
	for (size_t i = 0; i < n; i++) {
		char c = (char)('a' + i % 26);

		assert_int_equal(write(fd, &c, 1), 1);
	}
	assert_int_equal(close(fd), 0);
}

/* The namespace a readlink of /proc/self/ns/<ns> names: the initial one
 * ("pid:[4026531836]", "cgroup:[4026531835]") or not, told apart from the
 * link's text, not its inode. */
static int ns_by_link(const char *ns, unsigned long init)
{
	char path[64], link[64], want[64];
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/self/ns/%s", ns);
	n = readlink(path, link, sizeof(link) - 1);
	if (n < 0)
		return -errno;
	link[n] = '\0';
	snprintf(want, sizeof(want), "%s:[%lu]", ns, init);
	return strcmp(link, want) == 0;
}

/* The proc root's checks: a procfs or not, the initial namespaces as the
 * live /proc says (against readlink's text), a tree that is not /proc. */
static void proc_ns(void **state)
{
	char dir[] = "/tmp/ctp-toolkit-XXXXXX";
	int pfd = open("/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC), dfd;

	(void)state;
	assert_true(pfd >= 0);
	assert_true(ctp_proc_is_procfs(pfd));
	assert_true(ctp_proc_is_live(pfd));
	assert_int_equal(ctp_proc_ns_initial(pfd, "pid"),
			 ns_by_link("pid", 4026531836ul));
	assert_int_equal(ctp_proc_ns_initial(pfd, "cgroup"),
			 ns_by_link("cgroup", 4026531835ul));
	assert_int_equal(ctp_proc_ns_initial(pfd, "net"), -EINVAL);
	close(pfd);

	assert_non_null(mkdtemp(dir));
	dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	assert_true(dfd >= 0);
	assert_false(ctp_proc_is_procfs(dfd));
	assert_false(ctp_proc_is_live(dfd));
	assert_int_equal(ctp_proc_ns_initial(dfd, "pid"), -ENOENT);
	/* A copy of a tree: a file where the link would be, another inode. */
	assert_int_equal(mkdirat(dfd, "self", 0700), 0);
	assert_int_equal(mkdirat(dfd, "self/ns", 0700), 0);
	write_bytes(dfd, "self/ns/pid", 0);
	assert_int_equal(ctp_proc_ns_initial(dfd, "pid"), 0);
	assert_int_equal(ctp_proc_is_procfs(-1), false);
	unlinkat(dfd, "self/ns/pid", 0);
	unlinkat(dfd, "self/ns", AT_REMOVEDIR);
	unlinkat(dfd, "self", AT_REMOVEDIR);
	close(dfd);
	assert_int_equal(rmdir(dir), 0);
}

/* A whole file into a buffer that grows and is kept; bounded by max. */
static void read_grow(void **state)
{
	char dir[] = "/tmp/ctp-toolkit-XXXXXX";
	char *buf = NULL;
	size_t cap = 0, len = 7;
	int dfd;

	(void)state;
	assert_non_null(mkdtemp(dir));
	dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	assert_true(dfd >= 0);
	write_bytes(dfd, "empty", 0);
	write_bytes(dfd, "big", 100000); /* past the first 64 KiB */
	write_bytes(dfd, "small", 5);
	assert_int_equal(mkfifoat(dfd, "fifo", 0600), 0);

	assert_int_equal(ctp_read_grow(dfd, "empty", 1 << 20, &buf, &cap, &len),
			 0);
	assert_int_equal(len, 0);
	assert_int_equal(buf[0], '\0');
	assert_int_equal(ctp_read_grow(dfd, "big", 1 << 20, &buf, &cap, &len),
			 0);
	assert_int_equal(len, 100000);
	assert_true(cap > 100000);
	assert_int_equal(buf[0], 'a');
	assert_int_equal(buf[99999], (char)('a' + 99999 % 26));
	assert_int_equal(buf[100000], '\0');
	/* The buffer is kept: a smaller file reuses it. */
	size_t kept = cap;
	assert_int_equal(ctp_read_grow(dfd, "small", 1 << 20, &buf, &cap, &len),
			 0);
	assert_int_equal(len, 5);
	assert_int_equal(cap, kept);
	assert_string_equal(buf, "abcde");
	free(buf);

	/* max: a file of max - 1 bytes fits, one of max does not. */
	buf = NULL;
	cap = 0;
	assert_int_equal(ctp_read_grow(dfd, "big", 100001, &buf, &cap, &len),
			 0);
	assert_int_equal(len, 100000);
	assert_true(cap <= 100002);
	assert_int_equal(ctp_read_grow(dfd, "big", 100000, &buf, &cap, &len),
			 -EFBIG);
	assert_int_equal(ctp_read_grow(dfd, "big", 100, &buf, &cap, &len),
			 -EFBIG);
	assert_int_equal(ctp_read_grow(dfd, "fifo", 1 << 20, &buf, &cap, &len),
			 -EINVAL);
	assert_int_equal(ctp_read_grow(dfd, "none", 1 << 20, &buf, &cap, &len),
			 -ENOENT);
	assert_int_equal(ctp_read_grow(-1, "big", 1 << 20, &buf, &cap, &len),
			 -EBADF);
	free(buf);

	assert_int_equal(unlinkat(dfd, "empty", 0), 0);
	assert_int_equal(unlinkat(dfd, "big", 0), 0);
	assert_int_equal(unlinkat(dfd, "small", 0), 0);
	assert_int_equal(unlinkat(dfd, "fifo", 0), 0);
	assert_int_equal(close(dfd), 0);
	assert_int_equal(rmdir(dir), 0);
}

/* "k v" lines for kv_lines below; "#" lines are passed over. */
static int kv_line(const char *p, const char *eol, struct ctp_keyval *kv)
{
	const char *sp = memchr(p, ' ', (size_t)(eol - p)), *q;

	if (p < eol && *p == '#')
		return 1;
	if (!sp || sp == p)
		return -EINVAL;
	q = sp + 1;
	kv->key = p;
	kv->key_len = (size_t)(sp - p);
	return ctp_scan_u64(&q, eol, &kv->value) < 0 || q != eol ? -ERANGE : 0;
}

/* Lines of keys not known in advance: kept in order once, the first
 * problem returned, the rest counted. */
static void kv_lines(void **state)
{
	static const char text[] = "# header\na 1\nbad\nb 2\na 3\nc 4\nd 5\n";
	struct ctp_keyval kv[3];
	struct ctp_keyval_lines l = {.kv = kv, .cap = 3};

	(void)state;
	assert_int_equal(ctp_keyval_lines(text, sizeof(text) - 1, kv_line, &l),
			 -EINVAL);
	assert_int_equal(l.n, 3);
	assert_int_equal(l.kv[0].key_len, 1);
	assert_memory_equal(l.kv[0].key, "a", 1);
	assert_int_equal(l.kv[0].value, 1); /* the repeated "a 3" is not */
	assert_memory_equal(l.kv[1].key, "b", 1);
	assert_memory_equal(l.kv[2].key, "c", 1);
	assert_int_equal(l.kv[2].value, 4);
	assert_int_equal(l.malformed, 2); /* "bad", "a 3" */
	assert_int_equal(l.dropped, 1);	  /* "d 5" */

	l.cap = 3;
	assert_int_equal(ctp_keyval_lines("x 1\ny 9", 7, kv_line, &l),
			 -EMSGSIZE);
	assert_int_equal(l.n, 1);
	assert_int_equal(l.malformed, 1);
	assert_int_equal(
		ctp_keyval_lines("x 1\ny 9\nz 9\nw 9\n", 16, kv_line, &l),
		-E2BIG);
	assert_int_equal(l.dropped, 1);
	assert_int_equal(
		ctp_keyval_lines("x 99999999999999999999\n", 23, kv_line, &l),
		-ERANGE);
	assert_int_equal(l.n, 0);
	assert_int_equal(ctp_keyval_lines("", 0, kv_line, &l), 0);
	assert_int_equal(l.n + l.malformed + l.dropped, 0);
}

/* The one-line macros describe exactly what a designated initializer
 * would. */
static void field_macros(void **state)
{
	static const struct ctp_field_desc dims = CTP_FIELD_DIMS(
		"x.y", CGROUP, U64, US, COUNTER, SUM, "sec", "k=v", "h");
	static const struct ctp_field_desc label =
		CTP_FIELD_LABEL("x.l", HOST, "l");

	(void)state;
	assert_string_equal(fields[0].name, "t.a");
	assert_int_equal(fields[0].scope, CTP_SCOPE_THREAD);
	assert_int_equal(fields[0].type, CTP_TYPE_U64);
	assert_int_equal(fields[0].unit, CTP_UNIT_COUNT);
	assert_int_equal(fields[0].kind, CTP_KIND_COUNTER);
	assert_int_equal(fields[0].rule, CTP_RULE_SUM);
	assert_int_equal(fields[0].flags, 0);
	assert_int_equal(fields[1].kind, CTP_KIND_GAUGE);
	assert_int_equal(fields[1].rule, CTP_RULE_MAX);
	assert_int_equal(fields[1].unit, CTP_UNIT_BYTES);
	assert_int_equal(dims.flags, CTP_FIELD_META);
	assert_string_equal(dims.section, "sec");
	assert_string_equal(dims.dims, "k=v");
	assert_int_equal(dims.scope, CTP_SCOPE_CGROUP);
	assert_int_equal(label.type, CTP_TYPE_STRING);
	assert_int_equal(label.kind, CTP_KIND_CATEGORICAL);
	assert_int_equal(label.rule, CTP_RULE_MODE);
	assert_int_equal(label.unit, CTP_UNIT_NONE);
}

/* ctp_handle_cache_get's reg: a handle per name ("bad" refused), every
 * call counted. */
struct regs {
	int calls;
	int per_name[4]; /* calls for "a", "b", "c", others */
	bool slow;
};

static int reg_name(void *arg, const char *name, size_t len)
{
	struct regs *r = arg;

	__atomic_fetch_add(&r->calls, 1, __ATOMIC_RELAXED);
	/* Slow, as the core's registry may be: racing workers that missed
	 * the name meanwhile queue on the table's lock. */
	if (r->slow)
		nanosleep(&(struct timespec){.tv_nsec = 2000000}, NULL);
	if (len == 1 && name[0] >= 'a' && name[0] <= 'c') {
		__atomic_fetch_add(&r->per_name[name[0] - 'a'], 1,
				   __ATOMIC_RELAXED);
		return 10 + name[0] - 'a';
	}
	__atomic_fetch_add(&r->per_name[3], 1, __ATOMIC_RELAXED);
	if (len == 3 && memcmp(name, "bad", 3) == 0)
		return -EPERM;
	return (int)len;
}

static void handle_cache(void **state)
{
	static struct ctp_handle_cache c;
	char long_name[CTP_HANDLE_NAME_MAX];
	struct regs r = {0};

	(void)state;
	ctp_handle_cache_init(&c, 3);
	/* Registered once, then kept; the name need not be terminated. */
	assert_int_equal(ctp_handle_cache_get(&c, "ax", 1, reg_name, &r), 10);
	assert_int_equal(ctp_handle_cache_get(&c, "a", 1, reg_name, &r), 10);
	assert_int_equal(r.calls, 1);
	/* A refusal is kept too. */
	assert_int_equal(ctp_handle_cache_get(&c, "bad", 3, reg_name, &r),
			 -EPERM);
	assert_int_equal(ctp_handle_cache_get(&c, "bad", 3, reg_name, &r),
			 -EPERM);
	assert_int_equal(r.calls, 2);
	/* The longest name fits; one byte more is refused unregistered. */
	memset(long_name, 'x', sizeof(long_name));
	assert_int_equal(ctp_handle_cache_get(&c, long_name, sizeof(long_name),
					      reg_name, &r),
			 -ENAMETOOLONG);
	assert_int_equal(r.calls, 2);
	assert_int_equal(ctp_handle_cache_get(&c, long_name,
					      sizeof(long_name) - 1, reg_name,
					      &r),
			 CTP_HANDLE_NAME_MAX - 1);
	assert_int_equal(r.calls, 3);
	/* Full at cap: a new name is refused unregistered, old ones stay. */
	assert_int_equal(ctp_handle_cache_get(&c, "b", 1, reg_name, &r),
			 -ENOSPC);
	assert_int_equal(r.calls, 3);
	assert_int_equal(ctp_handle_cache_get(&c, "a", 1, reg_name, &r), 10);
	assert_int_equal(ctp_handle_cache_get(&c, long_name,
					      sizeof(long_name) - 1, reg_name,
					      &r),
			 CTP_HANDLE_NAME_MAX - 1);
	ctp_handle_cache_done(&c);
	/* A cap past the table's size is the table's size. */
	ctp_handle_cache_init(&c, CTP_HANDLE_CACHE_MAX + 5);
	assert_int_equal(c.cap, CTP_HANDLE_CACHE_MAX);
	ctp_handle_cache_done(&c);
	ctp_handle_cache_done(NULL);
}

struct racer {
	struct ctp_handle_cache *c;
	struct regs *r;
	pthread_barrier_t *go;
	int bad; /* answers that were not the name's handle */
};

static void *race(void *arg)
{
	struct racer *x = arg;

	pthread_barrier_wait(x->go);
	for (int i = 0; i < 2000; i++) {
		char name = (char)('a' + i % 3);

		if (ctp_handle_cache_get(x->c, &name, 1, reg_name, x->r) !=
		    10 + name - 'a')
			x->bad++;
	}
	return NULL;
}

/* Workers asking for the same new names at once: each is registered
 * exactly once and every one of them gets its handle. */
static void handle_cache_threads(void **state)
{
	static struct ctp_handle_cache c;
	struct racer x[4];
	pthread_t t[4];
	pthread_barrier_t go;
	struct regs r = {.slow = true};

	(void)state;
	ctp_handle_cache_init(&c, 8);
	assert_int_equal(pthread_barrier_init(&go, NULL, 4), 0);
	for (int i = 0; i < 4; i++) {
		x[i] = (struct racer){.c = &c, .r = &r, .go = &go};
		assert_int_equal(pthread_create(&t[i], NULL, race, &x[i]), 0);
	}
	for (int i = 0; i < 4; i++) {
		assert_int_equal(pthread_join(t[i], NULL), 0);
		assert_int_equal(x[i].bad, 0);
	}
	assert_int_equal(r.per_name[0], 1);
	assert_int_equal(r.per_name[1], 1);
	assert_int_equal(r.per_name[2], 1);
	assert_int_equal(r.calls, 3);
	pthread_barrier_destroy(&go);
	ctp_handle_cache_done(&c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(attach_fills_handles, setup),
		cmocka_unit_test_setup(attach_refuses_other_cores, setup),
		cmocka_unit_test_setup(attach_refused_field_is_skipped, setup),
		cmocka_unit_test_setup(attach_refused_counter_fails, setup),
		cmocka_unit_test_setup(attach_checks_its_own_tables, setup),
		cmocka_unit_test_setup(attach_macro, setup),
		cmocka_unit_test_setup(task_files, setup),
		cmocka_unit_test_setup(kv_u64, setup),
		cmocka_unit_test(parse_pid),
		cmocka_unit_test(field_macros),
		cmocka_unit_test(read_grow),
		cmocka_unit_test(proc_ns),
		cmocka_unit_test(kv_lines),
		cmocka_unit_test(handle_cache),
		cmocka_unit_test(handle_cache_threads),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
