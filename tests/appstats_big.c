// SPDX-License-Identifier: MIT
/*
 * Registries as large, or as many-named, as docs/APPSTATS.md allows, laid
 * out by hand at run time in one 16 MiB symbol, for the appstats
 * collector's budget tests (test_appstats_e2e.c). Prints "0 tid" (the main
 * thread, which publishes), then "ready", and waits to be killed.
 *
 *   big     a 16 MiB registry (32 fields, 63,543 slots), one field
 *           big_hits (count/counter/sum), the main thread's value 7;
 *           untouched pages but the first, so 20 of these cost no memory
 *   names   256 fields (4 slots) named g<gen>_<i>, all new every 20 ms:
 *           a process declaring far more than 1,024 names in its life
 */
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define SIZE (16u << 20)

__attribute__((visibility("default"), used,
	       aligned(64))) unsigned char ctprof_appstats_v1[SIZE];
#define R ctprof_appstats_v1

static uint32_t fields_off = 64, slots_off, slot_size, n_fields;

static void put32(size_t off, uint32_t v)
{
	memcpy(R + off, &v, sizeof(v));
}

static void field(uint32_t i, const char *name, uint8_t unit, uint8_t kind,
		  uint8_t rule)
{
	unsigned char *f = R + fields_off + 56 * i;

	memset(f, 0, 56);
	snprintf((char *)f, 48, "%s", name);
	f[48] = unit;
	f[49] = kind;
	f[50] = rule;
}

/* size 0: the tables' end. */
static void layout(uint32_t max_fields, uint32_t max_slots, uint32_t size)
{
	slot_size = 8 + 8 * max_fields;
	slots_off = fields_off + 56 * max_fields;
	put32(8, 1);
	put32(12, size ? size : slots_off + max_slots * slot_size);
	put32(16, max_fields);
	put32(20, max_slots);
	put32(24, 56);
	put32(28, slot_size);
	put32(32, fields_off);
	put32(36, slots_off);
}

static void declared(uint32_t n)
{
	__atomic_store_n((uint32_t *)(R + 40), n, __ATOMIC_RELEASE);
}

/* Slot 0: the main thread, field 0 = v. */
static void publish(int32_t tid, uint64_t v)
{
	memcpy(R + slots_off + 8, &v, sizeof(v));
	put32(slots_off + 4, 2);
	__atomic_store_n((int32_t *)(R + slots_off), tid, __ATOMIC_RELEASE);
}

static void rename_all(unsigned gen)
{
	char name[48];

	declared(0);
	for (uint32_t i = 0; i < n_fields; i++) {
		snprintf(name, sizeof(name), "g%u_%u", gen, i);
		field(i, name, 1, 1, 1);
	}
	declared(n_fields);
}

int main(int argc, char **argv)
{
	const char *m = argc > 1 ? argv[1] : "big";
	int32_t tid = (int32_t)syscall(SYS_gettid);
	bool names = !strcmp(m, "names");

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (names) {
		layout(256, 4, 0);
		n_fields = 256;
		rename_all(0);
	} else {
		layout(32, (SIZE - 64 - 56 * 32) / 264, SIZE);
		field(0, "big_hits", 1, 1, 1);
		declared(1);
	}
	publish(tid, 7);
	__atomic_store_n((uint64_t *)R, 0x3154535041505443ull,
			 __ATOMIC_RELEASE);
	printf("0 %d\nready\n", (int)tid);
	for (unsigned gen = 1;; gen++) {
		struct timespec ts = {.tv_nsec = 20 * 1000 * 1000};

		if (!names)
			pause();
		nanosleep(&ts, NULL);
		rename_all(gen);
	}
}
