/* Internal: the compute kernels every model family is built from.
 *
 * Activations are float32, row-major. Weights are used in place from the .tmod mapping in their
 * stored dtype (f32, f16, bf16, q8, q4; docs/formats.md) and never copied whole.
 *
 * Two rules make vox deterministic (docs: same seed => same audio for any thread count and any chunk
 * size), and every kernel keeps them:
 *   1. An output element is computed by one thread, with an order of operations that depends only on
 *      the weight (dtype, shape), the CPU path and the inputs it reads: never on the thread count,
 *      on n (how many rows are computed in the same call), or on the element's position in a tile.
 *      So a linear layer applied to 1 row or inside a batch of 37 rows gives the same bits.
 *   2. The CPU path (scalar, avx2, ..., avx512-vnni-bf16, amx, neon, ..., neon-i8mm-bf16: below) is chosen
 *      once per process, from the CPU features or VOX_CPU, never per call.
 * Within those rules kernels are free to tile, unroll and vectorize.
 *
 * Every kernel has a portable scalar version (kernels_scalar.c) that is the readable definition; the
 * SIMD versions are checked against it by the C tests. */
#ifndef VOX_KERNELS_H
#define VOX_KERNELS_H

#include <stddef.h>
#include <stdint.h>

#include "pool.h"
#include "vox.h"

/* A weight matrix [rows, cols] as stored in the .tmod: row-major; q8/q4 need cols % 32 == 0 and
 * keep one f32 scale per block of 32 along a row (two planes: values, then scales). */
typedef struct vx_mat {
    vox_dtype dtype;      /* VOX_DTYPE_F32, _F16, _BF16, _Q8, _Q4 */
    int64_t rows, cols;
    const void *data;     /* f32: float; f16/bf16: uint16_t bits; q8: int8_t; q4: packed nibbles */
    const float *scales;  /* q8/q4: rows * cols / 32 scales; NULL otherwise */
} vx_mat;

/* ------------------------------------------------------------------------------ CPU paths */
/* A kernel path is an exact set of instruction-set extensions, so one CPU can run exactly what a
 * smaller one runs (VOX_CPU=name forces a path; the default, VOX_CPU=auto, is the best the CPU has):
 *   scalar            portable C: the readable definition of every kernel (any CPU)
 *   avx2              AVX2 + FMA + F16C, nothing optional: the x86-64 baseline (Haswell, Zen 1-3);
 *                     int8 dot products through vpmaddwd
 *   avx2-vnni         + AVX-VNNI (vpdpbusd on 256-bit registers: Alder Lake and later, Zen 5)
 *   avx512            + AVX-512 F/BW/DQ/VL (Skylake-X); int8 dot products through the avx2 kernels
 *   avx512-vnni       + AVX512-VNNI (Cascade Lake, Ice Lake)
 *   avx512-vnni-bf16  + AVX512-BF16 (Cooper Lake, Sapphire Rapids, Zen 4, Zen 5)
 *   amx               + AMX-TILE/INT8/BF16 with the OS's permission (Sapphire Rapids and later): the
 *                     int8 convolution on tiles (the same integer sums, so the same bits) and the bf16
 *                     convolution/GEMM on tiles
 * and on aarch64 (features from getauxval(AT_HWCAP/AT_HWCAP2) on Linux, sysctl on macOS):
 *   neon              Advanced SIMD, always present: the aarch64 baseline (Cortex-A53/A72, Raspberry
 *                     Pi 3/4); int8 dot products through smull/smlal on int16-widened codes
 *   neon-dotprod      + SDOT (Armv8.2 DotProd: Cortex-A55/A76, Raspberry Pi 5, Graviton 2, Apple M1)
 *   neon-i8mm         + I8MM (USDOT, SMMLA: Armv8.6, Graviton 3, Neoverse V1/N2, Apple M2)
 *   neon-i8mm-bf16    + BF16 (BFDOT: Graviton 3, Neoverse V1/N2, Apple M2)
 * Listed in increasing order: the best path is the last one the CPU (and OS) supports. A path the CPU
 * lacks is refused, never replaced by another: vx_cpu_check (engine creation) returns the error.
 * VOX_CPU_MASK=avx512f,avxvnni,... (tests) makes detection treat those features as absent, so one
 * machine can show what a smaller CPU gets. */
typedef enum vx_isa { VX_ISA_SCALAR = 0, VX_ISA_AVX2 = 1, VX_ISA_AVX512 = 2, VX_ISA_NEON = 3 } vx_isa; /* the vector width */
typedef enum vx_cpu_path {
    VX_PATH_SCALAR = 0,
    VX_PATH_AVX2,
    VX_PATH_AVX2_VNNI,
    VX_PATH_AVX512,
    VX_PATH_AVX512_VNNI,
    VX_PATH_AVX512_VNNI_BF16,
    VX_PATH_AMX,
    VX_PATH_NEON,
    VX_PATH_NEON_DOTPROD,
    VX_PATH_NEON_I8MM,
    VX_PATH_NEON_I8MM_BF16,
    VX_PATHS
} vx_cpu_path;

typedef struct vx_path_desc {
    const char *name;   /* the VOX_CPU name */
    vx_isa isa;
    int vnni, bf16;     /* int8 dot-product instructions (AVX-VNNI / AVX512-VNNI), AVX512-BF16 */
    const char *needs;  /* the extensions it needs, for messages */
} vx_path_desc;
const vx_path_desc *vx_path(vx_cpu_path p);  /* NULL outside [0, VX_PATHS) */
int vx_path_parse(const char *name);          /* the path of a VOX_CPU name, or -1 */
int vx_cpu_supports(vx_cpu_path p);           /* the CPU (and OS) can run it */

typedef struct vx_cpu_info {
    int avx2, fma, f16c, avx512f, avx512bw, avx512dq, avx512vl, avx512vnni, avx512bf16, avxvnni,
        amx_tile, amx_int8, amx_bf16;
    int neon, dotprod, i8mm, bf16; /* aarch64: Advanced SIMD, SDOT/UDOT, I8MM, BF16 */
    vx_cpu_path best;     /* the best path the CPU (and OS) supports */
    vx_cpu_path path;     /* the path the kernels use: best, or what VOX_CPU asks for */
    char name[32];        /* its VOX_CPU name */
    char why[256];        /* why it was chosen, for vox_devices */
    char error[480];      /* non-empty: VOX_CPU asked for a path this CPU lacks (or an unknown one, or the
                           * retired VOX_CPU_PATH is set); the kernels then run `best` but engine creation
                           * refuses with this message */
} vx_cpu_info;

/* Detected once, thread-safe. On Linux, AMX permission is requested (arch_prctl) during detection;
 * amx_* are 1 only when granted. */
const vx_cpu_info *vx_cpu(void);
/* VOX_OK, or VOX_ERR_UNSUPPORTED with vx_cpu()->error as the message (engine creation calls it). */
vox_status vx_cpu_check(void);

/* What the active path's convolution kernels offer (a model family chooses its math from this, never
 * from CPU features): int8 / bf16 say how the vx_i8w / vx_bf16w kernels compute, NULL when the path has
 * none (their packing then returns VOX_ERR_UNSUPPORTED). */
typedef struct vx_dot_caps {
    const char *int8;  /* "AVX512-VNNI", "AVX-VNNI", "AVX2 vpmaddwd", "NEON I8MM usdot", "NEON sdot", "NEON smlal" */
    int int8_widened;  /* ... with codes widened to 16 bits (vpmaddwd, smlal): ~1.5x the f32 rate, not 3-4x */
    const char *bf16;  /* "AVX512-BF16" / "NEON BF16 bfdot" (x rounded to bf16 too), "bf16 weights widened, f32 FMA" */
    int bf16_rounds_x; /* the bf16 kernel rounds its input rows to bf16 (vdpbf16ps, bfdot) */
    int bf16_tiles;    /* ... on matrix tiles (AMX-BF16): faster than the q8 kernel's vector dot products */
    const char *q8;    /* vx_linear_q8w's kernel: "AVX512-VNNI"; NULL: the scalar definition (slow) */
} vx_dot_caps;
vx_dot_caps vx_cpu_dots(void);

/* ------------------------------------------------------------------------------ linear algebra */
/* y[n][rows] = x[n][cols] . W^T (+ bias[rows] if bias != NULL).
 * Order of operations per output (fixed per CPU path and weight dtype, never dependent on n):
 *  - f32 weights: one FMA chain over k in index order (scalar path: a plain sum in index order);
 *  - f16/bf16 weights: converted exactly to f32; lane-split FMA sums over k, then a fixed tree;
 *  - q8/q4 weights: every path (scalar included) quantizes each 32-block of x to int8 exactly like a
 *    q8 weight block (d = max|x| / 127, q = round-half-away(x / d)) and computes
 *      y = bias + sum over blocks b of float(isum_b) * (w_scale_b * d_b),  isum_b the exact int32
 *    dot product of the block's int8/int4 codes (q4: nibble - 8); paths differ only in the float
 *    summation order (cpu/dispatch.h has the details). This differs from "f32 x times dequantized W"
 *    by the activation rounding: ~3e-3 of max|y| on random data.
 * Runs with FTZ/DAZ for the whole call (as the pool's workers). */
void vx_linear(vx_pool *pool, const vx_mat *w, const float *bias, const float *x, int64_t n, float *y);

/* A Conv1d with f32 weights read in place, without an im2col buffer: y[t][rows] = x_col[t] . W^T
 * (+ bias) for t < n_out, where x_col[t][ci * k + j] = x[t stride + j dil][ci] (torch's [c_out][c_in][k]
 * weight as the matrix [c_out][c_in * k]); x time-major [(n_out - 1) stride + dil (k - 1) + 1][c_in],
 * padded by the caller. Every output is the same chain as vx_im2col + vx_linear (the same bits on
 * every path), so it replaces them wherever the weight is f32. */
void vx_conv1d_f32(vx_pool *pool, const vx_mat *w, int64_t c_in, int64_t k, int64_t dil, int64_t stride, const float *bias,
                   const float *x, int64_t n_out, float *y);

/* Several linear layers of one input: y[m] = x . w[m]^T (+ bias[m], bias or bias[m] may be NULL) for
 * m < n_mats, each result exactly what vx_linear(pool, w[m], bias[m], x, n, y[m]) gives. For one x
 * row and matrices of one dtype and cols (e.g. q|k|v, gate|up) it is one pool dispatch over all their
 * rows, streamed across matrix boundaries; otherwise it calls vx_linear for each. */
void vx_linear_multi(vx_pool *pool, int n_mats, const vx_mat *const *w, const float *const *bias, const float *x,
                     int64_t n, float *const *y);

/* A weight matrix packed for bf16 products (cpu/bf16w.c has the layout, the same on every path):
 * every weight rounded to bf16 (round-to-nearest-even), packed once and owned (data). */
typedef struct vx_bf16w {
    int64_t rows, cols, pairs;
    int64_t taps, tap_pairs; /* a matrix: 1, pairs; a convolution: k, c_in / 2 */
    uint32_t *data;
} vx_bf16w;
/* VOX_ERR_UNSUPPORTED unless the active path has a bf16 kernel (vx_cpu_dots().bf16) and w is f32/bf16
 * with rows a multiple of 64; VOX_ERR_OUT_OF_MEMORY. */
vox_status vx_bf16w_pack(const vx_mat *w, vx_bf16w *out);
/* A Conv1d weight [c_out][c_in * k] (torch order) packed tap-major for vx_conv1d_bf16w; c_in even. */
vox_status vx_bf16w_pack_conv(const vx_mat *w, int64_t c_in, int64_t k, vx_bf16w *out);
/* Packs rows x cols of strided f32 (element (r, c) at src[r ld + c], or src[c ld + r] when transposed),
 * zero rows up to rows_pad (a multiple of 64), into caller storage of rows_pad * ((cols + 1) / 2) words
 * (out->data points there: never vx_bf16w_free it). The same words as vx_bf16w_pack; any path. */
void vx_bf16w_pack_f32(const float *src, int64_t ld, int64_t rows, int64_t cols, int64_t rows_pad, int transposed,
                       uint32_t *data, vx_bf16w *out);
void vx_bf16w_free(vx_bf16w *w);
/* The convolution of a tap-major packed weight without im2col: y[t][rows] = bias + sum over taps j of
 * x[t + j dil] . W_j^T for t < n_out; x time-major [n_out + dil (k - 1)][c_in] f32, padded by the
 * caller. Per output, in (tap, channel pair, channel) order, one chain, then + bias; the paths differ
 * in what the chain multiplies:
 *  - avx512-vnni-bf16 (vx_cpu_dots().bf16_rounds_x): each input row rounded to bf16 once, one
 *    vdpbf16ps chain over the pairs (products exact in f32, f32 sums): twice the f32 rate;
 *  - the others with a bf16 kernel: x in f32 times the bf16 weight widened exactly, one FMA per
 *    product (the f32 rate; half the weight bytes of f32 and no im2col).
 * Never dependent on n or the thread count. VOX_ERR_OUT_OF_MEMORY. */
vox_status vx_conv1d_bf16w(vx_pool *pool, const vx_bf16w *w, const float *bias, const float *x, int64_t n_out, int64_t dil,
                           float *y);
/* y[n][rows] = x . W^T (+ bias) of a packed matrix, as vx_conv1d_bf16w with one tap: not a rounding
 * of vx_linear's result (bf16 weights; on avx512-vnni-bf16 bf16 inputs too: relative error up to
 * 2^-9 each), so use it only where that was measured to be harmless. VOX_ERR_OUT_OF_MEMORY. */
vox_status vx_linear_bf16w(vx_pool *pool, const vx_bf16w *w, const float *bias, const float *x, int64_t n, float *y);
/* The same product (no bias) of x rows already rounded to bf16 (vx_exp_rows_bf16 or vx_bf16_rne's bits;
 * rows w->pairs words apart, a zero after an odd count): the bits vx_linear_bf16w gives for the floats
 * those are the rounding of, without rounding them again. VOX_ERR_UNSUPPORTED unless
 * vx_bf16w_takes_rounded() (the avx512-vnni-bf16 and amx paths: AVX512-BF16, AMX-BF16 tiles). */
int vx_bf16w_takes_rounded(void);
vox_status vx_linear_bf16w_rounded(vx_pool *pool, const vx_bf16w *w, const uint16_t *xb, int64_t n, float *y);

/* A q8 weight matrix packed for int8 GEMMs of many rows (cpu/q8w.c has the layout, the same on every
 * path): groups of 16 weight rows, per 32-block their codes interleaved 4 bytes a row, the block's code
 * sums and scales beside them. Owned (data). */
typedef struct vx_q8w {
    int64_t rows, cols, nb;   /* nb = cols / 32 blocks */
    unsigned char *data;
} vx_q8w;
/* VOX_ERR_UNSUPPORTED unless w is q8 with rows % 16 == 0 (cols % 32 == 0 as every q8 matrix);
 * VOX_ERR_OUT_OF_MEMORY. Packing works on every path; vx_linear_q8w runs on every path too (the
 * scalar one slowly), vx_cpu_dots().q8 names the fast kernel where there is one. */
vox_status vx_q8w_pack(const vx_mat *w, vx_q8w *out);
void vx_q8w_free(vx_q8w *w);
/* y[n][rows] = x . W^T (+ bias): the arithmetic of vx_linear with q8 weights (each 32-block of x
 * quantized to int8 exactly as there, exact int32 block products isum_b), summed per output in one
 * order: acc = 0; for each block b in order acc = fma(float(isum_b), sw_b * d_b, acc); then acc + bias.
 * The same bits on every path, for any n and thread count (not vx_linear's bits: its float order is
 * the path's). VOX_ERR_OUT_OF_MEMORY. */
vox_status vx_linear_q8w(vx_pool *pool, const vx_q8w *w, const float *bias, const float *x, int64_t n, float *y);
/* The same arithmetic (the same bits as vx_linear_q8w of vx_q8w_pack(w)) for an unpacked q8 matrix: each
 * task packs its groups of 16 rows into scratch as it needs them: for the products of tens of rows (a
 * prompt's prefill) without a packed copy of the weights. vx_linear_q8t_fast says whether the path
 * packs fast enough for that to beat vx_linear (a vectorized packer and a tile). Another matrix (not q8,
 * rows % 16 != 0) takes vx_linear. VOX_ERR_OUT_OF_MEMORY. */
vox_status vx_linear_q8t(vx_pool *pool, const vx_mat *w, const float *bias, const float *x, int64_t n, float *y);
int vx_linear_q8t_fast(void);
/* Bytes of a packed q8 matrix (rows % 16 == 0, cols % 32 == 0). */
size_t vx_q8w_bytes(int64_t rows, int64_t cols);
/* rows x cols of strided f32 (element (r, c) at src[r ld + c], cols % 32 == 0) quantized per 32-block
 * exactly as vx_linear_q8w quantizes its x, zero rows up to rows_pad (% 16 == 0), packed into caller
 * storage of vx_q8w_bytes(rows_pad, cols) (out->data points there: never vx_q8w_free it); any path. */
void vx_q8w_pack_f32(const float *src, int64_t ld, int64_t rows, int64_t cols, int64_t rows_pad, unsigned char *data,
                     vx_q8w *out);

/* A convolution weight packed for int8 dot products (cpu/i8w.c has the layout, the same on every path
 * that has the kernel): each output channel r quantized symmetrically, w ~ scale[r] * q with
 * q = rne(w / scale[r]) in [-127, 127] and scale[r] = max |w[r]| / 127 (1 for an all-zero channel),
 * over all its taps. */
typedef struct vx_i8w {
    int64_t rows, c_in, taps, quads; /* quads: ceil(c_in / 4), the 4-byte groups of vpdpbusd */
    int8_t *data;
    float *scale;  /* [rows] */
    float *wsum;   /* [taps][rows]: sum over channels of q (the zero point's share of each tap) */
} vx_i8w;
/* A Conv1d weight [c_out][c_in * k] (torch order). VOX_ERR_UNSUPPORTED unless the active path has an
 * int8 kernel (vx_cpu_dots().int8) and w is f32/bf16 with rows a multiple of 64; VOX_ERR_OUT_OF_MEMORY. */
vox_status vx_i8w_pack_conv(const vx_mat *w, int64_t c_in, int64_t k, vx_i8w *out);
void vx_i8w_free(vx_i8w *w);
/* One input row to 8 bits with its own range: x ~ zero + scale * q, q = rne((x - lo) * 255 / (hi - lo))
 * in [0, 255], zero = lo = min x, scale = (hi - lo) / 255 (0 for a constant row, which is then exact). */
void vx_i8_quantize_row(const float *x, int64_t c, uint8_t *q, float *scale, float *zero);
/* The convolution of a packed weight without im2col, as vx_conv1d_bf16w: y[t][rows] for t < n_out from
 * x time-major [n_out + dil (k - 1)][c_in] f32, padded by the caller. Each input row is quantized once
 * (vx_i8_quantize_row); per output: for each tap j in order, the exact int32 dot product isum_j of the
 * row's codes with q, then f = fma(scale_x, isum_j, f), f = fma(zero_x, wsum[j], f); finally
 * y = fma(f, scale[r], bias[r]). Exact integer sums (vpdpbusd with AVX-VNNI / AVX512-VNNI; without
 * them codes widened to int16 and vpmaddwd, whose pair sums 2 * 255 * 127 never saturate, unlike
 * vpmaddubsw's int16 ones) and this fixed float order: the result never depends on the tiling, the
 * thread count or the path, and vx_conv1d_i8w_model computes the same bits.
 * Error: 8-bit activations (~range / 510 per element) and 8-bit weights. VOX_ERR_OUT_OF_MEMORY. */
vox_status vx_conv1d_i8w(vx_pool *pool, const vx_i8w *w, const float *bias, const float *x, int64_t n_out, int64_t dil,
                         float *y);
/* The fused form of vx_conv1d_i8w that the generator's residual blocks run: the caller's unpadded signal,
 * zero padding, a per-channel map applied to each input row as it is quantized, an optional residual
 * added in the epilogue and optional output moments, so no pass of its own reads or writes the
 * activation for any of them. Every element gets the same bits as the unfused sequence
 * (vx_i8_map_model, pad, vx_conv1d_i8w, add). */
#define VX_I8_MAX_CIN 1024
typedef struct vx_i8_pre {  /* v = x * mul + add (two roundings); with alpha: v + inv_alpha * sin(v * alpha)^2 */
    const float *mul, *add, *alpha, *inv_alpha; /* [c_in] each; alpha NULL: no Snake */
} vx_i8_pre;
/* The map's scalar statement (tests): y [t][c] gets the bits the fused convolution quantizes. Its
 * sin^2 is a polynomial good to ~1e-8 absolute (the rows are rounded to 8 bits next), not libm's. */
void vx_i8_map_model(const float *x, int64_t t, int64_t c, const vx_i8_pre *pre, float *y);
typedef struct vx_i8_conv {
    const float *x;        /* [t_in][c_in] */
    int64_t t_in, pad_l, pad_r, dil;
    const vx_i8_pre *pre;  /* NULL: x as it is */
    const float *res;      /* NULL: y = conv; else y = res + conv (res may be y: in place) */
    float *y;              /* [n_out][rows], n_out = t_in + pad_l + pad_r - dil (taps - 1) */
    double *mean, *m2;     /* NULL, or [rows]: y's per-channel mean and sum of squared deviations, merged
                            * from fixed blocks of rows in order (the same bits for any thread count) */
    void *work;            /* NULL or work_size bytes of scratch (vx_conv1d_i8w_work_size), else allocated */
    size_t work_size;
} vx_i8_conv;
size_t vx_conv1d_i8w_work_size(const vx_i8w *w, int64_t t_in, int64_t pad, int64_t dil, int moments);
vox_status vx_conv1d_i8w_ex(vx_pool *pool, const vx_i8w *w, const float *bias, const vx_i8_conv *a);
/* Scalar model of vx_conv1d_i8w (tests). */
void vx_conv1d_i8w_model(const vx_i8w *w, const float *bias, const float *x, int64_t n_out, int64_t dil, float *y);

/* y[n][m] = x[n][k] . W[k][m] for W stored [k, m] row-major (transposed convolutions): w->rows = k,
 * w->cols = m, f32, f16 or bf16 (widened exactly). Per output: one FMA chain over k in index order
 * starting from 0 (scalar: a plain sum in index order). */
void vx_matmul_nn(vx_pool *pool, const vx_mat *w, const float *x, int64_t n, float *y);
/* The same for an f32 W given as a pointer. */
void vx_matmul_nn_f32(vx_pool *pool, const float *w, int64_t k, int64_t m, const float *x, int64_t n, float *y);

/* out[i][:] = row ids[i] of w, converted to float32 (embedding lookup; any dtype). Exact conversions
 * (q8: q * s, q4: (nibble - 8) * s, as docs/formats.md), the same bits on every path. */
void vx_gather_rows(const vx_mat *w, const int32_t *ids, int64_t n, float *out);
/* n values of dtype f32, f16 or bf16 to float32 (exact); VOX_ERR_UNSUPPORTED for other dtypes. */
vox_status vx_to_f32(vox_dtype dtype, const void *src, int64_t n, float *out);
/* float32 to float16 bits, rounded to nearest even, subnormals included; 65520 and beyond in magnitude
 * are inf, NaN stays NaN. */
uint16_t vx_f32_to_f16(float f);

/* ------------------------------------------------------------------------------ normalization */
/* y[r] = x[r] / sqrt(mean(x[r]^2) + eps) * w (w may be NULL: no scale); x == y allowed. */
void vx_rms_norm(const float *x, const float *w, int64_t rows, int64_t d, float eps, float *y);
/* y[r] = (x[r] - mean) / sqrt(var + eps) * w + b (biased variance, as torch.nn.LayerNorm). */
void vx_layer_norm(const float *x, const float *w, const float *b, int64_t rows, int64_t d, float eps, float *y);

/* ------------------------------------------------------------------------------ elementwise */
/* Elementwise kernels and norms take no pool: they run on the caller's thread, under its MXCSR
 * (callers normally run inside FTZ/DAZ already). An element's value never depends on its position or
 * on n; SIMD transcendentals (exp, expm1, sin, tanh, erfc) stay within a few ulps of libm. */
void vx_add(const float *a, const float *b, int64_t n, float *y);            /* y = a + b */
void vx_mul(const float *a, const float *b, int64_t n, float *y);            /* y = a * b */
void vx_scale_channels(const float *x, const float *s, int64_t rows, int64_t d, float *y); /* y[r][c] = x[r][c] * s[c] */
void vx_add_channels(const float *x, const float *b, int64_t rows, int64_t d, float *y);   /* y[r][c] = x[r][c] + b[c] */
void vx_silu(const float *x, int64_t n, float *y);
void vx_silu_mul(const float *gate, const float *up, int64_t n, float *y);  /* y = silu(gate) * up */
void vx_gelu(const float *x, int64_t n, float *y);                           /* exact (erf) GELU */
void vx_elu(const float *x, int64_t n, float *y);                            /* alpha = 1 */
void vx_relu(const float *x, int64_t n, float *y);
void vx_tanh(const float *x, int64_t n, float *y);
void vx_sigmoid(const float *x, int64_t n, float *y);
/* SnakeBeta on time-major x[t][c]: y = x + inv_beta[c] * sin(x * alpha[c])^2, where the caller
 * precomputed alpha = exp(log_alpha) and inv_beta = 1 / (exp(log_beta) + 1e-9) as the official does. */
void vx_snake_beta(const float *x, const float *alpha, const float *inv_beta, int64_t t, int64_t c, float *y);
/* Per channel ch in [c0, c1) of time-major x[t][c]: mean = (sum over time of x, in double, in time
 * order) / t and m2 = sum over time of (x - mean)^2 (double, time order, no fused multiply-add);
 * results at index ch - c0. The same bits on every path (instance-norm statistics). */
void vx_channel_moments(const float *x, int64_t t, int64_t c, int64_t c0, int64_t c1, double *mean, double *m2);
void vx_clamp(const float *x, int64_t n, float lo, float hi, float *y);
/* In-place softmax of each row (max subtracted; sum in index order). */
void vx_softmax_rows(float *x, int64_t rows, int64_t d);
/* The unnormalized softmax of scaled scores: p[i][c] = exp(scale (s[i][c] - m_i)), m_i = max_c s[i][c],
 * for c < n (s rows lds floats apart, p rows n apart), and sum[i] = the row's sum of p (per path: lanes,
 * then a fixed tree). One pass after the max; the caller divides whatever it makes of p by sum. */
void vx_exp_rows(const float *s, int64_t lds, int64_t rows, int64_t n, float scale, float *p, float *sum);
/* The same values and sums with each p stored as its bf16 bits (vx_bf16_rne's rounding; rows ldp apart):
 * the input of vx_linear_bf16w_rounded, as the bf16 kernels would round the floats of vx_exp_rows. */
void vx_exp_rows_bf16(const float *s, int64_t lds, int64_t rows, int64_t n, float scale, uint16_t *p, int64_t ldp,
                      float *sum);

/* ------------------------------------------------------------------------------ attention */
/* Rotary embedding, rotate-half form (HF): for each row r (0..n-1) and head h, with half = d/2:
 *   y[i] = x[i] * cos[r][i] - x[i + half] * sin[r][i]           (i < half)
 *   y[i] = x[i] * cos[r][i] + x[i - half] * sin[r][i]           (i >= half)
 * x: [n][heads][d], cos/sin: [n][d]; in place allowed. */
void vx_rope(float *x, int64_t n, int64_t heads, int64_t d, const float *cos, const float *sin);

/* Causal (optionally windowed) attention with grouped KV heads.
 * q: [nq][hq][d]; k, v: [nk][hkv][d] (time-major, the last nq keys belong to the queries);
 * query i sits at position nk - nq + i and sees key j iff j <= that position and (window <= 0 or
 * j > position - window). Query head h reads KV head h / (hq / hkv). out: [nq][hq][d].
 * Scores in float32, softmax max-subtracted with the exponent sum taken in key order, so the result
 * of a query depends only on the keys it sees, not on nq. The query heads sharing a KV head are
 * computed together (keys and values read once); each head's result is independent of that grouping.
 * Runs with FTZ/DAZ for the whole call. */
void vx_attention(vx_pool *pool, const float *q, int64_t nq, int64_t hq, const float *k, const float *v,
                  int64_t nk, int64_t hkv, int64_t d, float scale, int64_t window, float *out);

/* ------------------------------------------------------------------------------ convolution */
/* Time-major input x[t][c] (t_in rows, c channels). im2col for a convolution with kernel k,
 * dilation, stride: out[t][ci * k + j] = x[t * stride + j * dilation][ci] for t < t_out, the (ci, j)
 * order of a torch Conv1d weight [c_out][c_in][k] flattened to [c_out][c_in * k], so that
 * vx_linear(weight, bias, out, t_out) computes the convolution (time-major result). The caller pads. */
void vx_im2col(const float *x, int64_t t_in, int64_t c, int64_t k, int64_t dilation, int64_t stride,
               int64_t t_out, float *out);
/* Depthwise convolution (groups == channels): y[t][ch] = b[ch] + sum_j w[ch][j] x[t + j*dilation][ch],
 * x time-major with t_out + (k-1)*dilation rows (the caller pads); w: [c][k] f32. */
void vx_depthwise_conv(const float *x, int64_t t_out, int64_t c, const float *w, int64_t k, int64_t dilation,
                       const float *b, float *y);

/* ------------------------------------------------------------------------------ sources */
/* A sum of harmonics read from per-frame phases (Kokoro's SineGen, its Linear(n_h, 1) merge and tanh;
 * kokoro/source.c has the arithmetic's origin). Sample j of the upsampled signal: s = max(fma(scale,
 * j + 0.5, -0.5), 0), i0 = (int) s, i1 = i0 + 1 if i0 < t2 - 1 else i0, l1 = s - i0, l0 = 1 - l1,
 * uv = f0[j / hop] > threshold ? 1 : 0 and
 *   y[j] = tanh(((b + sum over h in order of w[h] * (sin(fma(l0, phase[i0][h], l1 * phase[i1][h])) * amp
 *          * uv)) + noise[j]))
 * (noise NULL: no term; it may be y itself). phase: [t2][n_h]. sin and tanh: libm on the scalar path,
 * simd_math.h's (a few ulps) on the others; the index and blend arithmetic is the same on every path. */
typedef struct vx_harmonic {
    const float *f0, *phase, *w, *noise;
    float b, amp, threshold, scale;
    int64_t t2, hop, n_h;
} vx_harmonic;
/* y[j] for j in [begin, end). */
void vx_harmonic_source(const vx_harmonic *a, int64_t begin, int64_t end, float *y);

/* ------------------------------------------------------------------------------ FFT */
/* Real FFT of size n (a power of two) with precomputed twiddles: in[n] -> out[n/2 + 1] complex
 * (interleaved re, im), computed in double precision and rounded to float at the end. */
typedef struct vx_rfft vx_rfft;
vox_status vx_rfft_create(int64_t n, vx_rfft **out);
void vx_rfft_free(vx_rfft *plan);
void vx_rfft_run(const vx_rfft *plan, const float *in, float *out);

#endif
