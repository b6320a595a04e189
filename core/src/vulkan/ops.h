/* Internal: the model operations on a vx_gpu, each recorded into the current chain (vx_gpu_begin ..
 * vx_gpu_submit). Tensors are float32 ranges of storage buffers (vx_gbind: any offset that is a
 * multiple of 4; the ops bind whole buffers and pass element offsets to the shaders), row-major and
 * dense.
 * Every op computes what the CPU kernel of the same name in kernels.h computes; the order of the
 * floating-point operations differs (tree sums over 64 invocations), so results agree within the
 * vulkan.* rows of verify/tolerances.toml, and depend only on the inputs: the same on every run. */
#ifndef VOX_VULKAN_OPS_H
#define VOX_VULKAN_OPS_H

#include "kernels.h"
#include "vk.h"

/* A weight matrix in device memory, split by rows into parts whose every binding fits in
 * maxStorageBufferRange (vx_gpu_max_range): each part has its own buffers (values; scales for q8/q4). */
typedef struct vx_gmat_part {
    int64_t row0, rows;
    vx_gbuf w, s;
} vx_gmat_part;

typedef struct vx_gmat {
    vox_dtype dtype;
    int64_t rows, cols;
    int n_parts;
    vx_gmat_part *parts;
    /* a stack of matrices of one input (vx_gmat_upload_stack): their rows, and their biases stacked
     * (zeros for a matrix without one) when any has one */
    int n_segs;
    int64_t seg_rows[3];
    vx_gbuf bias;
    int has_bias;
    int coopmat;   /* the prefill GEMM runs on cooperative matrices: the device has them and the weights are
                      exact enough in float16 (f16; bf16 below 65504 in magnitude) */
    int cm_wide;   /* set by the caller for matrices of large products (thousands of rows, e.g. a DiT's): the
                      cooperative-matrix GEMM in 64 x 64 tiles (gemm_cm_wide_*.comp), hi and lo joined in the
                      accumulators; a per-matrix choice, so an output's bits still do not depend on n */
    int cm_half;   /* set by the caller: the cooperative-matrix GEMM takes x rounded to float16, one product in
                      128 x 128 tiles (gemm_cmh.glsl: an fp16 model's arithmetic), where x and the rows lie on
                      16 bytes (else the x-exact kernels above) */
    int cm2;       /* set by the caller for large products on float16 weights (vx_gmat_upload_f16): the GEMM on
                      VK_NV_cooperative_matrix2 (gemm_cm2.comp, x as hi + lo) where the device has it; over
                      cm_wide and cm_half */
} vx_gmat;

/* Copies m (any .tmod dtype) to device memory. VOX_ERR_OUT_OF_MEMORY when it does not fit;
 * VOX_ERR_UNSUPPORTED when one row alone exceeds the binding limit. */
vox_status vx_gmat_upload(vx_gpu *g, const vx_mat *m, vx_gmat *out);
void vx_gmat_free(vx_gpu *g, vx_gmat *m);
/* Up to 3 matrices of one dtype and cols stacked by rows into one (q|k|v, gate|up), with their biases
 * (bias or bias[i] may be NULL): one GEMV (vx_gop_linear_stack) computes them all. */
vox_status vx_gmat_upload_stack(vx_gpu *g, const vx_mat *const *m, const float *const *bias, int n, vx_gmat *out);
uint64_t vx_gmat_bytes(const vx_mat *m);   /* the device memory vx_gmat_upload takes */
/* The same with bf16 weights converted to float16 (rounded to nearest even: exact for 2^-17 <= |w| < 65504,
 * the values the cooperative-matrix GEMMs make of bf16 in their tiles) where float16 holds every value,
 * else as vx_gmat_upload; dtype says which. The same device memory. */
vox_status vx_gmat_upload_f16(vx_gpu *g, const vx_mat *m, vx_gmat *out);
vox_status vx_gmat_upload_stack_f16(vx_gpu *g, const vx_mat *const *m, const float *const *bias, int n, vx_gmat *out);

/* Activations for q8/q4 weights: x[n][cols] (cols % 32 == 0) to int8 codes xq ([n][cols] bytes) and
 * block scales xd ([n][cols / 32] floats), exactly as the CPU kernels quantize them. xq and xd (and
 * those given to the q8/q4 GEMV) are bound at their offsets, which must be multiples of the device's
 * minStorageBufferOffsetAlignment (0 in practice: they are scratch buffers); every other tensor may
 * start at any float. */
vox_status vx_gop_quantize(vx_gpu *g, vx_gbind x, int64_t n, int64_t cols, vx_gbind xq, vx_gbind xd, const char *label);
/* vx_gop_silu_mul(gate, up) and then vx_gop_quantize of the product in one pass: the same codes and
 * scales (the product itself is not written). */
vox_status vx_gop_quantize_silu(vx_gpu *g, vx_gbind gate, vx_gbind up, int64_t n, int64_t cols, vx_gbind xq, vx_gbind xd,
                                const char *label);

/* Up to VX_GEMV_MAX_ROWS (vk.h) x rows a linear layer is a GEMV (gemv_*.comp: 64 invocations per output row,
 * 64-way tree sums); beyond, a tiled GEMM (gemm_*.comp: VX_GEMM_TM x rows by VX_GEMM_TN weight rows
 * a workgroup, sums in column order). Either way an output's bits do not depend on n or on the other
 * rows, only on which of the two computed it. */
/* With cooperative matrices (vx_gpu_coopmat) the GEMM of f16/bf16 weights is gemm_cm_*.comp instead:
 * 64 x rows by 32 weight rows a workgroup, x split into two float16 (hi + lo), float32 accumulation. */
#define VX_GEMV_RPW 4   /* output rows per GEMV workgroup (RPW in gemv_common.glsl) */
#define VX_GEMM_CM_TM 64
#define VX_GEMM_CM_TN 32
#define VX_GEMM_CM_WIDE_TN 64
#define VX_GEMM_CMH_TM 128
#define VX_GEMM_CMH_TN 128
#define VX_GEMM_TM 64
#define VX_GEMM_TN 32

/* A linear layer with an elementwise epilogue, on gemm_cm2.comp only (vx_gop_linear_epi_ok: a cm2 float16
 * matrix, more than VX_GEMV_MAX_ROWS x rows, a device with VK_NV_cooperative_matrix2): VX_EPI_GELU_TANH
 * y = gelu_tanh(x . W + bias) (vx_nn_gelu_tanh); VX_EPI_GATED_ADD y += gate[r] (x . W + bias) (a DiT's
 * gated residual, vx_gop_gated_add's order). Saves the elementwise pass and its trip through memory. */
#define VX_EPI_GELU_TANH 1
#define VX_EPI_GATED_ADD 2
int vx_gop_linear_epi_ok(const vx_gpu *g, const vx_gmat *w, int64_t n);
vox_status vx_gop_linear_epi(vx_gpu *g, const vx_gmat *w, const vx_gbind *bias, vx_gbind x, int64_t n, vx_gbind y,
                             int64_t y_stride, int epi, const vx_gbind *gate, const char *label);
/* The same (epi 0: none) with x given as float16 rows (cols apart; x16 bound at an offset that is a
 * multiple of 4 bytes), one product on the tensor cores: the arithmetic of an fp16 model. */
vox_status vx_gop_linear_h(vx_gpu *g, const vx_gmat *w, const vx_gbind *bias, vx_gbind x16, int64_t n, vx_gbind y,
                           int64_t y_stride, int epi, const vx_gbind *gate, const char *label);

/* y[i][r] = x[i] . W[r] (+ bias[r]) for i < n, y rows y_stride floats apart (0: w->rows); with
 * accumulate, y[i][r] += that (a residual connection, in the CPU's order y + (x . W + bias)).
 * f32/f16/bf16 weights read x (float); q8/q4 weights read xq/xd from vx_gop_quantize (x unused).
 * bias may be NULL. */
vox_status vx_gop_linear(vx_gpu *g, const vx_gmat *w, const vx_gbind *bias, vx_gbind x, vx_gbind xq, vx_gbind xd,
                         int64_t n, vx_gbind y, int64_t y_stride, int accumulate, const char *label);

/* A stacked matrix applied to x: output s of x row i goes to ys[s] (rows of segment s, dense). */
vox_status vx_gop_linear_stack(vx_gpu *g, const vx_gmat *w, vx_gbind x, vx_gbind xq, vx_gbind xd, int64_t n,
                               const vx_gbind *ys, const char *label);

/* A GEMV prologue (gemv_prologue.glsl): the elementwise op that feeds a linear layer applied as the GEMV
 * loads x, so its output never goes through memory and needs no dispatch: the same bits as the op's own
 * dispatch followed by the layer (f32/f16/bf16 weights on the GEMV path only: vx_gop_linear_pro_ok;
 * q8/q4 layers take their codes from vx_gop_rms_norm_q8 / vx_gop_quantize instead).
 *   VX_PRO_RMS_NORM: x -> vx_gop_rms_norm(x, aux, eps) (aux: the weights, w->cols floats)
 *   VX_PRO_SILU_MUL: x -> vx_gop_silu_mul(x, aux) (aux: up, laid out as x: rows w->cols floats apart) */
typedef enum { VX_PRO_NONE, VX_PRO_RMS_NORM, VX_PRO_SILU_MUL } vx_gpro_kind;
typedef struct vx_gpro {
    vx_gpro_kind kind;
    vx_gbind aux;
    float eps;
} vx_gpro;
int vx_gop_linear_pro_ok(const vx_gpu *g, const vx_gmat *w, int64_t n);
/* vx_gop_linear / vx_gop_linear_stack of f32/f16/bf16 weights with a prologue on x */
vox_status vx_gop_linear_pro(vx_gpu *g, const vx_gmat *w, const vx_gbind *bias, const vx_gpro *pro, vx_gbind x,
                             int64_t n, vx_gbind y, int64_t y_stride, int accumulate, const char *label);
vox_status vx_gop_linear_stack_pro(vx_gpu *g, const vx_gmat *w, const vx_gpro *pro, vx_gbind x, int64_t n,
                                   const vx_gbind *ys, const char *label);

/* vx_rms_norm: y[r] = x[r] / sqrt(mean(x[r]^2) + eps) * w for r < rows (w NULL: no scale); in place ok. */
vox_status vx_gop_rms_norm(vx_gpu *g, vx_gbind x, const vx_gbind *w, int64_t rows, int64_t d, float eps, vx_gbind y,
                           const char *label);
/* vx_gop_rms_norm and then vx_gop_quantize of its result in one pass (d % 32 == 0): the same bits. */
vox_status vx_gop_rms_norm_q8(vx_gpu *g, vx_gbind x, const vx_gbind *w, int64_t rows, int64_t d, float eps, vx_gbind y,
                              vx_gbind xq, vx_gbind xd, const char *label);
/* vx_rope in place: x [n][heads][d], cos/sin [n][d]. */
vox_status vx_gop_rope(vx_gpu *g, vx_gbind x, int64_t n, int64_t heads, int64_t d, vx_gbind cos, vx_gbind sin,
                       const char *label);
/* vx_rms_norm(x, w, n * heads, d, eps) then vx_rope(x, n, heads, d, cos, sin), in place, one pass. */
vox_status vx_gop_norm_rope(vx_gpu *g, vx_gbind x, vx_gbind w, int64_t n, int64_t heads, int64_t d, float eps,
                            vx_gbind cos, vx_gbind sin, const char *label);
/* vx_gop_norm_rope of q [n][hq][d] (weights wq) and of k [n][hk][d] (weights wk) in one dispatch: the
 * same bits as the two. */
vox_status vx_gop_norm_rope_qk(vx_gpu *g, vx_gbind q, vx_gbind wq, int64_t hq, vx_gbind k, vx_gbind wk, int64_t hk,
                               int64_t n, int64_t d, float eps, vx_gbind cos, vx_gbind sin, const char *label);
/* vx_silu_mul: y = silu(gate) * up over n elements (y may alias gate). */
vox_status vx_gop_silu_mul(vx_gpu *g, vx_gbind gate, vx_gbind up, int64_t n, vx_gbind y, const char *label);
/* vx_add: y = a + b over n elements (y may alias a or b). */
vox_status vx_gop_add(vx_gpu *g, vx_gbind a, vx_gbind b, int64_t n, vx_gbind y, const char *label);
/* y = x over n floats (between host-visible and device-local buffers within a chain). */
vox_status vx_gop_copy(vx_gpu *g, vx_gbind x, int64_t n, vx_gbind y, const char *label);
/* vx_attention: q [nq][hq][d], k/v [nk][hkv][d] (the last nq keys are the queries' own), out
 * [nq][hq][d]; d <= 256 (one pass, online softmax: no score scratch). */
vox_status vx_gop_attention(vx_gpu *g, vx_gbind q, int64_t nq, int64_t hq, vx_gbind k, vx_gbind v, int64_t nk,
                            int64_t hkv, int64_t d, float scale, int64_t window, vx_gbind out, const char *label);

/* vx_gop_norm_rope_qk of the nq (<= VX_ATT_NR_MAX) new rows and then vx_gop_attention in one dispatch
 * (attention_nr.comp), the same bits: q [nq][hq][d] raw (not modified), the new keys raw in kr
 * [nq][hkv][d]; they are stored normalized and rotated into the cache k at rows nk - nq .. nk - 1 (v
 * holds all nk rows already); w: q_norm [d] then k_norm [d]; cos/sin [nq][d]. */
#define VX_ATT_NR_MAX 4
vox_status vx_gop_attention_nr(vx_gpu *g, vx_gbind q, int64_t nq, int64_t hq, vx_gbind k, vx_gbind v, int64_t nk,
                               int64_t hkv, int64_t d, float scale, int64_t window, vx_gbind out, vx_gbind kr,
                               vx_gbind w, float eps, vx_gbind cos, vx_gbind sin, const char *label);

/* Choosing a code from logits [v] (v <= 8192) into codes[slot], as a codec model's sampler (greedy, temperature, top-k, top-p) with float32
 * probabilities (sample.comp): greedy when !do_sample, else temperature, top-k, top-p and the inverse
 * CDF at u[slot] (float; the host computes it with vox_philox_uniform). ws: v floats of scratch. */
typedef struct vx_gsampler {
    int do_sample;
    float temperature;
    int32_t top_k;
    float top_p;
} vx_gsampler;
vox_status vx_gop_sample(vx_gpu *g, vx_gbind logits, int64_t v, const vx_gsampler *sp, vx_gbind ws, vx_gbind codes,
                         vx_gbind u, int slot, const char *label);
/* vx_gop_sample and then vx_gop_gather of the chosen code from w into out, in one dispatch. */
vox_status vx_gop_sample_gather(vx_gpu *g, vx_gbind logits, int64_t v, const vx_gsampler *sp, vx_gbind ws,
                                vx_gbind codes, vx_gbind u, int slot, const vx_gmat *w, vx_gbind out, const char *label);
/* out[cols] = row codes[slot] of the embedding table w (one part; any dtype), as vx_gather_rows. */
vox_status vx_gop_gather(vx_gpu *g, const vx_gmat *w, vx_gbind codes, int slot, vx_gbind out, const char *label);

/* Internal to the op files: t bound whole (up to the binding limit) and t's offset in floats. */
vx_gbind vx_gop_whole(const vx_gpu *g, vx_gbind t, uint32_t *base);
/* A 1-D grid of `items` invocations in groups of 64, folded into y beyond 65535 groups. */
void vx_gop_grid(uint64_t items, uint32_t *gx, uint32_t *gy);
/* One workgroup per row: `rows` workgroups, folded into y beyond 65535. */
void vx_gop_row_grid(uint64_t rows, uint32_t *gx, uint32_t *gy);

#endif
