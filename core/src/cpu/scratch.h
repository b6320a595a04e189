/* Internal: per-thread scratch buffers for kernels (packed panels, partial sums, quantized
 * activations), so hot kernels do not call malloc on every invocation.
 *
 * Each thread owns VX_SCRATCH_SLOTS independent buffers that grow on demand, are 64-byte aligned,
 * and are freed when the thread exits. A kernel uses one slot for the duration of a call; callers
 * nesting kernels use different slots (see the VX_SLOT_* names). Returns NULL when out of memory:
 * every user has an allocation-free fallback that computes the same bits. */
#ifndef VOX_CPU_SCRATCH_H
#define VOX_CPU_SCRATCH_H

#include <stddef.h>

enum {
    VX_SLOT_ACT = 0,    /* vx_linear: quantized activations (caller thread, whole call) */
    VX_SLOT_TILE = 1,   /* inside one task of a range kernel: partial sums, packed panels */
    VX_SLOT_TILE2 = 2,
    VX_SCRATCH_SLOTS = 3
};

void *vx_scratch(int slot, size_t bytes);
/* Tests: on, every vx_scratch returns NULL (as out of memory), so that a fallback can be checked. */
void vx_scratch_refuse(int on);

#endif
