/* vx_linear_q8w's tile with AMX-INT8 (the job, the layout and the order of operations: q8w.c). A packed
 * block of a group (8 steps x 16 rows x 4 codes: 512 bytes) is already tdpbusd's second operand, a B
 * tile of 8 rows of 64 bytes; the x codes of up to 16 rows for the block are the A tile (rows of 32
 * bytes, xrow apart). One tdpbusd gives the block's 16 x 16 exact sums (4096 products, against
 * vpdpbusd's 64), which go through memory to the float chain of q8w.c: + corr (exact), to float, one
 * FMA with sw * d per output and block in block order: the bits of the scalar definition, as the
 * AVX512-VNNI tile gives them (test_kernels checks every path against the definition).
 *
 * The per-block scales keep each tdpbusd at one block (K = 32), so the float epilogue (4 vector
 * operations per x row and block) is what remains on AVX-512: ~3x fewer instructions than 8 vpdpbusd
 * + the same epilogue per row. Two pairs of blocks are in flight (group()) so that one pair's sums are
 * being read while the next pair's are computed. Tiles of 4 x rows or fewer stay on the AVX512-VNNI tile:
 * a 16-row tile product would be mostly empty. */
#include <immintrin.h>
#include <string.h>

#include "cpu/dispatch.h"

#define QA_MR 16

typedef struct __attribute__((packed, aligned(64))) qa_cfg {
    uint8_t palette, start_row, reserved[14];
    uint16_t colsb[16];
    uint8_t rows[16];
} qa_cfg;

/* tmm0-3: the sums of two pairs of blocks (mr x 16 int32); tmm4, tmm5: a pair's x codes (mr x 32
 * bytes); tmm6, tmm7: its weight codes (8 x 64 bytes). Loaded at every call: the tiles are the thread's
 * state, which other code may change between calls (conv_i8_amx.c). */
static void configure(int mr) {
    qa_cfg c;
    memset(&c, 0, sizeof c);
    c.palette = 1;
    for (int t = 0; t < 4; t++) c.rows[t] = (uint8_t)mr, c.colsb[t] = 64;
    for (int t = 4; t < 6; t++) c.rows[t] = (uint8_t)mr, c.colsb[t] = 32;
    for (int t = 6; t < 8; t++) c.rows[t] = 8, c.colsb[t] = 64;
    __asm__ volatile("" : : "r"(&c) : "memory");   /* GCC 12 keeps every store to c (vx_amx_configure) */
    _tile_loadconfig(&c);
}

/* One block's sums (c: mr rows of 16 int32) into the float chains of x rows [0, MR) of one group. */
static inline __attribute__((always_inline)) void epilogue(const int MR, __m512 *acc, const int32_t (*c)[16],
                                                           const unsigned char *blk, const float *dx, size_t dxrow) {
    const __m512i corr = _mm512_load_si512((const void *)(blk + 512));
    const __m512 sw = _mm512_load_ps((const float *)(blk + 576));
    for (int i = 0; i < MR; i++) {
        const __m512i isum = _mm512_add_epi32(_mm512_load_si512((const void *)c[i]), corr);
        const __m512 s = _mm512_mul_ps(sw, _mm512_set1_ps(dx[i * dxrow]));
        acc[i] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(isum), s, acc[i]);
    }
}

/* Two blocks' sums: tiles C0, C1 from blocks b, b + 1 (x codes through tmm4 / tmm5, weights through
 * tmm6 / tmm7), stored to c[0], c[1]. */
#define QA_PAIR(C0, C1, c, b)                                         \
    do {                                                              \
        const unsigned char *x0_ = xq + 32 * (b), *w0_ = p + (size_t)(b) * 640; \
        _tile_zero(C0);                                               \
        _tile_zero(C1);                                               \
        _tile_loadd(4, x0_, xrow);                                    \
        _tile_loadd(6, w0_, 64);                                      \
        _tile_dpbusd(C0, 4, 6);                                       \
        _tile_loadd(5, x0_ + 32, xrow);                               \
        _tile_loadd(7, w0_ + 640, 64);                                \
        _tile_dpbusd(C1, 5, 7);                                       \
        _tile_stored(C0, (c)[0], 64);                                 \
        _tile_stored(C1, (c)[1], 64);                                 \
    } while (0)

/* MR x rows (a constant for the full tile, so the chains stay in registers) by one group. Software
 * pipelined: the tile unit computes the next pair of blocks (into the other pair of sum tiles and
 * buffers) while the vector units take the previous pair's sums into the float chains; a tile is
 * not renamed, so without the second pair each block would wait for the last one's store. */
static inline __attribute__((always_inline)) void group(const int MR, const vx_q8w_tile *t, int g) {
    int32_t c[2][2][QA_MR][16] __attribute__((aligned(64)));
    __m512 acc[QA_MR];
    for (int i = 0; i < MR; i++) acc[i] = t->first ? _mm512_setzero_ps() : _mm512_loadu_ps(t->y + i * t->ldy + 16 * g);
    const unsigned char *p = t->p + (size_t)g * t->gstride, *xq = t->xq + 32 * t->b0;
    const size_t xrow = t->xrow;
    const float *dx = t->dx + t->b0;
    const int64_t pairs = t->kb / 2;
    if (pairs) QA_PAIR(0, 1, c[0], 0);
    for (int64_t k = 0; k < pairs; k++) {
        if (k + 1 < pairs) {
            __asm__ volatile("" : : : "memory");   /* the last reads of the buffer stored next are done */
            if (k % 2 == 0) QA_PAIR(2, 3, c[1], 2 * (k + 1));
            else QA_PAIR(0, 1, c[0], 2 * (k + 1));
        }
        __asm__ volatile("" : : : "memory");   /* the sums are in c now (GCC 12: see configure) */
        const int64_t b = 2 * k;
        epilogue(MR, acc, (const int32_t(*)[16])c[k % 2][0], p + (size_t)b * 640, dx + b, t->dxrow);
        epilogue(MR, acc, (const int32_t(*)[16])c[k % 2][1], p + (size_t)(b + 1) * 640, dx + b + 1, t->dxrow);
    }
    if (t->kb % 2) {   /* an odd last block */
        const int64_t b = t->kb - 1;
        _tile_zero(0);
        _tile_loadd(4, xq + 32 * b, xrow);
        _tile_loadd(6, p + (size_t)b * 640, 64);
        _tile_dpbusd(0, 4, 6);
        _tile_stored(0, c[0][0], 64);
        __asm__ volatile("" : : : "memory");
        epilogue(MR, acc, (const int32_t(*)[16])c[0][0], p + (size_t)b * 640, dx + b, t->dxrow);
    }
    const int add = t->last && t->bias;
    const __m512 bv = add ? _mm512_loadu_ps(t->bias + 16 * g) : _mm512_setzero_ps();
    for (int i = 0; i < MR; i++) _mm512_storeu_ps(t->y + i * t->ldy + 16 * g, add ? _mm512_add_ps(acc[i], bv) : acc[i]);
}

static void full_tile(const vx_q8w_tile *t) {
    for (int g = 0; g < t->ng; g++) group(QA_MR, t, g);
}

static void part_tile(const vx_q8w_tile *t) {
    for (int g = 0; g < t->ng; g++) group(t->mr, t, g);
}

static void q8w_tile(const vx_q8w_tile *t) {
    if (t->mr <= 4) {
        vx_q8w_tile_avx512(t);
        return;
    }
    configure(t->mr);
    if (t->mr == QA_MR) full_tile(t);
    else part_tile(t);
}

void vx_q8w_init_amx(vx_kernels *t) {
    t->q8w_tile = q8w_tile;
    t->q8w_mr = QA_MR;
    t->dots.q8 = "AMX-INT8";
}
