/* Internal: a small, strict JSON parser (RFC 8259) for .tmod manifests.
 *
 * Strict means: UTF-8 only (overlongs, surrogates and code points above U+10FFFF rejected), no
 * comments, no trailing commas, no NaN/Infinity, no leading zeros, no control characters in strings,
 * no lone surrogate escapes, no duplicate keys in an object, containers nested at most
 * VOX_JSON_MAX_DEPTH deep, at most VOX_JSON_MAX_VALUES values in a document. The parser never reads
 * outside [text, text + len) (the text need not be NUL-terminated), its recursion is bounded by the
 * depth limit and its memory by the value limit: one node (sizeof(vox_json)) per value, plus len + 1
 * bytes for the decoded strings.
 *
 * The document is a tree of vox_json nodes owned by a vox_json_doc; node pointers stay valid until
 * vox_json_free. Strings are decoded (escapes resolved) and NUL-terminated; they may contain NUL
 * bytes (\u0000), so compare with their length.
 */
#ifndef VOX_JSON_H
#define VOX_JSON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "vox.h"

#define VOX_JSON_MAX_DEPTH 64
/* Values (nodes: every scalar, array and object, the root included) in one document. A value can take
 * as little as 2 bytes of text ("0,") and its node ~90 bytes: without a limit, parsing costs up to
 * ~45 bytes per byte of input. 2^20 values (at most ~90 MiB of nodes) is 7x a 151k-token vocab.json. */
#define VOX_JSON_MAX_VALUES ((size_t)1 << 20)
/* Integers are exact up to 2^53 in magnitude (what a double, and JavaScript, represent exactly). */
#define VOX_JSON_MAX_EXACT_INT 9007199254740992LL

typedef enum vox_json_type {
    VOX_JSON_NULL,
    VOX_JSON_FALSE,
    VOX_JSON_TRUE,
    VOX_JSON_NUMBER,
    VOX_JSON_STRING,
    VOX_JSON_ARRAY,
    VOX_JSON_OBJECT
} vox_json_type;

typedef struct vox_json {
    vox_json_type type;
    const char *key;           /* member name when the parent is an object, else NULL */
    size_t key_len;
    const char *str;           /* VOX_JSON_STRING: decoded UTF-8, NUL-terminated */
    size_t str_len;
    double number;             /* VOX_JSON_NUMBER: the value, correctly rounded */
    int64_t integer;           /* ... and exactly, when is_integer */
    bool is_integer;           /* written without fraction or exponent and |value| <= 2^53 */
    size_t count;              /* ARRAY / OBJECT: number of children */
    const struct vox_json *child; /* first child, in document order */
    const struct vox_json *next;  /* next sibling */
} vox_json;

typedef struct vox_json_doc vox_json_doc;

typedef struct vox_json_error {
    size_t offset;             /* byte offset of the problem in the text */
    char message[160];
} vox_json_error;

/* Parses text[0..len). VOX_OK and *out set, or VOX_ERR_FORMAT (err describes the syntax error) or
 * VOX_ERR_OUT_OF_MEMORY; *out is NULL on failure. Does not touch the thread's error message. */
vox_status vox_json_parse(const char *text, size_t len, vox_json_doc **out, vox_json_error *err);
/* The same with at most max_values values (instead of VOX_JSON_MAX_VALUES); more is VOX_ERR_FORMAT. */
vox_status vox_json_parse_limit(const char *text, size_t len, size_t max_values, vox_json_doc **out,
                                vox_json_error *err);
void vox_json_free(vox_json_doc *doc);
const vox_json *vox_json_root(const vox_json_doc *doc);

/* The member `key` of an object (NULL if obj is not an object or has no such member). */
const vox_json *vox_json_get(const vox_json *obj, const char *key);
/* Whether v is a string equal to s. */
bool vox_json_is_string(const vox_json *v, const char *s);
/* Whether v is an exact integer in [0, max]; stores it in *out if so. */
bool vox_json_get_uint(const vox_json *v, uint64_t max, uint64_t *out);

/* Writes s[0..n) into dst (capacity cap >= 8) as a one-line, double-quoted, printable string for
 * error messages: '"', '\\' and bytes outside 0x20..0x7E become escapes, and a long string is
 * shortened with "...". Returns dst. */
char *vox_json_quote(char *dst, size_t cap, const char *s, size_t n);

#endif
