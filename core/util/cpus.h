/*
 * CPU masks of their own for the threads a self-check starts (selftest's
 * child, the live tests), so that a CPU mask read through one source is
 * compared with another's on masks that differ from thread to thread.
 */
#ifndef CTP_UTIL_CPUS_H
#define CTP_UTIL_CPUS_H

/*
 * Narrow the calling thread's CPU mask as the i-th of a set of threads:
 * i = 0 keeps it, an odd i runs on one CPU of it, an even i on all but
 * one (which CPU: i modulo how many it has). Nothing where the mask has
 * fewer than two CPUs. 0, or a negative errno of sched_getaffinity or
 * sched_setaffinity.
 */
int ctp_cpus_spread(unsigned i);

#endif
