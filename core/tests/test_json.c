/* The manifest JSON parser (core/src/json.c): valid documents, every rejection rule, buffers without
 * a terminating NUL, the depth limit, and a mutation fuzz loop (run it under -DVOX_SANITIZE=ON to turn
 * any out-of-bounds read into a failure). json.c is internal (hidden in libvox), so it is compiled in. */
#include "../src/json.c"

#include <locale.h>
#include <stdio.h>

#include "check.h"

/* Parses exactly n bytes copied into a fresh heap block with no NUL after them. */
static vox_status parse_n(const char *s, size_t n, vox_json_doc **doc, vox_json_error *err) {
    char *buf = malloc(n ? n : 1);
    if (n) memcpy(buf, s, n);
    vox_status st = vox_json_parse(buf, n, doc, err);
    free(buf); /* the document owns copies of its strings: freeing the text must be safe */
    return st;
}

static void accept(const char *s) {
    vox_json_doc *doc;
    vox_json_error err;
    vox_status st = parse_n(s, strlen(s), &doc, &err);
    CHECK(st == VOX_OK, "rejected %s: %s at %zu", s, err.message, err.offset);
    vox_json_free(doc);
}

static void reject(const char *s, const char *why) {
    vox_json_doc *doc;
    vox_json_error err;
    vox_status st = parse_n(s, strlen(s), &doc, &err);
    CHECK(st == VOX_ERR_FORMAT && doc == NULL, "accepted %s", s);
    if (st == VOX_ERR_FORMAT) CHECK(strstr(err.message, why) != NULL, "%s: message \"%s\" lacks \"%s\"", s, err.message, why);
}

static void test_values(void) {
    const char *s = " {\"a\": [1, 2.5, -0, true, false, null, \"x\\u00e9\\ud83d\\ude00\\n\\\"\"],\n"
                    "  \"b\": {}, \"big\": 9007199254740992, \"bigger\": 9007199254740993, \"neg\": -9007199254740992,"
                    "  \"e\": 1.5e3, \"utf\": \"\xc3\xa9\xf0\x9f\x98\x80\", \"nul\": \"a\\u0000b\"} ";
    vox_json_doc *doc;
    vox_json_error err;
    CHECK(parse_n(s, strlen(s), &doc, &err) == VOX_OK, "%s at %zu", err.message, err.offset);
    if (!doc) return;
    const vox_json *root = vox_json_root(doc);
    CHECK(root->type == VOX_JSON_OBJECT && root->count == 8, "root");
    const vox_json *a = vox_json_get(root, "a");
    CHECK(a && a->type == VOX_JSON_ARRAY && a->count == 7, "a");
    const vox_json *v = a->child;
    CHECK(v->is_integer && v->integer == 1, "1");
    v = v->next;
    CHECK(!v->is_integer && v->number == 2.5, "2.5");
    v = v->next;
    CHECK(v->is_integer && v->integer == 0, "-0");
    v = v->next;
    CHECK(v->type == VOX_JSON_TRUE, "true");
    v = v->next;
    CHECK(v->type == VOX_JSON_FALSE, "false");
    v = v->next;
    CHECK(v->type == VOX_JSON_NULL, "null");
    v = v->next;
    CHECK(v->type == VOX_JSON_STRING && v->str_len == 9 && memcmp(v->str, "x\xc3\xa9\xf0\x9f\x98\x80\n\"", 9) == 0,
          "escapes decode to UTF-8");
    CHECK(v->next == NULL, "end of array");
    CHECK(vox_json_get(root, "b")->type == VOX_JSON_OBJECT && vox_json_get(root, "b")->count == 0, "b");
    uint64_t u;
    CHECK(vox_json_get_uint(vox_json_get(root, "big"), UINT64_MAX, &u) && u == 9007199254740992ull, "2^53 exact");
    CHECK(!vox_json_get(root, "bigger")->is_integer && vox_json_get(root, "bigger")->number == 9007199254740992.0,
          "2^53 + 1 is a double");
    CHECK(vox_json_get(root, "neg")->is_integer && vox_json_get(root, "neg")->integer == -9007199254740992LL, "-2^53");
    CHECK(!vox_json_get_uint(vox_json_get(root, "neg"), UINT64_MAX, NULL), "negative is not uint");
    CHECK(!vox_json_get(root, "e")->is_integer && vox_json_get(root, "e")->number == 1500.0, "1.5e3");
    CHECK(vox_json_is_string(vox_json_get(root, "utf"), "\xc3\xa9\xf0\x9f\x98\x80"), "raw UTF-8");
    const vox_json *nul = vox_json_get(root, "nul");
    CHECK(nul->str_len == 3 && nul->str[1] == '\0' && !vox_json_is_string(nul, "a"), "\\u0000 keeps its length");
    CHECK(vox_json_get(root, "missing") == NULL && vox_json_get(a, "a") == NULL, "get on missing / non-object");
    vox_json_free(doc);

    accept("0");
    accept("\"\"");
    accept("[]");
    accept("-1.0e-5");
    accept("1E+2");
    accept("[1e-400]"); /* underflows to 0: finite, accepted (as Python does) */
    accept("\"\\/\\b\\f\\r\\t\"");
    accept("\"\x7f\""); /* DEL is not a control character in JSON */
}

static void test_rejections(void) {
    reject("", "empty document");
    reject(" \n\t ", "empty document");
    reject("[1,]", "invalid number");
    reject("[1 2]", "',' or ']' expected");
    reject("{\"a\" 1}", "':' expected");
    reject("{\"a\":1,}", "object key");
    reject("{a:1}", "object key");
    reject("{\"a\":1 \"b\":2}", "',' or '}' expected");
    reject("[1] x", "unexpected data after");
    reject("[", "unexpected end");
    reject("{\"a\":", "unexpected end");
    reject("tru", "invalid literal");
    reject("nul", "invalid literal");
    reject("True", "invalid number");
    reject("NaN", "invalid number");
    reject("Infinity", "invalid number");
    reject("-Infinity", "invalid number");
    reject("01", "leading zero");
    reject("-", "invalid number");
    reject("+1", "invalid number");
    reject("1.", "digit expected after '.'");
    reject(".5", "invalid number");
    reject("1e", "digit expected in exponent");
    reject("1e+", "digit expected in exponent");
    reject("0x10", "unexpected data");
    reject("1e400", "out of range");
    reject("-1e400", "out of range");
    reject("\"abc", "unterminated string");
    reject("\"abc\\", "unterminated string");
    reject("\"a\tb\"", "control character");
    reject("\"a\nb\"", "control character");
    reject("\"\\x\"", "invalid escape");
    reject("\"\\u12zz\"", "invalid \\u escape");
    reject("\"\\u12", "truncated \\u escape");
    reject("\"\\ud800\"", "lone high surrogate");
    reject("\"\\ud800\\u0041\"", "lone high surrogate");
    reject("\"\\udc00\"", "lone low surrogate");
    reject("\"\xc0\x80\"", "invalid UTF-8");        /* overlong NUL */
    reject("\"\xe0\x80\x80\"", "invalid UTF-8");    /* overlong */
    reject("\"\xed\xa0\x80\"", "invalid UTF-8");    /* encoded surrogate */
    reject("\"\xf4\x90\x80\x80\"", "invalid UTF-8"); /* above U+10FFFF */
    reject("\"\xf5\x80\x80\x80\"", "invalid UTF-8");
    reject("\"\xc3\"", "invalid UTF-8");            /* truncated sequence */
    reject("\"\x80\"", "invalid UTF-8");            /* lone continuation */
    reject("\xef\xbb\xbf{}", "invalid number");     /* a byte-order mark is not JSON */
    reject("{\"a\":1,\"a\":2}", "duplicate key \"a\"");
    /* A large object is checked by sorting; the duplicate is found wherever it is. */
    char big[2048];
    size_t k = (size_t)snprintf(big, sizeof big, "{");
    for (int i = 0; i < 40; i++) k += (size_t)snprintf(big + k, sizeof big - k, "\"k%d\":%d,", i, i);
    snprintf(big + k, sizeof big - k, "\"k17\":0}");
    reject(big, "duplicate key \"k17\"");
    big[k] = '\0';
    snprintf(big + k, sizeof big - k, "\"k40\":0}");
    accept(big);
}

static void test_depth(void) {
    char buf[200];
    /* 64 nested arrays are allowed, 65 are not. */
    memset(buf, '[', 64);
    memset(buf + 64, ']', 64);
    buf[128] = '\0';
    accept(buf);
    memset(buf, '[', 65);
    memset(buf + 65, ']', 65);
    buf[130] = '\0';
    reject(buf, "nesting deeper than 64");
    /* A million open brackets: rejected at depth 65, no stack overflow. */
    size_t n = 1000000;
    char *deep = malloc(n);
    memset(deep, '[', n);
    vox_json_doc *doc;
    vox_json_error err;
    CHECK(vox_json_parse(deep, n, &doc, &err) == VOX_ERR_FORMAT && strstr(err.message, "nesting"), "deep: %s", err.message);
    memset(deep, '{', n);
    CHECK(vox_json_parse(deep, n, &doc, &err) == VOX_ERR_FORMAT, "deep objects");
    free(deep);
}

static void test_truncations(void) {
    /* Every proper prefix of a document is invalid; the parser must say so without reading past it. */
    const char *s = "{\"k\":[1,-2.5e3,\"s\\u00e9\\ud83d\\ude00\xc3\xa9\",true,false,null,{}],\"z\":\"\"}";
    size_t n = strlen(s);
    for (size_t i = 0; i < n; i++) {
        vox_json_doc *doc;
        vox_json_error err;
        vox_status st = parse_n(s, i, &doc, &err);
        CHECK(st == VOX_ERR_FORMAT && doc == NULL && err.offset <= i, "prefix %zu accepted or bad offset", i);
    }
    accept(s);
}

static void test_locale(void) {
    /* A host program's LC_NUMERIC must not change how numbers parse. */
    const char *locales[] = {"de_DE.UTF-8", "de_DE.utf8", "fr_FR.UTF-8", "fr_FR.utf8"};
    int tried = 0;
    for (size_t i = 0; i < sizeof locales / sizeof locales[0] && !tried; i++)
        if (setlocale(LC_NUMERIC, locales[i])) tried = 1;
    vox_json_doc *doc;
    CHECK(vox_json_parse("[2.5, 1e-6]", 11, &doc, NULL) == VOX_OK, "locale parse");
    if (doc) {
        CHECK(vox_json_root(doc)->child->number == 2.5, "2.5 under a comma locale");
        CHECK(vox_json_root(doc)->child->next->number == 1e-6, "1e-6 under a comma locale");
        vox_json_free(doc);
    }
    setlocale(LC_NUMERIC, "C");
    if (!tried) printf("json: no comma-decimal locale installed; locale test ran in C\n");
}

static void test_quote(void) {
    char q[16];
    CHECK(strcmp(vox_json_quote(q, sizeof q, "ab", 2), "\"ab\"") == 0, "%s", q);
    CHECK(strcmp(vox_json_quote(q, sizeof q, "a\n\"", 3), "\"a\\x0a\\\"\"") == 0, "%s", q);
    CHECK(strcmp(vox_json_quote(q, sizeof q, "abcdefghijklmnop", 16), "\"abcdefg...\"") == 0, "%s", q);
    CHECK(strlen(q) < sizeof q, "quote fits");
}

static uint64_t rng_state = 0x9E3779B97F4A7C15ull;
static uint32_t rnd(void) {
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return (uint32_t)(rng_state >> 16);
}

static void test_fuzz(void) {
    /* Random byte edits of a valid document: each parse ends in OK or FORMAT, nothing else. */
    const char *seed = "{\"format\":\"vox.tmod\",\"n\":[1,2.5e-3,-7],\"s\":\"\\u00e9\\ud83d\\ude00\",\"o\":{\"t\":true,"
                       "\"f\":false,\"z\":null},\"deep\":[[[[{\"x\":[]}]]]]}";
    size_t n = strlen(seed);
    static const char alphabet[] = "{}[]\",:\\u0123456789abcdefEe+-.tfn \t\n\x80\xc3\xed\xf0\xff";
    int ok = 0;
    for (int it = 0; it < 20000; it++) {
        char buf[256];
        memcpy(buf, seed, n);
        size_t len = n;
        int edits = 1 + (int)(rnd() % 4);
        for (int e = 0; e < edits; e++) {
            size_t at = rnd() % len;
            switch (rnd() % 3) {
            case 0: buf[at] = alphabet[rnd() % (sizeof alphabet - 1)]; break;
            case 1: len = at; break; /* truncate */
            default: memmove(buf + at, buf + at + 1, len - at - 1); len--; break;
            }
            if (len == 0) break;
        }
        vox_json_doc *doc;
        vox_json_error err;
        vox_status st = parse_n(buf, len, &doc, &err);
        CHECK(st == VOX_OK || st == VOX_ERR_FORMAT, "fuzz status %d", st);
        if (st == VOX_OK) ok++;
        vox_json_free(doc);
    }
    printf("json: fuzz 20000 mutations, %d still valid\n", ok);
}

/* The value limit: a document of exactly max values parses, one more is a FORMAT error naming the
 * limit (and allocates no more nodes than the limit); vox_json_parse's default is VOX_JSON_MAX_VALUES. */
static void test_value_limit(void) {
    static const char *const docs[] = {"[0,0,0,0,0,0,0]", "[[],[],[],[],[],[],[]]", "{\"a\":{},\"b\":[\"x\",\"y\"],\"c\":0}",
                                       "[\"a\",[\"b\",{\"c\":[1]}],2]"};
    for (size_t i = 0; i < sizeof docs / sizeof docs[0]; i++) {
        vox_json_doc *doc;
        vox_json_error err;
        size_t values = 0;
        for (size_t limit = 1; limit < 16; limit++) { /* the smallest limit that parses is the value count */
            vox_status st = vox_json_parse_limit(docs[i], strlen(docs[i]), limit, &doc, &err);
            vox_json_free(doc);
            if (st == VOX_OK) {
                values = limit;
                break;
            }
            CHECK(st == VOX_ERR_FORMAT && strstr(err.message, "values in one document"), "%s: %s", docs[i], err.message);
        }
        static const size_t want[] = {8, 8, 6, 8};
        CHECK(values == want[i], "%s: %zu values, expected %zu", docs[i], values, want[i]);
    }
    /* the default limit, on 2^20 + 1 values (2 MiB of text) */
    size_t n = VOX_JSON_MAX_VALUES; /* elements: with the array itself, one value too many */
    char *big = malloc(2 * n + 2);
    big[0] = '[';
    for (size_t i = 0; i < n; i++) memcpy(big + 1 + 2 * i, "0,", 2);
    big[2 * n] = ']';
    vox_json_doc *doc;
    vox_json_error err;
    CHECK(vox_json_parse(big, 2 * n + 1, &doc, &err) == VOX_ERR_FORMAT && strstr(err.message, "more than 1048576 values"),
          "%s", err.message);
    big[2 * n - 2] = ']'; /* n - 1 elements: exactly the limit */
    CHECK(vox_json_parse(big, 2 * n - 1, &doc, &err) == VOX_OK, "%s", err.message);
    CHECK(doc && vox_json_root(doc)->count == n - 1, "count");
    vox_json_free(doc);
    free(big);
}

int main(void) {
    test_values();
    test_value_limit();
    test_rejections();
    test_depth();
    test_truncations();
    test_locale();
    test_quote();
    test_fuzz();
    if (fails == 0) printf("json: all checks passed\n");
    return fails != 0;
}
