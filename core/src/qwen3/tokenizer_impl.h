/* Internal: what the tokenizer offers its tests beyond tokenizer.h (building one from the three
 * files in memory, without a .tmod). */
#ifndef VOX_QWEN3_TOKENIZER_IMPL_H
#define VOX_QWEN3_TOKENIZER_IMPL_H

#include "pretok.h"
#include "tokenizer.h"

/* A tokenizer from the bytes of vocab.json, merges.txt and tokenizer_config.json (copied; the
 * buffers may be freed afterwards) with the given pre-tokenizer. `what` names the source in error
 * messages. */
vox_status q3_tokenizer_from_files(const char *vocab, size_t vocab_len, const char *merges, size_t merges_len,
                                   const char *config, size_t config_len, q3_pretok_kind kind, const char *what,
                                   q3_tokenizer **out);
q3_pretok_kind q3_tokenizer_kind(const q3_tokenizer *tok);

#endif
