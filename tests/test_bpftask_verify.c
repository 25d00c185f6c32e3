/* SPDX-License-Identifier: MIT */
/*
 * What the kernel's verifier does with bpf-task's iterator
 * (plugins/bpf-task/task_iter.bpf.c), read from its own log (log level 2:
 * every instruction it visits, with the registers' types after it).
 *
 * On 6.3+ each visit of a load of a pointer member from a trusted pointer
 * (the iterator's ctx->task) costs up to four linear searches of vmlinux's
 * BTF for "<type>__safe_trusted" and its kin (btf_nested_type_is_trusted):
 * most of the load's CPU (task_iter.bpf.c's header comment). So:
 *
 * - log_loads: the pure parser of the log on literal lines;
 * - plain: task_iter.bpf.o, the program for every kernel, visits each load
 *   of a pointer from a trusted pointer once;
 * - cast: task_iter_cast.bpf.o, the light skeleton's first, loads no pointer
 *   from the trusted task at all (bpf_rdonly_cast), and at most one pointer
 *   from a trusted pointer (ctx->meta->seq, which bpf_seq_write needs
 *   trusted).
 * - walk: task_iter_walk.bpf.o's open-coded pass (ctp_walk, 6.8+: the
 *   task iterator's kfuncs), which shares the fill, loads no pointer from a
 *   trusted or RCU task either (those of bpf_iter_task_next() and
 *   bpf_task_from_pid()); the instructions it processed are printed.
 *
 * The live cases load the objects by libbpf (the verifier sees the same
 * instructions the light skeleton hands it) and skip when not root,
 * without kernel BTF, where bpf() is refused, where the kernel's log names
 * no trusted pointer (before 6.x: nothing looked up either), or, for
 * cast, without bpf_rdonly_cast (before 6.2).
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include <bpf/libbpf.h>

#include "bpfload.h"

#define MAX_INSNS 8192

/* Loads of a pointer from a trusted (or RCU) pointer, per instruction. */
struct loads {
	unsigned visits[MAX_INSNS];
	unsigned insns;	     /* instructions with such a load */
	unsigned max_visits; /* of one of them */
	unsigned from_task;  /* visits whose base is a trusted task_struct */
	unsigned total;	     /* visits */
	unsigned trusted;    /* lines naming a trusted pointer at all */
};

/* The type register reg has after the instruction, from its annotation
 * ("; R1_w=trusted_ptr_task_struct() R6=..."), into type; false where the
 * line does not say. */
static bool reg_type(const char *ann, unsigned reg, char *type, size_t len)
{
	char key[8];
	const char *p = ann;
	size_t n;

	snprintf(key, sizeof(key), "R%u", reg);
	while ((p = strstr(p, key)) != NULL) {
		const char *q = p + strlen(key);

		if ((p == ann || p[-1] == ' ') &&
		    (*q == '=' || !strncmp(q, "_w=", 3))) {
			q = strchr(q, '=') + 1;
			n = strcspn(q, "( \n");
			if (n >= len)
				n = len - 1;
			memcpy(type, q, n);
			type[n] = '\0';
			return true;
		}
		p = q;
	}
	return false;
}

static bool trusted_type(const char *t)
{
	return !strncmp(t, "trusted_ptr_", 12) || !strncmp(t, "rcu_ptr_", 8);
}

/* Count, in the verifier log text log, the visits of 64-bit loads whose
 * base register is a trusted pointer and whose result is a pointer. */
static void log_loads(const char *log, struct loads *out)
{
	const char *line = log;

	memset(out, 0, sizeof(*out));
	while (line && *line) {
		const char *end = strchr(line, '\n'), *ann;
		unsigned idx, d, s;
		int off, used = 0;
		char src[96], dst[96];

		if (strstr(line, "trusted_ptr_") &&
		    (!end || strstr(line, "trusted_ptr_") < end))
			out->trusted++;
		if (sscanf(line, "%u: (79) r%u = *(u64 *)(r%u %d)%n", &idx, &d,
			   &s, &off, &used) == 4 &&
		    used > 0 && idx < MAX_INSNS &&
		    (ann = strchr(line + used, ';')) != NULL &&
		    (!end || ann < end) && reg_type(ann, s, src, sizeof(src)) &&
		    reg_type(ann, d, dst, sizeof(dst)) && trusted_type(src) &&
		    strstr(dst, "ptr_") && !strstr(dst, "map_")) {
			if (!out->visits[idx]++)
				out->insns++;
			if (out->visits[idx] > out->max_visits)
				out->max_visits = out->visits[idx];
			if (strstr(src, "_task_struct"))
				out->from_task++;
			out->total++;
		}
		line = end ? end + 1 : NULL;
	}
}

static void log_loads_literal(void **state)
{
	static const char log[] =
		"func#0 @0\n"
		"1: (79) r6 = *(u64 *)(r1 +8)         ; "
		"R1=ctx() R6_w=trusted_ptr_or_null_task_struct(id=1)\n"
		"2: (79) r8 = *(u64 *)(r2 +0)         ; "
		"R2=trusted_ptr_bpf_iter_meta() R8_w=trusted_ptr_seq_file()\n"
		"21: (79) r1 = *(u64 *)(r6 +1848)     ; "
		"R1_w=ptr_signal_struct() R6=trusted_ptr_task_struct()\n"
		"23: (61) r2 = *(u32 *)(r6 +1268)     ; "
		"R2_w=scalar() R6=trusted_ptr_task_struct()\n"
		"437: (79) r5 = *(u64 *)(r6 +1136)    ; "
		"R5_w=ptr_mm_struct() R6=trusted_ptr_task_struct()\n"
		"437: (79) r5 = *(u64 *)(r6 +1136)    ; "
		"R5=ptr_mm_struct() R6=trusted_ptr_task_struct()\n"
		"24: (79) r1 = *(u64 *)(r9 +1136)     ; "
		"R1_w=untrusted_ptr_mm_struct() "
		"R9=untrusted_ptr_task_struct()\n"
		"780: (79) r2 = *(u64 *)(r6 +2376)    ; "
		"R2_w=rcu_ptr_css_set() R6=trusted_ptr_task_struct()\n"
		"30: (79) r3 = *(u64 *)(r7 +16)       ; "
		"R3_w=scalar() R7=map_value(map=scratch,ks=4,vs=664)\n";
	struct loads *l = calloc(1, sizeof(*l));

	(void)state;
	assert_non_null(l);
	log_loads(log, l);
	/* meta->seq, signal, mm twice, cgroups; not the ctx's load, the
	 * scalar, the untrusted base nor the map value. */
	assert_int_equal(l->total, 5);
	assert_int_equal(l->insns, 4);
	assert_int_equal(l->max_visits, 2);
	assert_int_equal(l->visits[437], 2);
	assert_int_equal(l->from_task, 4);
	assert_int_equal(l->trusted, 8);
	log_loads("", l);
	assert_int_equal(l->total, 0);
	free(l);
}

/* Load the object at path by libbpf with program name's log at level 2
 * into log; 0, or a negative errno with why said. */
static int load_logged(const char *path, const char *name, char *log,
		       size_t len, char *why, size_t whylen)
{
	struct bpf_object *obj = bpf_object__open_file(path, NULL);
	struct bpf_program *prog;
	int r;

	if (!obj) {
		r = -errno;
		snprintf(why, whylen, "%s: %s", path, strerror(-r));
		return r;
	}
	prog = bpf_object__find_program_by_name(obj, name);
	if (!prog) {
		bpf_object__close(obj);
		snprintf(why, whylen, "%s: no program %s", path, name);
		return -ENOENT;
	}
	log[0] = '\0';
	bpf_program__set_log_level(prog, 2);
	bpf_program__set_log_buf(prog, log, len);
	r = bpf_object__load(obj);
	if (r < 0)
		snprintf(why, whylen, "loading %s: %s", path, strerror(-r));
	bpf_object__close(obj);
	return r;
}

/* The object at path loaded with its log counted into l; skips where the
 * kernel cannot tell (above). */
static void live_loads(const char *path, const char *name, struct loads *l,
		       bool cast)
{
	size_t len = 64u << 20;
	char *log = malloc(len), why[512];
	int r;

	assert_non_null(log);
	if (geteuid() != 0) {
		free(log);
		printf("SKIP: not root (loading needs CAP_BPF + "
		       "CAP_PERFMON)\n");
		skip();
	}
	/* Kernel BTF there, libbpf kept quiet: as the loaders begin. */
	if (ctp_bpfload_begin(why, sizeof(why)) < 0) {
		free(log);
		printf("SKIP: %s\n", why);
		skip();
	}
	r = load_logged(path, name, log, len, why, sizeof(why));
	/* libbpf finds no bpf_rdonly_cast (or, for walk, no task iterator
	 * kfunc) in the kernel's BTF: -ESRCH. */
	if (r == -EPERM || r == -EACCES || (cast && r == -ESRCH)) {
		printf("SKIP: %s\n", why);
		free(log);
		skip();
	}
	if (r < 0)
		printf("%s\n%s\n", why, log);
	assert_int_equal(r, 0);
	log_loads(log, l);
	{
		const char *p = strstr(log, "processed ");
		unsigned insns = 0;
		if (p && sscanf(p, "processed %u insns", &insns) == 1)
			printf("%s %s: %u instructions processed\n", path, name,
			       insns);
	}
	printf("%s: %u loads of a pointer from a trusted pointer at %u "
	       "instructions, at most %u visits of one, %u from the task\n",
	       path, l->total, l->insns, l->max_visits, l->from_task);
	free(log);
	if (!l->trusted) {
		printf("SKIP: the verifier's log names no trusted pointer\n");
		skip();
	}
}

static void plain(void **state)
{
	struct loads *l = calloc(1, sizeof(*l));

	(void)state;
	assert_non_null(l);
	live_loads(CTP_BPFTASK_OBJ, "ctp_task_rec", l, false);
	/* ctx->meta->seq and the task's signal, mm, delays, cgroups. */
	assert_true(l->insns >= 1);
	assert_int_equal(l->max_visits, 1);
	free(l);
}

static void cast(void **state)
{
	struct loads *l = calloc(1, sizeof(*l));

	(void)state;
	assert_non_null(l);
	live_loads(CTP_BPFTASK_CAST_OBJ, "ctp_task_rec", l, true);
	assert_int_equal(l->from_task, 0);
	assert_true(l->total <= 1);
	free(l);
}

static void walk(void **state)
{
	struct loads *l = calloc(1, sizeof(*l));

	(void)state;
	assert_non_null(l);
	live_loads(CTP_BPFTASK_WALK_OBJ, "ctp_walk", l, true);
	assert_int_equal(l->from_task, 0);
	assert_int_equal(l->total, 0);
	free(l);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(log_loads_literal),
		cmocka_unit_test(plain),
		cmocka_unit_test(cast),
		cmocka_unit_test(walk),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
