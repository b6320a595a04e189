/* Internal to core/src/kokoro/text/: the pieces the frontend is built from. */
#ifndef VOX_KOKORO_TEXT_INTERNAL_H
#define VOX_KOKORO_TEXT_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "json.h"
#include "strbuf.h"
#include "vox.h"

/* ---- UTF-8 on valid text (the frontend checks validity once, at its entry) ---- */
/* Decodes the code point at s[i] (i < n) and returns its length. */
size_t kt_next(const char *s, size_t n, size_t i, uint32_t *cp);
/* The start of the code point that ends just before s[i] (i > 0). */
size_t kt_prev(const char *s, size_t i);
/* Number of code points in s[0..n). */
size_t kt_count(const char *s, size_t n);
bool kt_is_ws(uint32_t cp);
bool kt_is_alpha(uint32_t cp);
static inline bool kt_is_digit(uint32_t c) { return c >= '0' && c <= '9'; }
static inline bool kt_is_upper(uint32_t c) { return c >= 'A' && c <= 'Z'; }
static inline bool kt_is_lower(uint32_t c) { return c >= 'a' && c <= 'z'; }
/* ASCII-lowercase / uppercase copy of s[0..n) into dst (n bytes). */
void kt_lower(char *dst, const char *s, size_t n);
void kt_upper(char *dst, const char *s, size_t n);
bool kt_eq(const char *s, size_t n, const char *lit);
bool kt_ends(const char *s, size_t n, const char *lit);
/* Whether cp is in the UTF-8 string set (each code point a member). */
bool kt_in(uint32_t cp, const char *set);
/* "U.S.", "e.g": letters joined by dots. */
bool kt_is_initialism(const char *s, size_t n);

/* ---- items: what normalization hands to G2P ---- */
typedef struct kt_item {
    char kind;     /* 'w' word, 'p' punctuation symbol, 'o' override phonemes */
    size_t off, len;
} kt_item;

typedef struct kt_items {
    kt_item *v;
    size_t n, cap;
    vx_buf text;   /* the items' bytes */
    bool failed;
} kt_items;

void kt_items_push(kt_items *it, char kind, const char *s, size_t n);
/* Pushes each space-separated word of a literal as a 'w' item. */
void kt_items_words(kt_items *it, const char *words);
/* Replaces the text of the last item. */
void kt_items_set_last(kt_items *it, const char *s, size_t n);
const char *kt_item_text(const kt_items *it, size_t i);
void kt_items_free(kt_items *it);

/* ---- the packed lexicon (docs/formats.md) ---- */
typedef struct kt_lexicon {
    const unsigned char *blob;
    size_t nbytes;
    uint32_t count;
} kt_lexicon;

/* VOX_ERR_FORMAT (message set) when the blob is malformed. Every offset is checked once, so lookups
 * never read outside the blob. */
vox_status kt_lexicon_init(kt_lexicon *lx, const void *blob, size_t nbytes);
/* The phonemes of key s[0..n) (NUL-terminated, inside the blob) or NULL. */
const char *kt_lexicon_get(const kt_lexicon *lx, const char *s, size_t n);

/* ---- user overrides (a validated JSON object word -> phonemes) ---- */
typedef struct kt_overrides {
    vox_json_doc *doc;
    const vox_json *obj;   /* NULL: none */
} kt_overrides;

const char *kt_override_get(const kt_overrides *ov, const char *w, size_t n);

/* ---- numbers as words ---- */
void kt_num_cardinal(kt_items *it, const char *digits, size_t n);
void kt_num_digits(kt_items *it, const char *digits, size_t n);
void kt_num_ordinal(kt_items *it, const char *digits, size_t n);
void kt_num_year(kt_items *it, const char *digits, size_t n);
void kt_num_decimal(kt_items *it, const char *ip, size_t ni, const char *fp, size_t nf);
/* The words of a scanned number ("1,234", "3.14", "0042", "1999"), as normalize.py read_number. */
void kt_num_read(kt_items *it, const char *s, size_t n);
extern const char *const kt_ones[20];

/* ---- pipeline stages ---- */
void kt_normalize(const kt_overrides *ov, const char *text, size_t n, kt_items *out);
/* fin: the phrase-final readings (may be NULL) */
void kt_g2p(const kt_lexicon *lx, const kt_lexicon *fin, const kt_overrides *ov, const kt_items *items, vx_buf *out);
void kt_lts(const char *w, size_t n, vx_buf *out);

#endif
