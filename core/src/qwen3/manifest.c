/* The Qwen3-TTS family's manifest keys (checked when the .tmod is opened, after the container's). */
#include <string.h>

#include "../error.h"
#include "../tmod.h"
#include "model.h"

vox_status q3_check_manifest(const vox_model *m, const vox_json *root) {
    const char *p = vox_model_path(m);
    const vox_json *variant = vox_json_get(root, "variant"), *v;
    vox_status st = VOX_OK;
    if (!vox_json_is_string(variant, "base") && !vox_json_is_string(variant, "custom_voice") &&
        !vox_json_is_string(variant, "voice_design")) {
        char q[64];
        return vox_set_error(VOX_ERR_FORMAT,
                             "%s: manifest: unknown qwen3_tts variant %s (base, custom_voice, voice_design)", p,
                             vox_json_quote(q, sizeof q, variant->str, variant->str_len));
    }
    if (!vx_manifest_member(m, root, "", "speech_tokenizer_config", VOX_JSON_OBJECT, &st)) return st;
    if (!vx_manifest_member(m, root, "", "generation", VOX_JSON_OBJECT, &st)) return st;
    static const char *const tables[] = {"speakers", "languages"};
    for (size_t i = 0; i < 2; i++) {
        const vox_json *tab = vx_manifest_member(m, root, "", tables[i], VOX_JSON_OBJECT, &st);
        if (!tab) return st;
        for (const vox_json *e = tab->child; e; e = e->next)
            if (!vox_json_get_uint(e, (uint64_t)VOX_JSON_MAX_EXACT_INT, NULL)) {
                char q[64];
                return vox_set_error(VOX_ERR_FORMAT, "%s: manifest: \"%s\" entry %s must be a non-negative integer id",
                                     p, tables[i], vox_json_quote(q, sizeof q, e->key, e->key_len));
            }
    }
    const vox_json *tok = vx_manifest_member(m, root, "", "tokenizer", VOX_JSON_OBJECT, &st);
    if (!tok) return st;
    if (!vx_manifest_member(m, tok, "tokenizer: ", "type", VOX_JSON_STRING, &st)) return st;
    static const char *const files[] = {"vocab", "merges", "config"};
    for (size_t i = 0; i < 3; i++) {
        if (!(v = vx_manifest_member(m, tok, "tokenizer: ", files[i], VOX_JSON_STRING, &st))) return st;
        vox_tensor_info t;
        bool ok = !memchr(v->str, '\0', v->str_len) && vox_model_find_tensor(m, v->str, &t) == VOX_OK;
        if (!ok || t.dtype != VOX_DTYPE_U8 || t.ndim != 1) {
            char q[96];
            return vox_set_error(VOX_ERR_FORMAT, "%s: manifest: tokenizer %s names %s, which is not a 1-D u8 tensor", p,
                                 files[i], vox_json_quote(q, sizeof q, v->str, v->str_len));
        }
    }
    return VOX_OK;
}
