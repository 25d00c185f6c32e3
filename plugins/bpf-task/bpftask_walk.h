/*
 * The open-coded pass's sizes, shared by its program (task_walk.h) and
 * its user side (bpftask.c).
 */
#ifndef CTP_BPFTASK_WALK_H
#define CTP_BPFTASK_WALK_H

/*
 * The most records one run writes: its RCU read section's bound (about
 * 0.45 us a task here, so ~0.9 ms at 2,048; the CPU does not schedule in
 * it under preempt=none) and its array's size (664 bytes a record: 1.3
 * MiB, mapped for the program's life). A process of more threads is
 * walked by the iterator's pid parameter instead (iter/task's cost).
 */
#define CTP_BPFTASK_WALK_K 2048u

/* The most processes the list run notes (8 bytes each); a host with more
 * gets iter/task's whole pass. */
#define CTP_BPFTASK_WALK_PROCS 32768u

#endif /* CTP_BPFTASK_WALK_H */
