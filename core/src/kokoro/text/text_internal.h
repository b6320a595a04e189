/* Internal to core/src/kokoro/text/: the pieces of the Kokoro frontend beyond the shared English text
 * normalization (core/src/text/text.h): the packed lexicon, G2P in misaki's phoneme set, letter-to-sound. */
#ifndef VOX_KOKORO_TEXT_INTERNAL_H
#define VOX_KOKORO_TEXT_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "json.h"
#include "strbuf.h"
#include "text/text.h"
#include "vox.h"

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

/* ---- pipeline stages ---- */
/* fin: the phrase-final readings (may be NULL) */
/* Where each word's phonemes are in the G2P output: characters [c0, c1) of the phonemes appended to
 * out, for the word items (their text: vt_item_text of item `item`). */
typedef struct kt_word_span {
    size_t item, c0, c1;
} kt_word_span;
typedef struct kt_word_spans {
    kt_word_span *v;
    size_t n, cap;
    bool failed;
} kt_word_spans;
/* words: NULL, or filled with the words' spans */
void kt_g2p(const kt_lexicon *lx, const kt_lexicon *fin, const vt_overrides *ov, const vt_items *items, vx_buf *out,
            kt_word_spans *words);
void kt_lts(const char *w, size_t n, vx_buf *out);

#endif
