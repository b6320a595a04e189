/* The initial noise x0 of the flow-matching sampler (vox.reference.f5.noise): element (frame n, mel
 * channel c) of piece p is Box-Muller on Philox4x32-10 at counter (n, c, 4, p), key (seed low, high 32
 * bits): u1 = 1 - u53(r0, r1), u2 = u53(r2, r3), x = float(sqrt(-2 ln u1) cos(2 pi u2)) in double. A pure
 * function of (seed, piece, n, c): the same for any thread count and piece order. */
#include <math.h>

#include "f5.h"

static double u53(uint32_t hi, uint32_t lo) {
    return (double)(((uint64_t)(hi >> 5) << 26) + (uint64_t)(lo >> 6)) / 9007199254740992.0;
}

void f5_initial_noise(uint64_t seed, uint32_t piece, int64_t frames, int64_t channels, float *x0) {
    const uint32_t key[2] = {(uint32_t)seed, (uint32_t)(seed >> 32)};
    for (int64_t n = 0; n < frames; n++)
        for (int64_t c = 0; c < channels; c++) {
            const uint32_t ctr[4] = {(uint32_t)n, (uint32_t)c, F5_NOISE_STREAM, piece};
            uint32_t r[4];
            vox_philox4x32_10(ctr, key, r);
            double u1 = 1.0 - u53(r[0], r[1]), u2 = u53(r[2], r[3]);
            x0[n * channels + c] = (float)(sqrt(-2.0 * log(u1)) * cos(2.0 * M_PI * u2));
        }
}
