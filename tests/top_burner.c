/* SPDX-License-Identifier: MIT */
/*
 * test_top_tmux's CPU burner: `top_burner NAME THREADS` names itself NAME
 * (its threads too) and spins THREADS threads until killed, or until its
 * parent ends. More than one thread makes its process the busiest on a
 * host where other programs run one thread each, whatever the load.
 */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <unistd.h>

static void *spin(void *arg)
{
	volatile unsigned long *n = arg;
	for (;;)
		(*n)++;
	return NULL;
}

int main(int argc, char **argv)
{
	static volatile unsigned long count[16];
	int threads = argc > 2 ? atoi(argv[2]) : 2;
	if (argc < 2 || threads < 1 || threads > 16) {
		fprintf(stderr, "usage: top_burner NAME THREADS (1-16)\n");
		return 2;
	}
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	prctl(PR_SET_NAME, argv[1]);
	for (int i = 1; i < threads; i++) {
		pthread_t t;
		if (pthread_create(&t, NULL, spin, (void *)&count[i]) != 0)
			return 1;
	}
	spin((void *)&count[0]);
	return 0;
}
