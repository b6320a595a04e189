/* Internal: the pre-tokenizers of the Qwen2 tokenizer, hand-written scanners that split text exactly
 * as the HF `tokenizers` Split pre-tokenizer does with one of two regexes (run by Oniguruma:
 * leftmost-first alternation, greedy quantifiers with backtracking):
 *
 * Q3_PRETOK_QWEN2 (transformers' Qwen2 PRETOKENIZE_REGEX)
 *   (?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|
 *   \s*[\r\n]+|\s+(?!\S)|\s+
 * Q3_PRETOK_MISTRAL_FIX (transformers 4.57.3 _patch_mistral_regex)
 *   [^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+|
 *   [^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*|
 *   \p{N}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+
 *
 * Every character starts a match of either regex (no branch matches the empty string), so the
 * matches tile the text: the pre-tokens are consecutive, and the scanner only has to find where the
 * match starting at a position ends. pretok.c derives each branch's match from the regex semantics. */
#ifndef VOX_QWEN3_PRETOK_H
#define VOX_QWEN3_PRETOK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "vox.h"

typedef enum q3_pretok_kind { Q3_PRETOK_QWEN2 = 0, Q3_PRETOK_MISTRAL_FIX = 1 } q3_pretok_kind;

/* The kind named by a manifest's tokenizer.pre_tokenizer ("qwen2", "mistral_fix"); -1 if unknown. */
int q3_pretok_kind_from_name(const char *name);
const char *q3_pretok_kind_name(q3_pretok_kind kind);

/* Text decoded for the scanners: code points and their classes (unicode.h VX_UC_*). */
typedef struct q3_chars {
    const uint32_t *cp;
    const uint8_t *cls;
    size_t n;
} q3_chars;

/* The end (char index) of the pre-token that starts at p < t->n. *reach (may be NULL) is 1 + the
 * largest index the scanner looked at (> t->n when it needed to know that the text ends there: only
 * then can appending text change this pre-token). */
size_t q3_pretok_next(q3_pretok_kind kind, const q3_chars *t, size_t p, size_t *reach);
/* Streaming: a k (the start of a pre-token, or t->n) such that the pre-tokens of t[0..k) are those
 * of t before k and stay so whatever text is appended to t; the last such k that the method of
 * pretok.c proves. starts and reach are scratch arrays of t->n + 1 entries. */
size_t q3_pretok_stable(q3_pretok_kind kind, const q3_chars *t, size_t *starts, size_t *reach);

/* Convenience (tests, tools): the pre-tokens of UTF-8 text[0..len) as byte offsets of their ends,
 * ends[0..*n) (malloc'd; free it). *stable (may be NULL) is the byte offset where the first
 * pre-token that could change when text is appended starts (len if none). VOX_ERR_INVALID_ARGUMENT
 * for invalid UTF-8. */
vox_status q3_pretokenize(q3_pretok_kind kind, const char *text, size_t len, size_t **ends, size_t *n,
                          size_t *stable);

/* Decodes UTF-8 text[0..len) into cp/cls (each with room for len entries) and off (len + 1 entries:
 * the byte offset of each char, then len). Returns the number of chars, or sets *bad to the offset
 * of the first invalid byte and returns (size_t)-1. */
size_t q3_decode_utf8(const char *text, size_t len, uint32_t *cp, uint8_t *cls, size_t *off, size_t *bad);

#endif
