/* The text encoder of the DiT (vox.reference.f5.dit.text_embedding; f5_tts TextEmbedding):
 *   ids + 1 (0 is the filler), cut or padded with 0 to n frames; embedding; + the sinusoid table
 *   [cos | sin] of position * theta^(-2i / d); ConvNeXt-V2 blocks x conv_layers.
 * v1 (text_mask_padding) zeroes the filler positions before the blocks and after each one; v0 does not.
 * The unconditional branch replaces every id by the filler after the filler mask is taken. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../error.h"
#include "f5.h"

vox_status f5_text_encoder(const f5_model *m, vx_pool *pool, const int32_t *ids, int64_t nt, int64_t n, int drop,
                           float *out) {
    const f5_config *c = &m->c;
    const int64_t td = c->text_dim;
    int32_t *idx = malloc((size_t)(n ? n : 1) * sizeof *idx);
    unsigned char *filler = malloc((size_t)(n ? n : 1));
    if (!idx || !filler) {
        free(idx), free(filler);
        return vox_set_error(VOX_ERR_OUT_OF_MEMORY, "out of memory");
    }
    for (int64_t i = 0; i < n; i++) {
        int32_t v = i < nt ? ids[i] + 1 : 0;
        if (i < nt && (ids[i] < 0 || ids[i] >= c->text_num_embeds)) {
            free(idx), free(filler);
            return vox_set_error(VOX_ERR_INVALID_ARGUMENT, "token id %d is outside the text embedding (%lld symbols)",
                                 ids[i], (long long)c->text_num_embeds);
        }
        filler[i] = v == 0;
        idx[i] = drop ? 0 : v;
    }
    vx_gather_rows(&m->text_embed, idx, n, out);
    vox_status st = VOX_OK;
    if (c->conv_layers > 0) {
        const int64_t half = td / 2;
        float *f = malloc((size_t)(half ? half : 1) * sizeof *f);
        if (!f) st = vox_set_error(VOX_ERR_OUT_OF_MEMORY, "out of memory");
        for (int64_t i = 0; st == VOX_OK && i < half; i++)
            f[i] = 1.0f / (float)pow(10000.0, (double)((float)(2 * i) / (float)td));
        for (int64_t p = 0; st == VOX_OK && p < n; p++) {
            float *r = out + p * td;
            for (int64_t i = 0; i < half; i++) {
                double a = (double)((float)p * f[i]);
                r[i] += (float)cos(a);
                r[half + i] += (float)sin(a);
            }
        }
        free(f);
        for (int64_t b = -1; st == VOX_OK && b < c->conv_layers; b++) {
            if (b >= 0) st = vx_nn_convnext(pool, &m->text_blocks[b].b, out, n);
            if (st == VOX_OK && c->text_mask_padding)
                for (int64_t p = 0; p < n; p++)
                    if (filler[p]) memset(out + p * td, 0, (size_t)td * sizeof *out);
        }
    }
    free(idx), free(filler);
    return st;
}
