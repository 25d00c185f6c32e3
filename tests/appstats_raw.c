// SPDX-License-Identifier: MIT
/*
 * A registry written by hand from docs/APPSTATS.md, without the C header,
 * as a program in another language would publish it; then broken on
 * purpose, for the appstats collector's refusal tests
 * (test_appstats_e2e.c). Prints "i tid" per publishing thread, then
 * "ready", and waits to be killed.
 *
 *   ok           2 fields (hits: counter/sum, depth: gauge/max), the main
 *                thread and 2 others, thread i: hits 100 (i + 1), depth i
 *   bad-magic    another magic
 *   bad-version  version 2
 *   absurd       max_slots 2^30
 *   outside      the field table at 2 GiB past the registry
 *   bad-field    a field named "Bad-Name"
 *   changing     a thread flips max_slots between 1024 and 1000 and slots
 *                change hands all the time
 *   foreign      also a slot of pid 1, not a thread of this process
 *   dup          thread 0's tid in two slots
 *   squat [NAME] field 1 is "requests" (or NAME) as bytes/gauge/max, the
 *                name appstats_worker declares count/counter/sum
 */
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

struct raw_field {
	char name[48];
	uint8_t unit, kind, rule, reserved[5];
};

struct raw_slot {
	_Atomic int32_t tid;
	_Atomic uint32_t seq;
	uint64_t values[32];
};

struct raw {
	uint64_t magic;
	uint32_t version, size, max_fields, max_slots;
	uint32_t field_size, slot_size, fields_off, slots_off;
	uint32_t n_fields, lock;
	uint64_t dropped, fork_gen;
	struct raw_field fields[32];
	struct raw_slot slots[1024];
};

_Static_assert(offsetof(struct raw, fields) == 64, "APPSTATS.md: fields");
_Static_assert(offsetof(struct raw, slots) == 1856, "APPSTATS.md: slots");
_Static_assert(sizeof(struct raw) == 272192, "APPSTATS.md: size");

__attribute__((visibility("default"), used)) struct raw ctprof_appstats_v1;
#define R ctprof_appstats_v1

#define THREADS 3

static pthread_barrier_t ready;
static int32_t tids[THREADS];

static void publish(int i, int slot)
{
	struct raw_slot *s = &R.slots[slot];

	s->values[0] = 100 * (uint64_t)(i + 1);
	s->values[1] = (uint64_t)i;
	atomic_store(&s->seq, 2);
	atomic_store(&s->tid, tids[i]);
}

static void *thread(void *arg)
{
	long i = (long)arg;

	tids[i] = (int32_t)syscall(SYS_gettid);
	publish((int)i, (int)i);
	pthread_barrier_wait(&ready);
	for (;;)
		pause();
	return NULL;
}

/* Header numbers and slots changing all the time. */
static void *flipper(void *arg)
{
	int32_t tid = (int32_t)syscall(SYS_gettid);
	struct raw_slot *s = &R.slots[10];

	(void)arg;
	for (;;) {
		R.max_slots = R.max_slots == 1024 ? 1000 : 1024;
		atomic_fetch_add(&s->seq, 1);
		atomic_store(&s->tid, -1);
		atomic_fetch_add(&s->seq, 1);
		atomic_store(&s->tid, tid);
		sched_yield(); /* busy, but not starving the capture */
	}
	return NULL;
}

static void field(int i, const char *name, uint8_t unit, uint8_t kind,
		  uint8_t rule)
{
	snprintf(R.fields[i].name, sizeof(R.fields[i].name), "%s", name);
	R.fields[i].unit = unit;
	R.fields[i].kind = kind;
	R.fields[i].rule = rule;
}

int main(int argc, char **argv)
{
	const char *m = argc > 1 ? argv[1] : "ok";
	pthread_t t;

	setvbuf(stdout, NULL, _IOLBF, 0);
	R.version = 1;
	R.size = sizeof(R);
	R.max_fields = 32;
	R.max_slots = 1024;
	R.field_size = sizeof(R.fields[0]);
	R.slot_size = sizeof(R.slots[0]);
	R.fields_off = offsetof(struct raw, fields);
	R.slots_off = offsetof(struct raw, slots);
	field(0, "hits", 1, 1, 1);  /* count, counter, sum */
	field(1, "depth", 1, 3, 2); /* count, gauge, max */
	R.n_fields = 2;
	if (!strcmp(m, "bad-version"))
		R.version = 2;
	else if (!strcmp(m, "absurd"))
		R.max_slots = 1u << 30;
	else if (!strcmp(m, "outside"))
		R.fields_off = 1u << 31;
	else if (!strcmp(m, "bad-field"))
		field(1, "Bad-Name", 1, 3, 2);
	else if (!strcmp(m, "squat"))
		field(1, argc > 2 ? argv[2] : "requests", 5, 3, 2);
	__atomic_store_n(&R.magic,
			 !strcmp(m, "bad-magic") ? 0x1122334455667788ull
						 : 0x3154535041505443ull,
			 __ATOMIC_RELEASE);
	tids[0] = (int32_t)syscall(SYS_gettid);
	publish(0, 0);
	pthread_barrier_init(&ready, NULL, THREADS);
	for (long i = 1; i < THREADS; i++)
		if (pthread_create(&t, NULL, thread, (void *)i))
			return 1;
	pthread_barrier_wait(&ready);
	if (!strcmp(m, "foreign")) {
		R.slots[20].values[0] = 777;
		atomic_store(&R.slots[20].seq, 2);
		atomic_store(&R.slots[20].tid, 1);
	}
	if (!strcmp(m, "dup")) {
		R.slots[21].values[0] = 999;
		atomic_store(&R.slots[21].seq, 2);
		atomic_store(&R.slots[21].tid, tids[0]);
	}
	if (!strcmp(m, "changing") && pthread_create(&t, NULL, flipper, NULL))
		return 1;
	for (int i = 0; i < THREADS; i++)
		printf("%d %d\n", i, (int)tids[i]);
	printf("ready\n");
	for (;;)
		pause();
}
