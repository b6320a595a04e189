/* Internal: GPU ops of diffusion / flow-matching transformers and spectral vocoders (ops_dit.c, shaders
 * adaln, gated_add, act, rope_pairs, attention_full, gconv, euler_cfg, istft_spec, istft_ola), recorded
 * into the current chain like those of ops.h. Tensors are float32, time-major [rows][channels]. Each op
 * computes what the CPU function named beside it computes, in a fixed order that depends only on the
 * shapes (the same bits on every run); results agree with the CPU within the vulkan.dit_* rows of
 * verify/tolerances.toml. */
#ifndef VOX_VULKAN_OPS_DIT_H
#define VOX_VULKAN_OPS_DIT_H

#include "ops.h"

/* y = LayerNorm(x) (no affine) * (1 + scale) + shift, scale / shift [d] (an adaLN modulation). */
vox_status vx_gop_adaln(vx_gpu *g, vx_gbind x, vx_gbind scale, vx_gbind shift, int64_t rows, int64_t d, float eps,
                        vx_gbind y, const char *label);
/* h[r][i] += gate[i] y[r][i] over rows x d. */
vox_status vx_gop_gated_add(vx_gpu *g, vx_gbind h, vx_gbind y, vx_gbind gate, int64_t rows, int64_t d,
                            const char *label);
/* Elementwise activations over n floats (y may alias x): vx_silu, vx_nn_mish, vx_nn_gelu_tanh. */
#define VX_ACT_SILU 0
#define VX_ACT_MISH 1
#define VX_ACT_GELU_TANH 2
vox_status vx_gop_act(vx_gpu *g, int mode, vx_gbind x, int64_t n, vx_gbind y, const char *label);
/* Rotary embedding on interleaved pairs, in place on q and k [rows][inner]: the first `heads` heads of d
 * of each row, row r at position r % n; cos / sin [n][d] (each angle twice). */
vox_status vx_gop_rope_pairs(vx_gpu *g, vx_gbind q, vx_gbind k, int64_t rows, int64_t n, int64_t inner, int64_t heads,
                             int64_t d, vx_gbind cos, vx_gbind sin, const char *label);
/* vx_nn_attention: full attention of `batch` sequences of n rows; q, k, v, out rows of [heads][d], ld
 * floats apart (the same ld for all four); d <= 64, d % 4 == 0. f16 = 0: float32 arithmetic
 * (attention_full.comp); f16 = 1: flash attention on cooperative matrices (attention_cm.comp: q, k, v and
 * the softmax weights rounded to float16, float32 sums), where vx_gop_attention_cm_ok says it runs and q,
 * k, v, out start on 16 bytes; with VOX_VK_ATTN_CM2=1 on devices with VK_NV_cooperative_matrix2 that
 * arithmetic runs on workgroup-scope matrices (attention_cm2.comp: no faster on an H100). */
vox_status vx_gop_attention_full(vx_gpu *g, vx_gbind q, vx_gbind k, vx_gbind v, int64_t batch, int64_t n,
                                 int64_t heads, int64_t d, int64_t ld, float scale, int f16, vx_gbind out,
                                 const char *label);
/* Whether attention_cm.comp runs here for heads of d with rows ld floats apart: cooperative matrices,
 * d == 64, ld % 4 == 0 and subgroups of 32 or 64 invocations. */
int vx_gop_attention_cm_ok(const vx_gpu *g, int64_t d, int64_t ld);
/* vx_nn_conv1d with kernel 31, padding pad on both sides, c channels in and out in groups of cg (a
 * divisor of 64; c % 64 == 0), over `batch` sequences of n rows of x [batch n][c], each padded on its
 * own; wt: the f32 weight transposed, [cg * 31][c] (wt[(ci 31 + j) c + co] = w[co][ci 31 + j]);
 * then Mish (mish) and + res (res may be y; NULL: none). */
#define VX_GCONV_K 31
vox_status vx_gop_gconv(vx_gpu *g, vx_gbind x, vx_gbind wt, vx_gbind bias, int64_t batch, int64_t n, int64_t c,
                        int64_t cg, int64_t pad, int mish, const vx_gbind *res, vx_gbind y, const char *label);
/* An Euler step of a guided flow on x [n][w]: x += dt (v_c + (v_c - v_u) cfg) (guided) or dt v_c, flow
 * [batch][n][w]; the new x is also written to columns 0 .. w - 1 of every branch's rows of a
 * [batch n][a_w]. */
vox_status vx_gop_euler_cfg(vx_gpu *g, vx_gbind x, vx_gbind flow, int64_t n, int64_t w, int guided, float dt,
                            float cfg, vx_gbind a, int64_t a_w, int64_t batch, const char *label);
/* ISTFT head: y [frames][2 bins] (log-magnitude | phase) -> s [frames][2 bins] (re | im), magnitude
 * clipped at 100. */
vox_status vx_gop_istft_spec(vx_gpu *g, vx_gbind y, int64_t frames, int64_t bins, vx_gbind s, const char *label);
/* ISTFT overlap-add of windowed frames wv [frames][n_fft] divided by the squared-window envelope, the
 * first `trim` samples dropped: out [n_out]. */
vox_status vx_gop_istft_ola(vx_gpu *g, vx_gbind wv, vx_gbind window, int64_t frames, int64_t n_fft, int64_t hop,
                            int64_t trim, int64_t n_out, vx_gbind out, const char *label);

#endif
