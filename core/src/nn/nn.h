/* Internal: neural-network building blocks that several model families share, built on the kernels of
 * kernels.h (no CPU feature is read here). Activations are float32 and time-major ([t][channels]),
 * weights are vx_mat matrices used in place in their stored dtype.
 *
 * Determinism: every output element is computed by one thread in an order fixed by the shapes, so the
 * results do not depend on the thread count (pool.h). */
#ifndef VOX_NN_H
#define VOX_NN_H

#include <stdint.h>
#include <string.h>

#include "../kernels.h"
#include "../pool.h"
#include "vox.h"

/* ------------------------------------------------------------------------------ elementwise */
/* torch.nn.GELU(approximate="tanh"): 0.5 x (1 + tanh(sqrt(2 / pi) (x + 0.044715 x^3))), the tanh from
 * vx_tanh (a few ulps); y may be x. */
void vx_nn_gelu_tanh(const float *x, int64_t n, float *y);
/* torch.nn.Mish: x tanh(softplus(x)) = x u (u + 2) / (u (u + 2) + 2) with u = e^x (x > 20: x); y may be x. */
void vx_nn_mish(const float *x, int64_t n, float *y);
/* The same on rows [0, rows) of [rows][d] through the pool (large activations). */
void vx_nn_gelu_tanh_pool(vx_pool *pool, float *x, int64_t rows, int64_t d);
void vx_nn_mish_pool(vx_pool *pool, float *x, int64_t rows, int64_t d);
/* torch's leaky ReLU, v > 0 ? v : v * slope, as a bit select between both sides: with the default
 * trapping-math, GCC vectorizes this but not the float ternary, which then branches (and mispredicts on
 * half of the elements). The same bits, NaN included (it takes v * slope). */
static inline float vx_nn_lrelu(float v, float slope) {
    const float n = v * slope;
    uint32_t vb, nb;
    memcpy(&vb, &v, sizeof vb);
    memcpy(&nb, &n, sizeof nb);
    const uint32_t pos = (uint32_t)0 - (uint32_t)(v > 0.0f), r = (vb & pos) | (nb & ~pos);
    float out;
    memcpy(&out, &r, sizeof out);
    return out;
}
/* x = leaky_relu(x, slope) in place. */
void vx_nn_leaky_relu(float *x, int64_t n, float slope);
/* vx_layer_norm through the pool, by rows. */
void vx_nn_layer_norm(vx_pool *pool, const float *x, const float *w, const float *b, int64_t rows, int64_t d, float eps,
                      float *y);

/* ------------------------------------------------------------------------------ matrices */
/* Rows [r0, r0 + n) of a weight matrix, as a matrix of its own (any dtype: q8/q4 scales follow). */
vx_mat vx_mat_rows(const vx_mat *w, int64_t r0, int64_t n);

/* ------------------------------------------------------------------------------ convolutions */
/* Conv1d with zero padding on time-major x [t][c_in] -> y [t_out][c_out], t_out = t + pad_l + pad_r -
 * (k - 1): weight [c_out][c_in / groups * k] (torch [c_out][c_in / groups][k] flattened), groups >= 1,
 * through im2col and vx_linear per group (so its order of operations is vx_linear's). bias may be NULL.
 * VOX_ERR_OUT_OF_MEMORY. */
vox_status vx_nn_conv1d(vx_pool *pool, const vx_mat *w, const float *bias, const float *x, int64_t t, int64_t c_in,
                        int64_t c_out, int64_t k, int64_t groups, int64_t pad_l, int64_t pad_r, float *y);
/* The same convolution as bf16 dot products: each group's weight [c_out / groups][c_in / groups * k] (torch
 * order) packed by vx_nn_conv1d_bf16w_pack (its rows padded with zeros to a multiple of 64), the input
 * rounded to bf16 by the kernel, products exact, f32 sums (vx_conv1d_bf16w: no im2col). The pack refuses
 * (VOX_ERR_UNSUPPORTED) where the path has no bf16 kernel or c_in / groups is odd. */
typedef struct vx_nn_gconv_bf16 {
    int64_t groups, og, k;   /* og: output channels per group */
    vx_bf16w *g;             /* [groups] */
} vx_nn_gconv_bf16;
vox_status vx_nn_conv1d_bf16w_pack(const vx_mat *w, int64_t c_in, int64_t k, int64_t groups, vx_nn_gconv_bf16 *out);
void vx_nn_conv1d_bf16w_free(vx_nn_gconv_bf16 *w);
vox_status vx_nn_conv1d_bf16w(vx_pool *pool, const vx_nn_gconv_bf16 *w, const float *bias, const float *x, int64_t t,
                              int64_t c_in, int64_t pad_l, int64_t pad_r, float *y);

/* Global Response Normalization of ConvNeXt-V2 (Woo et al. 2023) on x [t][c], in place:
 *   G[c] = sqrt(sum over time of x^2)  (double sums, rounded),  N[c] = G[c] / (mean over c of G + 1e-6)
 *   x = gamma[c] (x N[c]) + beta[c] + x.  */
vox_status vx_nn_grn(vx_pool *pool, float *x, int64_t t, int64_t c, const float *gamma, const float *beta);

/* A ConvNeXt block on time-major x [t][dim], in place:
 *   x = x + gamma * pwconv2(GRN(GELU(pwconv1(LayerNorm(dwconv(x))))))
 * with a depthwise convolution of kernel k and zero padding (k - 1) / 2 each side, LayerNorm over
 * channels (eps), exact (erf) GELU; GRN only when grn_gamma is set (ConvNeXt-V2), the layer scale gamma
 * only when set (Vocos). dw_w: f32 [dim][k]. */
typedef struct vx_convnext {
    int64_t dim, hidden, k;
    const float *dw_w, *dw_b, *ln_w, *ln_b;
    float eps;
    vx_mat pw1, pw2;
    const float *pw1_b, *pw2_b;
    const float *grn_gamma, *grn_beta;  /* [hidden] or NULL */
    const float *gamma;                 /* [dim] or NULL */
} vx_convnext;
vox_status vx_nn_convnext(vx_pool *pool, const vx_convnext *b, float *x, int64_t t);

/* ------------------------------------------------------------------------------ normalization */
/* Per-channel mean and sum of squared deviations (m2) of x [t][c] over time, in double
 * (vx_channel_moments, blocks of 16 channels over the pool): the statistics of an instance norm. */
void vx_nn_channel_moments(vx_pool *pool, const float *x, int64_t t, int64_t c, double *mean, double *m2);

/* AdaIN1d: y = (1 + gamma) * InstanceNorm(x) + beta with [gamma | beta] = fc(s) for a style vector s;
 * the instance norm per channel over time (biased variance, eps 1e-5, its own affine weight norm_w /
 * norm_b when set, else 1 and 0). */
typedef struct vx_adain {
    vx_mat fc;              /* [2 c][style] */
    const float *fc_b, *norm_w, *norm_b;  /* norm_w / norm_b NULL: 1 and 0 */
    int64_t c;
} vx_adain;
/* The AdaIN of x as the per-channel map y = x mul[ch] + add[ch] (mul, add: [c] each, so that a
 * convolution can apply it as it gathers its input); mean / m2: x's moments when the caller has them
 * (vx_nn_channel_moments, or a convolution's epilogue), NULL to compute them here. VOX_ERR_OUT_OF_MEMORY. */
vox_status vx_nn_adain_map(vx_pool *pool, const vx_adain *a, const float *s, const float *x, int64_t t,
                           const double *mean, const double *m2, float *mul, float *add);
/* y [t][c] = AdaIN(x), then, when lrelu is set, leaky_relu(., slope). y may not be x. */
vox_status vx_nn_adain(vx_pool *pool, const vx_adain *a, const float *s, const float *x, int64_t t, int lrelu,
                       float slope, float *y);

/* ------------------------------------------------------------------------------ recurrent */
/* A bidirectional one-layer LSTM in PyTorch's layout and gate order (i, f, g, o): y [t][2 hidden], the
 * forward direction's hidden state in the first half of a row, the backward one's in the second. The
 * input projections of all steps are one product per direction; the two directions run in parallel,
 * each wholly on one thread (so the result does not depend on the thread count); the gates through the
 * vectorized vx_sigmoid / vx_tanh. VOX_ERR_OUT_OF_MEMORY. */
typedef struct vx_lstm {
    vx_mat w_ih[2], w_hh[2];          /* [4 hidden][in], [4 hidden][hidden] per direction */
    const float *b_ih[2], *b_hh[2];
    int64_t in, hidden;
} vx_lstm;
vox_status vx_nn_bilstm(vx_pool *pool, const vx_lstm *l, const float *x, int64_t t, float *y);

/* ------------------------------------------------------------------------------ attention */
/* Full (bidirectional, unmasked) multi-head attention of `batch` independent sequences of n rows:
 * q, k, v time-major rows of [heads][d] (row r of sequence b is row b n + r; ldq / ldk / ldv: floats
 * between rows, so q|k|v may live in one buffer), out [batch n][heads][d] (ldo floats apart):
 *   out_h = softmax(q_h k_h^T scale) v_h
 * Scores in float32 (one vx_matmul_nn per block of queries), softmax max-subtracted with the exponent
 * sum in key order, the values weighted by vx_matmul_nn: a query's result depends only on its own row and
 * the keys, never on how the queries are blocked or threaded. VOX_ERR_OUT_OF_MEMORY. */
vox_status vx_nn_attention(vx_pool *pool, int64_t batch, int64_t n, int64_t heads, int64_t d, const float *q,
                           int64_t ldq, const float *k, int64_t ldk, const float *v, int64_t ldv, float scale, float *out,
                           int64_t ldo);
/* The same with both products as vx_linear_bf16w (keys and values rounded to bf16; on a path whose bf16
 * kernel rounds its inputs, vx_cpu_dots().bf16_rounds_x, the queries and the probabilities too): for a
 * model whose linear layers already run as bf16 dot products. VOX_ERR_UNSUPPORTED unless the path has a
 * bf16 kernel; VOX_ERR_OUT_OF_MEMORY. */
vox_status vx_nn_attention_bf16(vx_pool *pool, int64_t batch, int64_t n, int64_t heads, int64_t d, const float *q,
                                int64_t ldq, const float *k, int64_t ldk, const float *v, int64_t ldv, float scale,
                                float *out, int64_t ldo);
/* The same with the scores as vx_linear_q8w products (queries and keys quantized per 32-block to int8
 * codes exactly as vx_linear's q8 path quantizes activations, exact integer block sums) and the rest as
 * vx_nn_attention_bf16: for a model whose linear layers already run on q8. VOX_ERR_UNSUPPORTED unless
 * the path has a bf16 kernel and d % 32 == 0; VOX_ERR_OUT_OF_MEMORY. */
vox_status vx_nn_attention_q8(vx_pool *pool, int64_t batch, int64_t n, int64_t heads, int64_t d, const float *q,
                              int64_t ldq, const float *k, int64_t ldk, const float *v, int64_t ldv, float scale,
                              float *out, int64_t ldo);

#endif
