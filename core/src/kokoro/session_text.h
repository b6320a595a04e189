/* Internal: Kokoro text handling of a session: spans, phonemes, token ids, tail trimming constants. */
#ifndef VOX_KOKORO_SESSION_TEXT_H
#define VOX_KOKORO_SESSION_TEXT_H

#include <stddef.h>
#include <stdint.h>

#include "../strbuf.h"
#include "kokoro.h"
#include "text/frontend.h"

/* Trailing-silence trim of each span: the span is cut KK_TRIM_KEEP samples after the last sample above
 * max(KK_TRIM_REL * peak, KK_TRIM_ABS) and the last KK_TRIM_FADE kept samples fade out linearly. */
#define KK_TRIM_REL 0.01f  /* -40 dB of the span's peak */
#define KK_TRIM_ABS 1e-4f
#define KK_TRIM_KEEP 960   /* 40 ms: the natural decay of the last phoneme */
#define KK_TRIM_FADE 240   /* 10 ms */

/* Phoneme symbol -> token id (config "vocab": one Unicode character per entry). */
typedef struct kk_vocab {
    uint32_t cp[256];
    int32_t id[256];
    int n;
} kk_vocab;

vox_status kk_vocab_build(const vox_json *vocab, kk_vocab *out);
/* The model input for phonemes[0..len): [0] + ids + [0], unknown symbols skipped; ids needs len + 2
 * entries. *n_cps (optional) gets the phoneme string's length in characters (what picks the style row). */
void kk_vocab_ids(const kk_vocab *v, const char *ph, size_t len, int32_t *ids, size_t *n_ids, size_t *n_cps);

int kk_has_frontend(const kk_model *m);
/* The next complete span of text[0..len): *span_len bytes to phonemize and *consumed bytes used
 * (0: no complete span yet; final = 1 flushes the rest). */
vox_status kk_next_span(const kk_model *m, int phoneme_input, const char *text, size_t len, int final,
                        size_t *span_len, size_t *consumed);
/* A span -> phonemes (phoneme input: the span itself, trimmed). */
vox_status kk_phonemes(const kk_model *m, int phoneme_input, const char *span, size_t len, const vox_json *overrides,
                       vx_buf *out, vx_kfront_words *words);
int kk_only_space(const char *s, size_t n);
/* Bytes of phonemes[0..len) to speak in one pass of at most `limit` characters: all of it when it
 * fits, else up to the last space within the limit (the limit itself when there is none). */
size_t kk_phoneme_cut(const char *ph, size_t len, size_t limit);

#endif
