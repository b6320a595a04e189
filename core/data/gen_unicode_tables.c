/* Build-time generator: core/data/unicode_classes.txt -> the C tables behind vx_uc_class()
 * (core/src/unicode/unicode.h). CMake builds this program for the host and runs it; the library
 * compiles its output. Usage: gen_unicode_tables unicode_classes.txt out.c
 *
 * The input is validated strictly (known classes, ascending non-overlapping ranges within
 * U+0000..U+10FFFF, '@unicode' present, '@count' per class equal to the ranges' total), so a bad
 * edit fails the build instead of producing wrong tables.
 *
 * Output: a two-stage table. The code points are cut into blocks of 2^shift; stage1 maps a block
 * number to one of the distinct blocks, stage2 holds the distinct blocks' classes (one byte per
 * code point). The shift giving the smallest tables is chosen (7 for Unicode 16: about 38 KB). */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NCP 0x110000u

static const char *const CLASS_NAMES[] = {"other", "Lu", "Ll", "Lt", "Lm", "Lo", "M", "N", "WS"};
#define NCLASS (sizeof CLASS_NAMES / sizeof CLASS_NAMES[0])

static const char *input_path;

static void fail(unsigned line, const char *msg, const char *arg) {
    fprintf(stderr, "%s:%u: %s%s%s\n", input_path, line, msg, arg ? ": " : "", arg ? arg : "");
    exit(1);
}

static int class_of(const char *name) {
    for (unsigned k = 1; k < NCLASS; k++)
        if (!strcmp(name, CLASS_NAMES[k])) return (int)k;
    return -1;
}

static uint32_t parse_cp(const char *s, const char **end, unsigned line) {
    char *e;
    errno = 0;
    unsigned long v = strtoul(s, &e, 16);
    if (e == s || errno || v >= NCP || e - s < 4 || e - s > 6) fail(line, "bad code point", s);
    *end = e;
    return (uint32_t)v;
}

int main(int argc, char **argv) {
    if (argc != 3) {
        fprintf(stderr, "usage: %s unicode_classes.txt out.c\n", argv[0]);
        return 2;
    }
    input_path = argv[1];
    FILE *in = fopen(argv[1], "r");
    if (!in) {
        perror(argv[1]);
        return 1;
    }
    uint8_t *cls = calloc(NCP, 1);
    if (!cls) return 1;
    char version[32] = "";
    long want[NCLASS], got[NCLASS];
    for (unsigned k = 0; k < NCLASS; k++) want[k] = -1, got[k] = 0;
    char buf[256];
    unsigned line = 0;
    long next = 0; /* the first code point the next range may start at */
    while (fgets(buf, sizeof buf, in)) {
        line++;
        size_t n = strlen(buf);
        if (n && buf[n - 1] != '\n' && !feof(in)) fail(line, "line too long", NULL);
        while (n && (buf[n - 1] == '\n' || buf[n - 1] == '\r')) buf[--n] = '\0';
        if (!n || buf[0] == '#') continue;
        if (!strncmp(buf, "@unicode ", 9)) {
            if (version[0] || sscanf(buf + 9, "%31s", version) != 1) fail(line, "bad @unicode", buf);
            for (const char *c = version; *c; c++)
                if (!(*c == '.' || (*c >= '0' && *c <= '9'))) fail(line, "bad @unicode version", version);
            continue;
        }
        if (!strncmp(buf, "@count ", 7)) {
            char name[16];
            long count;
            int k;
            if (sscanf(buf + 7, "%15s %ld", name, &count) != 2 || (k = class_of(name)) < 0 || count < 0 || want[k] >= 0)
                fail(line, "bad @count", buf);
            want[k] = count;
            continue;
        }
        const char *p = buf;
        uint32_t a = parse_cp(p, &p, line), b = a;
        if (p[0] == '.' && p[1] == '.') b = parse_cp(p + 2, &p, line);
        if (*p != ' ') fail(line, "expected 'FIRST[..LAST] CLASS'", buf);
        int k = class_of(p + 1);
        if (k < 0) fail(line, "unknown class", p + 1);
        if (b < a || (long)a < next) fail(line, "ranges must ascend without overlapping", buf);
        memset(cls + a, k, (size_t)b - a + 1);
        got[k] += (long)(b - a + 1);
        next = (long)b + 1;
    }
    fclose(in);
    if (!version[0]) fail(line, "no @unicode line", NULL);
    for (unsigned k = 1; k < NCLASS; k++) {
        if (want[k] < 0) fail(line, "no @count for class", CLASS_NAMES[k]);
        if (want[k] != got[k]) {
            char msg[96];
            snprintf(msg, sizeof msg, "%s has %ld code points, @count says %ld", CLASS_NAMES[k], got[k], want[k]);
            fail(line, msg, NULL);
        }
    }

    /* Pick the block size giving the smallest tables. */
    unsigned best_shift = 0;
    size_t best_size = (size_t)-1;
    uint32_t *index = malloc((NCP >> 4) * sizeof *index);
    if (!index) return 1;
    for (unsigned shift = 4; shift <= 10; shift++) {
        uint32_t bs = 1u << shift, nblocks = NCP >> shift, distinct = 0;
        for (uint32_t i = 0; i < nblocks; i++) {
            uint32_t j = 0;
            while (j < distinct && memcmp(cls + (size_t)index[j] * bs, cls + (size_t)i * bs, bs)) j++;
            if (j == distinct) index[distinct++] = i;
        }
        size_t size = (size_t)nblocks * (distinct <= 256 ? 1 : 2) + (size_t)distinct * bs;
        if (size < best_size) best_size = size, best_shift = shift;
    }

    uint32_t bs = 1u << best_shift, nblocks = NCP >> best_shift, distinct = 0;
    uint32_t *stage1 = malloc(nblocks * sizeof *stage1);
    if (!stage1) return 1;
    for (uint32_t i = 0; i < nblocks; i++) {
        uint32_t j = 0;
        while (j < distinct && memcmp(cls + (size_t)index[j] * bs, cls + (size_t)i * bs, bs)) j++;
        if (j == distinct) index[distinct++] = i;
        stage1[i] = j;
    }

    FILE *out = fopen(argv[2], "w");
    if (!out) {
        perror(argv[2]);
        return 1;
    }
    fprintf(out, "/* Generated by core/data/gen_unicode_tables.c from core/data/unicode_classes.txt; do not edit.\n"
                 " * Unicode %s character classes (core/src/unicode/unicode.h), two-stage table: blocks of %u code\n"
                 " * points, %u distinct blocks, %zu bytes. */\n"
                 "#include \"unicode/unicode.h\"\n\n"
                 "const char vx_unicode_version[] = \"%s\";\n\n",
            version, bs, distinct, best_size, version);
    fprintf(out, "static const %s stage1[%u] = {", distinct <= 256 ? "uint8_t" : "uint16_t", nblocks);
    for (uint32_t i = 0; i < nblocks; i++) fprintf(out, "%s%u,", i % 24 ? "" : "\n", stage1[i]);
    fprintf(out, "\n};\n\nstatic const uint8_t stage2[%u][%u] = {\n", distinct, bs);
    for (uint32_t j = 0; j < distinct; j++) {
        fprintf(out, "{");
        for (uint32_t c = 0; c < bs; c++) fprintf(out, "%s%u,", c % 64 || !c ? "" : "\n ", cls[(size_t)index[j] * bs + c]);
        fprintf(out, "},\n");
    }
    fprintf(out, "};\n\nint vx_uc_class(uint32_t cp) {\n"
                 "    if (cp >= 0x%Xu) return VX_UC_OTHER;\n"
                 "    return stage2[stage1[cp >> %u]][cp & 0x%Xu];\n}\n",
            NCP, best_shift, bs - 1);
    if (fclose(out) != 0) {
        perror(argv[2]);
        return 1;
    }
    free(stage1);
    free(index);
    free(cls);
    return 0;
}
