/* The pre-tokenizer scanners (core/src/qwen3/pretok.c) on tricky strings, standalone: the expected
 * splits are Oniguruma's (the HF `tokenizers` Split pre-tokenizer with the two regexes), recorded
 * here; conformance/test_native_tokenizer.py compares the scanners with it exhaustively. Also: the
 * stable prefix for streaming, the Unicode class tables against core/data/unicode_classes.txt for
 * every code point, and strict UTF-8 decoding. Run from the source root (ctest does). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "qwen3/pretok.h"
#include "unicode/unicode.h"

/* text, then its pre-tokens joined by '|' with the qwen2 regex and with the mistral_fix regex */
static const struct {
    const char *text, *qwen2, *mistral;
} VECTORS[] = {
    {"Hello world", "Hello| world", "Hello| world"},
    {"Hello  world", "Hello| | world", "Hello| | world"},
    {"Hello   world", "Hello|  | world", "Hello|  | world"},
    {"a\011b", "a|\011b", "a|\011b"},
    {"a \011b", "a| |\011b", "a| |\011b"},
    {"a\011 b", "a|\011| b", "a|\011| b"},
    {"a  \012  b", "a|  \012| | b", "a|  \012| | b"},
    {"a\015\012\015\012b", "a|\015\012\015\012|b", "a|\015\012\015\012|b"},
    {"a \015\012 b", "a| \015\012| b", "a| \015\012| b"},
    {"x\012", "x|\012", "x|\012"},
    {"x \012", "x| \012", "x| \012"},
    {"  \012  ", "  \012|  ", "  \012|  "},
    {"trailing   ", "trailing|   ", "trailing|   "},
    {"\343\200\200\343\200\200word", "\343\200\200|\343\200\200word", "\343\200\200|\343\200\200word"},
    {"a\302\240b", "a|\302\240b", "a|\302\240b"},
    {"a\342\200\250b", "a|\342\200\250b", "a|\342\200\250b"},
    {"tab\011\011X", "tab|\011|\011X", "tab|\011|\011X"},
    {"1234", "1|2|3|4", "1|2|3|4"},
    {"\331\243\331\244\331\245", "\331\243|\331\244|\331\245", "\331\243|\331\244|\331\245"},
    {"x\302\262", "x|\302\262", "x|\302\262"},
    {"\342\205\253", "\342\205\253", "\342\205\253"},
    {"12abc", "1|2|abc", "1|2|abc"},
    {"abc12", "abc|1|2", "abc|1|2"},
    {"a.b", "a|.b", "a|.b"},
    {"...!!!\012\012", "...!!!\012\012", "...!!!\012\012"},
    {" !!", " !!", " !!"},
    {"  !!", " | !!", " | !!"},
    {"$5,000", "$|5|,|0|0|0", "$|5|,|0|0|0"},
    {"a/b//c", "a|/b|//|c", "a|/b|//|c"},
    {"http://x.y/z", "http|://|x|.y|/z", "http|://|x|.y|/z"},
    {"don't", "don|'t", "don|'t"},
    {"DON'T", "DON|'T", "DON|'T"},
    {"I'm", "I|'m", "I|'m"},
    {"we'll", "we|'ll", "we|'ll"},
    {"you're", "you|'re", "you|'re"},
    {"they've", "they|'ve", "they|'ve"},
    {"it'S", "it|'S", "it|'S"},
    {"'\305\277", "'\305\277", "'\305\277"},
    {"'sup", "'s|up", "'sup"},
    {"'", "'", "'"},
    {"''s", "''|s", "''|s"},
    {"camelCase", "camelCase", "camel|Case"},
    {"HTMLParser", "HTMLParser", "HTMLParser"},
    {"McDonald's", "McDonald|'s", "Mc|Donald|'s"},
    {"iPhone", "iPhone", "i|Phone"},
    {"\307\205emal", "\307\205emal", "\307\205emal"},
    {"\312\260a", "\312\260a", "\312\260a"},
    {"\344\270\255\346\226\207\345\255\227", "\344\270\255\346\226\207\345\255\227", "\344\270\255\346\226\207\345\255\227"},
    {"\314\201abc", "\314\201abc", "\314\201abc"},
    {"e\314\201", "e|\314\201", "e\314\201"},
    {"A\314\201B", "A|\314\201B", "A\314\201|B"},
    {"\314\201AB.", "\314\201AB|.", "\314\201|AB|."},
    {"\360\237\230\200\360\237\221\215\360\237\217\275", "\360\237\230\200\360\237\221\215\360\237\217\275", "\360\237\230\200\360\237\221\215\360\237\217\275"},
    {"\360\237\221\250\342\200\215\360\237\221\251\342\200\215\360\237\221\247", "\360\237\221\250\342\200\215\360\237\221\251\342\200\215\360\237\221\247", "\360\237\221\250\342\200\215\360\237\221\251\342\200\215\360\237\221\247"},
    {"\342\235\244\357\270\217", "\342\235\244\357\270\217", "\342\235\244\357\270\217"},
    {"\331\205\330\261\330\255\330\250\330\247 \330\250\330\247\331\204\330\271\330\247\331\204\331\205", "\331\205\330\261\330\255\330\250\330\247| \330\250\330\247\331\204\330\271\330\247\331\204\331\205", "\331\205\330\261\330\255\330\250\330\247| \330\250\330\247\331\204\330\271\330\247\331\204\331\205"},
    {"\355\225\234\352\265\255\354\226\264", "\355\225\234\352\265\255\354\226\264", "\355\225\234\352\265\255\354\226\264"},
    {"x\342\200\215y", "x|\342\200\215y", "x|\342\200\215y"},
    {" \314\201", " \314\201", " \314\201"},
    {".\012/", ".\012|/", ".\012/"},
    {"!\015\012/x", "!\015\012|/x", "!\015\012/|x"},
    {"a\302\205b", "a|\302\205b", "a|\302\205b"},
    {"\013\014X", "\013|\014X", "\013|\014X"},
    {"end.\012\012  ", "end|.\012\012|  ", "end|.\012\012|  "},
    {"\341\262\211x", "\341\262\211x", "\341\262\211x"},
    {"\360\256\257\260\360\256\257\261", "\360\256\257\260\360\256\257\261", "\360\256\257\260\360\256\257\261"},
};

static void check_split(q3_pretok_kind kind, const char *text, const char *want) {
    size_t *ends, n, len = strlen(text);
    vox_status st = q3_pretokenize(kind, text, len, &ends, &n, NULL);
    CHECK(st == VOX_OK, "%s", vox_last_error());
    if (st != VOX_OK) return;
    char got[512];
    size_t k = 0, prev = 0;
    for (size_t i = 0; i < n && k + (ends[i] - prev) + 2 < sizeof got; i++) {
        if (i) got[k++] = '|';
        memcpy(got + k, text + prev, ends[i] - prev);
        k += ends[i] - prev;
        prev = ends[i];
    }
    got[k] = '\0';
    CHECK(!strcmp(got, want) && (n ? ends[n - 1] == len : len == 0), "%s: \"%s\" split as \"%s\", expected \"%s\"",
          q3_pretok_kind_name(kind), text, got, want);
    free(ends);
}

static void test_vectors(void) {
    for (size_t i = 0; i < sizeof VECTORS / sizeof VECTORS[0]; i++) {
        check_split(Q3_PRETOK_QWEN2, VECTORS[i].text, VECTORS[i].qwen2);
        check_split(Q3_PRETOK_MISTRAL_FIX, VECTORS[i].text, VECTORS[i].mistral);
    }
    check_split(Q3_PRETOK_QWEN2, "", "");
}

static size_t stable(q3_pretok_kind kind, const char *text) {
    size_t *ends, n, s = (size_t)-1;
    CHECK(q3_pretokenize(kind, text, strlen(text), &ends, &n, &s) == VOX_OK, "%s", vox_last_error());
    free(ends);
    return s;
}

static void test_stable(void) {
    static const struct {
        const char *text;
        size_t qwen2, mistral;
    } cases[] = {
        {"", 0, 0},
        {"Hello world", 5, 5},            /* " world" may go on */
        {"Hello world ", 11, 11},         /* the space may join the next word */
        {"abc 1", 5, 5},                  /* a digit is always a pre-token of its own */
        {"it's", 4, 2},                   /* qwen2: 's is a contraction whatever follows; mistral: "'s" may grow */
        {"x\n", 1, 1},                    /* more newlines may join */
        {"a\t\xc2\xa0\xe2\x80\xa8" "b", 4, 4}, /* "a" | "\t\xa0" | "\u2028b" */
        /* "a" | "\t\xa0" | "\u2028" | ".": but "a\t\xa0\u2028" alone splits "a" | "\t\xa0\u2028" (\s+(?!\S)
           keeps the last space before a non-space only), so "\u2028" cannot be in the stable prefix */
        {"a\t\xc2\xa0\xe2\x80\xa8.", 4, 4},
        {"a  b", 2, 2},
        {"12", 2, 2},
        {"\xe2\x80\xa8", 0, 0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        size_t q = stable(Q3_PRETOK_QWEN2, cases[i].text), m = stable(Q3_PRETOK_MISTRAL_FIX, cases[i].text);
        CHECK(q == cases[i].qwen2, "qwen2 stable prefix of \"%s\": %zu, expected %zu", cases[i].text, q, cases[i].qwen2);
        CHECK(m == cases[i].mistral, "mistral_fix stable prefix of \"%s\": %zu, expected %zu", cases[i].text, m,
              cases[i].mistral);
    }
}

/* The property behind the stable prefix, over random strings of tricky characters: for every cut k of
 * a text T, s = stable(T[0..k)) is a pre-token boundary of T, and T[0..s) splits as T does before s. */
static void test_stable_property(void) {
    static const char *const alphabet[] = {"a", "A", "\xc7\x85", "\xca\xb0", "\xe4\xb8\xad", "\xcc\x81", "1",
                                           "\xc2\xb2", " ", "\t", "\n", "\r", "\xe3\x80\x80", ".", "/", "'", "s",
                                           "t", "l", "e", "\xc2\x85", "\xf0\x9f\x98\x80", "\xe2\x80\xa8", "\xc2\xa0"};
    const size_t na = sizeof alphabet / sizeof alphabet[0];
    uint64_t rng = 0x9E3779B97F4A7C15ull;
    char text[256];
    size_t bounds[64];
    int checked = 0;
    for (int iter = 0; iter < 20000; iter++) {
        size_t len = 0, nb = 0, n = 1 + (size_t)(iter % 24);
        for (size_t i = 0; i < n; i++) {
            rng = rng * 6364136223846793005ull + 1442695040888963407ull;
            const char *c = alphabet[(rng >> 33) % na];
            memcpy(text + len, c, strlen(c));
            len += strlen(c);
            bounds[nb++] = len;
        }
        q3_pretok_kind kind = iter & 1 ? Q3_PRETOK_MISTRAL_FIX : Q3_PRETOK_QWEN2;
        size_t *full, nfull;
        if (q3_pretokenize(kind, text, len, &full, &nfull, NULL) != VOX_OK) continue;
        rng = rng * 6364136223846793005ull + 1442695040888963407ull;
        size_t k = bounds[(rng >> 33) % nb], s;
        char cut[256];
        memcpy(cut, text, k);
        cut[k] = '\0';
        s = stable(kind, cut);
        size_t *part, npart;
        CHECK(s <= k && q3_pretokenize(kind, text, s, &part, &npart, NULL) == VOX_OK, "cut %zu", k);
        bool ok = true;
        size_t i = 0;
        for (; i < npart && ok; i++) ok = i < nfull && part[i] == full[i];
        ok = ok && (s == 0 || (npart > 0 && part[npart - 1] == s));
        CHECK(ok, "%s: \"%.*s\" cut at %zu: stable prefix %zu does not split as the whole", q3_pretok_kind_name(kind),
              (int)len, text, k, s);
        checked++;
        free(part);
        free(full);
    }
    CHECK(checked == 20000, "%d", checked);
}

/* vx_uc_class for every code point against the committed data file. */
static void test_unicode_tables(void) {
    CHECK(!strcmp(vx_unicode_version, "16.0.0"), "Unicode %s", vx_unicode_version);
    FILE *f = fopen("core/data/unicode_classes.txt", "r");
    CHECK(f != NULL, "cannot open core/data/unicode_classes.txt (run from the source root)");
    if (!f) return;
    static const char *const names[] = {"other", "Lu", "Ll", "Lt", "Lm", "Lo", "M", "N", "WS"};
    uint8_t *want = calloc(0x110000, 1);
    char line[512];
    while (fgets(line, sizeof line, f)) {
        if (line[0] == '#' || line[0] == '@') continue;
        unsigned a, b;
        char name[8];
        if (sscanf(line, "%x..%x %7s", &a, &b, name) != 3) {
            CHECK(sscanf(line, "%x %7s", &a, name) == 2, "bad line %s", line);
            b = a;
        }
        for (int k = 1; k < 9; k++)
            if (!strcmp(name, names[k]))
                for (unsigned c = a; c <= b; c++) want[c] = (uint8_t)k;
    }
    fclose(f);
    int bad = 0;
    for (uint32_t c = 0; c < 0x110000; c++)
        if (vx_uc_class(c) != want[c] && bad++ < 5) CHECK(0, "U+%04X: class %d, the data file says %d", c, vx_uc_class(c), want[c]);
    CHECK(bad == 0, "%d code points differ", bad);
    CHECK(vx_uc_class(0x110000) == VX_UC_OTHER && vx_uc_class(UINT32_MAX) == VX_UC_OTHER, "beyond U+10FFFF");
    free(want);
    /* letters new in recent Unicode versions: what pins the version (Oniguruma in tokenizers 0.22 has 16.0) */
    CHECK(vx_uc_class(0x1E030) == VX_UC_LM, "U+1E030 MODIFIER LETTER CYRILLIC SMALL A (15.0)");
    CHECK(vx_uc_class(0x11F04) == VX_UC_LO, "U+11F04 KAWI LETTER A (15.0)");
    CHECK(vx_uc_class(0x2EBF0) == VX_UC_LO, "U+2EBF0 CJK Extension I (15.1)");
    CHECK(vx_uc_class(0x1C89) == VX_UC_LU, "U+1C89 CYRILLIC CAPITAL LETTER TJE (16.0)");
    CHECK(vx_uc_class(0x16100) == VX_UC_LO, "U+16100 GURUNG KHEMA LETTER A (16.0)");
    CHECK(vx_uc_class(0x1CCF0) == VX_UC_N, "U+1CCF0 OUTLINED DIGIT ZERO (16.0)");
    CHECK(vx_uc_class(0xA7CE) == VX_UC_OTHER, "U+A7CE (a letter only from 17.0)");
    CHECK(vx_uc_class(0x180E) == VX_UC_OTHER, "U+180E MONGOLIAN VOWEL SEPARATOR (not a space since 6.3)");
    CHECK(vx_uc_class(0x85) == VX_UC_WS && vx_uc_class(0x200B) == VX_UC_OTHER && vx_uc_class(0x1C) == VX_UC_OTHER,
          "spaces");
}

static void test_utf8(void) {
    static const struct {
        const char *s;
        size_t len, valid;
    } cases[] = {
        {"abc", 3, 3},
        {"\xc3\xa9", 2, 2},
        {"\xc3", 1, 0},                     /* cut off */
        {"\xc0\xaf", 2, 0},                 /* overlong */
        {"\xe0\x80\xaf", 3, 0},             /* overlong */
        {"\xed\xa0\x80", 3, 0},             /* surrogate */
        {"\xf4\x90\x80\x80", 4, 0},         /* above U+10FFFF */
        {"\xf0\x9f\x98\x80", 4, 4},
        {"a\xf0\x9f\x98", 4, 1},
        {"a\x80", 2, 1},
        {"\xef\xbf\xbf", 3, 3},             /* U+FFFF is a valid scalar value */
        {"\xf5\x80\x80\x80", 4, 0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        CHECK(vx_utf8_valid_prefix(cases[i].s, cases[i].len) == cases[i].valid, "case %zu", i);
    uint32_t cp;
    bool incomplete;
    CHECK(vx_utf8_decode("\xf0\x9f\x98", 3, 0, &cp, &incomplete) == 0 && incomplete, "incomplete");
    CHECK(vx_utf8_decode("\xf0\x9f\x41", 3, 0, &cp, &incomplete) == 0 && !incomplete, "invalid");
    CHECK(vx_utf8_decode("\xf0\x9f\x98\x80", 4, 0, &cp, &incomplete) == 4 && cp == 0x1F600, "emoji");
    size_t *ends, n;
    CHECK(q3_pretokenize(Q3_PRETOK_QWEN2, "ab\xff", 3, &ends, &n, NULL) == VOX_ERR_INVALID_ARGUMENT &&
          strstr(vox_last_error(), "offset 2"), "%s", vox_last_error());
}

int main(void) {
    test_vectors();
    test_stable();
    test_stable_property();
    test_unicode_tables();
    test_utf8();
    if (fails) fprintf(stderr, "%d check(s) failed\n", fails);
    return fails != 0;
}
