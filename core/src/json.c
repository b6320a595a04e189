/* A small, strict, bounds-checked JSON parser (see json.h for what "strict" means).
 *
 * Nodes come from fixed-size blocks chained in a list, so a node's address never changes while the
 * document grows (no realloc, no index fix-ups). Decoded strings go into one buffer of len + 1 bytes,
 * allocated up front: a string's decoded form is never longer than its source (every escape shrinks
 * or keeps its size, raw UTF-8 is copied as is), and its terminating NUL takes the place of a quote.
 */
#include "json.h"

#include <locale.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NODES_PER_BLOCK 1024

typedef struct node_block {
    struct node_block *next;
    size_t used;
    vox_json nodes[NODES_PER_BLOCK];
} node_block;

struct vox_json_doc {
    node_block *blocks;
    char *strings;
    vox_json *root;
};

typedef struct parser {
    const char *s;
    size_t len, pos;
    vox_json_doc *doc;
    size_t str_used;
    size_t values, max_values;
    vox_json_error *err;
    bool oom;
} parser;

static bool fail(parser *p, const char *fmt, const char *detail) {
    if (p->err && !p->oom) {
        p->err->offset = p->pos;
        snprintf(p->err->message, sizeof p->err->message, fmt, detail ? detail : "");
    }
    return false;
}

static vox_json *new_node(parser *p, vox_json_type type) {
    if (p->values == p->max_values) {
        char n[32];
        snprintf(n, sizeof n, "%zu", p->max_values);
        fail(p, "more than %s values in one document", n);
        return NULL;
    }
    p->values++;
    node_block *b = p->doc->blocks;
    if (!b || b->used == NODES_PER_BLOCK) {
        node_block *nb = malloc(sizeof *nb);
        if (!nb) {
            p->oom = true;
            return NULL;
        }
        nb->next = b;
        nb->used = 0;
        p->doc->blocks = b = nb;
    }
    vox_json *n = &b->nodes[b->used++];
    memset(n, 0, sizeof *n);
    n->type = type;
    return n;
}

static void skip_ws(parser *p) {
    while (p->pos < p->len) {
        char c = p->s[p->pos];
        if (c != ' ' && c != '\t' && c != '\n' && c != '\r') break;
        p->pos++;
    }
}

static int peek(const parser *p) { return p->pos < p->len ? (unsigned char)p->s[p->pos] : -1; }

static bool literal(parser *p, const char *word, vox_json_type type, vox_json **out) {
    size_t n = strlen(word);
    if (p->len - p->pos < n || memcmp(p->s + p->pos, word, n) != 0) return fail(p, "invalid literal%s", "");
    p->pos += n;
    return (*out = new_node(p, type)) != NULL;
}

/* ---------------------------------------------------------------------------------------- strings */
static int hexval(int c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

/* Reads the 4 hex digits of a \u escape at p->pos (just after the 'u'). */
static bool hex4(parser *p, uint32_t *out) {
    if (p->len - p->pos < 4) return fail(p, "truncated \\u escape%s", "");
    uint32_t v = 0;
    for (int i = 0; i < 4; i++) {
        int h = hexval((unsigned char)p->s[p->pos + (size_t)i]);
        if (h < 0) return fail(p, "invalid \\u escape%s", "");
        v = v << 4 | (uint32_t)h;
    }
    p->pos += 4;
    *out = v;
    return true;
}

static size_t put_utf8(char *dst, uint32_t cp) {
    if (cp < 0x80) {
        dst[0] = (char)cp;
        return 1;
    }
    if (cp < 0x800) {
        dst[0] = (char)(0xC0 | cp >> 6);
        dst[1] = (char)(0x80 | (cp & 0x3F));
        return 2;
    }
    if (cp < 0x10000) {
        dst[0] = (char)(0xE0 | cp >> 12);
        dst[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
        dst[2] = (char)(0x80 | (cp & 0x3F));
        return 3;
    }
    dst[0] = (char)(0xF0 | cp >> 18);
    dst[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
    dst[2] = (char)(0x80 | ((cp >> 6) & 0x3F));
    dst[3] = (char)(0x80 | (cp & 0x3F));
    return 4;
}

/* Length of the well-formed UTF-8 sequence at s[0..avail), or 0 (Unicode 15, table 3-7). */
static size_t utf8_seq(const unsigned char *s, size_t avail) {
    unsigned c = s[0];
    size_t n;
    unsigned lo = 0x80, hi = 0xBF;
    if (c < 0x80) return 1;
    if (c >= 0xC2 && c <= 0xDF) n = 2;
    else if (c >= 0xE0 && c <= 0xEF) {
        n = 3;
        if (c == 0xE0) lo = 0xA0;      /* overlong */
        if (c == 0xED) hi = 0x9F;      /* UTF-16 surrogates */
    } else if (c >= 0xF0 && c <= 0xF4) {
        n = 4;
        if (c == 0xF0) lo = 0x90;      /* overlong */
        if (c == 0xF4) hi = 0x8F;      /* above U+10FFFF */
    } else
        return 0;
    if (avail < n) return 0;
    if (s[1] < lo || s[1] > hi) return 0;
    for (size_t i = 2; i < n; i++)
        if (s[i] < 0x80 || s[i] > 0xBF) return 0;
    return n;
}

/* Parses a string starting at the opening quote; the decoded bytes go to the string buffer. */
static bool parse_string(parser *p, const char **out, size_t *out_len) {
    p->pos++; /* opening quote */
    char *dst = p->doc->strings + p->str_used;
    size_t n = 0;
    for (;;) {
        if (p->pos >= p->len) return fail(p, "unterminated string%s", "");
        unsigned char c = (unsigned char)p->s[p->pos];
        if (c == '"') {
            p->pos++;
            break;
        }
        if (c < 0x20) return fail(p, "control character in string%s", "");
        if (c == '\\') {
            if (p->pos + 1 >= p->len) return fail(p, "unterminated string%s", "");
            char e = p->s[p->pos + 1];
            p->pos += 2;
            switch (e) {
            case '"': dst[n++] = '"'; break;
            case '\\': dst[n++] = '\\'; break;
            case '/': dst[n++] = '/'; break;
            case 'b': dst[n++] = '\b'; break;
            case 'f': dst[n++] = '\f'; break;
            case 'n': dst[n++] = '\n'; break;
            case 'r': dst[n++] = '\r'; break;
            case 't': dst[n++] = '\t'; break;
            case 'u': {
                uint32_t cp;
                if (!hex4(p, &cp)) return false;
                if (cp >= 0xDC00 && cp <= 0xDFFF) return fail(p, "lone low surrogate in \\u escape%s", "");
                if (cp >= 0xD800 && cp <= 0xDBFF) {
                    uint32_t lo;
                    if (p->len - p->pos < 2 || p->s[p->pos] != '\\' || p->s[p->pos + 1] != 'u')
                        return fail(p, "lone high surrogate in \\u escape%s", "");
                    p->pos += 2;
                    if (!hex4(p, &lo)) return false;
                    if (lo < 0xDC00 || lo > 0xDFFF) return fail(p, "lone high surrogate in \\u escape%s", "");
                    cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
                }
                n += put_utf8(dst + n, cp);
                break;
            }
            default:
                p->pos -= 2;
                return fail(p, "invalid escape in string%s", "");
            }
            continue;
        }
        size_t k = utf8_seq((const unsigned char *)p->s + p->pos, p->len - p->pos);
        if (!k) return fail(p, "invalid UTF-8 in string%s", "");
        memcpy(dst + n, p->s + p->pos, k);
        n += k;
        p->pos += k;
    }
    dst[n] = '\0';
    p->str_used += n + 1;
    *out = dst;
    *out_len = n;
    return true;
}

/* ---------------------------------------------------------------------------------------- numbers */
/* strtod honours LC_NUMERIC; a host program may have set a locale whose decimal point is ','.
 * Rewrite the '.' into the current locale's decimal point in a private copy before converting. */
static double to_double(const char *s, size_t n, bool *ok) {
    char small[64];
    const char *dp = localeconv()->decimal_point;
    size_t dpl = dp && *dp ? strlen(dp) : 1;
    size_t cap = n + dpl + 1;
    char *buf = cap <= sizeof small ? small : malloc(cap);
    if (!buf) {
        *ok = false;
        return 0;
    }
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        if (s[i] == '.' && dp && *dp) {
            memcpy(buf + k, dp, dpl);
            k += dpl;
        } else
            buf[k++] = s[i];
    }
    buf[k] = '\0';
    char *end = NULL;
    double v = strtod(buf, &end);
    *ok = end == buf + k;
    if (buf != small) free(buf);
    return v;
}

static bool parse_number(parser *p, vox_json **out) {
    size_t start = p->pos;
    bool neg = false, frac = false;
    if (peek(p) == '-') {
        neg = true;
        p->pos++;
    }
    int c = peek(p);
    if (c == '0') {
        p->pos++;
        c = peek(p);
        if (c >= '0' && c <= '9') return fail(p, "leading zero in number%s", "");
    } else if (c >= '1' && c <= '9') {
        while ((c = peek(p)) >= '0' && c <= '9') p->pos++;
    } else
        return fail(p, "invalid number%s", "");
    size_t int_end = p->pos;
    if (peek(p) == '.') {
        frac = true;
        p->pos++;
        if (!((c = peek(p)) >= '0' && c <= '9')) return fail(p, "digit expected after '.'%s", "");
        while ((c = peek(p)) >= '0' && c <= '9') p->pos++;
    }
    if (peek(p) == 'e' || peek(p) == 'E') {
        frac = true;
        p->pos++;
        if (peek(p) == '+' || peek(p) == '-') p->pos++;
        if (!((c = peek(p)) >= '0' && c <= '9')) return fail(p, "digit expected in exponent%s", "");
        while ((c = peek(p)) >= '0' && c <= '9') p->pos++;
    }
    vox_json *n = new_node(p, VOX_JSON_NUMBER);
    if (!n) return false;
    if (!frac) {
        /* Exact integer path: accumulate digits while the magnitude stays within 2^53. */
        uint64_t v = 0;
        bool exact = true;
        for (size_t i = start + (neg ? 1 : 0); i < int_end; i++) {
            v = v * 10 + (uint64_t)(p->s[i] - '0');
            if (v > (uint64_t)VOX_JSON_MAX_EXACT_INT) {
                exact = false;
                break;
            }
        }
        if (exact) {
            n->is_integer = true;
            n->integer = neg ? -(int64_t)v : (int64_t)v;
            n->number = (double)n->integer;
            *out = n;
            return true;
        }
    }
    bool ok;
    double d = to_double(p->s + start, p->pos - start, &ok);
    if (!ok) {
        if (p->oom) return false;
        p->pos = start;
        return fail(p, "invalid number%s", "");
    }
    if (!isfinite(d)) {
        p->pos = start;
        return fail(p, "number out of range%s", "");
    }
    n->number = d;
    *out = n;
    return true;
}

/* ------------------------------------------------------------------------------------- containers */
static bool parse_value(parser *p, int depth, vox_json **out);

static int key_cmp(const void *a, const void *b) {
    const vox_json *x = *(const vox_json *const *)a, *y = *(const vox_json *const *)b;
    size_t n = x->key_len < y->key_len ? x->key_len : y->key_len;
    int c = memcmp(x->key, y->key, n);
    if (c) return c;
    return (x->key_len > y->key_len) - (x->key_len < y->key_len);
}

/* Duplicate keys make "which value wins" reader-dependent; reject them. Small objects are checked
 * pairwise, large ones by sorting (so a hostile object of many keys costs n log n, not n^2). */
static bool check_duplicates(parser *p, vox_json *obj) {
    if (obj->count < 2) return true;
    const vox_json *dup = NULL;
    if (obj->count <= 16) {
        for (const vox_json *a = obj->child; a && !dup; a = a->next)
            for (const vox_json *b = a->next; b; b = b->next)
                if (a->key_len == b->key_len && memcmp(a->key, b->key, a->key_len) == 0) {
                    dup = a;
                    break;
                }
    } else {
        const vox_json **v = malloc(obj->count * sizeof *v);
        if (!v) {
            p->oom = true;
            return false;
        }
        size_t i = 0;
        for (const vox_json *a = obj->child; a; a = a->next) v[i++] = a;
        qsort(v, obj->count, sizeof *v, key_cmp);
        for (i = 1; i < obj->count && !dup; i++)
            if (key_cmp(&v[i - 1], &v[i]) == 0) dup = v[i];
        free(v);
    }
    if (dup) {
        char q[64];
        return fail(p, "duplicate key %s in object", vox_json_quote(q, sizeof q, dup->key, dup->key_len));
    }
    return true;
}

static bool parse_container(parser *p, int depth, bool is_object, vox_json **out) {
    if (depth >= VOX_JSON_MAX_DEPTH) return fail(p, "nesting deeper than 64 levels%s", "");
    vox_json *c = new_node(p, is_object ? VOX_JSON_OBJECT : VOX_JSON_ARRAY);
    if (!c) return false;
    const char close = is_object ? '}' : ']';
    vox_json *last = NULL;
    p->pos++; /* opening bracket */
    skip_ws(p);
    if (peek(p) == close) {
        p->pos++;
        *out = c;
        return true;
    }
    for (;;) {
        const char *key = NULL;
        size_t key_len = 0;
        if (is_object) {
            skip_ws(p);
            if (peek(p) != '"') return fail(p, "object key (a string) expected%s", "");
            if (!parse_string(p, &key, &key_len)) return false;
            skip_ws(p);
            if (peek(p) != ':') return fail(p, "':' expected after object key%s", "");
            p->pos++;
        }
        vox_json *v;
        if (!parse_value(p, depth + 1, &v)) return false;
        v->key = key;
        v->key_len = key_len;
        if (last) last->next = v;
        else c->child = v;
        last = v;
        c->count++;
        skip_ws(p);
        int ch = peek(p);
        if (ch == ',') {
            p->pos++;
            continue;
        }
        if (ch == close) {
            p->pos++;
            break;
        }
        return fail(p, is_object ? "',' or '}' expected%s" : "',' or ']' expected%s", "");
    }
    if (is_object && !check_duplicates(p, c)) return false;
    *out = c;
    return true;
}

static bool parse_value(parser *p, int depth, vox_json **out) {
    skip_ws(p);
    switch (peek(p)) {
    case '{': return parse_container(p, depth, true, out);
    case '[': return parse_container(p, depth, false, out);
    case '"': {
        vox_json *n = new_node(p, VOX_JSON_STRING);
        if (!n) return false;
        *out = n;
        return parse_string(p, &n->str, &n->str_len);
    }
    case 't': return literal(p, "true", VOX_JSON_TRUE, out);
    case 'f': return literal(p, "false", VOX_JSON_FALSE, out);
    case 'n': return literal(p, "null", VOX_JSON_NULL, out);
    case -1: return fail(p, "unexpected end of document%s", "");
    default: return parse_number(p, out);
    }
}

/* ------------------------------------------------------------------------------------------ API */
void vox_json_free(vox_json_doc *doc) {
    if (!doc) return;
    node_block *b = doc->blocks;
    while (b) {
        node_block *next = b->next;
        free(b);
        b = next;
    }
    free(doc->strings);
    free(doc);
}

vox_status vox_json_parse(const char *text, size_t len, vox_json_doc **out, vox_json_error *err) {
    return vox_json_parse_limit(text, len, VOX_JSON_MAX_VALUES, out, err);
}

vox_status vox_json_parse_limit(const char *text, size_t len, size_t max_values, vox_json_doc **out,
                                vox_json_error *err) {
    vox_json_error scratch;
    if (!err) err = &scratch;
    err->offset = 0;
    err->message[0] = '\0';
    if (!out) return VOX_ERR_INVALID_ARGUMENT;
    *out = NULL;
    if (!text && len) return VOX_ERR_INVALID_ARGUMENT;
    vox_json_doc *doc = calloc(1, sizeof *doc);
    if (!doc || !(doc->strings = malloc(len + 1))) {
        free(doc);
        snprintf(err->message, sizeof err->message, "out of memory");
        return VOX_ERR_OUT_OF_MEMORY;
    }
    parser p = {.s = text, .len = len, .doc = doc, .err = err, .max_values = max_values};
    vox_json *root = NULL;
    bool ok;
    skip_ws(&p);
    if (p.pos == len) ok = fail(&p, "empty document%s", "");
    else ok = parse_value(&p, 0, &root);
    if (ok) {
        skip_ws(&p);
        if (p.pos != len) ok = fail(&p, "unexpected data after the document%s", "");
    }
    if (!ok) {
        vox_json_free(doc);
        if (p.oom) {
            snprintf(err->message, sizeof err->message, "out of memory");
            return VOX_ERR_OUT_OF_MEMORY;
        }
        return VOX_ERR_FORMAT;
    }
    doc->root = root;
    *out = doc;
    return VOX_OK;
}

const vox_json *vox_json_root(const vox_json_doc *doc) { return doc ? doc->root : NULL; }

const vox_json *vox_json_get(const vox_json *obj, const char *key) {
    if (!obj || obj->type != VOX_JSON_OBJECT || !key) return NULL;
    size_t n = strlen(key);
    for (const vox_json *c = obj->child; c; c = c->next)
        if (c->key_len == n && memcmp(c->key, key, n) == 0) return c;
    return NULL;
}

bool vox_json_is_string(const vox_json *v, const char *s) {
    if (!v || v->type != VOX_JSON_STRING || !s) return false;
    size_t n = strlen(s);
    return v->str_len == n && memcmp(v->str, s, n) == 0;
}

bool vox_json_get_uint(const vox_json *v, uint64_t max, uint64_t *out) {
    if (!v || v->type != VOX_JSON_NUMBER || !v->is_integer || v->integer < 0 || (uint64_t)v->integer > max)
        return false;
    if (out) *out = (uint64_t)v->integer;
    return true;
}

char *vox_json_quote(char *dst, size_t cap, const char *s, size_t n) {
    static const char hex[] = "0123456789abcdef";
    size_t k = 0;
    dst[k++] = '"';
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        /* Room for the longest escape (4), the closing quote, "..." and the NUL. */
        if (k + 4 + 1 + 3 + 1 > cap) {
            memcpy(dst + k, "...", 3);
            k += 3;
            break;
        }
        if (c == '"' || c == '\\') {
            dst[k++] = '\\';
            dst[k++] = (char)c;
        } else if (c < 0x20 || c > 0x7E) {
            dst[k++] = '\\';
            dst[k++] = 'x';
            dst[k++] = hex[c >> 4];
            dst[k++] = hex[c & 15];
        } else
            dst[k++] = (char)c;
    }
    dst[k++] = '"';
    dst[k] = '\0';
    return dst;
}
