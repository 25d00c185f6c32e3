/* CPU masks of their own for a self-check's threads (cpus.h). */
#include "cpus.h"

#include <errno.h>
#include <sched.h>

int ctp_cpus_spread(unsigned i)
{
	cpu_set_t set;
	unsigned n = 0;
	int cpus[CPU_SETSIZE];

	if (i == 0)
		return 0;
	if (sched_getaffinity(0, sizeof(set), &set) < 0)
		return -errno;
	for (int c = 0; c < CPU_SETSIZE; c++)
		if (CPU_ISSET(c, &set))
			cpus[n++] = c;
	if (n < 2)
		return 0;
	if (i % 2) {
		CPU_ZERO(&set);
		CPU_SET(cpus[i % n], &set);
	} else {
		CPU_CLR(cpus[i % n], &set);
	}
	return sched_setaffinity(0, sizeof(set), &set) < 0 ? -errno : 0;
}
