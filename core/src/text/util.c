/* UTF-8 helpers, the item list and the override lookup of the text normalization. Letter case is ASCII only, as in the
 * Python twin (normalize.py), so both treat every input alike. */
#include <stdlib.h>
#include <string.h>

#include "text/text.h"
#include "unicode/unicode.h"

size_t vt_next(const char *s, size_t n, size_t i, uint32_t *cp) {
    size_t k = vx_utf8_decode(s, n, i, cp, NULL);
    if (k == 0) { /* not reached on validated text; one byte keeps loops moving */
        *cp = 0xFFFD;
        return 1;
    }
    return k;
}

size_t vt_prev(const char *s, size_t i) {
    size_t k = i - 1;
    while (k > 0 && ((unsigned char)s[k] & 0xC0) == 0x80) k--;
    return k;
}

size_t vt_count(const char *s, size_t n) {
    size_t c = 0;
    for (size_t i = 0; i < n; i++)
        if (((unsigned char)s[i] & 0xC0) != 0x80) c++;
    return c;
}

bool vt_is_ws(uint32_t c) {
    return c == ' ' || (c >= 0x09 && c <= 0x0D) || c == 0xA0 || c == 0x2028 || c == 0x2029 || c == 0x3000 ||
           c == 0x202F || c == 0x205F || (c >= 0x2000 && c <= 0x200A);
}

bool vt_in(uint32_t cp, const char *set) {
    size_t n = strlen(set);
    for (size_t i = 0; i < n;) {
        uint32_t c;
        i += vt_next(set, n, i, &c);
        if (c == cp) return true;
    }
    return false;
}

/* Non-ASCII characters count as letters unless they are one of these marks (normalize.py). */
#define NON_ASCII_MARKS "\u201c\u201d\u2018\u2019\u2013\u2014\u2212\u2026\u00a2\u00a3\u20ac\u00b0"

bool vt_is_alpha(uint32_t c) {
    if (c < 0x80) return vt_is_upper(c) || vt_is_lower(c);
    return !vt_in(c, NON_ASCII_MARKS) && !vt_is_ws(c);
}

void vt_lower(char *dst, const char *s, size_t n) {
    for (size_t i = 0; i < n; i++) dst[i] = (s[i] >= 'A' && s[i] <= 'Z') ? (char)(s[i] + 32) : s[i];
}

void vt_upper(char *dst, const char *s, size_t n) {
    for (size_t i = 0; i < n; i++) dst[i] = (s[i] >= 'a' && s[i] <= 'z') ? (char)(s[i] - 32) : s[i];
}

bool vt_eq(const char *s, size_t n, const char *lit) {
    size_t m = strlen(lit);
    return m == n && memcmp(s, lit, n) == 0;
}

bool vt_ends(const char *s, size_t n, const char *lit) {
    size_t m = strlen(lit);
    return m <= n && memcmp(s + n - m, lit, m) == 0;
}

bool vt_is_initialism(const char *s, size_t n) {
    size_t k = 0; /* character index */
    if (n == 0) return false;
    for (size_t i = 0; i < n; k++) {
        uint32_t c;
        i += vt_next(s, n, i, &c);
        if ((k % 2 == 0 && !vt_is_alpha(c)) || (k % 2 == 1 && c != '.')) return false;
    }
    return k >= 3;
}

/* ---- items ---- */
void vt_items_push(vt_items *it, char kind, const char *s, size_t n) {
    if (it->failed) return;
    if (it->n == it->cap) {
        size_t cap = it->cap ? it->cap * 2 : 64;
        vt_item *v = realloc(it->v, cap * sizeof *v);
        if (!v) {
            it->failed = true;
            return;
        }
        it->v = v;
        it->cap = cap;
    }
    size_t off = it->text.len;
    vx_buf_append(&it->text, s, n);
    vx_buf_append(&it->text, "", 1); /* keeps every item NUL-terminated */
    if (it->text.failed) {
        it->failed = true;
        return;
    }
    it->v[it->n++] = (vt_item){kind, off, n};
}

void vt_items_words(vt_items *it, const char *words) {
    const char *p = words;
    while (*p) {
        const char *e = strchr(p, ' ');
        size_t n = e ? (size_t)(e - p) : strlen(p);
        vt_items_push(it, 'w', p, n);
        p += n;
        if (*p == ' ') p++;
    }
}

void vt_items_set_last(vt_items *it, const char *s, size_t n) {
    if (it->failed || it->n == 0) return;
    size_t off = it->text.len;
    vx_buf_append(&it->text, s, n);
    vx_buf_append(&it->text, "", 1);
    if (it->text.failed) {
        it->failed = true;
        return;
    }
    it->v[it->n - 1].off = off;
    it->v[it->n - 1].len = n;
}

const char *vt_item_text(const vt_items *it, size_t i) { return it->text.s + it->v[i].off; }

void vt_items_free(vt_items *it) {
    free(it->v);
    vx_buf_free(&it->text);
    memset(it, 0, sizeof *it);
}

/* Exact key first, then the first key (document order) equal ignoring ASCII case. */
const char *vt_override_get(const vt_overrides *ov, const char *w, size_t n) {
    if (!ov || !ov->obj) return NULL;
    for (const vox_json *v = ov->obj->child; v; v = v->next)
        if (v->key_len == n && memcmp(v->key, w, n) == 0) return v->str;
    for (const vox_json *v = ov->obj->child; v; v = v->next) {
        if (v->key_len != n) continue;
        size_t i = 0;
        for (; i < n; i++) {
            char a = v->key[i], b = w[i];
            if (a >= 'A' && a <= 'Z') a = (char)(a + 32);
            if (b >= 'A' && b <= 'Z') b = (char)(b + 32);
            if (a != b) break;
        }
        if (i == n) return v->str;
    }
    return NULL;
}
