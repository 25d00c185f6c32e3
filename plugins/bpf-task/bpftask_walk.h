/*
 * The open-coded pass's sizes, shared by its program (task_walk.h) and
 * its user side (bpftask.c).
 */
#ifndef CTP_BPFTASK_WALK_H
#define CTP_BPFTASK_WALK_H

/*
 * The most records one run writes: its RCU read section's bound (about
 * 0.45 us a task here, so ~0.9 ms at 2,048; the CPU does not schedule in
 * it under preempt=none) and its array's size (696 bytes a record: 1.4
 * MiB, mapped for the program's life). A process of more threads is
 * walked by the iterator's pid parameter instead (iter/task's cost).
 */
#define CTP_BPFTASK_WALK_K 2048u

/* The most processes a threads run walks: a process found by its tgid
 * costs a pid lookup and misses the cache more (here 2,048 records of
 * single-threaded processes took 1.4-1.5 ms a run, of 1,000-thread ones
 * 0.85), so a run of small processes ends sooner. */
#define CTP_BPFTASK_WALK_RUN_PROCS 512u

/* The most processes the list run notes (8 bytes each): its RCU section's
 * bound (75-150 ns a process here: 0.45-0.94 ms at 6,100, so about 0.6 to
 * 1.2 ms at 8,192). A host with more gets iter/task's whole pass. */
#define CTP_BPFTASK_WALK_PROCS 8192u

#endif /* CTP_BPFTASK_WALK_H */
