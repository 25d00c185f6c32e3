/* SPDX-License-Identifier: MIT */
/*
 * The libFuzzer entry point every harness of tests/fuzz/ defines. Built
 * with -fsanitize=fuzzer under -DCTP_FUZZ=ON (clang), and on every build
 * with replay.c, which feeds it the seed corpus and the regression inputs.
 */
#ifndef CTP_FUZZ_H
#define CTP_FUZZ_H

#include <stddef.h>
#include <stdint.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#endif
