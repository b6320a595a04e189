/* .tmod reader (core/src/tmod.c) through the public ABI: a valid file built here byte by byte (with
 * this file's own bitwise CRC-32, independent of the library's), then every header and manifest
 * rule broken one at a time, every truncation, and random manifest corruption with the checksums
 * fixed up so the deeper checks run. Each rejection must be VOX_ERR_FORMAT with a message naming the
 * file and the problem; nothing may crash. Stands alone: needs no Python and no files in the tree. */
#define _POSIX_C_SOURCE 200809L

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tmod.h"
#include "vox.h"

#include "check.h"
static char dir[256];
static char path[320];

static uint32_t crc32_bitwise(const unsigned char *p, size_t n) {
    uint32_t c = 0xFFFFFFFFu;
    for (size_t i = 0; i < n; i++) {
        c ^= p[i];
        for (int k = 0; k < 8; k++) c = (c & 1u) ? 0xEDB88320u ^ (c >> 1) : c >> 1;
    }
    return ~c;
}

static void put32(unsigned char *p, uint32_t v) {
    for (int i = 0; i < 4; i++) p[i] = (unsigned char)(v >> (8 * i));
}
static void put64(unsigned char *p, uint64_t v) {
    for (int i = 0; i < 8; i++) p[i] = (unsigned char)(v >> (8 * i));
}

/* ------------------------------------------------------------------------- the valid file */
#define DATA_LEN (5 * 4096)
static unsigned char data[DATA_LEN];
static const char *const tok_bytes[3] = {"{\"a\":1}", "a b\n", "{}"};
static char tensors_json[2048];
static char manifest[8192];

/* The tensors: w f32 [2,3] at 0; q q8 [2,32] at 4096; the three tokenizer files (u8) after that. */
static void make_data_and_tensors(void) {
    memset(data, 0, sizeof data);
    float w[6] = {1.5f, -2.0f, 0.25f, 3.0f, -0.5f, 8.0f};
    memcpy(data, w, sizeof w); /* little-endian host assumed by this test (x86-64, aarch64) */
    for (int i = 0; i < 64; i++) data[4096 + i] = (unsigned char)(i * 7);
    float scales[2] = {0.01f, 0.02f};
    memcpy(data + 4096 + 64, scales, sizeof scales);
    size_t k = (size_t)snprintf(tensors_json, sizeof tensors_json,
                                "{\"name\":\"w\",\"dtype\":\"f32\",\"shape\":[2,3],\"offset\":0,\"nbytes\":24,\"crc32\":%u},"
                                "{\"name\":\"q\",\"dtype\":\"q8\",\"shape\":[2,32],\"offset\":4096,\"nbytes\":72,\"crc32\":%u}",
                                crc32_bitwise(data, 24), crc32_bitwise(data + 4096, 72));
    static const char *const names[3] = {"tok.v", "tok.m", "tok.c"};
    for (int i = 0; i < 3; i++) {
        size_t off = (size_t)(2 + i) * 4096, n = strlen(tok_bytes[i]);
        memcpy(data + off, tok_bytes[i], n);
        k += (size_t)snprintf(tensors_json + k, sizeof tensors_json - k,
                              ",{\"name\":\"%s\",\"dtype\":\"u8\",\"shape\":[%zu],\"offset\":%zu,\"nbytes\":%zu,\"crc32\":%u}",
                              names[i], n, off, n, crc32_bitwise(data + off, n));
    }
}

static void make_manifest(void) {
    snprintf(manifest, sizeof manifest,
             "{\"format\":\"vox.tmod\",\"format_version\":1,\"family\":\"qwen3_tts\",\"variant\":\"base\",\"size\":\"0b6\","
             "\"model_id\":\"0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef\","
             "\"source\":{\"files\":{}},\"precision\":{\"dtype\":\"f32\",\"quant\":\"none\",\"codec_dtype\":\"f32\"},"
             "\"config\":{\"talker_config\":{\"hidden_size\":32,\"rms_norm_eps\":1e-06}},\"speech_tokenizer_config\":{},"
             "\"generation\":{\"temperature\":0.9},"
             "\"tokenizer\":{\"type\":\"qwen2_bpe\",\"vocab\":\"tok.v\",\"merges\":\"tok.m\",\"config\":\"tok.c\"},"
             "\"speakers\":{\"aiden\":2861},\"languages\":{\"english\":2050,\"chinese\":2055},"
             "\"tensors\":[%s]}",
             tensors_json);
}

/* A file image: header (checksums right), manifest, zero padding, then `dlen` bytes of data. */
static unsigned char *image(const char *man, size_t mlen, const unsigned char *d, size_t dlen, size_t *out_len) {
    size_t data_off = (64 + mlen + 4095) / 4096 * 4096;
    size_t n = data_off + dlen;
    unsigned char *b = calloc(1, n);
    memcpy(b, "VOXM", 4);
    put32(b + 4, 1);
    put64(b + 8, 64);
    put64(b + 16, mlen);
    put64(b + 24, data_off);
    put64(b + 32, dlen);
    put64(b + 40, n);
    put32(b + 48, crc32_bitwise((const unsigned char *)man, mlen));
    put32(b + 52, crc32_bitwise(b, 52));
    memcpy(b + 64, man, mlen);
    memcpy(b + data_off, d, dlen);
    *out_len = n;
    return b;
}

static void fix_header_crc(unsigned char *b) { put32(b + 52, crc32_bitwise(b, 52)); }

static void write_file(const unsigned char *b, size_t n) {
    /* A new file each time: truncating and rewriting one in place makes ext4 flush it on close
     * (its replace-via-truncate heuristic), which turns thousands of cases into a minute of I/O. */
    unlink(path);
    FILE *f = fopen(path, "wb");
    if (!f || (n && fwrite(b, 1, n, f) != n)) {
        fprintf(stderr, "cannot write %s\n", path);
        exit(2);
    }
    fclose(f);
}

/* Opens `path`; every tensor of an accepted file must lie inside the file. Returns the status. */
static vox_status try_open(vox_model **out_model, size_t file_len) {
    vox_model *m = NULL;
    vox_status st = vox_model_open(path, &m);
    if (st == VOX_OK) {
        /* data pointers are inside the mapping; reading every byte of every tensor must be safe */
        size_t n = vox_model_tensor_count(m);
        for (size_t i = 0; i < n; i++) {
            vox_tensor_info t;
            CHECK(vox_model_tensor(m, i, &t) == VOX_OK, "tensor %zu", i);
            CHECK(t.nbytes <= file_len, "tensor %s larger than the file", t.name);
            volatile unsigned char sink = 0;
            for (uint64_t j = 0; j < t.nbytes; j++) sink ^= ((const unsigned char *)t.data)[j];
            (void)sink;
        }
        vox_model_verify(m); /* may fail (CRC), must not crash */
    } else {
        CHECK(m == NULL, "out not NULL after failure");
    }
    if (out_model) *out_model = m;
    else vox_model_close(m);
    return st;
}

static void expect_reject(const unsigned char *b, size_t n, const char *why, int line) {
    write_file(b, n);
    vox_status st = try_open(NULL, n);
    const char *msg = vox_last_error();
    if (st != VOX_ERR_FORMAT || !strstr(msg, why) || !strstr(msg, path)) {
        fprintf(stderr, "%s:%d: expected VOX_ERR_FORMAT with \"%s\", got %s: %s\n", __FILE__, line, why,
                vox_status_name(st), msg);
        fails++;
    }
}
#define REJECT(b, n, why) expect_reject(b, n, why, __LINE__)

/* The valid manifest with the first occurrence of `find` replaced by `repl`. */
static void reject_manifest_edit(const char *find, const char *repl, const char *why, int line) {
    static char m2[16384];
    const char *at = strstr(manifest, find);
    if (!at) {
        fprintf(stderr, "%s:%d: test bug: \"%s\" not in the manifest\n", __FILE__, line, find);
        fails++;
        return;
    }
    size_t pre = (size_t)(at - manifest);
    snprintf(m2, sizeof m2, "%.*s%s%s", (int)pre, manifest, repl, at + strlen(find));
    size_t n;
    unsigned char *b = image(m2, strlen(m2), data, DATA_LEN, &n);
    expect_reject(b, n, why, line);
    free(b);
}
#define REJECT_EDIT(find, repl, why) reject_manifest_edit(find, repl, why, __LINE__)

/* ------------------------------------------------------------------------------- tests */
static void test_valid(void) {
    size_t n;
    unsigned char *b = image(manifest, strlen(manifest), data, DATA_LEN, &n);
    write_file(b, n);
    vox_model *m = NULL;
    vox_status st = try_open(&m, n);
    CHECK(st == VOX_OK, "valid file rejected: %s", vox_last_error());
    if (st != VOX_OK) {
        free(b);
        return;
    }
    CHECK(strcmp(vox_model_manifest(m), manifest) == 0, "manifest text differs");
    CHECK(vox_model_tensor_count(m) == 5, "count %zu", vox_model_tensor_count(m));
    vox_tensor_info t;
    CHECK(vox_model_find_tensor(m, "w", &t) == VOX_OK, "find w");
    CHECK(t.dtype == VOX_DTYPE_F32 && t.ndim == 2 && t.shape[0] == 2 && t.shape[1] == 3 && t.shape[2] == 0 &&
              t.nbytes == 24 && ((const float *)t.data)[5] == 8.0f && ((uintptr_t)t.data & 4095u) == 0,
          "w info");
    CHECK(vox_model_find_tensor(m, "q", &t) == VOX_OK && t.dtype == VOX_DTYPE_Q8 && t.nbytes == 72, "q info");
    CHECK(vox_model_tensor(m, 0, &t) == VOX_OK && strcmp(t.name, "w") == 0, "manifest order");
    CHECK(vox_model_find_tensor(m, "tok.c", &t) == VOX_OK && t.dtype == VOX_DTYPE_U8 && t.nbytes == 2 &&
              memcmp(t.data, "{}", 2) == 0, "tok.c");
    CHECK(vox_model_verify(m) == VOX_OK, "verify: %s", vox_last_error());
    CHECK(vox_model_tensor(m, 5, &t) == VOX_ERR_INVALID_ARGUMENT && strstr(vox_last_error(), "out of range"), "index");
    CHECK(vox_model_find_tensor(m, "nope", &t) == VOX_ERR_NOT_FOUND && strstr(vox_last_error(), "\"nope\""), "missing");
    CHECK(vox_model_find_tensor(m, NULL, &t) == VOX_ERR_INVALID_ARGUMENT, "NULL name");
    CHECK(vox_model_tensor(m, 0, NULL) == VOX_ERR_INVALID_ARGUMENT, "NULL out");
    vox_model_close(m);

    /* A corrupt data byte passes open (checksums are on demand) and fails verify, naming the tensor. */
    b[4096 + 4096 + 3] ^= 0x40;
    write_file(b, n);
    CHECK(vox_model_open(path, &m) == VOX_OK, "open with corrupt data: %s", vox_last_error());
    CHECK(vox_model_verify(m) == VOX_ERR_FORMAT && strstr(vox_last_error(), "tensor \"q\" is corrupt") &&
              strstr(vox_last_error(), path), "verify: %s", vox_last_error());
    vox_model_close(m);
    free(b);

    /* A model without tensors at all is not valid qwen3 (its tokenizer is missing) but must parse. */
    CHECK(vox_model_open(NULL, &m) == VOX_ERR_INVALID_ARGUMENT, "NULL path");
    CHECK(vox_model_open(path, NULL) == VOX_ERR_INVALID_ARGUMENT, "NULL out");
    CHECK(vox_model_verify(NULL) == VOX_ERR_INVALID_ARGUMENT, "verify NULL");
    CHECK(vox_model_tensor_count(NULL) == 0 && strcmp(vox_model_manifest(NULL), "") == 0, "NULL accessors");
    vox_model_close(NULL);
}

/* Resident kB of the mapping holding p (/proc/self/smaps walks the page tables: exact, unlike the
 * cached counters of statm), or -1 without /proc. Reads into a static buffer: no allocation. */
static long mapping_rss_kb(const void *p) {
    static char buf[1 << 20];
    int fd = open("/proc/self/smaps", O_RDONLY);
    if (fd < 0) return -1;
    size_t used = 0;
    ssize_t n;
    while (used < sizeof buf - 1 && (n = read(fd, buf + used, sizeof buf - 1 - used)) > 0) used += (size_t)n;
    close(fd);
    buf[used] = 0;
    int inside = 0;
    for (char *line = buf; line && *line; line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL) {
        unsigned long lo, hi;
        long kb;
        if (sscanf(line, "%lx-%lx ", &lo, &hi) == 2 && strchr(line, '-') < strchr(line, ' '))
            inside = (uintptr_t)p >= lo && (uintptr_t)p < hi;
        else if (inside && sscanf(line, "Rss: %ld kB", &kb) == 1)
            return kb;
    }
    return -1;
}

/* vox_model_drop_pages: the pages of repacked weights leave the resident set, and reading them
 * again gives the file's bytes (the mapping is private and never written: nothing is lost). */
static void test_drop_pages(void) {
    size_t n;
    unsigned char *b = image(manifest, strlen(manifest), data, DATA_LEN, &n);
    write_file(b, n);
    free(b);
    vox_model *m = NULL;
    if (vox_model_open(path, &m) != VOX_OK) {
        CHECK(0, "open: %s", vox_last_error());
        return;
    }
    vox_tensor_info w;
    CHECK(vox_model_find_tensor(m, "w", &w) == VOX_OK, "find w");
    volatile unsigned sum = 0;
    for (size_t i = 0; i < DATA_LEN; i += 64) sum += ((const unsigned char *)w.data)[i]; /* page the data in */
    long before = mapping_rss_kb(w.data);
    vox_model_drop_pages(m, w.data, DATA_LEN);
    long after = mapping_rss_kb(w.data);
    if (before >= 0 && after >= 0)
        CHECK(after <= before - DATA_LEN / 1024, "the mapping's resident kB %ld -> %ld after dropping %d", before,
              after, DATA_LEN / 1024);
    CHECK(memcmp(w.data, data, DATA_LEN) == 0, "the data read back after the drop differs from the file");
    CHECK(vox_model_verify(m) == VOX_OK, "verify after the drop: %s", vox_last_error());
    /* a range outside the mapping (an owned copy) and a partial page are left alone */
    vox_model_drop_pages(m, data, DATA_LEN);
    vox_model_drop_pages(m, (const unsigned char *)w.data + 8, 100);
    CHECK(((const float *)w.data)[5] == 8.0f && data[4096] == 0, "partial / foreign ranges");
    vox_model_drop_pages(NULL, w.data, 4096);
    vox_model_close(m);
    (void)sum;
}

static void test_io_errors(void) {
    vox_model *m = (vox_model *)&m; /* must be reset to NULL */
    char missing[400];
    snprintf(missing, sizeof missing, "%s/does-not-exist.tmod", dir);
    CHECK(vox_model_open(missing, &m) == VOX_ERR_IO && m == NULL && strstr(vox_last_error(), "does-not-exist.tmod"),
          "missing file: %s", vox_last_error());
    CHECK(vox_model_open(dir, &m) == VOX_ERR_IO && strstr(vox_last_error(), "not a regular file"), "directory: %s",
          vox_last_error());
}

static void test_header(void) {
    size_t n;
    unsigned char *good = image(manifest, strlen(manifest), data, DATA_LEN, &n);
    unsigned char *b = malloc(n + 4096);
#define RESET() memcpy(b, good, n)
    REJECT(b, 0, "truncated: 0 bytes");
    RESET();
    REJECT(b, 63, "truncated: 63 bytes, shorter than the 64-byte");
    RESET();
    memcpy(b, "GGUF", 4);
    REJECT(b, n, "not a .tmod file (magic \"GGUF\"");
    RESET();
    put32(b + 4, 2);
    REJECT(b, n, "format version 2 was written by a newer vox");
    RESET();
    put32(b + 4, 0);
    REJECT(b, n, "format version 0 is no longer supported");
    RESET();
    b[20] ^= 1;
    REJECT(b, n, "corrupt header: CRC-32");
    RESET();
    b[60] = 1;
    REJECT(b, n, "reserved bytes 56..63 are not zero");
    RESET();
    put64(b + 8, 128);
    fix_header_crc(b);
    REJECT(b, n, "manifest offset 128, expected 64");
    RESET();
    put64(b + 16, 0);
    fix_header_crc(b);
    REJECT(b, n, "manifest length 0");
    RESET();
    put64(b + 16, (uint64_t)1 << 40);
    fix_header_crc(b);
    REJECT(b, n, "manifest length 1099511627776");
    RESET();
    put64(b + 24, 8192);
    fix_header_crc(b);
    REJECT(b, n, "data offset 8192, expected 4096");
    RESET();
    put64(b + 32, DATA_LEN - 1);
    fix_header_crc(b);
    REJECT(b, n, "data length 20479 is not a multiple of 4096");
    RESET();
    put64(b + 32, UINT64_MAX - 4095);
    put64(b + 40, 4096);
    fix_header_crc(b);
    REJECT(b, n, "corrupt header: file length 4096 is not data offset"); /* the sum would overflow */
    RESET();
    put64(b + 40, n + 1);
    fix_header_crc(b);
    REJECT(b, n, "file length");
    RESET();
    REJECT(b, n - 1, "truncated: the header says 24576 bytes, the file has 24575");
    RESET();
    memset(b + n, 0, 4096);
    REJECT(b, n + 10, "10 trailing bytes");
    RESET();
    b[64 + 5] ^= 0x20;
    REJECT(b, n, "corrupt manifest: CRC-32");
    RESET();
    b[64 + strlen(manifest) + 1] = 7;
    REJECT(b, n, "nonzero bytes between the manifest and the data");
#undef RESET
    free(b);
    free(good);
}

static void test_manifest_rules(void) {
    size_t n;
    unsigned char *b = image("[1,2]", 5, data, DATA_LEN, &n);
    REJECT(b, n, "manifest: an array, not an object");
    free(b);
    b = image("{\"a\":1,}", 8, data, DATA_LEN, &n);
    REJECT(b, n, "corrupt manifest: object key (a string) expected at byte 7 of the manifest");
    free(b);
    b = image("{\"a\":\"\xff\"}", 8, data, DATA_LEN, &n);
    REJECT(b, n, "corrupt manifest: invalid UTF-8");
    free(b);

    REJECT_EDIT("\"format\":\"vox.tmod\",", "", "missing key \"format\"");
    REJECT_EDIT("\"vox.tmod\"", "\"vox.tvoice\"", "\"format\" is \"vox.tvoice\", expected \"vox.tmod\"");
    REJECT_EDIT("\"format_version\":1", "\"format_version\":2", "format_version 2 does not match the header's version 1");
    REJECT_EDIT("\"format_version\":1", "\"format_version\":\"1\"", "\"format_version\" must be a number, not a string");
    REJECT_EDIT("\"format_version\":1", "\"format_version\":1.0", "format_version 1 does not match");
    REJECT_EDIT("\"qwen3_tts\"", "\"piper\"", "unknown model family \"piper\"");
    REJECT_EDIT("\"qwen3_tts\"", "\"kokoro\"", "unknown kokoro variant \"base\" (v1.0)");
    REJECT_EDIT("\"variant\":\"base\"", "\"variant\":7", "\"variant\" must be a string, not a number");
    REJECT_EDIT("\"variant\":\"base\"", "\"variant\":\"large\"", "unknown qwen3_tts variant \"large\"");
    REJECT_EDIT("\"0123456789abcdef0123", "\"0123456789ABCDEF0123", "\"model_id\" must be 64 lowercase hex digits");
    REJECT_EDIT("\"dtype\":\"f32\",\"quant\"", "\"quant\"", "precision: missing key \"dtype\"");
    REJECT_EDIT("\"config\":{\"talker", "\"config\":[{\"talker", "corrupt manifest");
    REJECT_EDIT("\"config\":{\"talker_config\":{\"hidden_size\":32,\"rms_norm_eps\":1e-06}}", "\"config\":null",
                "\"config\" must be an object, not a literal");
    REJECT_EDIT("\"tensors\":[", "\"tensors\":{\"x\":[", "corrupt manifest"); /* unbalanced */
    REJECT_EDIT("\"speech_tokenizer_config\":{},", "", "missing key \"speech_tokenizer_config\"");
    REJECT_EDIT("\"generation\":{\"temperature\":0.9},", "", "missing key \"generation\"");
    REJECT_EDIT("\"aiden\":2861", "\"aiden\":\"2861\"", "\"speakers\" entry \"aiden\" must be a non-negative integer id");
    REJECT_EDIT("\"english\":2050", "\"english\":-1", "\"languages\" entry \"english\"");
    REJECT_EDIT("\"type\":\"qwen2_bpe\",", "", "tokenizer: missing key \"type\"");
    REJECT_EDIT("\"vocab\":\"tok.v\"", "\"vocab\":\"w\"", "tokenizer vocab names \"w\", which is not a 1-D u8 tensor");
    REJECT_EDIT("\"merges\":\"tok.m\"", "\"merges\":\"tok.x\"", "tokenizer merges names \"tok.x\"");
    REJECT_EDIT("\"format\":\"vox.tmod\",", "\"format\":\"vox.tmod\",\"format\":\"vox.tmod\",", "duplicate key \"format\"");

    /* tensor entries */
    REJECT_EDIT("{\"name\":\"w\"", "7,{\"name\":\"w\"", "tensor #0 is a number, not an object");
    REJECT_EDIT("\"name\":\"w\"", "\"name\":\"\"", "tensor #0: \"name\" must be a non-empty string");
    REJECT_EDIT("\"name\":\"w\"", "\"name\":\"w\\u0000x\"", "tensor #0: \"name\" must be a non-empty string without NUL");
    REJECT_EDIT("\"name\":\"w\"", "\"nom\":\"w\"", "tensor #0: \"name\"");
    REJECT_EDIT("\"dtype\":\"f32\",\"shape\"", "\"dtype\":\"f64\",\"shape\"", "tensor \"w\": unknown dtype \"f64\"");
    REJECT_EDIT("\"dtype\":\"f32\",\"shape\"", "\"shape\"", "tensor \"w\": unknown dtype (missing)");
    REJECT_EDIT("\"shape\":[2,3]", "\"shape\":[]", "tensor \"w\": \"shape\" must be 1 to 4 integers");
    REJECT_EDIT("\"shape\":[2,3]", "\"shape\":[1,1,1,2,3]", "\"shape\" must be 1 to 4 integers");
    REJECT_EDIT("\"shape\":[2,3]", "\"shape\":[2,-3]", "\"shape\" must be 1 to 4 integers");
    REJECT_EDIT("\"shape\":[2,3]", "\"shape\":[2,3.0]", "\"shape\" must be 1 to 4 integers");
    REJECT_EDIT("\"shape\":[2,3]", "\"shape\":[2,9007199254740993]", "\"shape\" must be 1 to 4 integers");
    REJECT_EDIT("\"shape\":[2,3]", "\"shape\":[9007199254740992,9007199254740992]", "tensor \"w\": shape too large");
    REJECT_EDIT("\"shape\":[2,3]", "\"shape\":[2,4]", "tensor \"w\": nbytes 24, but its dtype and shape need 32");
    REJECT_EDIT("\"shape\":[2,3]", "\"shape\":[0,3]", "tensor \"w\": nbytes 24, but its dtype and shape need 0");
    REJECT_EDIT("\"offset\":0", "\"offset\":100", "tensor \"w\": offset 100 is not a multiple of 4096");
    REJECT_EDIT("\"offset\":0", "\"offset\":-4096", "\"offset\" must be an integer");
    REJECT_EDIT("\"offset\":0", "\"offset\":20480", "tensor \"w\": bytes [20480, 20504) lie outside the data section");
    REJECT_EDIT("\"offset\":0", "\"offset\":9007199254736896", "lie outside the data section");
    REJECT_EDIT("\"offset\":0", "\"offset\":4096", "tensors \"w\" and \"q\" overlap");
    REJECT_EDIT("\"nbytes\":24", "\"nbytes\":\"24\"", "tensor \"w\": \"nbytes\" must be an integer");
    REJECT_EDIT("\"crc32\":", "\"crc32\":4294967296,\"x\":", "tensor \"w\": \"crc32\" must be an integer in [0, 2^32)");
    REJECT_EDIT("\"shape\":[2,32]", "\"shape\":[4,16]", "tensor \"q\": q8 needs the last axis to be a multiple of 32, it is 16");
    REJECT_EDIT("\"name\":\"q\"", "\"name\":\"w\"", "duplicate tensor name \"w\"");
    REJECT_EDIT("\"name\":\"w\",\"dtype\":\"f32\"", "\"name\":\"line\\nbreak\",\"dtype\":\"f64\"", "tensor \"line\\x0abreak\": unknown dtype"); /* one-line messages */
}

static uint64_t rng = 0x2545F4914F6CDD1Dull;
static uint32_t rnd(void) {
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (uint32_t)(rng >> 11);
}

static void test_truncations(void) {
    size_t n;
    unsigned char *b = image(manifest, strlen(manifest), data, DATA_LEN, &n);
    /* Every length short of the full file: all of the header and manifest, then a stride through the data. */
    for (size_t len = 0; len < n; len += len < 4096 + 64 ? 1 : 61) {
        write_file(b, len);
        vox_status st = try_open(NULL, len);
        if (st != VOX_ERR_FORMAT || !strstr(vox_last_error(), "truncated")) {
            fprintf(stderr, "truncated to %zu: %s %s\n", len, vox_status_name(st), vox_last_error());
            fails++;
            break;
        }
    }
    free(b);
}

static void test_fuzz(void) {
    /* Random edits of the manifest text, with the manifest length, CRC and header CRC fixed up so
     * every mutation reaches the JSON parser and the manifest checks. */
    static const char alphabet[] = "{}[]\",:0123456789-.eE \\uqf8bin\x80\xff";
    size_t mlen0 = strlen(manifest);
    char *m2 = malloc(mlen0 + 64);
    int accepted = 0;
    for (int it = 0; it < 3000; it++) {
        memcpy(m2, manifest, mlen0);
        size_t mlen = mlen0;
        int edits = 1 + (int)(rnd() % 3);
        for (int e = 0; e < edits && mlen > 1; e++) {
            size_t at = rnd() % mlen;
            switch (rnd() % 4) {
            case 0: m2[at] = alphabet[rnd() % (sizeof alphabet - 1)]; break;
            case 1: m2[at] = (char)(rnd() & 0xFF); break;
            case 2: memmove(m2 + at, m2 + at + 1, mlen - at - 1); mlen--; break;
            default: { /* replace a digit run with a random number: offsets, shapes, sizes, CRCs */
                if (m2[at] < '0' || m2[at] > '9') break;
                size_t end = at;
                while (end < mlen && m2[end] >= '0' && m2[end] <= '9') end++;
                char num[24];
                int k = snprintf(num, sizeof num, "%u", rnd() % 3 ? rnd() % 40000 : rnd());
                if (mlen - (end - at) + (size_t)k > mlen0 + 60) break;
                memmove(m2 + at + k, m2 + end, mlen - end);
                memcpy(m2 + at, num, (size_t)k);
                mlen = mlen - (end - at) + (size_t)k;
            }
            }
        }
        size_t n;
        unsigned char *b = image(m2, mlen, data, DATA_LEN, &n);
        write_file(b, n);
        vox_status st = try_open(NULL, n);
        if (st == VOX_OK) accepted++;
        else if (st != VOX_ERR_FORMAT || !strstr(vox_last_error(), path)) {
            fprintf(stderr, "fuzz %d: %s %s\n", it, vox_status_name(st), vox_last_error());
            fails++;
        }
        free(b);
    }
    free(m2);
    printf("tmod: fuzz 3000 manifest mutations, %d still valid\n", accepted);
}

int main(void) {
    const char *tmp = getenv("TMPDIR");
    snprintf(dir, sizeof dir, "%s/vox_test_tmod_XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp(dir)) {
        perror("mkdtemp");
        return 2;
    }
    snprintf(path, sizeof path, "%s/m.tmod", dir);
    make_data_and_tensors();
    make_manifest();
    test_valid();
    test_drop_pages();
    test_io_errors();
    test_header();
    test_manifest_rules();
    test_truncations();
    test_fuzz();
    unlink(path);
    rmdir(dir);
    if (fails == 0) printf("tmod: all checks passed\n");
    return fails != 0;
}
