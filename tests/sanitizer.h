/* SPDX-License-Identifier: MIT */
/* Whether this test is built with AddressSanitizer: gcc says so with
 * __SANITIZE_ADDRESS__, clang with __has_feature(address_sanitizer). */
#ifndef CTP_TEST_SANITIZER_H
#define CTP_TEST_SANITIZER_H

#if defined(__SANITIZE_ADDRESS__)
#define CTP_TEST_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define CTP_TEST_ASAN 1
#endif
#endif
#ifndef CTP_TEST_ASAN
#define CTP_TEST_ASAN 0
#endif

#endif
