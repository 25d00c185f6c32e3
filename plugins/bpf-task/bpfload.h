/*
 * What the two programs' loaders (bpftask.c: the iterator, bpfexit.c: the
 * exit program) share: libbpf kept quiet, the kernel's BTF checked first,
 * and a failing step said in one line with its reason (no BTF, bpf()
 * refused: lockdown, capabilities, a seccomp filter; an old kernel).
 */
#ifndef CTP_BPFLOAD_H
#define CTP_BPFLOAD_H

#include <stddef.h>

struct bpf_object_skeleton;

/* Why bpf() says EPERM here, in one line: lockdown (the mode from
 * /sys/kernel/security/lockdown), missing capabilities, a seccomp filter,
 * or none of those. */
void ctp_bpfload_eperm_why(char *why, size_t whylen);

/*
 * "step: error" into why, with the reason where one is known: EPERM's
 * (ctp_bpfload_eperm_why), and for an error that means the kernel lacks
 * the program's needs (EINVAL, ENOTSUP, ENOENT, ESRCH) "kernel <release>:
 * <needs>" when needs is not NULL. Returns err (negative).
 */
int ctp_bpfload_fail(char *why, size_t whylen, int err, const char *step,
		     const char *needs);

/* 0 when /sys/kernel/btf/vmlinux is readable, else a negative errno with
 * the reason in why. Then libbpf's messages are silenced (the caller says
 * which step failed). */
int ctp_bpfload_begin(char *why, size_t whylen);

/* Load (the verifier runs here) and attach an opened skeleton; a negative
 * errno with the failing step (attach_step names the attach) in why. */
int ctp_bpfload_load_attach(struct bpf_object_skeleton *s,
			    const char *attach_step, const char *needs,
			    char *why, size_t whylen);

#endif /* CTP_BPFLOAD_H */
