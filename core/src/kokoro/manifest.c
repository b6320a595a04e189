/* The Kokoro family's manifest keys (checked when the .tmod is opened, after the container's). */
#include <stdio.h>
#include <string.h>

#include "../error.h"
#include "../tmod.h"
#include "kokoro.h"

/* The kokoro family's keys: built-in voice packs named in "speakers", each an f32 voices.<name>
 * tensor [510, 256]; "default_speaker" one of them; "frontend" an object when present. */
vox_status kk_check_manifest(const vox_model *m, const vox_json *root) {
    const vox_json *variant = vox_json_get(root, "variant");
    const char *p = vox_model_path(m);
    vox_status st = VOX_OK;
    char q[96];
    if (!vox_json_is_string(variant, "v1.0"))
        return vox_set_error(VOX_ERR_FORMAT, "%s: manifest: unknown kokoro variant %s (v1.0)", p,
                             vox_json_quote(q, sizeof q, variant->str, variant->str_len));
    const vox_json *spk = vx_manifest_member(m, root, "", "speakers", VOX_JSON_ARRAY, &st);
    if (!spk) return st;
    for (const vox_json *e = spk->child; e; e = e->next) {
        if (e->type != VOX_JSON_STRING || !e->str_len || memchr(e->str, '\0', e->str_len))
            return vox_set_error(VOX_ERR_FORMAT, "%s: manifest: \"speakers\" must list non-empty voice names", p);
        char name[256];
        int n = snprintf(name, sizeof name, "voices.%s", e->str);
        vox_tensor_info t;
        bool ok = n > 0 && (size_t)n < sizeof name && vox_model_find_tensor(m, name, &t) == VOX_OK;
        if (!ok || t.dtype != VOX_DTYPE_F32 || t.ndim != 2 || t.shape[0] != KK_PACK_ROWS || t.shape[1] != 2 * KK_STYLE)
            return vox_set_error(VOX_ERR_FORMAT, "%s: manifest: speaker %s needs an f32 tensor voices.%s of shape "
                                 "[510, 256]", p, vox_json_quote(q, sizeof q, e->str, e->str_len), e->str);
    }
    const vox_json *d = vox_json_get(root, "default_speaker");
    if (d) {
        if (!(d = vx_manifest_member(m, root, "", "default_speaker", VOX_JSON_STRING, &st))) return st;
        bool found = false;
        for (const vox_json *e = spk->child; e && !found; e = e->next) found = e->str_len == d->str_len &&
                                                                         !memcmp(e->str, d->str, d->str_len);
        if (!found)
            return vox_set_error(VOX_ERR_FORMAT, "%s: manifest: \"default_speaker\" %s is not one of \"speakers\"", p,
                                 vox_json_quote(q, sizeof q, d->str, d->str_len));
    }
    if (vox_json_get(root, "frontend") && !vx_manifest_member(m, root, "", "frontend", VOX_JSON_OBJECT, &st)) return st;
    return VOX_OK;
}

