/* SPDX-License-Identifier: MIT */
/* The header every palloc .c file includes after config.h: basics and bans. */
#ifndef PALLOC_COMMON_H
#define PALLOC_COMMON_H

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <time.h> /* before the bans: it declares gmtime and localtime */

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#define PALLOC_UNUSED __attribute__((unused))
#define PALLOC_NORETURN __attribute__((noreturn))
#define PALLOC_PRINTF(f, a) __attribute__((format(printf, f, a)))
#define PALLOC_EXPORT __attribute__((visibility("default")))
#define likely(x) __builtin_expect(!!(x), 1)
#define unlikely(x) __builtin_expect(!!(x), 0)

/*
 * TESTABLE marks a file-local function that unit tests call: static in the
 * agent, visible inside libpalloc-core (built with PALLOC_CORE_BUILD).
 */
#ifdef PALLOC_CORE_BUILD
#define TESTABLE
#else
#define TESTABLE static
#endif

/*
 * The ban list (after git's banned.h): each of these has a bounded or
 * thread-safe replacement, so a use is a compile error.
 */
#define PALLOC_BANNED(func) sorry_##func##_is_banned_in_palloc
#undef sprintf
#define sprintf(...) PALLOC_BANNED(sprintf)
#undef vsprintf
#define vsprintf(...) PALLOC_BANNED(vsprintf)
#undef strcpy
#define strcpy(x, y) PALLOC_BANNED(strcpy)
#undef strcat
#define strcat(x, y) PALLOC_BANNED(strcat)
#undef strncpy
#define strncpy(x, y, n) PALLOC_BANNED(strncpy)
#undef strtok
#define strtok(x, y) PALLOC_BANNED(strtok)
#undef gmtime
#define gmtime(t) PALLOC_BANNED(gmtime)
#undef localtime
#define localtime(t) PALLOC_BANNED(localtime)
#undef atoi
#define atoi(s) PALLOC_BANNED(atoi)
#undef alloca
#define alloca(n) PALLOC_BANNED(alloca)

#endif /* PALLOC_COMMON_H */
