#include "strbuf.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static bool reserve(vx_buf *b, size_t extra) {
    if (b->failed) return false;
    if (b->len + extra + 1 <= b->cap) return true;
    size_t cap = b->cap ? b->cap : 256;
    while (cap < b->len + extra + 1) cap *= 2;
    char *s = realloc(b->s, cap);
    if (!s) {
        b->failed = true;
        return false;
    }
    b->s = s;
    b->cap = cap;
    return true;
}

void vx_buf_append(vx_buf *b, const char *s, size_t n) {
    if (!reserve(b, n)) return;
    memcpy(b->s + b->len, s, n);
    b->len += n;
    b->s[b->len] = '\0';
}

void vx_buf_printf(vx_buf *b, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0 || !reserve(b, (size_t)n)) return;
    va_start(ap, fmt);
    vsnprintf(b->s + b->len, (size_t)n + 1, fmt, ap);
    va_end(ap);
    b->len += (size_t)n;
}

void vx_buf_json_string(vx_buf *b, const char *s, size_t n) {
    if (!s) s = "";
    if (n == (size_t)-1) n = strlen(s);
    vx_buf_append(b, "\"", 1);
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c == '"' || c == '\\') {
            char e[2] = {'\\', (char)c};
            vx_buf_append(b, e, 2);
        } else if (c < 0x20) {
            vx_buf_printf(b, "\\u%04x", c);
        } else {
            vx_buf_append(b, (const char *)&s[i], 1);
        }
    }
    vx_buf_append(b, "\"", 1);
}

char *vx_buf_take(vx_buf *b) {
    char *s = b->failed ? NULL : b->s;
    if (b->failed) free(b->s);
    if (s == NULL && !b->failed) s = calloc(1, 1);
    b->s = NULL;
    b->len = b->cap = 0;
    b->failed = false;
    return s;
}

void vx_buf_free(vx_buf *b) {
    free(b->s);
    b->s = NULL;
    b->len = b->cap = 0;
}
