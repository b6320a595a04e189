/* Internal to gpu_*.c: the F5 model's device state. */
#ifndef VOX_F5_GPU_INTERNAL_H
#define VOX_F5_GPU_INTERNAL_H

#include <pthread.h>

#include "../vulkan/ops_codec.h"
#include "../vulkan/ops_dit.h"
#include "gpu.h"

typedef struct f5_gblock {
    vx_gmat mod, qkv, o, ff1, ff2;
    vx_gbind mod_b, o_b, ff1_b, ff2_b;
} f5_gblock;

typedef struct f5_gconvnext {
    vx_gbuf pw1, pw2;                  /* weights as stored (f32 / bf16 / f16) */
    vx_gbind dw_w, dw_b, ln_w, ln_b, pw1_b, pw2_b, gamma;
    int has_gamma;
} f5_gconvnext;

/* A device buffer that grows to the largest size asked. */
typedef struct f5_gws {
    vx_gbuf b;
    uint64_t cap;
} f5_gws;

typedef struct f5_gpu {
    vx_gpu *g;
    pthread_mutex_t lock;
    int dit, vocos;                    /* which parts run here */
    int f16;                           /* the DiT's products and attention in float16 arithmetic on tensor
                                          cores (gpu_load.c: choose_math), else float32 activations */
    const char *math;                  /* what the DiT computes in, and why (the placement line) */
    int fuse;                          /* the blocks' GELU and gated residuals in the GEMMs' epilogues where they
                                          run there (vx_gop_linear_epi_ok; VOX_VK_F5_FUSE=0: separate passes) */
    vx_gbuf vec;                       /* every small vector (biases, norms, depthwise kernels, window) */
    /* DiT */
    vx_gmat in_proj, t1, t2, norm_out, proj_out;
    vx_gbind in_proj_b, t1_b, t2_b, norm_out_b, proj_out_b, conv0_b, conv2_b;
    vx_gbuf conv0_wt, conv2_wt;        /* f32, transposed [cg 31][dim] */
    f5_gblock *blocks;
    int64_t n_blocks;
    /* Vocos */
    vx_gbuf voc_embed;
    vox_dtype voc_dtype;
    vx_gbind voc_embed_b, voc_norm_w, voc_norm_b, voc_final_w, voc_final_b, voc_head_b, voc_window;
    f5_gconvnext *vblocks;
    int64_t n_vblocks;
    vx_gmat voc_head, dft;             /* dft [n_fft][n_fft + 2]: inverse real DFT with the window and 1 / n_fft */
    /* workspace: DiT */
    f5_gws A, H, AN, Y, Q, K, V, O, U, FLOW, X, COND, TS, CS, T1, TEMB, SIL, MODS;
    /* workspace: Vocos */
    f5_gws MP, P, D, VU, YH, S, WV, PCM;
} f5_gpu;

/* Grows w to hold n bytes (contents lost when it grows). */
vox_status f5_gws_need(vx_gpu *g, f5_gws *w, uint64_t n);
static inline vx_gbind f5_bind(const f5_gws *w, uint64_t off_floats) {
    return (vx_gbind){&w->b, off_floats * 4, 0};
}

/* gpu_vocos.c: records Vocos of `frames` mel rows already in G->MP (rows 3 .. frames + 2; the three
 * rows either side zero: f5_gpu_vocos_prepare uploads them) into G->PCM [*n_out]. */
vox_status f5_gpu_vocos_prepare(f5_gpu *G, const f5_model *m, int64_t frames, int64_t *n_out);
vox_status f5_gpu_vocos_record(f5_gpu *G, const f5_model *m, int64_t frames, int64_t n_out);

#endif
