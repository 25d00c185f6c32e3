/* SPDX-License-Identifier: MIT */
/*
 * The proc_service handle libthread_db calls back with. Its callbacks live
 * in a tiny support library (libctp-jep-ps.so) because libthread_db binds
 * ps_* by name at load time and the plugin exports only its descriptor.
 */
#ifndef CTP_JEP_PS_H
#define CTP_JEP_PS_H

#include <stdint.h>
#include <sys/types.h>

struct ctp_jep_mem; /* jep.h */

struct ps_prochandle {
	pid_t pid;
	/* NULL: read with process_vm_readv (the plugin); else its read
	 * callback (the fuzz harness's image). */
	const struct ctp_jep_mem *mem;
	/* Resolve a global symbol of the target (object name may be NULL).
	 * 0 and *addr, or a negative errno. */
	int (*lookup)(void *arg, const char *object, const char *name,
		      uint64_t *addr);
	void *arg;
	uint64_t reads; /* reads made for libthread_db (ps_pdread) */
	/* Reads allowed before ps_pdread fails (0: no bound). libthread_db
	 * walks lists in target memory (the threads, the DTV slotinfo) until
	 * they end where they began: a target whose lists loop elsewhere
	 * would keep it reading forever, and every step is one read. */
	uint64_t max_reads;
};

#endif /* CTP_JEP_PS_H */
