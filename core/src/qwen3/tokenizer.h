/* Internal: the Qwen2 byte-level BPE tokenizer of Qwen3-TTS, from the vocab.json, merges.txt and
 * tokenizer_config.json stored in the .tmod, with the pre-tokenizer regex the manifest names
 * ("qwen2" or "mistral_fix", see docs/formats.md). Matches vox.reference.qwen3.tokenizer exactly on
 * NFC text (normalization is the caller's job: the Python layer applies NFC). */
#ifndef VOX_QWEN3_TOKENIZER_H
#define VOX_QWEN3_TOKENIZER_H

#include <stddef.h>
#include <stdint.h>

#include "model.h"

vox_status q3_tokenizer_load(const q3_model *m, q3_tokenizer **out);
void q3_tokenizer_free(q3_tokenizer *tok);
/* Token ids of text[0..len) (UTF-8; added/special tokens such as <|im_start|> are recognized).
 * *ids is malloc'd (free it); invalid UTF-8 is VOX_ERR_INVALID_ARGUMENT. */
vox_status q3_tokenize(const q3_tokenizer *tok, const char *text, size_t len, int32_t **ids, size_t *n);
/* The id of a vocabulary or added token spelled `token`, or -1. */
int32_t q3_token_id(const q3_tokenizer *tok, const char *token);
/* Streaming text: the length of the longest prefix of text[0..len) whose tokens cannot change when
 * more text is appended (whole pre-tokens followed by another pre-token; never inside a UTF-8
 * sequence). Tokenizing that prefix gives a prefix of the tokens of any longer text. */
size_t q3_tokenizer_stable_prefix(const q3_tokenizer *tok, const char *text, size_t len);

#endif
