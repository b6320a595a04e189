/* The int8 dot-product convolution with AVX512-VNNI (vpdpbusd on 512-bit registers): 64 products per
 * instruction against vdpbf16ps's 32, and Zen 5 issues more of them per cycle: ~3x the bf16 multiply
 * rate there. The convolution around the integer sums (map, quantization, epilogue, moments) is
 * conv_i8.h's; this file holds the register tile.
 *
 * Tile: 6 x rows by the group's 64 channels (four 16-lane accumulators per row, 24 in all); per quad
 * one 64-byte load of the codes of 16 channels and one vpdpbusd per row and vector (4 products into
 * each lane: the quad's codes of that channel). */
#define VX_SIMD_WIDTH 16
#include "cpu/simd.h"
#include "cpu/simd_math.h"

#define CI_WIDE 0
#define CI_MR 6
#define CI_SUFFIX(name) name##_avx512
#include "cpu/conv_i8.h"

typedef int32_t ci_i32a __attribute__((may_alias, aligned(1)));

/* A function of its own, not inlined: GCC keeps the 24 accumulators in registers only then (inlined
 * into the loop nest, it stored every one of them to the stack on each step, which halved the rate). */
static __attribute__((noinline)) void ci_sums(const ci_tile_args *t) {
    const uint8_t *x = t->x;
    const int64_t ldx = t->ldx, quads = t->quads, mr = t->mr;
    const int8_t *P = t->P;
    const __m512i z = _mm512_setzero_si512();
#define IW_DECL(i) __m512i a##i##0 = z, a##i##1 = z, a##i##2 = z, a##i##3 = z
    IW_DECL(0);
    IW_DECL(1);
    IW_DECL(2);
    IW_DECL(3);
    IW_DECL(4);
    IW_DECL(5);
    for (int64_t u = 0; u < quads; u++) {
        const int8_t *pw = P + u * CI_NR * 4;
        const __m512i w0 = _mm512_load_si512((const void *)pw), w1 = _mm512_load_si512((const void *)(pw + 64)),
                      w2 = _mm512_load_si512((const void *)(pw + 128)), w3 = _mm512_load_si512((const void *)(pw + 192));
#define IW_ROW(i)                                                                                                      \
    do {                                                                                                               \
        const __m512i xb = _mm512_set1_epi32(*(const ci_i32a *)(x + (i) * ldx + u * 4));                               \
        a##i##0 = _mm512_dpbusd_epi32(a##i##0, xb, w0);                                                                \
        a##i##1 = _mm512_dpbusd_epi32(a##i##1, xb, w1);                                                                \
        a##i##2 = _mm512_dpbusd_epi32(a##i##2, xb, w2);                                                                \
        a##i##3 = _mm512_dpbusd_epi32(a##i##3, xb, w3);                                                                \
    } while (0)
        IW_ROW(0);
        IW_ROW(1);
        IW_ROW(2);
        IW_ROW(3);
        IW_ROW(4);
        IW_ROW(5);
    }
#undef IW_ROW
#undef IW_DECL
    vf zs[4], sw[4], bv[4];
    for (int v = 0; v < 4; v++) {
        zs[v] = v_load(t->wsum + v * 16);
        sw[v] = v_load(t->ws + v * 16);
        bv[v] = t->bias ? v_load(t->bias + v * 16) : v_zero();
    }
#define IW_EPI(i)                                                                                                      \
    if ((i) < mr) {                                                                                                    \
        const vf sx = v_set1(t->xs[i]), zx = v_set1(t->xz[i]);                                                         \
        const vi a[4] = {a##i##0, a##i##1, a##i##2, a##i##3};                                                          \
        for (int v = 0; v < 4; v++)                                                                                    \
            ci_epi(a[v], sx, zx, zs[v], sw[v], bv[v], t->bias != NULL, t->f + (i) * CI_NR + v * 16,                    \
                   t->res ? t->res + (i) * t->ldy + v * 16 : NULL, t->y + (i) * t->ldy + v * 16, t->first, t->last);   \
    }
    IW_EPI(0)
    IW_EPI(1)
    IW_EPI(2)
    IW_EPI(3)
    IW_EPI(4)
    IW_EPI(5)
#undef IW_EPI
}

void vx_conv_i8_init_avx512(vx_kernels *t) {
    t->conv_i8 = ci_conv_avx512;
    t->conv_i8_work = ci_work_size_avx512;
    t->dots.int8 = "AVX512-VNNI";
    t->dots.int8_widened = 0;
}
