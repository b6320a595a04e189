/* Real FFT (kernels.h vx_rfft_*): double precision, precomputed twiddles, output rounded to float.
 *
 * A real sequence of size n is packed as n/2 complex values z[k] = x[2k] + i x[2k+1], transformed by
 * an iterative radix-2 decimation-in-time complex FFT of size h = n/2, and split into the spectrum:
 *   E[k] = (Z[k] + conj Z[h-k]) / 2,  O[k] = (Z[k] - conj Z[h-k]) / 2i,  X[k] = E[k] + e^(-2 pi i k/n) O[k]
 * for k = 0..h (indices of Z mod h). Half the work of a complex FFT of size n; the same arithmetic on
 * every CPU path (plain double operations, no vectorization), so spectra are identical everywhere.
 *
 * Plans are immutable after creation and may be shared by threads. The complex work array lives on
 * the stack for n <= STACK_N; bigger transforms use the plan's own buffer under its mutex. */
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "kernels.h"

#define STACK_N 4096
#define MAX_LOG2 30

struct vx_rfft {
    int64_t n, h;
    uint32_t *bitrev; /* h */
    double *tw;       /* h/2 complex: e^(-2 pi i j / h) */
    double *post;     /* h complex: e^(-2 pi i k / n) */
    double *work;     /* h complex, for n > STACK_N */
    pthread_mutex_t mu;
};

void vx_rfft_free(vx_rfft *p) {
    if (!p) return;
    free(p->bitrev);
    free(p->tw);
    free(p->post);
    free(p->work);
    pthread_mutex_destroy(&p->mu);
    free(p);
}

vox_status vx_rfft_create(int64_t n, vx_rfft **out) {
    if (!out) return vox_set_error(VOX_ERR_INVALID_ARGUMENT, "vx_rfft_create: out is NULL");
    *out = NULL;
    if (n < 1 || n > ((int64_t)1 << MAX_LOG2) || (n & (n - 1)) != 0)
        return vox_set_error(VOX_ERR_INVALID_ARGUMENT, "vx_rfft_create: size %lld is not a power of two in [1, 2^%d]",
                             (long long)n, MAX_LOG2);
    vx_rfft *p = calloc(1, sizeof *p);
    if (!p) return vox_set_error(VOX_ERR_OUT_OF_MEMORY, "vx_rfft_create: out of memory");
    if (pthread_mutex_init(&p->mu, NULL) != 0) {
        free(p);
        return vox_set_error(VOX_ERR_INTERNAL, "vx_rfft_create: cannot create a mutex");
    }
    p->n = n;
    p->h = n / 2;
    int64_t h = p->h;
    if (h >= 1) {
        p->bitrev = malloc(sizeof *p->bitrev * (size_t)h);
        p->tw = malloc(sizeof *p->tw * (size_t)(h > 1 ? h : 2));
        p->post = malloc(sizeof *p->post * 2 * (size_t)h);
        if (n > STACK_N) p->work = malloc(sizeof *p->work * 2 * (size_t)h);
        if (!p->bitrev || !p->tw || !p->post || (n > STACK_N && !p->work)) {
            vx_rfft_free(p);
            return vox_set_error(VOX_ERR_OUT_OF_MEMORY, "vx_rfft_create: out of memory");
        }
        int bits = 0;
        while (((int64_t)1 << bits) < h) bits++;
        for (int64_t i = 0; i < h; i++) {
            uint32_t r = 0;
            for (int b = 0; b < bits; b++) r |= (uint32_t)((i >> b) & 1) << (bits - 1 - b);
            p->bitrev[i] = r;
        }
        for (int64_t j = 0; j < h / 2; j++) {
            double a = -2.0 * M_PI * (double)j / (double)h;
            p->tw[2 * j] = cos(a);
            p->tw[2 * j + 1] = sin(a);
        }
        for (int64_t k = 0; k < h; k++) {
            double a = -2.0 * M_PI * (double)k / (double)n;
            p->post[2 * k] = cos(a);
            p->post[2 * k + 1] = sin(a);
        }
    }
    *out = p;
    return VOX_OK;
}

/* In-place complex FFT of size h on z (interleaved), input already in bit-reversed order. */
static void cfft(const vx_rfft *p, double *z) {
    int64_t h = p->h;
    for (int64_t len = 2; len <= h; len *= 2) {
        int64_t half = len / 2, step = h / len;
        for (int64_t s = 0; s < h; s += len) {
            for (int64_t j = 0; j < half; j++) {
                double wr = p->tw[2 * j * step], wi = p->tw[2 * j * step + 1];
                double *a = z + 2 * (s + j), *b = z + 2 * (s + j + half);
                double br = b[0] * wr - b[1] * wi, bi = b[0] * wi + b[1] * wr;
                b[0] = a[0] - br;
                b[1] = a[1] - bi;
                a[0] += br;
                a[1] += bi;
            }
        }
    }
}

static void run(const vx_rfft *p, const float *in, float *out, double *z) {
    int64_t h = p->h;
    for (int64_t k = 0; k < h; k++) {
        uint32_t r = p->bitrev[k];
        z[2 * r] = in[2 * k];
        z[2 * r + 1] = in[2 * k + 1];
    }
    cfft(p, z);
    out[0] = (float)(z[0] + z[1]);
    out[1] = 0.0f;
    out[2 * h] = (float)(z[0] - z[1]);
    out[2 * h + 1] = 0.0f;
    for (int64_t k = 1; k < h; k++) {
        double zr = z[2 * k], zi = z[2 * k + 1], cr = z[2 * (h - k)], ci = -z[2 * (h - k) + 1];
        double er = 0.5 * (zr + cr), ei = 0.5 * (zi + ci);
        /* (Z - conj Z') / 2i = (dr + i di) / 2i = (di - i dr) / 2 */
        double dr = zr - cr, di = zi - ci;
        double orr = 0.5 * di, oi = -0.5 * dr;
        double wr = p->post[2 * k], wi = p->post[2 * k + 1];
        out[2 * k] = (float)(er + (orr * wr - oi * wi));
        out[2 * k + 1] = (float)(ei + (orr * wi + oi * wr));
    }
}

void vx_rfft_run(const vx_rfft *p, const float *in, float *out) {
    if (p->n == 1) {
        out[0] = in[0];
        out[1] = 0.0f;
        return;
    }
    if (p->n <= STACK_N) {
        double z[STACK_N];
        run(p, in, out, z);
    } else {
        vx_rfft *mp = (vx_rfft *)p; /* only the mutex and the work buffer change, under the lock */
        pthread_mutex_lock(&mp->mu);
        run(p, in, out, mp->work);
        pthread_mutex_unlock(&mp->mu);
    }
}
