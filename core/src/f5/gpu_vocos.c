/* Vocos on the GPU (gpu.h; the CPU twin is vocos.c, the spec vox.reference.f5.vocos):
 *   embed   Conv1d(n_mels -> dim, k 7, pad 3) as the implicit-im2col product over the zero-padded mel
 *   blocks  depthwise conv 7 over the zero-padded state, LayerNorm, pw1 + GELU, pw2 * gamma + residual
 *           (the state lives inside its padded buffer, so no copy feeds the next depthwise conv)
 *   head    LayerNorm, Linear(dim -> n_fft + 2), S = min(exp(logmag), 100) e^(i phase)
 *   iSTFT   frames = S . DFT^T (the inverse real DFT with the window and 1 / n_fft folded into one
 *           [n_fft][n_fft + 2] matrix: a GEMM instead of an FFT), then the overlap-add divided by the
 *           squared-window envelope and trimmed ("center" n_fft / 2, "same" (n_fft - hop) / 2). */
#include <stdlib.h>
#include <string.h>

#include "../dsp/stft.h"
#include "../error.h"
#include "gpu_internal.h"

static const vx_gbind NONE = {0};

/* The envelope check of vx_istft, on the host (it depends on the frame count only). */
static int envelope_vanishes(const f5_model *m, int64_t frames, int64_t trim, int64_t n_out) {
    const int64_t nf = m->c.voc_n_fft, hop = m->c.voc_hop;
    const float *win = m->voc.window;
    for (int64_t s = 0; s < n_out; s++) {
        const int64_t p = s + trim;
        int64_t fa = p - nf + 1 > 0 ? (p - nf + 1 + hop - 1) / hop : 0, fb = p / hop;
        if (fb > frames - 1) fb = frames - 1;
        double env = 0.0;
        for (int64_t f = fa; f <= fb; f++) env += (double)win[p - f * hop] * win[p - f * hop];
        if (!(env > 1e-11)) return 1;
    }
    return 0;
}

static int64_t trim_of(const f5_model *m) {
    return m->c.voc_same_padding ? (m->c.voc_n_fft - m->c.voc_hop) / 2 : m->c.voc_n_fft / 2;
}

vox_status f5_gpu_vocos_prepare(f5_gpu *G, const f5_model *m, int64_t frames, int64_t *n_out) {
    const f5_config *c = &m->c;
    vx_gpu *g = G->g;
    const uint64_t F = (uint64_t)frames, vd = (uint64_t)c->voc_dim, nm = (uint64_t)c->n_mels, w2 = (uint64_t)(c->voc_n_fft + 2);
    if (frames < 1) return vox_set_error(VOX_ERR_INVALID_ARGUMENT, "Vocos: no mel frames to decode");
    const int64_t n = vx_istft_length(frames, c->voc_hop, c->voc_same_padding ? VX_ISTFT_SAME : VX_ISTFT_CENTER);
    if (envelope_vanishes(m, frames, trim_of(m), n))
        return vox_set_error(VOX_ERR_INVALID_ARGUMENT, "ISTFT: the window envelope vanishes (%lld frames are too few)",
                             (long long)frames);
    vox_status st;
    if ((st = f5_gws_need(g, &G->MP, (F + 6) * nm * 4)) || (st = f5_gws_need(g, &G->P, (F + 6) * vd * 4)) ||
        (st = f5_gws_need(g, &G->D, F * vd * 4)) || (st = f5_gws_need(g, &G->VU, F * (uint64_t)c->voc_hidden * 4)) ||
        (st = f5_gws_need(g, &G->YH, F * w2 * 4)) || (st = f5_gws_need(g, &G->S, F * w2 * 4)) ||
        (st = f5_gws_need(g, &G->WV, F * (uint64_t)c->voc_n_fft * 4)) || (st = f5_gws_need(g, &G->PCM, (uint64_t)n * 4)))
        return st;
    /* the zero rows either side of the padded mel and state */
    float *z = calloc((size_t)(3 * (vd > nm ? vd : nm)), sizeof *z);
    if (!z) return vox_set_error(VOX_ERR_OUT_OF_MEMORY, "out of memory");
    if ((st = vx_gpu_upload(g, &G->MP.b, 0, z, 3 * nm * 4)) == VOX_OK &&
        (st = vx_gpu_upload(g, &G->MP.b, (F + 3) * nm * 4, z, 3 * nm * 4)) == VOX_OK &&
        (st = vx_gpu_upload(g, &G->P.b, 0, z, 3 * vd * 4)) == VOX_OK)
        st = vx_gpu_upload(g, &G->P.b, (F + 3) * vd * 4, z, 3 * vd * 4);
    free(z);
    *n_out = n;
    return st;
}

vox_status f5_gpu_vocos_record(f5_gpu *G, const f5_model *m, int64_t frames, int64_t n_out) {
    const f5_config *c = &m->c;
    vx_gpu *g = G->g;
    const int64_t F = frames, vd = c->voc_dim, hid = c->voc_hidden, nf = c->voc_n_fft, bins = nf / 2 + 1;
    vx_gbind x = f5_bind(&G->P, (uint64_t)(3 * vd)), dn = f5_bind(&G->D, 0), u = f5_bind(&G->VU, 0);
    vox_status st;
    vx_gconv emb = {.M = F, .N = vd, .K = c->n_mels * 7, .cin = c->n_mels, .taps = 7, .dil = 1, .w_dtype = G->voc_dtype};
    if ((st = vx_gop_codec_gemm(g, &emb, f5_bind(&G->MP, 0), (vx_gbind){&G->voc_embed, 0, 0}, &G->voc_embed_b, NULL, NULL, x,
                                0, "f5/vocos")) ||
        (st = vx_gop_layer_norm(g, x, G->voc_norm_w, G->voc_norm_b, F, vd, 1e-6f, x, "f5/vocos")))
        return st;
    for (int64_t i = 0; i < c->voc_layers; i++) {
        const f5_gconvnext *b = &G->vblocks[i];
        vx_gconv pw1 = {.M = F, .N = hid, .K = vd, .cin = vd, .taps = 1, .dil = 1, .w_dtype = G->voc_dtype,
                        .act = VX_CODEC_ACT_GELU};
        vx_gconv pw2 = {.M = F, .N = vd, .K = hid, .cin = hid, .taps = 1, .dil = 1, .w_dtype = G->voc_dtype};
        if ((st = vx_gop_dwconv(g, f5_bind(&G->P, 0), F, vd, b->dw_w, 7, 1, b->dw_b, dn, "f5/vocos")) ||
            (st = vx_gop_layer_norm(g, dn, b->ln_w, b->ln_b, F, vd, 1e-6f, dn, "f5/vocos")) ||
            (st = vx_gop_codec_gemm(g, &pw1, dn, (vx_gbind){&b->pw1, 0, 0}, &b->pw1_b, NULL, NULL, u, 0, "f5/vocos_pw1")) ||
            (st = vx_gop_codec_gemm(g, &pw2, u, (vx_gbind){&b->pw2, 0, 0}, &b->pw2_b, b->has_gamma ? &b->gamma : NULL, &x, x,
                                    0, "f5/vocos_pw2")))
            return st;
    }
    if ((st = vx_gop_layer_norm(g, x, G->voc_final_w, G->voc_final_b, F, vd, 1e-6f, dn, "f5/vocos")) ||
        (st = vx_gop_linear(g, &G->voc_head, &G->voc_head_b, dn, NONE, NONE, F, f5_bind(&G->YH, 0), 0, 0, "f5/vocos_head")) ||
        (st = vx_gop_istft_spec(g, f5_bind(&G->YH, 0), F, bins, f5_bind(&G->S, 0), "f5/istft")) ||
        (st = vx_gop_linear(g, &G->dft, NULL, f5_bind(&G->S, 0), NONE, NONE, F, f5_bind(&G->WV, 0), 0, 0, "f5/istft_dft")))
        return st;
    return vx_gop_istft_ola(g, f5_bind(&G->WV, 0), G->voc_window, F, nf, c->voc_hop, trim_of(m), n_out,
                            f5_bind(&G->PCM, 0), "f5/istft");
}

vox_status f5_gpu_vocos_decode(const f5_model *m, const float *mel, int64_t frames, float **audio, int64_t *n,
                               f5_tap_fn tap, void *tap_ctx) {
    f5_gpu *G = m->gpu;
    const f5_config *c = &m->c;
    *audio = NULL;
    *n = 0;
    if (frames < 1) return vox_set_error(VOX_ERR_INVALID_ARGUMENT, "Vocos: no mel frames to decode");
    int64_t n_out = 0;
    float *pcm = NULL, *feat = NULL, *head = NULL;
    pthread_mutex_lock(&G->lock);
    vox_status st = f5_gpu_vocos_prepare(G, m, frames, &n_out);
    if (st == VOX_OK) st = vx_gpu_upload(G->g, &G->MP.b, (uint64_t)(3 * c->n_mels) * 4, mel, (uint64_t)(frames * c->n_mels) * 4);
    if (st == VOX_OK && (st = vx_gpu_begin(G->g)) == VOX_OK) {
        st = f5_gpu_vocos_record(G, m, frames, n_out);
        vox_status s2 = vx_gpu_submit(G->g);
        if (st == VOX_OK) st = s2;
    }
    if (st == VOX_OK && !(pcm = malloc((size_t)(n_out ? n_out : 1) * sizeof *pcm)))
        st = vox_set_error(VOX_ERR_OUT_OF_MEMORY, "out of memory");
    if (st == VOX_OK) st = vx_gpu_download(G->g, &G->PCM.b, 0, pcm, (uint64_t)n_out * 4);
    if (st == VOX_OK && tap) {
        feat = malloc((size_t)(frames * c->voc_dim) * sizeof *feat);
        head = malloc((size_t)(frames * (c->voc_n_fft + 2)) * sizeof *head);
        if (!feat || !head) st = vox_set_error(VOX_ERR_OUT_OF_MEMORY, "out of memory");
        if (st == VOX_OK) st = vx_gpu_download(G->g, &G->D.b, 0, feat, (uint64_t)(frames * c->voc_dim) * 4);
        if (st == VOX_OK) st = vx_gpu_download(G->g, &G->YH.b, 0, head, (uint64_t)(frames * (c->voc_n_fft + 2)) * 4);
    }
    pthread_mutex_unlock(&G->lock);
    if (st == VOX_OK && tap) {
        tap(tap_ctx, "vocos_features", feat, frames, c->voc_dim);
        tap(tap_ctx, "vocos_head", head, frames, c->voc_n_fft + 2);
    }
    free(feat), free(head);
    if (st != VOX_OK) {
        free(pcm);
        return st;
    }
    *audio = pcm;
    *n = n_out;
    return VOX_OK;
}
