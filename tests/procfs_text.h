/* SPDX-License-Identifier: MIT */
/*
 * Literal kernel text for the procfs-stat tests, copied from the build
 * machine (Linux 6.18, 2 CPUs): `cat /proc/self/stat`, /proc/1/stat, thread
 * 59 of pid 1, and `cat /proc/self/stat` run under chrt/nice; then
 * process-level /proc/<tgid>/stat lines that carry work of exited tasks.
 */
#ifndef CTP_TEST_PROCFS_TEXT_H
#define CTP_TEST_PROCFS_TEXT_H

/* cat /proc/self/stat */
static const char STAT_SELF[] =
	"4424 (cat) R 4422 4422 2610 0 -1 4194304 116 0 0 0 0 0 0 0 20 0 1 0 "
	"48017 3133440 389 18446744073709551615 93982943240192 93982943260073 "
	"140722684855536 0 0 0 0 0 0 0 0 0 17 0 0 0 0 0 0 93982943276080 "
	"93982943277696 93983226208256 140722684856970 140722684856990 "
	"140722684856990 140722684858347 0\n";

/* /proc/1/stat */
static const char STAT_PID1[] =
	"1 (process_api) S 0 0 0 0 -1 4194560 41298 372013 0 237 41 153 1291 "
	"306 20 0 13 0 12 43110400 3147 18446744073709551615 1 1 0 0 0 0 0 "
	"4096 1256 0 0 0 17 0 0 0 0 0 0 0 0 0 0 0 0 0 0\n";

/* /proc/1/task/59/stat: a thread that last ran on CPU 1 */
static const char STAT_T59[] =
	"59 (vsock-console) S 0 0 0 0 -1 4194624 266 372013 0 237 0 2 1291 306 "
	"20 0 13 0 29 43110400 3147 18446744073709551615 1 1 0 0 0 0 0 4096 "
	"1256 0 0 0 -1 1 0 0 0 0 0 0 0 0 0 0 0 0 0\n";

/* chrt -f 50: SCHED_FIFO, priority -51, rt_priority 50 */
static const char STAT_FIFO[] =
	"4491 (cat) R 4489 4489 2610 0 -1 4194560 180 0 1 0 0 0 0 0 -51 0 1 0 "
	"48490 3133440 379 18446744073709551615 94486601687040 94486601706921 "
	"140732139391968 0 0 0 0 0 0 0 0 0 17 1 50 1 0 0 0 94486601722928 "
	"94486601724544 94487371935744 140732139399817 140732139399837 "
	"140732139399837 140732139401195 0\n";

/* nice -n -5: priority 15, nice -5 */
static const char STAT_NICE[] =
	"4492 (cat) R 4489 4489 2610 0 -1 4194560 178 0 1 0 0 0 0 0 15 -5 1 0 "
	"48490 3133440 382 18446744073709551615 94577656549376 94577656569257 "
	"140727128126272 0 0 0 0 0 0 0 0 0 17 1 0 0 0 0 0 94577656585264 "
	"94577656586880 94578664337408 140727128132233 140727128132253 "
	"140727128132253 140727128133611 0\n";

/* chrt -i 0: SCHED_IDLE */
static const char STAT_IDLE[] =
	"4493 (cat) R 4489 4489 2610 0 -1 4194304 180 0 0 0 0 0 0 0 20 0 1 0 "
	"48491 3133440 420 18446744073709551615 94433774755840 94433774775721 "
	"140726472084016 0 0 0 0 0 0 0 0 0 17 0 0 5 0 0 0 94433774791728 "
	"94433774793344 94434767495168 140726472092297 140726472092317 "
	"140726472092317 140726472093675 0\n";

/* chrt -b 0: SCHED_BATCH */
static const char STAT_BATCH[] =
	"4494 (cat) R 4489 4489 2610 0 -1 4194304 179 0 0 0 0 0 0 0 20 0 1 0 "
	"48491 3133440 413 18446744073709551615 94167845130240 94167845150121 "
	"140720779941024 0 0 0 0 0 0 0 0 0 17 0 0 3 0 0 0 94167845166128 "
	"94167845167744 94168093659136 140720779946633 140720779946653 "
	"140720779946653 140720779948011 0\n";

/* chrt -d: SCHED_DEADLINE, priority -101 */
static const char STAT_DEADLINE[] =
	"4495 (cat) R 4489 4489 2610 0 -1 4194560 178 0 0 0 0 0 0 0 -101 0 1 0 "
	"48491 3133440 379 18446744073709551615 94230666948608 94230666968489 "
	"140737353360288 0 0 0 0 0 0 0 0 0 17 0 0 6 0 0 0 94230666984496 "
	"94230666986112 94230996770816 140737353362057 140737353362077 "
	"140737353362077 140737353363435 0\n";

/*
 * /proc/<tgid>/stat of a bash copied to a file named "sh (x) y)", read by
 * the shell itself (`read l < /proc/$$/stat`) after it ran and waited for
 * four python3 children that each burned ~0.5 s: the shell's own time is 0
 * ticks, its children's (16) cutime 190 and (17) cstime 18, (11) cminflt
 * 38568.
 */
static const char STAT_TGID_REAPED[] =
	"32680 (sh (x) y)) R 32674 32674 15618 0 -1 4194304 251 38568 0 0 0 0 "
	"190 18 20 0 1 0 1228137 4464640 757 18446744073709551615 "
	"94883941908480 94883942697885 140723574886688 0 0 0 0 4 65536 0 0 0 "
	"17 1 0 0 0 0 0 94883942931184 94883942979428 94884979073024 "
	"140723574888838 140723574889113 140723574889113 140723574890476 0\n";

/*
 * A python3 process whose first thread burned CPU and was joined (exited),
 * then a second thread waits: /proc/808/stat counts (14) utime 20 of the
 * whole process, while its live threads 808 and 874 say 5 and 0. Every
 * thread's line repeats the process's children fields (3 3, 6539).
 */
static const char STAT_TGID_DEAD_THREAD[] =
	"808 (python3) R 805 805 15618 0 -1 4194304 2864 6539 0 0 20 1 3 3 20 "
	"0 "
	"2 0 1228868 167989248 3431 18446744073709551615 94445141848064 "
	"94445141848405 140728035132160 0 0 0 0 16781312 2 0 0 0 17 0 0 0 0 0 "
	"0 "
	"94445141859760 94445141860376 94446039330816 140728035133069 "
	"140728035133643 140728035133643 140728035135439 0\n";
static const char STAT_TID_808[] =
	"808 (python3) R 805 805 15618 0 -1 4194304 2858 6539 0 0 5 1 3 3 20 0 "
	"2 0 1228868 167989248 3431 18446744073709551615 94445141848064 "
	"94445141848405 140728035132160 0 0 0 0 16781312 2 0 0 0 17 0 0 0 0 0 "
	"0 "
	"94445141859760 94445141860376 94446039330816 140728035133069 "
	"140728035133643 140728035133643 140728035135439 0\n";
static const char STAT_TID_874[] =
	"874 (python3) S 805 805 15618 0 -1 4194368 3 6539 0 0 0 0 3 3 20 0 2 "
	"0 "
	"1228908 167989248 3431 18446744073709551615 94445141848064 "
	"94445141848405 140728035132160 0 0 0 0 16781312 2 1 0 0 -1 0 0 0 0 0 "
	"0 "
	"94445141859760 94445141860376 94446039330816 140728035133069 "
	"140728035133643 140728035133643 140728035135439 0\n";

/* /proc/1/task/59/status */
static const char STATUS_T59[] =
	"Name:\tvsock-console\n"
	"Umask:\t0022\n"
	"State:\tS (sleeping)\n"
	"Tgid:\t1\n"
	"Ngid:\t0\n"
	"Pid:\t59\n"
	"PPid:\t0\n"
	"TracerPid:\t0\n"
	"Uid:\t0\t0\t0\t0\n"
	"Gid:\t0\t0\t0\t0\n"
	"FDSize:\t512\n"
	"Groups:\t \n"
	"NStgid:\t1\n"
	"NSpid:\t59\n"
	"NSpgid:\t0\n"
	"NSsid:\t0\n"
	"Kthread:\t0\n"
	"VmPeak:\t   49960 kB\n"
	"VmSize:\t   42100 kB\n"
	"VmLck:\t   42068 kB\n"
	"VmPin:\t       0 kB\n"
	"VmHWM:\t   17512 kB\n"
	"VmRSS:\t   12676 kB\n"
	"RssAnon:\t    6348 kB\n"
	"RssFile:\t       8 kB\n"
	"RssShmem:\t    6320 kB\n"
	"VmData:\t   34664 kB\n"
	"VmStk:\t     132 kB\n"
	"VmExe:\t    5260 kB\n"
	"VmLib:\t       8 kB\n"
	"VmPTE:\t     120 kB\n"
	"VmSwap:\t       0 kB\n"
	"HugetlbPages:\t       0 kB\n"
	"CoreDumping:\t0\n"
	"THP_enabled:\t1\n"
	"untag_mask:\t0xffffffffffffffff\n"
	"Threads:\t13\n"
	"SigQ:\t0/96365\n"
	"SigPnd:\t0000000000000000\n"
	"ShdPnd:\t0000000000000000\n"
	"SigBlk:\t0000000000000000\n"
	"SigIgn:\t0000000000001000\n"
	"SigCgt:\t00000000000004e8\n"
	"CapInh:\t0000000000000000\n"
	"CapPrm:\t000001ffffffffff\n"
	"CapEff:\t000001ffffffffff\n"
	"CapBnd:\t000001ffffffffff\n"
	"CapAmb:\t0000000000000000\n"
	"NoNewPrivs:\t0\n"
	"Seccomp:\t0\n"
	"Seccomp_filters:\t0\n"
	"Speculation_Store_Bypass:\tthread vulnerable\n"
	"SpeculationIndirectBranch:\tconditional enabled\n"
	"Cpus_allowed:\t3\n"
	"Cpus_allowed_list:\t0-1\n"
	"Mems_allowed:\t00000000,00000000,00000000,00000000,00000000,00000000,"
	"00000000,00000000,00000000,00000000,00000000,00000000,00000000,"
	"00000000,00000000,00000000,00000000,00000000,00000000,00000000,"
	"00000000,00000000,00000000,00000000,00000000,00000000,00000000,"
	"00000000,00000000,00000000,00000000,00000001\n"
	"Mems_allowed_list:\t0\n"
	"voluntary_ctxt_switches:\t1341\n"
	"nonvoluntary_ctxt_switches:\t14\n";

#endif
