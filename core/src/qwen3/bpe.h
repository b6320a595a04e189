/* Internal: the byte-level BPE model of the Qwen2 tokenizer (vocab.json + merges.txt), as the HF
 * `tokenizers` BPE model runs it (no unknown token, no byte fallback, no dropout, no
 * continuing-subword prefix or end-of-word suffix, ignore_merges off).
 *
 * Tokens are spelled in GPT-2's byte-to-unicode alphabet (byte 0x20 is "Ġ", ...); a pre-token's
 * bytes start as one symbol each (the vocabulary id of its byte's character) and are merged by
 * rank, exactly as tokenizers' Word::merge_all does: a min-heap of (rank, position) pairs, where an
 * entry is skipped when the pair at its position no longer merges into the same token. */
#ifndef VOX_QWEN3_BPE_H
#define VOX_QWEN3_BPE_H

#include <stddef.h>
#include <stdint.h>

#include "vox.h"

/* A slot of the vocabulary's hash table: spellings of up to 8 bytes are kept in the slot itself
 * (one memory access per lookup), longer ones in the arena. */
typedef struct q3_vocab_slot {
    union {
        char text[8];           /* len <= 8 */
        uint64_t off;           /* len > 8: arena[off .. off + len) */
    } s;
    uint32_t len;               /* 0: empty slot */
    int32_t id;
} q3_vocab_slot;

typedef struct q3_pair {
    uint64_t key;               /* left id << 32 | right id; UINT64_MAX: empty */
    uint32_t rank;
    int32_t merged;
} q3_pair;

typedef struct q3_bpe {
    char *arena;                /* the spellings longer than 8 bytes, back to back */
    q3_vocab_slot *slots;       /* open addressing (linear probing) */
    size_t slot_mask;
    size_t n_tokens;
    int32_t byte_id[256];       /* the id of each byte's one-character token, -1 if none */
    q3_pair *pairs;             /* merges, open addressing */
    size_t pair_mask;
    size_t n_merges;
    int32_t max_id;
} q3_bpe;

/* Loads vocab.json (an object of spelling -> id, ids in [0, 2^31)) and merges.txt (read as the
 * official Qwen2Tokenizer reads it: universal newlines, each line stripped, a first-line
 * "#version:" header and empty lines skipped, two whitespace-separated spellings a line; the rank
 * is the index among the merges, a repeated pair keeps its last rank). Every spelling of a merge,
 * and the two joined, must be in the vocabulary. `what` names the source in error messages
 * (VOX_ERR_FORMAT). On failure the model is left empty (q3_bpe_free is still fine). */
vox_status q3_bpe_load(q3_bpe *b, const char *vocab, size_t vocab_len, const char *merges, size_t merges_len,
                       const char *what);
void q3_bpe_free(q3_bpe *b);

/* The id of the vocabulary token spelled s[0..len), or -1. */
int32_t q3_bpe_token_id(const q3_bpe *b, const char *s, size_t len);
/* The rank and result of merging tokens (left, right); 0 if they do not merge. */
int q3_bpe_pair(const q3_bpe *b, int32_t left, int32_t right, uint32_t *rank, int32_t *merged);

/* The tokens of one pre-token bytes[0..n): writes them to out (room for n ids) and returns their
 * count, or (size_t)-1 when out of memory (only pre-tokens over 64 bytes allocate). Bytes without a
 * one-character token are dropped (as tokenizers does without an unknown token; the Qwen2
 * vocabulary has all 256). Thread-safe (uses no shared state). */
size_t q3_bpe_word(const q3_bpe *b, const unsigned char *bytes, size_t n, int32_t *out);

/* GPT-2's byte-to-unicode map: the code point that spells byte v. */
uint32_t q3_byte_char(unsigned v);

#endif
