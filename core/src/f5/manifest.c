/* The F5-TTS family's manifest keys (checked when the .tmod is opened, after the container's), as
 * vox.families.f5.checkpoint.check_manifest checks them: the variant, the config sections the runtime
 * reads, and the text frontend's five 1-D u8 blobs. */
#include <stdio.h>
#include <string.h>

#include "../error.h"
#include "../tmod.h"
#include "f5.h"

vox_status f5_check_manifest(const vox_model *m, const vox_json *root) {
    const char *p = vox_model_path(m);
    vox_status st = VOX_OK;
    char q[96];
    const vox_json *variant = vox_json_get(root, "variant");
    if (!vox_json_is_string(variant, "v0") && !vox_json_is_string(variant, "v1"))
        return vox_set_error(VOX_ERR_FORMAT, "%s: manifest: unknown f5_tts variant %s (v0, v1)", p,
                             variant && variant->type == VOX_JSON_STRING
                                 ? vox_json_quote(q, sizeof q, variant->str, variant->str_len) : "(not a string)");
    const vox_json *cfg = vx_manifest_member(m, root, "", "config", VOX_JSON_OBJECT, &st);
    if (!cfg) return st;
    static const char *const sections[] = {"dit", "mel", "vocos", "infer"};
    for (size_t i = 0; i < 4; i++)
        if (!vx_manifest_member(m, cfg, "config: ", sections[i], VOX_JSON_OBJECT, &st)) return st;
    const vox_json *tok = vx_manifest_member(m, root, "", "tokenizer", VOX_JSON_OBJECT, &st);
    if (!tok) return st;
    static const char *const roles[] = {"vocab", "jieba_dict", "jieba_hmm", "pinyin_chars", "pinyin_phrases"};
    for (size_t i = 0; i < 5; i++) {
        const vox_json *ref = vx_manifest_member(m, tok, "tokenizer: ", roles[i], VOX_JSON_STRING, &st);
        if (!ref) return st;
        vox_tensor_info t;
        if (vox_model_find_tensor(m, ref->str, &t) != VOX_OK || t.dtype != VOX_DTYPE_U8 || t.ndim != 1) {
            vox_clear_error();
            return vox_set_error(VOX_ERR_FORMAT, "%s: manifest: tokenizer %s names %s, which is not a 1-D u8 tensor", p,
                                 roles[i], vox_json_quote(q, sizeof q, ref->str, ref->str_len));
        }
    }
    return VOX_OK;
}
