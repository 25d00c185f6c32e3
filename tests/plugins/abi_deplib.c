/* SPDX-License-Identifier: MIT */
/* The library abi-dep needs (tests/plugins/abi_dep.c). */
__attribute__((visibility("default"))) int ctp_abi_dep_answer(void)
{
	return 42;
}
