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

struct ps_prochandle {
	pid_t pid;
	/* Resolve a global symbol of the target (object name may be NULL).
	 * 0 and *addr, or a negative errno. */
	int (*lookup)(void *arg, const char *object, const char *name,
		      uint64_t *addr);
	void *arg;
	uint64_t reads; /* process_vm_readv calls made for libthread_db */
};

#endif /* CTP_JEP_PS_H */
