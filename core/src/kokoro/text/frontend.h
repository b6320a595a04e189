/* Internal: the Kokoro English text frontend (normalization, G2P over the lexicon stored in the
 * .tmod, sentence chunking). The Python twin, reference/kokoro/frontend/, is its spec; the
 * conformance suite checks that both give the same bytes. The native Kokoro family calls this. */
#ifndef VOX_KOKORO_FRONTEND_H
#define VOX_KOKORO_FRONTEND_H

#include <stddef.h>

#include "json.h"
#include "strbuf.h"
#include "vox.h"

/* The longest span vx_kfront_next_span emits (characters), unless one word is longer. */
#define VX_KFRONT_SPAN_LIMIT 240

typedef struct vx_kfront vx_kfront;

/* A frontend over the model's "frontend.lexicon" tensor (read in place: the model must outlive the
 * frontend) and the manifest's "frontend" and "config"."vocab" objects; "frontend.lexicon_final" (the
 * phrase-final readings) is used when the manifest names it. VOX_ERR_FORMAT names what is
 * missing or malformed. */
vox_status vx_kfront_create(const vox_model *model, const vox_json *manifest, vx_kfront **out);
/* The same from the lexicon blobs (which must outlive the frontend; final, the phrase-final
 * readings, may be NULL) and the vocab object (read during the call only); the test tool uses it. */
vox_status vx_kfront_create_raw(const void *lexicon, size_t nbytes, const void *final, size_t final_nbytes,
                                const vox_json *vocab, vx_kfront **out);
void vx_kfront_destroy(vx_kfront *f);

/* The next complete span of text[0..len): returns its length (the span is text[0..ret); it may begin
 * with whitespace and never ends with any) and sets *consumed (>= ret) to the bytes the caller drops
 * before the next call. Returns 0 when no complete span is there yet (final = 0), or when only
 * whitespace remains (consumed when final). final = 1: the text is complete, flush what remains.
 * Sentences end at . ! ? … followed by whitespace; longer than VX_KFRONT_SPAN_LIMIT characters they
 * are cut at the last clause mark, else the last space, never inside a word. */
size_t vx_kfront_next_span(const char *text, size_t len, int final, size_t *consumed);

/* A span of text (UTF-8) -> phonemes in Kokoro's symbol set, appended to *out: overrides (a JSON
 * object word -> phonemes, or NULL), normalization, G2P. VOX_ERR_INVALID_ARGUMENT for text that is
 * not UTF-8 or overrides that are invalid (the message names the word and symbol). */
vox_status vx_kfront_phonemize(const vx_kfront *f, const char *span, size_t len, const char *overrides_json,
                               vx_buf *out);

/* The words of a span: their text (normalized: "42" gives forty, two) at text.s + off, len bytes, and
 * the characters [c0, c1) of their phonemes in the output. */
typedef struct vx_kfront_word {
    size_t off, len, c0, c1;
} vx_kfront_word;
typedef struct vx_kfront_words {
    vx_kfront_word *v;
    size_t n, cap;
    vx_buf text;
} vx_kfront_words;
void vx_kfront_words_free(vx_kfront_words *w);
/* The same with the overrides already parsed (a JSON object, or NULL); words (NULL: not wanted) gets the
 * span's words appended. */
vox_status vx_kfront_phonemize_with(const vx_kfront *f, const char *span, size_t len, const vox_json *overrides,
                                    vx_buf *out, vx_kfront_words *words);
/* VOX_OK when `overrides` (NULL or a JSON object) is a valid pronunciation table for this vocabulary. */
vox_status vx_kfront_check_overrides(const vx_kfront *f, const vox_json *overrides);

#endif
