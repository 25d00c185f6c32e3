// SPDX-License-Identifier: MIT
/*
 * proc_service for libthread_db over process_vm_readv: memory reads only.
 * Everything that would need a stopped thread (registers, writes, stop and
 * continue) fails, so libthread_db can never stop or change the target.
 */
#include <errno.h>
#include <proc_service.h>
#include <string.h>
#include <sys/uio.h>

#include "jep.h"
#include "jep_ps.h"

#define PS_API __attribute__((visibility("default")))

PS_API ps_err_e ps_pdread(struct ps_prochandle *ph, psaddr_t addr, void *buf,
			  size_t len)
{
	struct iovec local = {buf, len};
	struct iovec remote = {(void *)addr, len};
	ssize_t n;

	if (ph->max_reads && ph->reads >= ph->max_reads)
		return PS_ERR;
	ph->reads++;
	if (ph->mem)
		return ph->mem->read(ph->mem->arg, (uint64_t)(uintptr_t)addr,
				     buf, len)
			       ? PS_ERR
			       : PS_OK;
	n = process_vm_readv(ph->pid, &local, 1, &remote, 1, 0);
	return n == (ssize_t)len ? PS_OK : PS_ERR;
}

PS_API ps_err_e ps_ptread(struct ps_prochandle *ph, psaddr_t addr, void *buf,
			  size_t len)
{
	return ps_pdread(ph, addr, buf, len);
}

PS_API ps_err_e ps_pdwrite(struct ps_prochandle *ph, psaddr_t addr,
			   const void *buf, size_t len)
{
	(void)ph, (void)addr, (void)buf, (void)len;
	return PS_ERR;
}

PS_API ps_err_e ps_ptwrite(struct ps_prochandle *ph, psaddr_t addr,
			   const void *buf, size_t len)
{
	(void)ph, (void)addr, (void)buf, (void)len;
	return PS_ERR;
}

PS_API ps_err_e ps_lgetregs(struct ps_prochandle *ph, lwpid_t lwp,
			    prgregset_t regs)
{
	(void)ph, (void)lwp, (void)regs;
	return PS_ERR;
}

PS_API ps_err_e ps_lsetregs(struct ps_prochandle *ph, lwpid_t lwp,
			    const prgregset_t regs)
{
	(void)ph, (void)lwp, (void)regs;
	return PS_ERR;
}

PS_API ps_err_e ps_lgetfpregs(struct ps_prochandle *ph, lwpid_t lwp,
			      prfpregset_t *regs)
{
	(void)ph, (void)lwp, (void)regs;
	return PS_ERR;
}

PS_API ps_err_e ps_lsetfpregs(struct ps_prochandle *ph, lwpid_t lwp,
			      const prfpregset_t *regs)
{
	(void)ph, (void)lwp, (void)regs;
	return PS_ERR;
}

PS_API pid_t ps_getpid(struct ps_prochandle *ph)
{
	return ph->pid;
}

PS_API ps_err_e ps_get_thread_area(struct ps_prochandle *ph, lwpid_t lwp,
				   int idx, psaddr_t *addr)
{
	(void)ph, (void)lwp, (void)idx, (void)addr;
	return PS_ERR;
}

PS_API ps_err_e ps_pglobal_lookup(struct ps_prochandle *ph, const char *object,
				  const char *name, psaddr_t *addr)
{
	uint64_t a;

	if (!ph->lookup || ph->lookup(ph->arg, object, name, &a) < 0)
		return PS_NOSYM;
	*addr = (psaddr_t)(uintptr_t)a;
	return PS_OK;
}

PS_API ps_err_e ps_pstop(struct ps_prochandle *ph)
{
	(void)ph;
	return PS_ERR;
}

PS_API ps_err_e ps_pcontinue(struct ps_prochandle *ph)
{
	(void)ph;
	return PS_OK;
}

PS_API ps_err_e ps_lstop(struct ps_prochandle *ph, lwpid_t lwp)
{
	(void)ph, (void)lwp;
	return PS_ERR;
}

PS_API ps_err_e ps_lcontinue(struct ps_prochandle *ph, lwpid_t lwp)
{
	(void)ph, (void)lwp;
	return PS_OK;
}
