/* The int8 dot-product convolution with AMX-INT8 (Sapphire Rapids and later): tdpbusd multiplies a
 * 16 x 64 tile of unsigned input codes by a 16 x 64 tile of signed weight codes (16 quads by 16
 * channels, 4 codes each) into 16 x 16 exact int32 sums: 16384 products per instruction, against
 * vpdpbusd's 64. The convolution around the integer sums (map, quantization, epilogue, moments) is
 * conv_i8.h's, as on the other paths; this file holds the tile.
 *
 * The packed weights (i8w.c) are already in the layout tdpbusd reads for its second operand: per quad
 * u, 64 channels x 4 codes, so the B tile of 16 quads and channels 16v .. 16v + 15 is 16 rows of 64
 * bytes, 256 bytes apart. The input codes are rows of quads * 4 bytes: the A tile is 16 rows of 64
 * bytes, one row apart. A quad count that is not a multiple of 16 leaves a last, narrower pair of
 * tiles (tmm6 / tmm7, configured with that width), so one tile configuration serves a whole call.
 *
 * The sums are exact and the same as vpdpbusd's (no saturation in either), and the epilogue is
 * conv_i8.h's on 16-lane vectors: the same bits as the avx512-vnni path (test_kernels checks it).
 *
 * Tiles are per-thread state: every tile kernel loads the configuration it needs before its first
 * tile (vx_amx_configure serves linear_bf16_amx.c too, whose pairs of bf16 take the same tile shapes
 * as quads of int8). */
#define VX_SIMD_WIDTH 16
#include "cpu/simd.h"
#include "cpu/simd_math.h"

#define CI_WIDE 0
#define CI_MR 16
#define CI_SUFFIX(name) name##_amx
#include "cpu/conv_i8.h"

#include <immintrin.h>

typedef struct __attribute__((packed, aligned(64))) amx_cfg {
    uint8_t palette, start_row, reserved[14];
    uint16_t colsb[16];
    uint8_t rows[16];
} amx_cfg;

/* Loaded at every tile kernel's start, never cached: the tile state belongs to the thread, and other
 * code on it (a BLAS or oneDNN in the same process) may release or reconfigure the tiles between our
 * calls; ldtilecfg costs tens of cycles against a tile kernel's thousands. */
void vx_amx_configure(int rem) {
    amx_cfg c;
    memset(&c, 0, sizeof c);
    c.palette = 1;
    for (int t = 0; t < 6; t++) c.rows[t] = 16, c.colsb[t] = 64; /* tmm0-3 sums, tmm4 codes, tmm5 weights */
    if (rem) {
        c.rows[6] = 16, c.colsb[6] = (uint16_t)(rem * 4); /* the last quads' codes */
        c.rows[7] = (uint8_t)rem, c.colsb[7] = 64;        /* and their weights */
    }
    /* GCC 12 does not count the 64 bytes ldtilecfg reads as a use of c: without this barrier it kept
     * the palette byte and dropped the rows and widths (an all-empty configuration, and the next tile
     * instruction faults with SIGILL). The asm makes every store to c visible first. */
    __asm__ volatile("" : : "r"(&c) : "memory");
    _tile_loadconfig(&c);
}

static void ci_sums(const ci_tile_args *t) {
    const uint8_t *x = t->x;
    const int64_t ldx = t->ldx, quads = t->quads, mr = t->mr, full = quads / 16;
    const int rem = (int)(quads % 16);
    const int8_t *P = t->P;
    int32_t c[4][16][16] __attribute__((aligned(64)));
    vx_amx_configure(rem);
    _tile_zero(0);
    _tile_zero(1);
    _tile_zero(2);
    _tile_zero(3);
    for (int64_t k = 0; k < full; k++) {
        const int8_t *pw = P + k * 16 * CI_NR * 4;
        _tile_loadd(4, x + k * 64, ldx);
        _tile_loadd(5, pw, CI_NR * 4);
        _tile_dpbusd(0, 4, 5);
        _tile_loadd(5, pw + 64, CI_NR * 4);
        _tile_dpbusd(1, 4, 5);
        _tile_loadd(5, pw + 128, CI_NR * 4);
        _tile_dpbusd(2, 4, 5);
        _tile_loadd(5, pw + 192, CI_NR * 4);
        _tile_dpbusd(3, 4, 5);
    }
    if (rem) {
        const int8_t *pw = P + full * 16 * CI_NR * 4;
        _tile_loadd(6, x + full * 64, ldx);
        _tile_loadd(7, pw, CI_NR * 4);
        _tile_dpbusd(0, 6, 7);
        _tile_loadd(7, pw + 64, CI_NR * 4);
        _tile_dpbusd(1, 6, 7);
        _tile_loadd(7, pw + 128, CI_NR * 4);
        _tile_dpbusd(2, 6, 7);
        _tile_loadd(7, pw + 192, CI_NR * 4);
        _tile_dpbusd(3, 6, 7);
    }
    _tile_stored(0, c[0], 64);
    _tile_stored(1, c[1], 64);
    _tile_stored(2, c[2], 64);
    _tile_stored(3, c[3], 64);
    __asm__ volatile("" : : : "memory");   /* the sums are in c now (GCC 12: see vx_amx_configure) */
    vf zs[4], sw[4], bv[4];
    for (int v = 0; v < 4; v++) {
        zs[v] = v_load(t->wsum + v * 16);
        sw[v] = v_load(t->ws + v * 16);
        bv[v] = t->bias ? v_load(t->bias + v * 16) : v_zero();
    }
    for (int64_t i = 0; i < mr; i++) {
        const vf sx = v_set1(t->xs[i]), zx = v_set1(t->xz[i]);
        for (int v = 0; v < 4; v++)
            ci_epi(_mm512_load_si512((const void *)c[v][i]), sx, zx, zs[v], sw[v], bv[v], t->bias != NULL,
                   t->f + i * CI_NR + v * 16, t->res ? t->res + i * t->ldy + v * 16 : NULL, t->y + i * t->ldy + v * 16,
                   t->first, t->last);
    }
}

void vx_conv_i8_init_amx(vx_kernels *t) {
    t->conv_i8 = ci_conv_amx;
    t->conv_i8_work = ci_work_size_amx;
    t->dots.int8 = "AMX-INT8";
    t->dots.int8_widened = 0;
}
