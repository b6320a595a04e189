/* Internal: English text normalization that any family can use: a span of text -> items (words,
 * punctuation symbols, user-override phonemes), so that what reads the words (a G2P, a tokenizer) never
 * sees a digit, an abbreviation or a currency sign. reference/text/normalize.py is the spec (and
 * documents each reading); numbers.c reads numbers as words, util.c holds the UTF-8 helpers and the
 * item list. Letter case is ASCII only, as in the Python twin, so both treat every input alike. */
#ifndef VOX_TEXT_H
#define VOX_TEXT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "json.h"
#include "strbuf.h"
#include "vox.h"

/* ---- UTF-8 on valid text (the frontend checks validity once, at its entry) ---- */
/* Decodes the code point at s[i] (i < n) and returns its length. */
size_t vt_next(const char *s, size_t n, size_t i, uint32_t *cp);
/* The start of the code point that ends just before s[i] (i > 0). */
size_t vt_prev(const char *s, size_t i);
/* Number of code points in s[0..n). */
size_t vt_count(const char *s, size_t n);
bool vt_is_ws(uint32_t cp);
bool vt_is_alpha(uint32_t cp);
static inline bool vt_is_digit(uint32_t c) { return c >= '0' && c <= '9'; }
static inline bool vt_is_upper(uint32_t c) { return c >= 'A' && c <= 'Z'; }
static inline bool vt_is_lower(uint32_t c) { return c >= 'a' && c <= 'z'; }
/* ASCII-lowercase / uppercase copy of s[0..n) into dst (n bytes). */
void vt_lower(char *dst, const char *s, size_t n);
void vt_upper(char *dst, const char *s, size_t n);
bool vt_eq(const char *s, size_t n, const char *lit);
bool vt_ends(const char *s, size_t n, const char *lit);
/* Whether cp is in the UTF-8 string set (each code point a member). */
bool vt_in(uint32_t cp, const char *set);
/* "U.S.", "e.g": letters joined by dots. */
bool vt_is_initialism(const char *s, size_t n);

/* ---- items: what normalization hands to G2P ---- */
typedef struct vt_item {
    char kind;     /* 'w' word, 'p' punctuation symbol, 'o' override phonemes */
    size_t off, len;
} vt_item;

typedef struct vt_items {
    vt_item *v;
    size_t n, cap;
    vx_buf text;   /* the items' bytes */
    bool failed;
} vt_items;

void vt_items_push(vt_items *it, char kind, const char *s, size_t n);
/* Pushes each space-separated word of a literal as a 'w' item. */
void vt_items_words(vt_items *it, const char *words);
/* Replaces the text of the last item. */
void vt_items_set_last(vt_items *it, const char *s, size_t n);
const char *vt_item_text(const vt_items *it, size_t i);
void vt_items_free(vt_items *it);

/* ---- user overrides (a validated JSON object word -> phonemes) ---- */
typedef struct vt_overrides {
    vox_json_doc *doc;
    const vox_json *obj;   /* NULL: none */
} vt_overrides;

const char *vt_override_get(const vt_overrides *ov, const char *w, size_t n);

/* ---- numbers as words ---- */
void vt_num_cardinal(vt_items *it, const char *digits, size_t n);
void vt_num_digits(vt_items *it, const char *digits, size_t n);
void vt_num_ordinal(vt_items *it, const char *digits, size_t n);
void vt_num_year(vt_items *it, const char *digits, size_t n);
void vt_num_decimal(vt_items *it, const char *ip, size_t ni, const char *fp, size_t nf);
/* The words of a scanned number ("1,234", "3.14", "0042", "1999"), as normalize.py read_number. */
void vt_num_read(vt_items *it, const char *s, size_t n);
extern const char *const vt_ones[20];

/* ---- normalization ---- */
void vt_normalize(const vt_overrides *ov, const char *text, size_t n, vt_items *out);

#endif
