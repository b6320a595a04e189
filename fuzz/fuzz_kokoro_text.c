/* The Kokoro English text frontend (core/src/kokoro/text/): sentence chunking, normalization
 * (numbers, currency, dates, times, abbreviations, units), pronunciation overrides, lexicon lookup and
 * the letter-to-sound fallback, through vx_kfront_create_raw / vx_kfront_next_span /
 * vx_kfront_phonemize, the entry points the Kokoro family and tool_kfront use.
 *
 * The lexicon is fuzz/data/kokoro_lexicon.tsv (a few thousand real entries), or the whole
 * "frontend.lexicon" tensor of a Kokoro model when VOX_FUZZ_KOKORO_LEXICON names a file holding it
 * (and VOX_FUZZ_KOKORO_LEXICON_FINAL the phrase-final one); the vocabulary is Kokoro v1.0's.
 *
 * Input: a flag byte, then text; a NUL byte ends the text and starts pronunciation overrides (JSON).
 * Flags: bits 0-3: feed the text to the span splitter this many bytes at a time (0: all at once);
 * bit 7: the rest of the input is a lexicon blob instead (the frontend is built over it, and a fixed
 * sentence is spoken with it). Invariants: spans tile the text as documented, every call ends in OK
 * or INVALID_ARGUMENT with one line of error text, and phonemes are valid UTF-8. */
#include <stdbool.h>

#include "fuzz_common.h"

#include "json.h"
#include "kokoro/text/frontend.h"
#include "strbuf.h"
#include "unicode/unicode.h"
#include "vox.h"

static vx_kfront *front;
static vox_json_doc *config;
static const vox_json *vocab;

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

typedef struct { const char *key, *val; } entry;

static int by_key(const void *a, const void *b) { return strcmp(((const entry *)a)->key, ((const entry *)b)->key); }

/* The VXL1 blob of the "word<TAB>phonemes" lines of a .tsv ('#' lines are comments). */
static unsigned char *pack_tsv(char *text, size_t *nbytes) {
    size_t cap = 1024, n = 0, body = 0;
    entry *e = malloc(cap * sizeof *e);
    for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
        char *tab = strchr(line, '\t');
        if (line[0] == '#' || !tab) continue;
        *tab = 0;
        if (n == cap) e = realloc(e, (cap *= 2) * sizeof *e);
        e[n++] = (entry){line, tab + 1};
        body += strlen(line) + strlen(tab + 1) + 2;
    }
    qsort(e, n, sizeof *e, by_key);
    size_t total = 8 + 4 * n + body, pos = 8 + 4 * n;
    unsigned char *b = malloc(total);
    memcpy(b, "VXL1", 4);
    fz_wr32(b + 4, (uint32_t)n);
    for (size_t i = 0; i < n; i++) {
        fz_wr32(b + 8 + 4 * i, (uint32_t)pos);
        size_t kl = strlen(e[i].key) + 1, vl = strlen(e[i].val) + 1;
        memcpy(b + pos, e[i].key, kl);
        memcpy(b + pos + kl, e[i].val, vl);
        pos += kl + vl;
    }
    free(e);
    *nbytes = total;
    return b;
}

int LLVMFuzzerInitialize(int *argc, char ***argv) {
    size_t n;
    char *cfg = slurp(fz_source_path("bindings/vox/families/kokoro/data/v1_0_config.json"), &n);
    vox_json_error err;
    if (!cfg || vox_json_parse(cfg, n, &config, &err) != VOX_OK) {
        fprintf(stderr, "fuzz_kokoro_text: cannot read the Kokoro v1.0 config\n");
        abort();
    }
    vocab = vox_json_get(vox_json_root(config), "vocab");
    const char *lex_path = getenv("VOX_FUZZ_KOKORO_LEXICON"), *fin_path = getenv("VOX_FUZZ_KOKORO_LEXICON_FINAL");
    unsigned char *lex, *fin = NULL;
    size_t lex_n, fin_n = 0;
    if (lex_path && *lex_path) {
        lex = (unsigned char *)slurp(lex_path, &lex_n);
        if (fin_path && *fin_path) fin = (unsigned char *)slurp(fin_path, &fin_n);
    } else {
        char *tsv = slurp(fz_source_path("fuzz/data/kokoro_lexicon.tsv"), &n);
        if (!tsv) abort();
        lex = pack_tsv(tsv, &lex_n);  /* tsv stays allocated: nothing points into it after packing */
        free(tsv);
    }
    if (!lex || vx_kfront_create_raw(lex, lex_n, fin, fin_n, vocab, &front) != VOX_OK) {
        fprintf(stderr, "fuzz_kokoro_text: cannot build the frontend: %s\n", vox_last_error());
        abort();
    }
    free(cfg);  /* the vocab object stays in `config` (the frontend copied what it needs) */
    return 0;
}

static void speak(const vx_kfront *f, const char *span, size_t len, const char *overrides) {
    vx_buf out = {0};
    vox_status st = vx_kfront_phonemize(f, span, len, overrides, &out);
    FZ_ASSERT(st == VOX_OK || st == VOX_ERR_INVALID_ARGUMENT, "status %d", st);
    if (st != VOX_OK) fz_check_message(vox_last_error());
    else if (out.s) FZ_ASSERT(vx_utf8_valid_prefix(out.s, out.len) == out.len, "phonemes are not UTF-8");
    vx_buf_free(&out);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size < 1) return 0;
    unsigned flags = data[0];
    const char *in = (const char *)data + 1;
    size_t n = size - 1;
    if (flags & 0x80) {  /* a lexicon blob */
        vx_kfront *f = NULL;
        vox_status st = vx_kfront_create_raw(in, n, NULL, 0, vocab, &f);
        FZ_ASSERT((st == VOX_OK) == (f != NULL) && (st == VOX_OK || st == VOX_ERR_FORMAT), "create %d", st);
        if (st != VOX_OK) {
            fz_check_message(vox_last_error());
            return 0;
        }
        static const char sentence[] = "The cat's 2nd walk cost $3.50 at 10:30 pm, e.g. 25% of Zibbleton's.";
        speak(f, sentence, sizeof sentence - 1, NULL);
        vx_kfront_destroy(f);
        return 0;
    }
    const char *nul = memchr(in, 0, n);
    size_t len = nul ? (size_t)(nul - in) : n;
    char *overrides = NULL;
    if (nul) {
        size_t on = n - len - 1;
        overrides = malloc(on + 1);
        memcpy(overrides, nul + 1, on);
        overrides[on] = 0;
    }
    char *text = malloc(len ? len : 1);  /* exactly the text (no NUL): the frontend must not read past len */
    memcpy(text, in, len);

    /* the whole text at once, then span by span, fed `step` bytes at a time */
    speak(front, text, len, overrides);
    size_t step = flags & 15 ? flags & 15 : len, have = 0, start = 0;
    for (int guard = 0;; guard++) {
        FZ_ASSERT(guard < 4 * (int)len + 8, "the span splitter makes no progress");
        int final = have == len;
        size_t consumed = 0;
        size_t r = vx_kfront_next_span(text + start, have - start, final, &consumed);
        FZ_ASSERT(r <= consumed && consumed <= have - start, "span %zu, consumed %zu of %zu", r, consumed, have - start);
        if (r) {
            unsigned char last = (unsigned char)text[start + r - 1];
            FZ_ASSERT(last != ' ' && last != '\n' && last != '\t', "a span ends with whitespace");
            speak(front, text + start, r, overrides);
        }
        start += consumed;
        if (!r && !consumed) {
            if (final) break;
            have = have + step < len ? have + step : len;  /* more text */
        }
    }
    free(text);
    free(overrides);
    return 0;
}
