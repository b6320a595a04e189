/* PLACEHOLDER until the native tokenizer lands: loads nothing, tokenizes nothing. */
#include "tokenizer.h"

#include "../error.h"

vox_status q3_tokenizer_load(const q3_model *m, q3_tokenizer **out) {
    (void)m;
    *out = NULL;
    return VOX_OK;
}
void q3_tokenizer_free(q3_tokenizer *tok) { (void)tok; }
vox_status q3_tokenize(const q3_tokenizer *tok, const char *text, size_t len, int32_t **ids, size_t *n) {
    (void)tok, (void)text, (void)len, (void)ids, (void)n;
    return vox_set_error(VOX_ERR_UNSUPPORTED, "the native tokenizer is not in this build yet");
}
int32_t q3_token_id(const q3_tokenizer *tok, const char *token) {
    (void)tok, (void)token;
    return -1;
}
size_t q3_tokenizer_stable_prefix(const q3_tokenizer *tok, const char *text, size_t len) {
    (void)tok, (void)text, (void)len;
    return 0;
}
