/* The tokenizer (core/src/qwen3/tokenizer.c, bpe.c) on a small synthetic vocabulary, standalone:
 * merges.txt reading (header, CRLF, blank lines, whitespace, a repeated pair), the merge order,
 * added tokens (leftmost-longest), token ids, invalid input and files, the stable prefix for
 * streaming (a randomized property), concurrent use of the BPE cache. The real vocabulary is
 * compared with the reference tokenizer by conformance/test_native_tokenizer.py. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "qwen3/bpe.h"
#include "qwen3/tokenizer_impl.h"

/* ---------------------------------------------------------------------------------------- files */

static char vocab_json[16384];

/* The byte-level spelling of raw bytes (UTF-8 of GPT-2's byte-to-unicode characters). */
static size_t spell(const char *raw, char *out) {
    size_t n = 0;
    for (const unsigned char *p = (const unsigned char *)raw; *p; p++) {
        uint32_t c = q3_byte_char(*p);
        if (c < 0x80) out[n++] = (char)c;
        else out[n++] = (char)(0xC0 | (c >> 6)), out[n++] = (char)(0x80 | (c & 0x3F));
    }
    out[n] = '\0';
    return n;
}

/* The tokens after the 256 bytes (ids 256...), as raw text. */
static const char *const MERGED[] = {"he", "ll", "hell", "hello", " h", "aa", "ab", " w", "wo", "rl", "rld", "world", "sa"};
enum { HE = 256, LL, HELL, HELLO, SP_H, AA, AB, SP_W, WO, RL, RLD, WORLD, SA };

static void build_vocab(void) {
    size_t n = 0;
    n += (size_t)sprintf(vocab_json + n, "{");
    for (unsigned b = 0; b < 256 + sizeof MERGED / sizeof MERGED[0]; b++) {
        char raw[16], sp[64];
        if (b < 256) raw[0] = (char)b, raw[1] = '\0';
        else strcpy(raw, MERGED[b - 256]);
        if (b == 0) { /* the NUL byte spells U+0100 */
            strcpy(sp, "\xc4\x80");
        } else {
            spell(raw, sp);
        }
        const char *esc = !strcmp(sp, "\"") ? "\\\"" : !strcmp(sp, "\\") ? "\\\\" : sp;
        n += (size_t)sprintf(vocab_json + n, "%s\"%s\": %u", b ? ", " : "", esc, b);
    }
    sprintf(vocab_json + n, "}");
}

/* Spellings: "Ġ" is U+0120 (the space byte). "a a" appears twice: its later rank (8) wins over "a b" (6). */
static const char MERGES[] = "#version: 0.2\r\n"
                             "h e\r\n"
                             "  l\tl  \r\n"
                             "\r\n"
                             "he ll\r"
                             "hell o\n"
                             "\xc4\xa0 h\n"
                             "a a\n"
                             "a b\n"
                             "\xc4\xa0 w\n"
                             "a\xe3\x80\x80" "a\n"          /* U+3000 separates too (Python's split) */
                             "w o\n"
                             "wo r\n"
                             "\n";
/* "wo r" needs "wor", which is not in the vocabulary: merges_ok has this tail instead. */
static const char MERGES_OK_TAIL[] = "w o\nr l\nrl d\nwo rld\ns a\n";

static const char CONFIG[] = "{\"add_prefix_space\": false, \"added_tokens_decoder\": {"
                             "\"300\": {\"content\": \"<|x|>\", \"special\": true},"
                             "\"301\": {\"content\": \"<|x|>y\", \"special\": true, \"normalized\": false},"
                             "\"302\": {\"content\": \"x|>yz\", \"special\": false},"
                             "\"303\": {\"content\": \"\\u00e9t\\u00e9\", \"special\": false}}}";

static q3_tokenizer *make(q3_pretok_kind kind, const char *merges, const char *config, vox_status *st) {
    q3_tokenizer *t = NULL;
    *st = q3_tokenizer_from_files(vocab_json, strlen(vocab_json), merges, strlen(merges), config, strlen(config), kind,
                                  "test", &t);
    return t;
}

static char merges_ok[1024];

static q3_tokenizer *make_ok(q3_pretok_kind kind) {
    vox_status st;
    q3_tokenizer *t = make(kind, merges_ok, CONFIG, &st);
    CHECK(st == VOX_OK && t, "load: %s", vox_last_error());
    return t;
}

/* ---------------------------------------------------------------------------------------- tests */

static int same(const int32_t *a, size_t na, const int32_t *b, size_t nb) {
    return na == nb && (na == 0 || !memcmp(a, b, na * sizeof *a));
}

#define EXPECT(tok, text, ...)                                                                        \
    do {                                                                                              \
        const int32_t want_[] = {__VA_ARGS__};                                                        \
        int32_t *ids_;                                                                                \
        size_t n_;                                                                                    \
        vox_status st_ = q3_tokenize(tok, text, strlen(text), &ids_, &n_);                            \
        CHECK(st_ == VOX_OK, "%s: %s", text, vox_last_error());                                       \
        if (st_ == VOX_OK) {                                                                          \
            CHECK(same(ids_, n_, want_, sizeof want_ / sizeof want_[0]), "\"%s\": %zu tokens, first %d", \
                  text, n_, n_ ? ids_[0] : -1);                                                       \
            free(ids_);                                                                               \
        }                                                                                             \
    } while (0)

static void test_merges(void) {
    q3_tokenizer *t = make_ok(Q3_PRETOK_QWEN2);
    if (!t) return;
    EXPECT(t, "hello", HELLO);
    EXPECT(t, "hello hello", HELLO, ' ', HELLO); /* " hello": "Ġ h" (rank 4) loses to "h e" (0) */
    EXPECT(t, "aaa", AA, 'a');
    EXPECT(t, "aaaa", AA, AA);
    EXPECT(t, "aab", 'a', AB);                   /* "a a" kept its later rank 8 > "a b" (6) */
    EXPECT(t, "hello world", HELLO, SP_W, 'o', RLD); /* " w" (rank 7) before "w o" (9) */
    EXPECT(t, "world", WORLD);
    EXPECT(t, "x", 'x');
    int32_t *none = NULL;
    size_t zero = 1;
    CHECK(q3_tokenize(t, "", 0, &none, &zero) == VOX_OK && zero == 0, "empty text");
    free(none);
    EXPECT(t, "\"\\", '"', '\\');
    /* long pre-tokens (the heap path allocates past 64 bytes) */
    char many[1001];
    memset(many, 'a', 1000);
    many[1000] = '\0';
    int32_t *ids;
    size_t n;
    CHECK(q3_tokenize(t, many, 1000, &ids, &n) == VOX_OK && n == 500, "aaaa...: %zu", n);
    for (size_t i = 0; i < n; i++) CHECK(ids[i] == AA, "aa at %zu", i);
    free(ids);
    /* the NUL byte is a character like any other */
    CHECK(q3_tokenize(t, "a\0b", 3, &ids, &n) == VOX_OK && n == 3 && ids[1] == 0, "NUL: %zu", n);
    free(ids);
    q3_tokenizer_free(t);
}

static void test_added_tokens(void) {
    q3_tokenizer *t = make_ok(Q3_PRETOK_QWEN2);
    if (!t) return;
    EXPECT(t, "<|x|>", 300);
    EXPECT(t, "a<|x|>yz", 'a', 301, 'z');        /* longest at the leftmost position */
    EXPECT(t, "<|x|>yz", 301, 'z');
    EXPECT(t, "<|x|", '<', '|', 'x', '|');       /* no added token: "<|" | "x" | "|" */
    EXPECT(t, "x|>yz", 302);
    EXPECT(t, "hello<|x|>hello", HELLO, 300, HELLO); /* pre-tokenized apart: no " " joins */
    EXPECT(t, "\xc3\xa9t\xc3\xa9!", 303, '!');
    CHECK(q3_token_id(t, "<|x|>") == 300 && q3_token_id(t, "<|x|>y") == 301, "added ids");
    CHECK(q3_token_id(t, "hello") == HELLO && q3_token_id(t, "\xc4\xa0w") == SP_W, "vocab ids");
    CHECK(q3_token_id(t, "hello world") == -1 && q3_token_id(t, "") == -1 && q3_token_id(t, "<|x") == -1, "unknown");
    q3_tokenizer_free(t);
}

static void test_pretokenizer_choice(void) {
    q3_tokenizer *q = make_ok(Q3_PRETOK_QWEN2), *m = make_ok(Q3_PRETOK_MISTRAL_FIX);
    if (!q || !m) goto done;
    CHECK(q3_tokenizer_kind(q) == Q3_PRETOK_QWEN2 && q3_tokenizer_kind(m) == Q3_PRETOK_MISTRAL_FIX, "kind");
    EXPECT(q, "'sa", '\'', 's', 'a');            /* qwen2: the contraction "'s" | "a" */
    EXPECT(m, "'sa", '\'', SA);                  /* mistral_fix: one pre-token, "s a" merges */
    EXPECT(q, "helloHello", HELLO, 'H', 'e', LL, 'o');
    EXPECT(m, "helloWorld", HELLO, 'W', 'o', RLD);
    EXPECT(q, "a world", 'a', SP_W, 'o', RLD);
done:
    q3_tokenizer_free(q);
    q3_tokenizer_free(m);
}

static void test_prefix_space(void) {
    vox_status st;
    q3_tokenizer *t = make(Q3_PRETOK_QWEN2, merges_ok, "{\"add_prefix_space\": true}", &st);
    CHECK(st == VOX_OK, "%s", vox_last_error());
    if (!t) return;
    EXPECT(t, "hello hello", ' ', HELLO, ' ', HELLO); /* ByteLevel adds a space to each pre-token lacking one */
    q3_tokenizer_free(t);
}

static void test_invalid(void) {
    q3_tokenizer *t = make_ok(Q3_PRETOK_QWEN2);
    if (t) {
        int32_t *ids = (int32_t *)&ids;
        size_t n = 7;
        vox_status st = q3_tokenize(t, "ok \xe2\x82", 5, &ids, &n);
        CHECK(st == VOX_ERR_INVALID_ARGUMENT && ids == NULL && n == 0, "truncated UTF-8: %d", st);
        CHECK(strstr(vox_last_error(), "not valid UTF-8") && strstr(vox_last_error(), "offset 3"), "%s",
              vox_last_error());
        CHECK(q3_tokenize(t, "\xed\xa0\x80", 3, &ids, &n) == VOX_ERR_INVALID_ARGUMENT, "surrogate");
        CHECK(q3_tokenize(t, "\xc0\x80", 2, &ids, &n) == VOX_ERR_INVALID_ARGUMENT, "overlong NUL");
        q3_tokenizer_free(t);
    }
    static const struct {
        const char *vocab, *merges, *config, *why;
        vox_status st;
    } bad[] = {
        {"[1]", "", "{}", "not a JSON object", VOX_ERR_FORMAT},
        {"{\"a\": -1}", "", "{}", "integer id", VOX_ERR_FORMAT},
        {"{\"a\": 1.5}", "", "{}", "integer id", VOX_ERR_FORMAT},
        {"{\"a\": 1, \"a\": 2}", "", "{}", "duplicate key", VOX_ERR_FORMAT},
        {"{\"a\": 0, \"b\": 1}", "a b\n", "{}", "\"ab\" is not in the vocabulary", VOX_ERR_FORMAT},
        {"{\"a\": 0, \"b\": 1}", "a c\n", "{}", "line 1: \"c\" is not", VOX_ERR_FORMAT},
        {"{\"a\": 0, \"ab\": 1}", "a a a\n", "{}", "line 1 has 3 entries", VOX_ERR_FORMAT},
        {"{\"a\": 0}", "#version: 1\n\na\n", "{}", "line 3 has 1 entries", VOX_ERR_FORMAT},
        {"{\"a\": 0}", "a \xff\n", "{}", "merges.txt is not valid UTF-8", VOX_ERR_FORMAT},
        {"{\"a\": 0}", "", "{\"added_tokens_decoder\": {\"5\": {\"content\": \"<a>\", \"lstrip\": true}}}",
         "lstrip = true", VOX_ERR_UNSUPPORTED},
        {"{\"a\": 0}", "", "{\"added_tokens_decoder\": {\"5\": {\"content\": \"<a>\", \"normalized\": true}}}",
         "normalized = true", VOX_ERR_UNSUPPORTED},
        {"{\"a\": 0}", "", "{\"added_tokens_decoder\": {\"5\": {\"content\": \"<a>\"}, \"6\": {\"content\": \"<a>\"}}}",
         "appears twice", VOX_ERR_FORMAT},
        {"{\"a\": 0}", "", "{\"added_tokens_decoder\": {\"x5\": {\"content\": \"<a>\"}}}", "needs an id", VOX_ERR_FORMAT},
        {"{\"a\": 0}", "", "{\"added_tokens_decoder\": {\"5\": {\"content\": \"\"}}}", "non-empty", VOX_ERR_FORMAT},
        {"{\"a\": 0}", "", "{\"added_tokens_decoder\": []}", "added_tokens_decoder", VOX_ERR_FORMAT},
        {"{\"a\": 0}", "", "{", "tokenizer_config.json", VOX_ERR_FORMAT},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        q3_tokenizer *x = (q3_tokenizer *)&x;
        vox_status st = q3_tokenizer_from_files(bad[i].vocab, strlen(bad[i].vocab), bad[i].merges,
                                                strlen(bad[i].merges), bad[i].config, strlen(bad[i].config),
                                                Q3_PRETOK_QWEN2, "bad", &x);
        CHECK(st == bad[i].st && x == NULL, "case %zu: status %d", i, st);
        CHECK(strstr(vox_last_error(), bad[i].why) != NULL, "case %zu: \"%s\" lacks \"%s\"", i, vox_last_error(),
              bad[i].why);
    }
    /* "#version" is a header only on the first line; elsewhere it is a merge like any */
    vox_status st;
    q3_tokenizer *v = make(Q3_PRETOK_QWEN2, "\nh e\n#version: x\n", "{}", &st);
    CHECK(st == VOX_ERR_FORMAT && strstr(vox_last_error(), "line 3: \"#version:\""), "%s", vox_last_error());
    q3_tokenizer_free(v);
}

/* ---------------------------------------------------------------------------------------- streaming */

static bool tokens(const q3_tokenizer *t, const char *s, size_t n, int32_t **ids, size_t *count) {
    return q3_tokenize(t, s, n, ids, count) == VOX_OK;
}

static void test_stable_cases(void) {
    q3_tokenizer *t = make_ok(Q3_PRETOK_QWEN2);
    if (!t) return;
    static const struct {
        const char *text;
        size_t stable;
    } cases[] = {
        {"", 0},
        {"hello", 0},           /* the word may go on */
        {"hello ", 5},          /* the space may start " world" */
        {"hello world.", 11},
        {"ab<|x", 0},           /* "<|x" may become "<|x|>": the text segment is cut there, and "ab" ends
                                   it (conservative: "ab" stays whatever follows) */
        {"ab<|x|>", 0},         /* "<|x|>" may still become "<|x|>y" */
        {"ab<|x|>y", 8},        /* the longest: final */
        {"ab<|x|>q", 7},        /* "<|x|>" is final once "q" follows; the word "q" may go on */
        {"x|>y", 0},
        {"ab \xe2\x82", 2},     /* a cut-off UTF-8 sequence ends the text */
        {"ab\xff" "cd", 0},     /* so does an invalid byte */
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        size_t s = q3_tokenizer_stable_prefix(t, cases[i].text, strlen(cases[i].text));
        CHECK(s == cases[i].stable, "stable prefix of \"%s\": %zu, expected %zu", cases[i].text,
              s, cases[i].stable);
    }
    q3_tokenizer_free(t);
}

/* For random texts T over pieces that exercise added tokens, the pre-tokenizer and BPE, and every
 * cut k of T: s = stable(T[0..k)) <= k, and tokens(T[0..s)) is a prefix of tokens(T). */
static void test_stable_property(void) {
    static const char *const pieces[] = {"<|", "x", "|>", "y", "z", "a", " ", "\n", "hello", "\xc3\xa9", "t", "'",
                                         "ll", "1", ".", "/", "\xe3\x80\x80", "W", "\xcc\x81", "\t", "<|x|>", "wo"};
    const size_t np = sizeof pieces / sizeof pieces[0];
    q3_tokenizer *tk[2] = {make_ok(Q3_PRETOK_QWEN2), make_ok(Q3_PRETOK_MISTRAL_FIX)};
    if (!tk[0] || !tk[1]) goto done;
    uint64_t rng = 12345;
    size_t total = 0, kept = 0;
    for (int iter = 0; iter < 20000; iter++) {
        char text[256];
        size_t len = 0, n = 1 + (size_t)(iter % 20), cuts[32], nc = 0;
        for (size_t i = 0; i < n; i++) {
            rng = rng * 6364136223846793005ull + 1442695040888963407ull;
            const char *p = pieces[(rng >> 33) % np];
            memcpy(text + len, p, strlen(p));
            len += strlen(p);
            cuts[nc++] = len;
        }
        const q3_tokenizer *t = tk[iter & 1];
        int32_t *full, *part;
        size_t nfull, npart;
        if (!tokens(t, text, len, &full, &nfull)) continue;
        for (size_t c = 0; c < nc; c++) {
            size_t k = cuts[c], s = q3_tokenizer_stable_prefix(t, text, k);
            CHECK(s <= k, "stable prefix past the cut");
            CHECK(tokens(t, text, s, &part, &npart), "tokenize prefix");
            CHECK(npart <= nfull && same(part, npart, full, npart), "%s: \"%.*s\" cut at %zu: the tokens of its "
                  "stable prefix (%zu bytes) are not a prefix of the whole's", iter & 1 ? "mistral_fix" : "qwen2",
                  (int)len, text, k, s);
            free(part);
            total += k;
            kept += s;
        }
        free(full);
    }
    CHECK(kept * 2 > total, "the stable prefixes keep only %zu of %zu bytes", kept, total);
done:
    q3_tokenizer_free(tk[0]);
    q3_tokenizer_free(tk[1]);
}

/* ---------------------------------------------------------------------------------------- threads */

static const char *const THREAD_TEXTS[] = {"hello world", "aab aaa aaaa", "<|x|>yz hello", "\xc3\xa9t\xc3\xa9 wo",
                                           "helloWorld 12 ab/ab", "x|>yz<|x|>"};
enum { N_THREAD_TEXTS = sizeof THREAD_TEXTS / sizeof THREAD_TEXTS[0] };

typedef struct job {
    const q3_tokenizer *t;
    int32_t *want[N_THREAD_TEXTS];
    size_t nwant[N_THREAD_TEXTS];
    int bad;
} job;

static void *worker(void *arg) {
    job *j = arg;
    for (int r = 0; r < 3000; r++) {
        size_t i = (size_t)r % N_THREAD_TEXTS;
        int32_t *ids;
        size_t n;
        if (q3_tokenize(j->t, THREAD_TEXTS[i], strlen(THREAD_TEXTS[i]), &ids, &n) != VOX_OK ||
            !same(ids, n, j->want[i], j->nwant[i]))
            j->bad++;
        free(ids);
    }
    return NULL;
}

static void test_threads(void) {
    q3_tokenizer *t = make_ok(Q3_PRETOK_MISTRAL_FIX);
    if (!t) return;
    job j = {t, {0}, {0}, 0}, j2;
    for (size_t i = 0; i < N_THREAD_TEXTS; i++)
        CHECK(tokens(t, THREAD_TEXTS[i], strlen(THREAD_TEXTS[i]), &j.want[i], &j.nwant[i]), "tokenize");
    j2 = j;
    pthread_t th;
    CHECK(pthread_create(&th, NULL, worker, &j2) == 0, "thread");
    worker(&j);
    pthread_join(th, NULL);
    CHECK(j.bad == 0 && j2.bad == 0, "%d + %d results differed under concurrency", j.bad, j2.bad);
    for (size_t i = 0; i < N_THREAD_TEXTS; i++) free(j.want[i]);
    q3_tokenizer_free(t);
}

int main(void) {
    build_vocab();
    /* MERGES up to "w o" and then the tail that builds "world" */
    const char *cut = strstr(MERGES, "w o\n");
    snprintf(merges_ok, sizeof merges_ok, "%.*s%s", (int)(cut - MERGES), MERGES, MERGES_OK_TAIL);
    vox_status st;
    q3_tokenizer *t = make(Q3_PRETOK_QWEN2, MERGES, CONFIG, &st);
    CHECK(st == VOX_ERR_FORMAT && t == NULL && strstr(vox_last_error(), "merges.txt line 13: \"wor\""), "%s",
          vox_last_error());
    test_merges();
    test_added_tokens();
    test_pretokenizer_choice();
    test_prefix_space();
    test_invalid();
    test_stable_cases();
    test_stable_property();
    test_threads();
    if (fails) fprintf(stderr, "%d check(s) failed\n", fails);
    return fails != 0;
}
