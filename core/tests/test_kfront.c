/* The Kokoro text frontend's C pieces on a tiny hand-made lexicon: malformed lexicon blobs are
 * rejected (never read out of bounds), the OOV chain and normalization run, spans are cut as
 * specified. The full behaviour is compared with the Python twin by conformance/test_kokoro_frontend.py. */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "error.h"
#include "json.h"
#include "kokoro/text/frontend.h"
#include "kokoro/text/text_internal.h"

static size_t put32(unsigned char *p, uint32_t v) {
    p[0] = (unsigned char)v;
    p[1] = (unsigned char)(v >> 8);
    p[2] = (unsigned char)(v >> 16);
    p[3] = (unsigned char)(v >> 24);
    return 4;
}

/* entries must be sorted by key bytes */
static unsigned char *pack(const char *const (*e)[2], uint32_t n, size_t *nbytes) {
    size_t body = 0;
    for (uint32_t i = 0; i < n; i++) body += strlen(e[i][0]) + strlen(e[i][1]) + 2;
    size_t total = 8 + 4 * (size_t)n + body;
    unsigned char *b = malloc(total);
    memcpy(b, "VXL1", 4);
    put32(b + 4, n);
    size_t pos = 8 + 4 * (size_t)n;
    for (uint32_t i = 0; i < n; i++) {
        put32(b + 8 + 4 * i, (uint32_t)pos);
        size_t kl = strlen(e[i][0]) + 1, vl = strlen(e[i][1]) + 1;
        memcpy(b + pos, e[i][0], kl);
        memcpy(b + pos + kl, e[i][1], vl);
        pos += kl + vl;
    }
    *nbytes = total;
    return b;
}

static const char *const ENTRIES[][2] = {
    {"A", "ˈA"}, {"B", "bˈi"}, {"C", "sˈi"}, {"I", "ˈI"}, {"M", "ˈɛm"}, {"P", "pˈi"}, {"cat", "kˈæt"},
    {"class", "klˈæs"}, {"five", "fˈIv"}, {"has", "hæz"}, {"master", "mˈæstəɹ"}, {"percent", "pəɹsˈɛnt"},
    {"the", "ði"}, {"two", "tˈu"}, {"walk", "wˈɔk"},
};

int main(void) {
    size_t n;
    unsigned char *blob = pack(ENTRIES, sizeof ENTRIES / sizeof ENTRIES[0], &n);
    kt_lexicon lx;
    CHECK(kt_lexicon_init(&lx, blob, n) == VOX_OK, "%s", vox_last_error());
    const char *p = kt_lexicon_get(&lx, "master", 6);
    CHECK(p && !strcmp(p, "mˈæstəɹ"), "lookup master");
    CHECK(kt_lexicon_get(&lx, "mast", 4) == NULL, "prefix is not a hit");
    CHECK(kt_lexicon_get(&lx, "zzz", 3) == NULL, "miss after the last key");

    /* malformed blobs */
    CHECK(kt_lexicon_init(&lx, blob, 6) == VOX_ERR_FORMAT, "too short");
    unsigned char *bad = malloc(n);
    memcpy(bad, blob, n);
    bad[0] = 'X';
    CHECK(kt_lexicon_init(&lx, bad, n) == VOX_ERR_FORMAT, "bad magic");
    memcpy(bad, blob, n);
    put32(bad + 4, 0x40000000u);
    CHECK(kt_lexicon_init(&lx, bad, n) == VOX_ERR_FORMAT, "count beyond the blob");
    memcpy(bad, blob, n);
    put32(bad + 8, (uint32_t)n + 10);
    CHECK(kt_lexicon_init(&lx, bad, n) == VOX_ERR_FORMAT, "offset beyond the blob");
    memcpy(bad, blob, n);
    CHECK(kt_lexicon_init(&lx, bad, n - 1) == VOX_ERR_FORMAT, "last record cut");
    free(bad);

    /* the frontend over it */
    vox_json_doc *vocab_doc;
    vox_json_error err;
    const char *vocab = "{\" \":16,\",\":3,\".\":4,\"A\":21,\"I\":24,\"O\":31,\"b\":44,\"d\":46,\"f\":48,\"h\":50,"
                        "\"i\":51,\"k\":53,\"l\":54,\"m\":55,\"n\":56,\"p\":58,\"s\":61,\"t\":62,\"u\":63,\"v\":64,"
                        "\"w\":65,\"z\":68,\"æ\":72,\"ð\":81,\"ɔ\":76,\"ə\":83,\"ɛ\":86,\"ɪ\":102,\"ɹ\":123,"
                        "\"ʌ\":138,\"ˈ\":156,\"ˌ\":157,\"ᵻ\":177,\"ɑ\":69,\"ŋ\":112}";
    CHECK(vox_json_parse(vocab, strlen(vocab), &vocab_doc, &err) == VOX_OK, "%s", err.message);
    vx_kfront *f = NULL;
    CHECK(vx_kfront_create_raw(blob, n, NULL, 0, vox_json_root(vocab_doc), &f) == VOX_OK, "%s", vox_last_error());
    if (f) {
        vx_buf out = {0};
        const char *text = "The masterclass has 2 cats, 5% walking.";
        CHECK(vx_kfront_phonemize(f, text, strlen(text), NULL, &out) == VOX_OK, "%s", vox_last_error());
        CHECK(out.s && !strcmp(out.s, "ðə mˈæstəɹklˌæs hæz tˈu kˈæts, fˈIv pəɹsˈɛnt wˈɔkɪŋ."), "got %s", out.s);
        vx_buf_free(&out);
        CHECK(vx_kfront_phonemize(f, "cat", 3, "{\"cat\": \"k3t\"}", &out) == VOX_ERR_INVALID_ARGUMENT,
              "bad override symbol");
        CHECK(strstr(vox_last_error(), "\"3\""), "message names the symbol: %s", vox_last_error());
        CHECK(vx_kfront_phonemize(f, "cat", 3, "{\"Cat\": \"kˈIt\"}", &out) == VOX_OK && !strcmp(out.s, "kˈIt"),
              "override, case-insensitive");
        vx_buf_free(&out);
        CHECK(vx_kfront_phonemize(f, "\xff", 1, NULL, &out) == VOX_ERR_INVALID_ARGUMENT, "invalid UTF-8");
        vx_buf_free(&out);
        vx_kfront_destroy(f);
    }
    vox_json_free(vocab_doc);

    /* spans */
    size_t consumed;
    const char *t = "Dr. Who came. Then";
    size_t r = vx_kfront_next_span(t, strlen(t), 0, &consumed);
    CHECK(r == 13 && consumed == 13, "first sentence: %zu %zu", r, consumed);
    r = vx_kfront_next_span(t + 13, strlen(t) - 13, 0, &consumed);
    CHECK(r == 0 && consumed == 0, "incomplete");
    r = vx_kfront_next_span(t + 13, strlen(t) - 13, 1, &consumed);
    CHECK(r == 5 && consumed == 5, "final flush: %zu", r);
    char longtext[600];
    memset(longtext, 0, sizeof longtext);
    for (int i = 0; i < 100; i++) strcat(longtext, "word ");
    r = vx_kfront_next_span(longtext, strlen(longtext), 0, &consumed);
    CHECK(r > 0 && vt_count(longtext, r) <= VX_KFRONT_SPAN_LIMIT && longtext[r] == ' ', "long span cut at a space: %zu", r);

    /* a piece that ends inside a multi-byte character: decided only once the character is whole */
    char cut[300];
    memset(cut, 'a', 240);
    memcpy(cut + 240, "\xc2\xa0" "b", 3);
    r = vx_kfront_next_span(cut, 241, 0, &consumed);
    CHECK(r == 0 && consumed == 0, "cut inside U+00A0: wait (%zu %zu)", r, consumed);
    r = vx_kfront_next_span(cut, 243, 0, &consumed);
    CHECK(r == 240 && consumed == 240, "U+00A0 is a space: %zu %zu", r, consumed);
    /* a blank line ends a span */
    t = "Heading\n\nBody";
    r = vx_kfront_next_span(t, strlen(t), 0, &consumed);
    CHECK(r == 7 && consumed == 7, "blank line: %zu %zu", r, consumed);

    free(blob);
    return fails != 0;
}
