/* Every C target in one executable (scripts/fuzz.sh --all-in-one, for carrying the targets to another
 * machine as one file): VOX_FUZZ_TARGET=<name> picks the target whose entry points it forwards to.
 * Each fuzz_<name>.c is compiled into it with its entry points renamed fz_<name>_one / _init. */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TARGETS(X) X(tmod) X(tvoice) X(json) X(qwen3_tokenizer) X(kokoro_text) X(utf8)
#define DECLARE(t) int fz_##t##_one(const uint8_t *, size_t); int fz_##t##_init(int *, char ***) __attribute__((weak));
TARGETS(DECLARE)

static int (*one)(const uint8_t *, size_t);

int LLVMFuzzerInitialize(int *argc, char ***argv) {
    const char *t = getenv("VOX_FUZZ_TARGET");
#define PICK(n)                                                  \
    if (t && !strcmp(t, #n)) {                                   \
        one = fz_##n##_one;                                      \
        return fz_##n##_init ? fz_##n##_init(argc, argv) : 0;    \
    }
    TARGETS(PICK)
    fprintf(stderr, "fuzz_all: set VOX_FUZZ_TARGET to one of:"
#define NAME(n) " " #n
                    TARGETS(NAME) "\n");
    exit(2);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) { return one(data, size); }
