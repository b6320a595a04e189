// The push constants, epilogue bindings and output store shared by the codec decoder's product shaders
// (codec_gemm_common.glsl, codec_gemv_common.glsl, codec_gemm_reduce.comp).
// Epilogue, in the CPU decoder's order, on v = the sum for output (m, n):
//   bit 0  v = v + bias[n]
//   bit 1  v = v * scale[n]                      (layer scale)
//   bit 2  v = res[m][n] + v                     (residual; res may be y itself: each element is read
//                                                 and written by one invocation)
//   bit 4  v = snake_beta(v, alpha[n], inv_beta[n]) with alpha bound as scale (binding 3, s_base) and
//          inv_beta as res (binding 4, r_base): the SnakeBeta that follows a convolution (not with 1, 2)
//   bit 5  v = gelu(v)                           (the ConvNeXt MLP's activation)
// every step rounded on its own (precise: no fused multiply-add across steps, so the shaders that
// share this epilogue give the same bits whatever their compiler contracts).
// Up to three outputs (q|k|v, gate|up stacked by rows in one weight): column n goes to y0 below seg1,
// to y1 below seg2, else to y2, at its column within that segment (one output: seg1 = seg2 = ~0).
// flags bit 3: the weight is stored [K][N] (transposed convolution); bit 6: split K (the product
// shader writes per-chunk partial sums to y0, codec_gemm_reduce.comp adds them and applies this).
layout(std430, binding = 2) readonly buffer Bi { float bias[]; };
layout(std430, binding = 3) readonly buffer S { float sc[]; };
layout(std430, binding = 4) readonly buffer R { float res[]; };
layout(std430, binding = 5) buffer Y0 { float y0[]; };
layout(std430, binding = 6) buffer Y1 { float y1[]; };
layout(std430, binding = 7) buffer Y2 { float y2[]; };
layout(push_constant) uniform Push {
    uint M, N, K, cin, taps, dil, flags;
    uint x_base, w_base, b_base, s_base, r_base, y_base;
    uint y_stride, r_stride;   // floats between rows of y0 / res
    uint seg1, seg2, y_base1, y_base2, y_stride1, y_stride2;
    uint ncol;                 // codec_gemv_common.glsl: output columns per workgroup
} p;
#include "codec_snake.glsl"
#include "codec_gelu.glsl"

// K is summed in chunks of KC (a multiple of every shader's K step): each output is
// ((c_0 + c_1) + c_2) + ..., c_i the in-order fused multiply-add sum of chunk i from 0. The order
// depends on K alone, so a split over workgroups (codec_gemm_reduce.comp) and a workgroup that walks
// every chunk itself give the same bits, for any M.
#define KC 256

void codec_store(uint gm, uint gn, float acc) {
    precise float v = acc;
    if ((p.flags & 1u) != 0u) v = v + bias[p.b_base + gn];
    if ((p.flags & 2u) != 0u) v = v * sc[p.s_base + gn];
    if ((p.flags & 4u) != 0u) v = res[p.r_base + gm * p.r_stride + gn] + v;
    if ((p.flags & 16u) != 0u) v = snake_beta(v, sc[p.s_base + gn], res[p.r_base + gn]);
    if ((p.flags & 32u) != 0u) v = gelu(v);
    if (gn < p.seg1) y0[p.y_base + gm * p.y_stride + gn] = v;
    else if (gn < p.seg2) y1[p.y_base1 + gm * p.y_stride1 + (gn - p.seg1)] = v;
    else y2[p.y_base2 + gm * p.y_stride2 + (gn - p.seg2)] = v;
}
