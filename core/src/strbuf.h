/* Internal: a growable string buffer, for building JSON (engine info, voice info, devices). */
#ifndef VOX_STRBUF_H
#define VOX_STRBUF_H

#include <stdbool.h>
#include <stddef.h>

typedef struct vx_buf {
    char *s;       /* NUL-terminated; NULL until the first append */
    size_t len, cap;
    bool failed;   /* an allocation failed: the content is incomplete */
} vx_buf;

void vx_buf_printf(vx_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void vx_buf_append(vx_buf *b, const char *s, size_t n);
/* Append s (n bytes, or strlen(s) if n == (size_t)-1) as a JSON string literal with escapes. */
void vx_buf_json_string(vx_buf *b, const char *s, size_t n);
/* The string (caller frees), or NULL if an allocation failed (the buffer is freed either way). */
char *vx_buf_take(vx_buf *b);
void vx_buf_free(vx_buf *b);

#endif
