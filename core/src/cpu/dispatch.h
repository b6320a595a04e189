/* Internal: the table of per-path kernel implementations behind kernels.h.
 *
 * kernels.c holds the public vx_* functions: they check arguments, split the work into tasks for the
 * pool and call the active table's entries. One table per CPU path (kernels.h: scalar, avx2, avx2-vnni,
 * avx512, avx512-vnni, avx512-vnni-bf16, neon, neon-dotprod, neon-i8mm, neon-i8mm-bf16); a table starts as a copy of the next smaller path's and
 * overrides what its extensions accelerate (kernels_scalar.c, kernels_avx2.c, kernels_avx512.c and the
 * files they call). The active table is chosen once per process from vx_cpu()->path (kernels.h rule 2).
 * Nothing outside core/src/cpu reads CPU features: families ask kernels.h (vx_cpu_dots).
 *
 * Work split contract of the range entries: they compute exactly the outputs of the given ranges, and
 * every output element's value is independent of the ranges (the determinism rule), so kernels.c may
 * split any way it likes (by rows, by time steps, or both). */
#ifndef VOX_CPU_DISPATCH_H
#define VOX_CPU_DISPATCH_H

#include "kernels.h"

/* Quantized activations (q8/q4 weights): every 32-block of an x row is quantized exactly like a q8
 * weight block (docs/formats.md): amax = max |x| over the block, d = amax / 127 (float32),
 * r = d > 0 ? 1 / d : 0, q = clamp(round-half-away(x * r), -127, 127) (q = 0 where x * r is NaN).
 * A path stores (q, d) per row in its own layout (qact_row_bytes, qact_quantize); the numbers are the
 * same on every path (the tests compare them), so every path computes the same function:
 *   y[i][r] = bias[r] + sum over blocks b of float(isum_b) * (sw[r][b] * d[i][b]),
 *   isum_b  = sum over j < 32 of wq[r][32b + j] * q[i][32b + j]      (exact int32)
 * with wq the q8 value or (nibble - 8) for q4 (the scalar path: exactly this, summed over b in
 * order). The SIMD paths split each isum_b over 32-bit lanes (exact partial sums of 4 products, or 8
 * for q4: its low and high halves share a lane), multiply each float(partial) by sw * d and accumulate
 * lane by lane with FMA in block order, then add the lanes in v_hsum's fixed tree: the same function
 * up to float rounding and order, fixed per path, independent of n and of tiling. */
/* Most x rows of a streamed product (gemv_* entries). */
#define VX_STREAM_MAX_X 4

/* One piece of a streamed product (gemv_* entries): rows [r0, r1) of w times the x rows into
 * y[i * w->rows + r] (+ bias[r]); y and bias are indexed by the weight row. */
typedef struct vx_gemv_part {
    const vx_mat *w;
    const float *bias;
    float *y;
    int64_t r0, r1;
} vx_gemv_part;

/* One register tile of vx_linear_q8w (cpu/q8w.c): x rows [0, mr) (their codes + 128 as bytes, xrow
 * bytes apart; block scales d at dx, dxrow floats apart) times packed groups [0, ng) of 16 weight rows
 * (p: the first group at block b0; gstride bytes from a group to the next), blocks b0 .. b0 + kb - 1,
 * into y [mr][16 ng] (ldy floats apart): the chain starts at 0 (first) or at y, + bias after the last
 * block (last). mr <= 4, ng <= 3. */
typedef struct vx_q8w_tile {
    int mr, ng, first, last;
    const unsigned char *xq;
    size_t xrow;
    const float *dx;
    size_t dxrow;
    const unsigned char *p;
    size_t gstride;
    int64_t b0, kb;
    float *y;
    int64_t ldy;
    const float *bias;
} vx_q8w_tile;

typedef struct vx_kernels {
    const char *name;
    vx_cpu_path path;

    /* y[i][r] for i in [i0, i1), r in [r0, r1); f32, f16, bf16 weights. */
    void (*linear_float)(const vx_mat *w, const float *bias, const float *x, float *y, int64_t i0, int64_t i1,
                         int64_t r0, int64_t r1);
    /* Bytes of one quantized activation row (cols % 32 == 0) for weight dtype q8 or q4, and the
     * quantizer filling it. Buffers are 64-byte aligned with rows at multiples of the row size. */
    size_t (*qact_row_bytes)(int64_t cols, vox_dtype wtype);
    void (*qact_quantize)(const float *x, int64_t cols, vox_dtype wtype, void *row);
    /* As linear_float for q8/q4 weights, reading activation rows qact + i * row_bytes. */
    void (*linear_quant)(const vx_mat *w, const float *bias, const void *qact, size_t row_bytes, float *y,
                         int64_t i0, int64_t i1, int64_t r0, int64_t r1);
    /* Streamed products of a few x rows (1 <= n_x <= VX_STREAM_MAX_X) over consecutive parts (all of
     * one dtype and cols), in order: y[i * w->rows + r] of each part for i < n_x, exactly the values of
     * this table's linear_float (f32/f16/bf16; x rows cols apart) or linear_quant (q8/q4; qact rows
     * row_bytes apart), computed part after part so that a kernel can stream the weights (each read
     * once, prefetched ahead) across part boundaries. The scalar versions go part by part through k's
     * linear entries. */
    void (*gemv_float)(const struct vx_kernels *k, const vx_gemv_part *parts, int n_parts, const float *x, int64_t n_x);
    void (*gemv_quant)(const struct vx_kernels *k, const vx_gemv_part *parts, int n_parts, const void *qact,
                       size_t row_bytes, int64_t n_x);
    /* Output rows [i0, i1) and weight rows [r0, r1) of vx_conv1d_f32 (x: the padded input's first row). */
    void (*conv_f32)(const vx_mat *w, int64_t c_in, int64_t taps, int64_t dil, int64_t stride, const float *bias,
                     const float *x, float *y, int64_t i0, int64_t i1, int64_t r0, int64_t r1);
    /* y[i][c] for i in [i0, i1), c in [c0, c1) of vx_matmul_nn (W = w->data [k = w->rows][m = w->cols],
     * f32, f16 or bf16). */
    void (*matmul_nn)(const vx_mat *w, const float *x, float *y, int64_t i0, int64_t i1, int64_t c0, int64_t c1);
    /* One query and the `group` query heads that share a KV head (grouped-query attention): q, out
     * point at [group][d]; k, v at the first key of the KV head, keys kstride floats apart; keys
     * [j0, j1) are visible. Each head's result is independent of the others and of the group size. */
    void (*attention_heads)(const float *q, int64_t group, const float *k, const float *v, int64_t kstride, int64_t j0,
                            int64_t j1, int64_t d, float scale, float *out);

    void (*rms_norm)(const float *x, const float *w, int64_t rows, int64_t d, float eps, float *y);
    void (*layer_norm)(const float *x, const float *w, const float *b, int64_t rows, int64_t d, float eps, float *y);
    void (*softmax_rows)(float *x, int64_t rows, int64_t d);
    void (*exp_rows)(const float *s, int64_t lds, int64_t rows, int64_t n, float scale, float *p, float *sum);
    void (*exp_rows_bf16)(const float *s, int64_t lds, int64_t rows, int64_t n, float scale, uint16_t *p, int64_t ldp,
                          float *sum);
    void (*add)(const float *a, const float *b, int64_t n, float *y);
    void (*mul)(const float *a, const float *b, int64_t n, float *y);
    void (*scale_channels)(const float *x, const float *s, int64_t rows, int64_t d, float *y);
    void (*add_channels)(const float *x, const float *b, int64_t rows, int64_t d, float *y);
    void (*silu)(const float *x, int64_t n, float *y);
    void (*silu_mul)(const float *gate, const float *up, int64_t n, float *y);
    void (*gelu)(const float *x, int64_t n, float *y);
    void (*elu)(const float *x, int64_t n, float *y);
    void (*relu)(const float *x, int64_t n, float *y);
    void (*tanh)(const float *x, int64_t n, float *y);
    void (*sigmoid)(const float *x, int64_t n, float *y);
    void (*snake_beta)(const float *x, const float *alpha, const float *inv_beta, int64_t t, int64_t c, float *y);
    void (*channel_moments)(const float *x, int64_t t, int64_t c, int64_t c0, int64_t c1, double *mean, double *m2);
    void (*clamp)(const float *x, int64_t n, float lo, float hi, float *y);
    void (*rope)(float *x, int64_t n, int64_t heads, int64_t d, const float *cos, const float *sin);
    void (*im2col)(const float *x, int64_t t_in, int64_t c, int64_t k, int64_t dilation, int64_t stride,
                   int64_t t_out, float *out);
    void (*depthwise_conv)(const float *x, int64_t t_out, int64_t c, const float *w, int64_t k, int64_t dilation,
                           const float *b, float *y);
    void (*gather_rows)(const vx_mat *w, const int32_t *ids, int64_t n, float *out);
    void (*harmonic_source)(const vx_harmonic *a, int64_t begin, int64_t end, float *y);

    /* The convolution kernels of packed weights (NULL where the path has none: the packing refuses).
     * conv_i8: vx_conv1d_i8w_ex; conv_i8_work: its scratch bytes (the layout is the path's). */
    vox_status (*conv_i8)(vx_pool *pool, const vx_i8w *w, const float *bias, const vx_i8_conv *a);
    size_t (*conv_i8_work)(const vx_i8w *w, int64_t t_in, int64_t pad, int64_t dil, int moments);
    /* conv_bf16: vx_conv1d_bf16w; a matrix is taps 1 (dil unused). */
    vox_status (*conv_bf16)(vx_pool *pool, const vx_bf16w *w, const float *bias, const float *x, int64_t n_out,
                            int64_t dil, float *y);
    /* vx_linear_bf16w_rounded (a matrix, x rows already bf16, pairs words apart); NULL where the path has none. */
    vox_status (*linear_bf16_rounded)(vx_pool *pool, const vx_bf16w *w, const uint16_t *xb, int64_t n, float *y);
    /* linear_q8w: vx_linear_q8w's tiles (cpu/q8w.c: the job, the layout and the order of operations);
     * NULL: q8w.c's scalar tile. */
    void (*q8w_tile)(const struct vx_q8w_tile *t);
    /* One group of 16 q8 rows (codes ld bytes apart, scales nb a row) packed as vx_q8w_pack packs it (the
     * same bytes), nb blocks to dst; NULL: q8w.c's byte loop (vx_linear_q8t then is not worth it). */
    void (*q8w_pack_group)(const int8_t *codes, int64_t ld, const float *scales, int64_t nb, unsigned char *dst);
    /* One 32-block of x to int8 codes: vx_quantize_block_q8 (the scalar table) or a SIMD copy of its bits. */
    float (*quant_block_q8)(const float *x, int8_t *q);
    /* n floats to bf16 bits, vx_bf16_rne's (the scalar table) or the hardware's, the same bits. */
    void (*bf16_round)(const float *x, int64_t n, uint16_t *h);
    vx_dot_caps dots;
} vx_kernels;

/* The tables (a SIMD table is only valid on a CPU with that path). Each init runs on a copy of the next
 * smaller path's table (kernels.c): scalar -> avx2 -> avx2-vnni, avx2 -> avx512 -> avx512-vnni ->
 * avx512-vnni-bf16 -> amx; on aarch64 scalar -> neon -> neon-dotprod -> neon-i8mm -> neon-i8mm-bf16. */
void vx_kernels_init_scalar(vx_kernels *t);
/* float -> bf16 bits, round to nearest even, denormals to signed zero, NaN kept quiet (bf16w.c) */
uint16_t vx_bf16_rne(float f);
/* n floats to bf16 by vx_bf16_rne (bf16w.c): the scalar table's bf16_round. */
void vx_bf16_round(const float *x, int64_t n, uint16_t *h);
#ifdef VOX_X86
void vx_kernels_init_avx2(vx_kernels *t);
void vx_kernels_init_avx2_vnni(vx_kernels *t);
void vx_kernels_init_avx512(vx_kernels *t);
void vx_kernels_init_avx512_vnni(vx_kernels *t);
void vx_kernels_init_avx512_bf16(vx_kernels *t);
void vx_kernels_init_amx(vx_kernels *t);        /* kernels_amx.c */
void vx_conv_i8_init_amx(vx_kernels *t);        /* AMX-INT8 (conv_i8_amx.c) */
void vx_conv_bf16_init_amx(vx_kernels *t);      /* AMX-BF16 (linear_bf16_amx.c) */
/* The calling thread's tile configuration (conv_i8_amx.c): tmm0-3 16 x 16 sums, tmm4 / tmm5 the
 * 16 x 64-byte operands, tmm6 / tmm7 the last, narrower ones (rem 4-byte groups: quads of int8 or
 * pairs of bf16; rem 0: none), loaded at each call (other code on the thread may change the tiles). */
void vx_amx_configure(int rem);
/* An x row rounded to bf16 pairs as the AVX512-BF16 and AMX-BF16 kernels read it (linear_bf16_avx512.c). */
void vx_bf16_round_row(const float *x, int64_t cols, uint32_t *o);
void vx_linear_q_init_avx2(vx_kernels *t);      /* the q8/q4 entries of a table (vpmaddubsw) */
void vx_linear_q_init_avx2_vnni(vx_kernels *t); /* the same function with AVX-VNNI */
void vx_linear_q_init_avx512(vx_kernels *t);    /* needs AVX512-VNNI */
void vx_q8w_init_avx2(vx_kernels *t);           /* vx_linear_q8w with vpmaddubsw (q8w_avx2.c) */
void vx_q8w_init_avx2_vnni(vx_kernels *t);      /* with AVX-VNNI (q8w_avx2_vnni.c) */
void vx_q8w_init_avx512(vx_kernels *t);         /* vx_linear_q8w with AVX512-VNNI (q8w_avx512.c) */
/* One 32-block of x to int8 codes, bit-identical to vx_quantize_block_q8 (linear_q_avx512.c). */
float vx_quant_block_q8_avx512(const float *x, int8_t *q);
void vx_conv_i8_init_avx2(vx_kernels *t);       /* vpmaddwd */
void vx_conv_i8_init_avx2_vnni(vx_kernels *t);  /* AVX-VNNI */
void vx_conv_i8_init_avx512(vx_kernels *t);     /* AVX512-VNNI */
void vx_conv_bf16_init_avx512(vx_kernels *t);   /* AVX512-BF16 */
#endif
#ifdef VOX_ARM64
/* aarch64: neon -> neon-dotprod -> neon-i8mm -> neon-i8mm-bf16 (kernels_neon*.c) */
void vx_kernels_init_neon(vx_kernels *t);
void vx_kernels_init_neon_dotprod(vx_kernels *t);
void vx_kernels_init_neon_i8mm(vx_kernels *t);
void vx_kernels_init_neon_bf16(vx_kernels *t);
#endif

/* The active table (chosen once from vx_cpu()->path). */
const vx_kernels *vx_kernels_active(void);

/* Tests and benchmarks only: make `path` the active table for the rest of the process, so one run
 * can check every path the CPU supports. Returns 0 (and changes nothing) when the CPU lacks it.
 * Not thread-safe against kernels running at the same time. */
int vx_kernels_force_path(vx_cpu_path path);
/* The table of a path the CPU supports, or NULL (tests: compare two paths in one process). */
const vx_kernels *vx_kernels_of(vx_cpu_path path);

/* Scalar building blocks shared by the paths (kernels_scalar.c). */
float vx_f16_to_f32(uint16_t h);
static inline float vx_bf16_to_f32(uint16_t h) {
    union { uint32_t u; float f; } v = {(uint32_t)h << 16};
    return v.f;
}
/* Quantize one 32-block of activations (the definition above); returns d. */
float vx_quantize_block_q8(const float *x, int8_t *q);

#endif
