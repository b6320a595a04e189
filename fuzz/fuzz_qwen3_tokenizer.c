/* The Qwen2 byte-level BPE tokenizer of Qwen3-TTS (core/src/qwen3/tokenizer.c, bpe.c, pretok.c):
 * added tokens, the two pre-tokenizer regexes and the BPE merges, through q3_tokenizer_from_files /
 * q3_tokenize / q3_tokenizer_stable_prefix.
 *
 * The tokenizer is built once from the real Qwen2 files (vocab.json, merges.txt,
 * tokenizer_config.json) in the directory VOX_FUZZ_QWEN3_TOKENIZER names (a Qwen3-TTS checkpoint,
 * e.g. the tiny fixture's), or from fuzz/data/qwen3_tokenizer/ (the byte alphabet, the first merges
 * and the added tokens of the same files).
 *
 * Input: a flag byte, then text. Flags: bit 0: the "mistral_fix" pre-tokenizer instead of "qwen2";
 * bit 7: the rest is "vocab.json\0merges.txt\0tokenizer_config.json\0text" and a tokenizer is built
 * from those (the loaders of the tokenizer files a .tmod carries), then run on the text.
 * Invariants: tokenizing ends in OK or INVALID_ARGUMENT (invalid UTF-8); every id is a token of the
 * vocabulary; with the real files the tokens spell the text back exactly (byte-level BPE loses
 * nothing); the tokens of the stable prefix are a prefix of the tokens of the whole text. */
#include <stdbool.h>

#include "fuzz_common.h"

#include "json.h"
#include "qwen3/bpe.h"
#include "qwen3/tokenizer_impl.h"
#include "unicode/unicode.h"

static q3_tokenizer *tok[2];
static char **spelling;    /* id -> its bytes (BPE tokens mapped back from the byte alphabet) */
static size_t *spell_len;
static size_t n_ids;

static char *slurp(const char *path, size_t *n) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long sz = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *b = malloc((size_t)sz + 1);
    if (fread(b, 1, (size_t)sz, f) != (size_t)sz) abort();
    fclose(f);
    b[sz] = 0;
    *n = (size_t)sz;
    return b;
}

static void set_spelling(uint64_t id, const char *s, size_t n) {
    if (id >= n_ids) {  /* grown in large steps: freed blocks would fill ASan's quarantine */
        size_t m = (size_t)id + 1 > 2 * n_ids ? (size_t)id + 1 : 2 * n_ids;
        spelling = realloc(spelling, m * sizeof *spelling);
        spell_len = realloc(spell_len, m * sizeof *spell_len);
        memset(spelling + n_ids, 0, (m - n_ids) * sizeof *spelling);
        n_ids = m;
    }
    spelling[id] = malloc(n ? n : 1);
    memcpy(spelling[id], s, n);
    spell_len[id] = n;
}

/* id -> bytes, from vocab.json (keys in GPT-2's byte alphabet) and the added tokens' contents. */
static void build_spellings(const char *vocab, size_t vn, const char *config, size_t cn) {
    int byte_of[0x200];
    memset(byte_of, -1, sizeof byte_of);
    for (unsigned v = 0; v < 256; v++) byte_of[q3_byte_char(v)] = (int)v;
    vox_json_doc *d;
    vox_json_error err;
    if (vox_json_parse(vocab, vn, &d, &err) != VOX_OK) abort();
    for (const vox_json *e = vox_json_root(d)->child; e; e = e->next) {
        char buf[1024];
        size_t k = 0;
        for (size_t i = 0; i < e->key_len && k < sizeof buf;) {
            uint32_t cp;
            size_t l = vx_utf8_decode(e->key, e->key_len, i, &cp, NULL);
            if (!l || cp >= 0x200 || byte_of[cp] < 0) abort();
            buf[k++] = (char)byte_of[cp];
            i += l;
        }
        set_spelling((uint64_t)e->integer, buf, k);
    }
    vox_json_free(d);
    if (vox_json_parse(config, cn, &d, &err) != VOX_OK) abort();
    const vox_json *dec = vox_json_get(vox_json_root(d), "added_tokens_decoder");
    for (const vox_json *e = dec ? dec->child : NULL; e; e = e->next) {
        const vox_json *c = vox_json_get(e, "content");
        set_spelling(strtoull(e->key, NULL, 10), c->str, c->str_len);
    }
    vox_json_free(d);
}

int LLVMFuzzerInitialize(int *argc, char ***argv) {
    const char *dir = getenv("VOX_FUZZ_QWEN3_TOKENIZER");
    char path[4096 + 64];
    const char *names[3] = {"vocab.json", "merges.txt", "tokenizer_config.json"};
    char *f[3];
    size_t n[3];
    for (int i = 0; i < 3; i++) {
        if (dir && *dir) snprintf(path, sizeof path, "%s/%s", dir, names[i]);
        else snprintf(path, sizeof path, "%s/%s", fz_source_path("fuzz/data/qwen3_tokenizer"), names[i]);
        if (!(f[i] = slurp(path, &n[i]))) {
            fprintf(stderr, "fuzz_qwen3_tokenizer: cannot read %s\n", path);
            abort();
        }
    }
    for (int k = 0; k < 2; k++)
        if (q3_tokenizer_from_files(f[0], n[0], f[1], n[1], f[2], n[2], (q3_pretok_kind)k, "fuzz", &tok[k]) != VOX_OK) {
            fprintf(stderr, "fuzz_qwen3_tokenizer: %s\n", vox_last_error());
            abort();
        }
    build_spellings(f[0], n[0], f[2], n[2]);
    for (int i = 0; i < 3; i++) free(f[i]);
    return 0;
}

/* Tokenize text[0..len) (a copy without a NUL after it); *ids malloc'd. */
static vox_status run(const q3_tokenizer *t, const char *text, size_t len, int32_t **ids, size_t *n) {
    char *copy = malloc(len ? len : 1);
    memcpy(copy, text, len);
    vox_status st = q3_tokenize(t, copy, len, ids, n);
    free(copy);
    FZ_ASSERT(st == VOX_OK || st == VOX_ERR_INVALID_ARGUMENT, "status %d", st);
    FZ_ASSERT(st != VOX_OK || vx_utf8_valid_prefix(text, len) == len, "invalid UTF-8 accepted");
    FZ_ASSERT(st == VOX_OK || vx_utf8_valid_prefix(text, len) != len, "valid UTF-8 refused: %s", vox_last_error());
    if (st != VOX_OK) fz_check_message(vox_last_error());
    return st;
}

static void check(const q3_tokenizer *t, const char *text, size_t len, bool spell) {
    int32_t *ids = NULL;
    size_t n = 0;
    if (run(t, text, len, &ids, &n) != VOX_OK) return;
    if (spell) {  /* the tokens spell the text */
        size_t at = 0;
        for (size_t i = 0; i < n; i++) {
            FZ_ASSERT(ids[i] >= 0 && (size_t)ids[i] < n_ids && spelling[ids[i]], "id %d is no token", ids[i]);
            size_t l = spell_len[ids[i]];
            FZ_ASSERT(at + l <= len && !memcmp(text + at, spelling[ids[i]], l), "token %zu (id %d) does not spell the "
                      "text at byte %zu", i, ids[i], at);
            at += l;
        }
        FZ_ASSERT(at == len, "the tokens spell %zu of %zu bytes", at, len);
    }
    size_t k = q3_tokenizer_stable_prefix(t, text, len);
    FZ_ASSERT(k <= len && vx_utf8_valid_prefix(text, k) == k, "stable prefix %zu of %zu", k, len);
    int32_t *pre = NULL;
    size_t m = 0;
    FZ_ASSERT(run(t, text, k, &pre, &m) == VOX_OK, "the stable prefix does not tokenize");
    FZ_ASSERT(m <= n && !memcmp(pre, ids, m * sizeof *ids), "the tokens of the stable prefix (%zu bytes) are not a "
              "prefix of the text's", k);
    free(pre);
    free(ids);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size < 1) return 0;
    const char *in = (const char *)data + 1;
    size_t n = size - 1;
    if (!(data[0] & 0x80)) {
        check(tok[data[0] & 1], in, n, true);
        return 0;
    }
    const char *part[4];
    size_t len[4];
    for (int i = 0; i < 4; i++) {  /* vocab \0 merges \0 config \0 text */
        const char *z = i < 3 ? memchr(in, 0, n) : NULL;
        if (i < 3 && !z) return 0;
        part[i] = in;
        len[i] = z ? (size_t)(z - in) : n;
        if (z) n -= len[i] + 1, in = z + 1;
    }
    char *copy[3];  /* each file in a buffer of its exact size, so that reading past one is caught */
    for (int i = 0; i < 3; i++) {
        copy[i] = malloc(len[i] ? len[i] : 1);
        memcpy(copy[i], part[i], len[i]);
    }
    q3_tokenizer *t = NULL;
    vox_status st = q3_tokenizer_from_files(copy[0], len[0], copy[1], len[1], copy[2], len[2],
                                            (q3_pretok_kind)(data[0] & 1), "fuzz", &t);
    for (int i = 0; i < 3; i++) free(copy[i]);
    FZ_ASSERT(st == VOX_OK || st == VOX_ERR_FORMAT || st == VOX_ERR_UNSUPPORTED, "load status %d", st);
    if (st != VOX_OK) {
        fz_check_message(vox_last_error());
        return 0;
    }
    check(t, part[3], len[3], false);
    q3_tokenizer_free(t);
    return 0;
}
