/* The CHECK macro of the C tests: report a failed condition with a printf-style message, count it,
 * and keep going (main returns fails != 0). */
#ifndef VOX_TEST_CHECK_H
#define VOX_TEST_CHECK_H

#include <stdio.h>
#include <stdlib.h>

#include "kernels.h"

static int fails = 0;

/* CTest runs the tests whose results depend on the kernels once per kernel path, with VOX_CPU set
 * (CMakeLists.txt): a path this CPU lacks is refused by the library (never replaced by another), so
 * the test says so and returns 77, CTest's "skipped", instead of running something else. */
static inline int cpu_path_refused(void) {
    if (vx_cpu_check() == VOX_OK) return 0;
    printf("%s: not run: %s\n", getenv("VOX_CPU") ? "this kernel path" : "VOX_CPU", vox_last_error());
    return 1;
}

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
