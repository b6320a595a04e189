/* Internal: the GPU ops of the codec decoder (ops_codec.c, shaders core/shaders/codec_*.comp), recorded
 * into the current chain like those of ops.h. Activations are time-major [time][channels] float32, as
 * in the CPU decoder (codec_stream.c); weights stay in the .tmod's dtype (f32, bf16, f16) and are
 * widened exactly by the shaders. Each op computes what the CPU kernel named beside it computes,
 * in a fixed order that depends only on the inputs (never on the number of rows or the device), so a
 * frame decoded alone or inside a chunk gives the same bits; results agree with the CPU within the
 * vulkan.codec_* rows of verify/tolerances.toml. */
#ifndef VOX_VULKAN_OPS_CODEC_H
#define VOX_VULKAN_OPS_CODEC_H

#include "ops.h"

/* The convolution / linear product (codec_gemm*.comp, codec_gemv*.comp):
 *   y[m][n] = act(epi(sum_kk A[m][kk] B[kk][n])) for m < M, n < N
 * A: x read as the implicit im2col of a causal conv with `taps` taps of dilation dil over cin channels
 *    (x holds (taps-1) * dil context rows, then M rows; vx_im2col's column order), taps = 1: x [M][K].
 * B: w stored [N][K] (conv / linear weight), or [K][N] with w_kn (a transposed conv's [c_in][c_out * k]).
 * epi: + bias[n] (bias != NULL), * scale[n] (scale != NULL), then res[m][n] + that (res != NULL; res
 * may be y). act: SnakeBeta with alpha / inv_beta [N] (not with scale or res) or GELU, as the separate
 * ops below compute them. y rows y_stride floats apart (0: N); res rows likewise N apart.
 * Two kernels, each with its own fixed order of summation (depending on K only, never on M):
 *   gemv = 0  the tiled GEMM (64 x 64 tiles), K in chunks of 256 added in order; when the tiles are
 *             too few to fill the device (fewer than VX_CODEC_SPLIT_TILES, none on a CPU renderer, or
 *             VOX_VK_CODEC_SPLIT_TILES; 0: never) and `scratch` holds chunks x M x N floats, the chunks run in separate
 *             workgroups and a second pass adds them: the same bits either way.
 *             With f16/bf16 weights exact in float16 (coopmat = 1: the caller checked; bf16 below 65536
 *             in magnitude) on a device with cooperative matrices (vx_gpu_coopmat, unless
 *             VOX_VK_CODEC_COOPMAT=0) it runs on them (codec_gemm_cm.glsl: 64 x 32 tiles, x as two
 *             float16 halves; its own bits, the same for any M and split).
 *   gemv = 1  the small-M product (w [N][K] only): a workgroup per output column and 16 rows, each
 *             weight read once per 16 rows, 64-way tree sums. For the frame-rate layers, whose M is a
 *             chunk's frames: pick it per layer, never by M. */
#define VX_CODEC_ACT_NONE 0
#define VX_CODEC_ACT_SNAKE 1
#define VX_CODEC_ACT_GELU 2
#define VX_CODEC_SPLIT_TILES 256
typedef struct vx_gconv {
    int64_t M, N, K, cin, taps, dil;
    int w_kn;
    vox_dtype w_dtype;   /* f32 (0), bf16 or f16: the weight as stored, widened exactly in the shader */
    int gemv;
    int act;
    vx_gbind alpha, inv_beta;    /* act = VX_CODEC_ACT_SNAKE: its parameters (one offset into both) */
    const vx_gbuf *scratch;      /* split-K partial sums (NULL: never split) */
    int coopmat;                 /* the 16-bit weight is exact in float16 (see above) */
} vx_gconv;
/* Whether the decoder's 16-bit products may run on cooperative matrices: opt-in (VOX_VK_CODEC_COOPMAT=1)
 * until the path has passed the conformance suite on a device that has them (its op test forces it on
 * there); without it the tiled GEMM runs, and the codec pipelines for it are not built. */
int vx_codec_coopmat_enabled(void);
/* Whether the tiled GEMM of these weights runs on cooperative matrices on g (the test of gemm()). */
int vx_codec_gemm_coopmat(vx_gpu *g, const vx_gconv *c);
/* Whether a bf16 / f16 weight of n values is exact in float16 (f16: always; bf16: below 65536). */
int vx_codec_f16_exact(vox_dtype dt, const void *w, int64_t n);
vox_status vx_gop_codec_gemm(vx_gpu *g, const vx_gconv *c, vx_gbind x, vx_gbind w, const vx_gbind *bias,
                             const vx_gbind *scale, const vx_gbind *res, vx_gbind y, int64_t y_stride,
                             const char *label);
/* The same with the weight a stack of up to three matrices by rows (q|k|v, gate|up): output columns
 * [0, seg[0]) go to ys[0], [seg[0], seg[1]) to ys[1], the rest to ys[2], each dense (rows as wide as its
 * segment); no scale, residual or activation. n_out: 2 or 3 (seg[1] = N for 2). */
vox_status vx_gop_codec_gemm_split(vx_gpu *g, const vx_gconv *c, vx_gbind x, vx_gbind w, const vx_gbind *bias,
                                   const vx_gbind *ys, int n_out, const int64_t *seg, const char *label);
/* The quantizer lookup (codec_rvq.comp): codes [n][nq] (int32), cb [nq][size][half] divided by usage:
 * first [n][half] = group 0's rows, rest [n][half] = the sum of groups 1.. in order. */
vox_status vx_gop_codec_rvq(vx_gpu *g, vx_gbind codes, vx_gbind cb, int64_t n, int64_t nq, int64_t size, int64_t half,
                            vx_gbind first, vx_gbind rest, const char *label);
/* vx_snake_beta over x [t][c] (y may alias x). */
vox_status vx_gop_snake(vx_gpu *g, vx_gbind x, vx_gbind alpha, vx_gbind inv_beta, int64_t t, int64_t c, vx_gbind y,
                        const char *label);
/* A causal convolution's input y = [ctx rows of carried context; t new rows] ([.][c], the context
 * rows already in y, copied from state): vx_gop_snake of x into y's new rows (or x copied there), and
 * the new carried context, state = y's last ctx rows, in the same dispatch (ctx > 0; state must not
 * overlap y). The same bits as the snake (copy) and a copy of y's last rows after it. */
vox_status vx_gop_snake_ctx(vx_gpu *g, vx_gbind x, vx_gbind alpha, vx_gbind inv_beta, int64_t t, int64_t c,
                            vx_gbind y, int64_t ctx, vx_gbind state, const char *label);
vox_status vx_gop_copy_ctx(vx_gpu *g, vx_gbind x, int64_t t, int64_t c, vx_gbind y, int64_t ctx, vx_gbind state,
                           const char *label);
/* vx_depthwise_conv: x [t_out + (k-1) dil][c] -> y [t_out][c]; w [c][k]. */
vox_status vx_gop_dwconv(vx_gpu *g, vx_gbind x, int64_t t_out, int64_t c, vx_gbind w, int64_t k, int64_t dil,
                         vx_gbind b, vx_gbind y, const char *label);
/* vx_layer_norm. */
vox_status vx_gop_layer_norm(vx_gpu *g, vx_gbind x, vx_gbind w, vx_gbind b, int64_t rows, int64_t d, float eps,
                             vx_gbind y, const char *label);
/* vx_gelu (mode 0) / vx_clamp to [lo, hi] (mode 1) over n elements; y may alias x. */
vox_status vx_gop_gelu(vx_gpu *g, vx_gbind x, int64_t n, vx_gbind y, const char *label);
vox_status vx_gop_clamp(vx_gpu *g, vx_gbind x, int64_t n, float lo, float hi, vx_gbind y, const char *label);
/* Overlap-add of a transposed conv (stride r, k = r or 2 r): Y [T][co * k] -> out [T r][co] with the
 * carried tail [r][co] and bias, then (k = 2 r) the new tail. */
vox_status vx_gop_ola(vx_gpu *g, vx_gbind Y, int64_t T, int64_t co, int64_t k, int64_t r, vx_gbind tail, vx_gbind bias,
                      vx_gbind out, const char *label);
/* The KV rings of `layers` layers (each [W][kvd], one after the other; their work rows c_stride floats
 * apart in kc / vc): gather n rows from positions p0.. into kc/vc (mode 0), or scatter rows src.. of
 * kc/vc to positions p0.. (mode 1). */
vox_status vx_gop_ring(vx_gpu *g, vx_gbind kring, vx_gbind vring, vx_gbind kc, vx_gbind vc, int64_t n, int64_t kvd,
                       int64_t W, int64_t p0, int64_t src, int mode, int64_t layers, int64_t c_stride,
                       const char *label);

#endif
