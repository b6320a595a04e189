/* Resampling: vox.reference.dsp.resample in C, number for number.
 *
 * A Kaiser-windowed sinc (pass band to 0.913, stop band from 1.0 of the lower Nyquist frequency,
 * 126.43 dB: the specification of soxr's HQ setting that the official librosa.resample uses), as a
 * polyphase table of L phases x 2 ceil(W) taps computed in double exactly as the reference does
 * (same formulas, same order of operations, the same power-series I0), applied with double
 * accumulation and rounded to float once. Lengths: soxr produces round-half-up(n L / M) samples and
 * librosa fixes the length to ceil(n * (sr_out / sr_in)) (a double product), padding with zeros.
 *
 * Each output sample is one dot product in a fixed order, computed by one thread: the result does
 * not depend on the thread count. The tap table is built once per call; when it would be large (rate
 * pairs with a big L, e.g. 44099 Hz) the taps of a phase are computed where they are used instead,
 * with the same function, so the values are the same either way. */
#include "resample.h"

#include <math.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "../error.h"

#define PASSBAND_END 0.913
#define STOPBAND_BEGIN 1.0
#define TABLE_MAX_TAPS ((int64_t)4 << 20) /* 32 MiB of double taps at most */

typedef struct rs_filter {
    int64_t up, down;  /* L, M */
    double fc, beta, half_width, a, i0_beta;
    int64_t first, n_taps;
} rs_filter;

/* I0 by its power series sum ((x/2)^k / k!)^2, summed until a term no longer changes the sum. */
static double bessel_i0(double x) {
    double half = x / 2, term = 1.0, total = 1.0;
    for (int k = 1; k < 100000; k++) {
        double q = half / (double)k;
        term = term * (q * q);
        double next = total + term;
        if (next == total) break;
        total = next;
    }
    return total;
}

static int64_t gcd64(int64_t a, int64_t b) {
    while (b) {
        int64_t t = a % b;
        a = b;
        b = t;
    }
    return a;
}

static void rs_design(int32_t sr_in, int32_t sr_out, rs_filter *f) {
    int64_t g = gcd64(sr_in, sr_out);
    f->up = sr_out / g;
    f->down = sr_in / g;
    double f_lo = (sr_in < sr_out ? sr_in : sr_out) / 2.0;
    double att = 21 * 20 * log10(2.0);
    f->fc = 0.5 * (PASSBAND_END + STOPBAND_BEGIN) * f_lo;
    double df = (STOPBAND_BEGIN - PASSBAND_END) * f_lo;
    f->beta = 0.1102 * (att - 8.7);
    f->half_width = (att - 7.95) / (2.285 * 2.0 * M_PI * df / sr_in) / 2.0;
    int64_t j_max = (int64_t)ceil(f->half_width);
    f->first = -j_max + 1;
    f->n_taps = 2 * j_max;
    f->a = 2.0 * f->fc / sr_in;
    f->i0_beta = bessel_i0(f->beta);
}

/* np.sinc: sin(pi x) / (pi x) with x = 0 replaced by 1e-20. */
static double np_sinc(double x) {
    double y = M_PI * (x == 0 ? 1.0e-20 : x);
    return sin(y) / y;
}

/* The taps of phase ph: taps[j] multiplies x[k0 + first + j]. */
static void rs_taps(const rs_filter *f, int64_t ph, double *taps) {
    double frac = (double)ph / (double)f->up;
    for (int64_t j = 0; j < f->n_taps; j++) {
        double t = frac - (double)(f->first + j);
        double r = t / f->half_width;
        double window = 0.0;
        if (fabs(r) < 1.0) {
            double u = 1.0 - r * r;
            window = bessel_i0(f->beta * sqrt(u < 0.0 ? 0.0 : u));
        }
        window = window / f->i0_beta;
        taps[j] = f->a * np_sinc(f->a * t) * window;
    }
}

int64_t vx_resample_length(int64_t n, int32_t sr_in, int32_t sr_out) {
    return (int64_t)ceil((double)n * ((double)sr_out / (double)sr_in));
}

typedef struct rs_job {
    const rs_filter *f;
    const double *table; /* [up][n_taps] or NULL */
    const float *x;
    int64_t n, n_val;
    double *y;           /* [n_val] */
    atomic_int failed;
} rs_job;

static double rs_dot(const rs_job *jb, const double *taps, int64_t i) {
    const rs_filter *f = jb->f;
    int64_t pos = i * f->down, k0 = pos / f->up, start = k0 + f->first;
    double acc = 0.0;
    for (int64_t j = 0; j < f->n_taps; j++) {
        int64_t k = start + j;
        double xv = k >= 0 && k < jb->n ? (double)jb->x[k] : 0.0;
        acc += xv * taps[j];
    }
    return acc;
}

static void rs_by_output(void *ctx, int64_t b, int64_t e) {
    rs_job *jb = ctx;
    for (int64_t i = b; i < e; i++) {
        int64_t ph = (i * jb->f->down) % jb->f->up;
        jb->y[i] = rs_dot(jb, jb->table + ph * jb->f->n_taps, i);
    }
}

/* Outputs of phase ph are i = i0 + m * up for the i0 < up with (i0 * down) % up == ph. */
static void rs_by_phase(void *ctx, int64_t b, int64_t e) {
    rs_job *jb = ctx;
    const rs_filter *f = jb->f;
    double *taps = malloc((size_t)f->n_taps * sizeof *taps);
    if (!taps) {
        atomic_store(&jb->failed, 1);
        return;
    }
    for (int64_t i0 = b; i0 < e; i0++) {
        if (i0 >= jb->n_val) break;
        rs_taps(f, (i0 * f->down) % f->up, taps);
        for (int64_t i = i0; i < jb->n_val; i += f->up) jb->y[i] = rs_dot(jb, taps, i);
    }
    free(taps);
}

vox_status vx_resample_pool(vx_pool *pool, const float *mono, int64_t n, int32_t sr_in, int32_t sr_out, float **out,
                            int64_t *n_out) {
    *out = NULL;
    *n_out = 0;
    if (n < 0 || (n > 0 && !mono)) return vox_set_error(VOX_ERR_INVALID_ARGUMENT, "vx_resample: invalid input");
    if (sr_in <= 0 || sr_out <= 0)
        return vox_set_error(VOX_ERR_INVALID_ARGUMENT, "sample rates must be positive, got %d -> %d", sr_in, sr_out);
    if (sr_in == sr_out) {
        float *y = malloc((size_t)(n ? n : 1) * sizeof *y);
        if (!y) return vox_set_error(VOX_ERR_OUT_OF_MEMORY, "out of memory (%lld samples)", (long long)n);
        if (n) memcpy(y, mono, (size_t)n * sizeof *y);
        *out = y;
        *n_out = n;
        return VOX_OK;
    }
    rs_filter f;
    rs_design(sr_in, sr_out, &f);
    int64_t len = vx_resample_length(n, sr_in, sr_out);
    int64_t produced = (2 * n * f.up + f.down) / (2 * f.down);
    int64_t n_val = len < produced ? len : produced;
    float *y = calloc((size_t)(len ? len : 1), sizeof *y);
    double *acc = malloc((size_t)(n_val ? n_val : 1) * sizeof *acc);
    double *table = NULL;
    bool use_table = f.up * f.n_taps <= TABLE_MAX_TAPS;
    if (use_table) table = malloc((size_t)(f.up * f.n_taps) * sizeof *table);
    if (!y || !acc || (use_table && !table)) {
        free(y), free(acc), free(table);
        return vox_set_error(VOX_ERR_OUT_OF_MEMORY, "out of memory (resampling %lld samples)", (long long)n);
    }
    rs_job jb = {&f, table, mono, n, n_val, acc, 0};
    if (use_table) {
        for (int64_t ph = 0; ph < f.up; ph++) rs_taps(&f, ph, table + ph * f.n_taps);
        vx_pool_for(pool, n_val, 256, rs_by_output, &jb);
    } else {
        vx_pool_for(pool, f.up, 1, rs_by_phase, &jb);
    }
    free(table);
    if (atomic_load(&jb.failed)) {
        free(y), free(acc);
        return vox_set_error(VOX_ERR_OUT_OF_MEMORY, "out of memory (resampling %lld samples)", (long long)n);
    }
    for (int64_t i = 0; i < n_val; i++) y[i] = (float)acc[i];
    free(acc);
    *out = y;
    *n_out = len;
    return VOX_OK;
}

vox_status vx_resample(const float *mono, int64_t n, int32_t sample_rate, int32_t target_rate, float **out,
                       int64_t *n_out) {
    return vx_resample_pool(NULL, mono, n, sample_rate, target_rate, out, n_out);
}
