/* Philox4x32-10 known-answer vectors from Random123's kat_vectors (Salmon et al., SC'11). */
#include "vox.h"

#include <stdio.h>

int main(void) {
    static const struct { uint32_t ctr[4], key[2], want[4]; } kat[] = {
        {{0, 0, 0, 0}, {0, 0}, {0x6627e8d5u, 0xe169c58du, 0xbc57ac4cu, 0x9b00dbd8u}},
        {{0xffffffffu, 0xffffffffu, 0xffffffffu, 0xffffffffu}, {0xffffffffu, 0xffffffffu},
         {0x408f276du, 0x41c83b0eu, 0xa20bc7c6u, 0x6d5451fdu}},
        {{0x243f6a88u, 0x85a308d3u, 0x13198a2eu, 0x03707344u}, {0xa4093822u, 0x299f31d0u},
         {0xd16cfe09u, 0x94fdccebu, 0x5001e420u, 0x24126ea1u}},
    };
    int fails = 0;
    for (size_t i = 0; i < sizeof kat / sizeof kat[0]; i++) {
        uint32_t out[4];
        vox_philox4x32_10(kat[i].ctr, kat[i].key, out);
        for (int j = 0; j < 4; j++) {
            if (out[j] != kat[i].want[j]) {
                fprintf(stderr, "philox KAT %zu word %d: got %08x want %08x\n", i, j, out[j], kat[i].want[j]);
                fails++;
            }
        }
    }
    double u = vox_philox_uniform(42, 7, 3);
    if (!(u >= 0.0 && u < 1.0)) {
        fprintf(stderr, "vox_philox_uniform out of [0,1): %f\n", u);
        fails++;
    }
    if (fails == 0) printf("philox: %zu known-answer vectors OK\n", sizeof kat / sizeof kat[0]);
    return fails != 0;
}
