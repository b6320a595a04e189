/* Shared by the libFuzzer targets of fuzz/ (see fuzz/README.md).
 *
 * The readers under test take a path, as vox's users give them: the input bytes are written to an
 * in-memory file (memfd) that is opened through /proc/self/fd, so an execution touches no disk and
 * the reader sees a regular file it can stat, read and map like any other. */
#ifndef VOX_FUZZ_COMMON_H
#define VOX_FUZZ_COMMON_H

#ifndef _GNU_SOURCE
#  define _GNU_SOURCE
#endif
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

/* The path of a file holding data[0..size) (the same file every call: the previous content is
 * replaced, so a caller must close what it opened from the path before the next call). */
static inline const char *fz_file(const uint8_t *data, size_t size) {
    static int fd = -1;
    static char path[64];
    if (fd < 0) {
        fd = memfd_create("vox-fuzz", MFD_CLOEXEC);
        if (fd < 0) {
            perror("memfd_create");
            abort();
        }
        snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
    }
    if (ftruncate(fd, 0) != 0) abort();
    size_t done = 0;
    while (done < size) {
        ssize_t w = pwrite(fd, data + done, size - done, (off_t)done);
        if (w <= 0) abort();
        done += (size_t)w;
    }
    return path;
}

/* A crash with a message: what libFuzzer reports as a finding when an invariant of the reader fails. */
#define FZ_ASSERT(cond, ...)                                                      \
    do {                                                                          \
        if (!(cond)) {                                                            \
            fprintf(stderr, "%s:%d: invariant failed: %s: ", __FILE__, __LINE__, #cond); \
            fprintf(stderr, __VA_ARGS__);                                         \
            fputc('\n', stderr);                                                  \
            abort();                                                              \
        }                                                                         \
    } while (0)

/* A vox error message must be one non-empty line of printable text (what a CLI prints). */
static inline void fz_check_message(const char *msg) {
    FZ_ASSERT(msg && *msg, "empty error message");
    for (const unsigned char *p = (const unsigned char *)msg; *p; p++)
        FZ_ASSERT(*p >= 0x20 && *p != 0x7F, "control byte 0x%02x in error message: %s", *p, msg);
}

/* The path of a file of the source tree: $VOX_FUZZ_SOURCE_DIR/rel, else the tree the target was built
 * from (VOX_SOURCE_DIR). */
static inline const char *fz_source_path(const char *rel) {
    static char path[4096];
    const char *root = getenv("VOX_FUZZ_SOURCE_DIR");
    snprintf(path, sizeof path, "%s/%s", root && *root ? root : VOX_SOURCE_DIR, rel);
    return path;
}

/* The little-endian u32/u64 helpers of the file formats. */
static inline uint32_t fz_rd32(const uint8_t *p) {
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}
static inline uint64_t fz_rd64(const uint8_t *p) { return (uint64_t)fz_rd32(p) | (uint64_t)fz_rd32(p + 4) << 32; }
static inline void fz_wr32(uint8_t *p, uint32_t v) {
    for (int i = 0; i < 4; i++) p[i] = (uint8_t)(v >> (8 * i));
}

#endif
