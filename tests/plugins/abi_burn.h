/* SPDX-License-Identifier: MIT */
/* The amounts of time abi_burn.c's plugins spend. */
#ifndef ABI_BURN_H
#define ABI_BURN_H

#define ABI_BURN_SOURCE	      "abi-burn"
#define ABI_BURN_SRC_CALL_NS  2000000ull  /* abi-burnsrc's thread callback */
#define ABI_BURN_FILL_NS      10000000ull /* its fill of "abi-burn" */
#define ABI_BURN_ASK_CALL_NS  5000000ull  /* abi-burnask's thread callback */
#define ABI_BURN_VSOURCE      "abi-burnv"
#define ABI_BURN_VFILL_NS     6000000ull /* abi-burnsrc's fill of "abi-burnv" */
#define ABI_BURN_BIND_CALL_NS 3000000ull /* abi-burnbind's thread callback */

#endif
