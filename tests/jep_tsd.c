// SPDX-License-Identifier: MIT
/*
 * What jemalloc-probe looks for, and nothing else: a TSD TLS symbol and a
 * tsd_s with the two counters (test_jemalloc_files.c probes copies of it,
 * its DWARF split off or shared with a twin by dwz). The twin
 * (JEP_TSD_TWIN) has a tsd_s of another shape: dwz then keeps each in its
 * own file with the name "tsd_s" in the common alt file, and moves what
 * they do share (struct jep_tsd_common) there too.
 */
#ifdef JEP_TSD_TWIN
struct tsd_s {
	int other;
};
#else
struct tsd_s {
	unsigned char state;
	unsigned long long thread_allocated;
	unsigned long long thread_deallocated;
};
#endif

__thread struct tsd_s tsd_tls;

struct jep_tsd_common {
	long a, b;
} jep_tsd_common;

int jep_tsd_touch(void)
{
	return (int)sizeof(tsd_tls);
}
