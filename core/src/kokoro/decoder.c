/* The ISTFTNet decoder: AdainResBlk1d encode/decode stack, then the generator (two ConvTranspose
 * upsamplings, Snake residual blocks, the harmonic source injected through noise convolutions,
 * conv_post). The generator's output is the pre-iSTFT spectrum [frames][n_fft + 2] (log magnitude |
 * phase before sin), which the conformance tests compare. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../error.h"
#include "kokoro.h"


/* asr [frames][512], f0/nn [2 frames] -> x [2 frames][512] (malloc'd). */
vox_status kk_decoder(const kk_model *m, vx_pool *pool, const float *asr, const float *f0, const float *nn,
                      int64_t frames, const float *s, float **x_out) {
    const int64_t H = m->hidden, F = frames, W = 1024 + 2 + 64;
    vox_status st = VOX_OK;
    float *f0d = malloc((size_t)(2 * F) * sizeof *f0d);
    float *cat = malloc((size_t)(F * W) * sizeof *cat);
    float *ares = malloc((size_t)(F * 64) * sizeof *ares);
    float *x = NULL, *y = NULL;
    if (!f0d || !cat || !ares) {
        st = vox_oom();
        goto done;
    }
    int64_t t, t2;
    float *nd = f0d + F;
    /* F0_conv / N_conv: Conv1d(1, 1, k3, stride 2, pad 1) on the 2F-long curves -> F */
    if ((st = kk_conv1d(pool, &m->f0_conv, f0, 2 * F, 1, 2, 1, 1, f0d, &t)) != VOX_OK ||
        (st = kk_conv1d(pool, &m->n_conv, nn, 2 * F, 1, 2, 1, 1, nd, &t)) != VOX_OK)
        goto done;
    for (int64_t i = 0; i < F; i++) {
        memcpy(cat + i * (H + 2), asr + i * H, (size_t)H * sizeof *cat);
        cat[i * (H + 2) + H] = f0d[i];
        cat[i * (H + 2) + H + 1] = nd[i];
    }
    if ((st = kk_resblk_run(pool, &m->enc, s, cat, F, &x, &t)) != VOX_OK) goto done;
    vx_linear(pool, &m->asr_res.w, m->asr_res.b, asr, F, ares);
    for (int b = 0; b < 4; b++) {
        for (int64_t i = 0; i < F; i++) {
            memcpy(cat + i * W, x + i * 1024, 1024 * sizeof *cat);
            memcpy(cat + i * W + 1024, ares + i * 64, 64 * sizeof *cat);
            cat[i * W + 1088] = f0d[i];
            cat[i * W + 1089] = nd[i];
        }
        free(x);
        x = NULL;
        if ((st = kk_resblk_run(pool, &m->dec[b], s, cat, F, &x, &t2)) != VOX_OK) goto done;
    }
    *x_out = x;
    x = NULL;
done:
    free(f0d), free(cat), free(ares), free(x), free(y);
    return st;
}

/* Elementwise passes over the generator's activations (tens of MB at 120x the frame rate) split
 * over the pool: each element on its own, so the same bits for any split. */
enum { EW_ADD, EW_SUM3_LRELU, EW_LRELU };
typedef struct ew_job {
    int op;
    float *y, *z;
    const float *a;
    float slope;
} ew_job;

static void ew_ranges(void *ctx, int64_t begin, int64_t end) {
    const ew_job *j = ctx;
    const int64_t n = end - begin;
    switch (j->op) {
    case EW_ADD: vx_add(j->y + begin, j->a + begin, n, j->y + begin); break; /* y += a */
    case EW_SUM3_LRELU: { /* y = lrelu(((z + a) + y) / 3): the three resblocks' mean, then the next leaky ReLU */
        const float *restrict z = j->z, *restrict a = j->a;
        float *restrict y = j->y;
        const float slope = j->slope;
        for (int64_t i = begin; i < end; i++) y[i] = vx_nn_lrelu(((z[i] + a[i]) + y[i]) / 3.0f, slope);
        break;
    }
    default: vx_nn_leaky_relu(j->y + begin, n, j->slope); break;
    }
}

static void ew(vx_pool *pool, int op, float *y, float *z, const float *a, int64_t n, float slope) {
    ew_job j = {.op = op, .y = y, .z = z, .a = a, .slope = slope};
    vx_pool_for(pool, n, 16384, ew_ranges, &j);
}

/* Sum of the three resblocks of a stage applied to the same input, divided by 3, in place on x, then
 * the leaky ReLU (slope) that follows in the generator. The first two write their results into sum
 * and a (reading x), the last runs on x itself; x's moments, the first AdaIN's statistics of all
 * three, are taken once. sum and a: [t][c] each. */
static vox_status resblocks(const kk_model *m, vx_pool *pool, int stage, const float *s, float *x, int64_t t,
                            int64_t c, float slope, const atomic_int *cancel, float *sum, float *a, kk_work *w) {
    double *mom = malloc((size_t)(2 * c) * sizeof *mom);
    vox_status st = VOX_OK;
    if (!mom) return vox_oom();
    vx_nn_channel_moments(pool, x, t, c, mom, mom + c);
    if ((st = kk_snakeblk_run_ex(pool, &m->resblocks[stage * 3], s, x, sum, t, mom, mom + c, w)) != VOX_OK ||
        (st = kk_snakeblk_run_ex(pool, &m->resblocks[stage * 3 + 1], s, x, a, t, mom, mom + c, w)) != VOX_OK)
        goto done;
    if (cancel && atomic_load(cancel)) {
        st = vox_set_error(VOX_ERR_CANCELLED, "cancelled");
        goto done;
    }
    if ((st = kk_snakeblk_run_ex(pool, &m->resblocks[stage * 3 + 2], s, x, x, t, mom, mom + c, w)) != VOX_OK) goto done;
    ew(pool, EW_SUM3_LRELU, x, sum, a, t * c, slope); /* x = lrelu(((sum + a) + x) / 3) */
done:
    free(mom);
    return st;
}

/* Scratch of the int8 convolutions of a stage's blocks: the largest any of them needs. */
static size_t stage_q_size(const kk_model *m, int stage, int64_t t) {
    size_t need = 0;
    for (int r = 0; r < 4; r++) {
        const kk_snakeblk *b = r < 3 ? &m->resblocks[stage * 3 + r] : &m->noise_res[stage];
        for (int i = 0; i < 3; i++) {
            if (!b->convs1[i].iw.data) continue;
            size_t n1 = vx_conv1d_i8w_work_size(&b->convs1[i].iw, t, b->dil[i] * (b->k - 1), b->dil[i], 1);
            size_t n2 = vx_conv1d_i8w_work_size(&b->convs2[i].iw, t, b->k - 1, 1, 1);
            need = n1 > need ? n1 : need;
            need = n2 > need ? n2 : need;
        }
    }
    return need;
}

vox_status kk_generator(const kk_model *m, vx_pool *pool, const float *xin, int64_t t, const float *s,
                        const float *f0_curve, const kk_forward_opts *opts, float **spec_out, int64_t *n_spec_frames) {
    const int64_t post = m->n_fft + 2, hf = t * 60 + 1;
    vox_status st = VOX_OK;
    /* the stages' work buffers, sized for the larger of the two (stage 1: hf rows of 128 channels) and
     * reused block after block, so their pages are touched once per span */
    const int64_t act = hf * 128 > t * 10 * 256 ? hf * 128 : (t * 10 + 10) * 256;
    size_t qn = stage_q_size(m, 0, t * 10), q1 = stage_q_size(m, 1, hf);
    kk_work w = {.r_cap = act, .q_size = qn > q1 ? qn : q1};
    float *sum = malloc((size_t)act * sizeof *sum), *acc = malloc((size_t)act * sizeof *acc);
    w.r = malloc((size_t)act * sizeof *w.r);
    w.q = w.q_size ? malloc(w.q_size) : NULL;
    float *har = malloc((size_t)(hf * post) * sizeof *har);
    float *x = malloc((size_t)(t * 512) * sizeof *x), *up = NULL;
    if (!har || !x || !sum || !acc || !w.r || (w.q_size && !w.q)) {
        st = vox_oom();
        goto done;
    }
    memcpy(x, xin, (size_t)(t * 512) * sizeof *x);
    if ((st = kk_harmonic_source(m, pool, f0_curve, t, opts, har)) != VOX_OK) goto done;
    if (opts->tap) opts->tap(opts->tap_ctx, "har", har, hf, post);
    int64_t c = 512;
    ew(pool, EW_LRELU, x, NULL, NULL, t * c, 0.1f); /* later leaky ReLUs ride on the resblocks' last pass */
    for (int i = 0; i < 2; i++) {
        const int64_t co = c / 2;
        int64_t ts, tu;
        /* the source branch: noise conv (stride 6 for stage 0, 1x1 for stage 1) and its resblock, in
         * the sum buffer (free until the resblocks, which come after the source is added) */
        int64_t t_src = i == 0 ? (hf + 2 * m->noise_pad[0] - m->noise_convs[0].k) / m->noise_stride[0] + 1 : hf;
        float *src = sum;
        int64_t t_up = (t - 1) * m->ups[i].stride - 2 * m->ups[i].pad + m->ups[i].k;
        up = malloc((size_t)((t_up + 1) * co) * sizeof *up);
        if (t_src * co > act || !up) {
            st = vox_oom();
            goto done;
        }
        if ((st = kk_conv1d(pool, &m->noise_convs[i], har, hf, 1, m->noise_stride[i], m->noise_pad[i],
                            m->noise_pad[i], src, &ts)) != VOX_OK ||
            (st = kk_snakeblk_run_ex(pool, &m->noise_res[i], s, src, src, ts, NULL, NULL, &w)) != VOX_OK)
            goto done;
        float *dst = i == 1 ? up + co : up; /* stage 1: room for the reflection pad (1, 0) */
        if ((st = kk_convt1d(pool, &m->ups[i], x, t, 0, dst, &tu)) != VOX_OK) goto done;
        if (i == 1) {
            memcpy(up, up + 2 * co, (size_t)co * sizeof *up);
            tu += 1;
        }
        if (tu != ts) {
            st = vox_set_error(VOX_ERR_INTERNAL, "kokoro generator: source length %lld != upsampled length %lld",
                               (long long)ts, (long long)tu);
            goto done;
        }
        ew(pool, EW_ADD, up, NULL, src, tu * co, 0.0f);
        free(x);
        x = up;
        up = NULL;
        t = tu;
        c = co;
        if ((st = resblocks(m, pool, i, s, x, t, c, i == 0 ? 0.1f : 0.01f, opts->cancel, sum, acc, &w)) != VOX_OK)
            goto done;
        if (opts->cancel && atomic_load(opts->cancel)) {
            st = vox_set_error(VOX_ERR_CANCELLED, "cancelled");
            goto done;
        }
    }
    float *spec = malloc((size_t)(t * post) * sizeof *spec);
    if (!spec) {
        st = vox_oom();
        goto done;
    }
    int64_t tp;
    if ((st = kk_conv1d(pool, &m->conv_post, x, t, 1, 1, 3, 3, spec, &tp)) != VOX_OK) {
        free(spec);
        goto done;
    }
    *spec_out = spec;
    *n_spec_frames = tp;
done:
    free(har), free(x), free(up), free(sum), free(acc), free(w.r), free(w.q);
    return st;
}
