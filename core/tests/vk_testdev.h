/* The Vulkan tests' device under test, the error metric of verify/metrics.py (max_abs_rel) and dtype
 * names: apart from vk_testlib.h so that a test built on test_codec.c's helpers can use them too. */
#ifndef VOX_TEST_VK_TESTDEV_H
#define VOX_TEST_VK_TESTDEV_H

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "tmod.h"
#include "vox.h"
#include "vulkan/vk.h"

static const char *dt_name(vox_dtype d) {
    const char *s = vox_dtype_name(d);
    return s ? s : "?";
}

/* verify/metrics.py max_abs_rel: max |a - b| / max |b| (NaN anywhere gives +inf). */
static double max_abs_rel(const float *a, const float *b, int64_t n) {
    double e = 0, s = 0;
    for (int64_t i = 0; i < n; i++) {
        double d = fabs((double)a[i] - (double)b[i]);
        if (!(d == d)) return INFINITY;
        if (d > e) e = d;
        if (fabs((double)b[i]) > s) s = fabs((double)b[i]);
    }
    return e / (s > 1e-30 ? s : 1e-30);
}

/* The device under test: VOX_TEST_VULKAN=N, else the first device "--device vulkan" would use (a
 * software renderer included). Returns -1 (and says why) when there is none. */
static int test_device(void) {
    const char *e = getenv("VOX_TEST_VULKAN");
    vx_device_spec s;
    char spec[64];
    snprintf(spec, sizeof spec, "vulkan%s%s", e && *e ? ":" : "", e && *e ? e : "");
    if (vx_device_spec_parse(spec, &s) != VOX_OK || !s.gpu) {
        printf("skipped: no Vulkan device (%s)\n", vx_vk_unavailable_reason() ? vx_vk_unavailable_reason() : "?");
        return -1;
    }
    return s.index;
}

#endif
