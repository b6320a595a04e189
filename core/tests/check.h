/* The CHECK macro of the C tests: report a failed condition with a printf-style message, count it,
 * and keep going (main returns fails != 0). */
#ifndef VOX_TEST_CHECK_H
#define VOX_TEST_CHECK_H

#include <stdio.h>

static int fails = 0;

#define CHECK(cond, ...)                                                                \
    do {                                                                                \
        if (!(cond)) {                                                                  \
            fprintf(stderr, "%s:%d: check failed: %s: ", __FILE__, __LINE__, #cond);    \
            fprintf(stderr, __VA_ARGS__);                                               \
            fputc('\n', stderr);                                                        \
            fails++;                                                                    \
        }                                                                               \
    } while (0)

#endif
