/* Kokoro building blocks on time-major activations: convolutions through GEMM with the AdaIN/Snake map
 * applied as their input rows are gathered, transposed convolutions, and the two residual block types
 * (AdaIN, the LSTMs and the leaky ReLU are nn/'s). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../error.h"
#include "kokoro.h"

/* im2col rows per GEMM call: bounds the column buffer (~3 MB for the widest conv) while keeping
 * each call large enough to stream its weights once per tile. */
#define KK_CONV_TILE 512


/* A per-channel map applied to a convolution's input rows as they are gathered (the AdaIN affine
 * map, then Snake when alpha is set): the transformed signal is never stored whole. Zero padding
 * stays zero (torch pads the transformed signal). */
typedef struct kk_pre {
    const float *mul, *add, *alpha, *inv_alpha;
} kk_pre;

typedef struct pre_job {
    const kk_pre *pre;
    const float *src;
    float *dst;
    int64_t c;
} pre_job;

static void pre_rows(void *ctx, int64_t begin, int64_t end) {
    pre_job *j = ctx;
    const int64_t c = j->c;
    const kk_pre *p = j->pre;
    for (int64_t r = begin; r < end; r++)
        for (int64_t ch = 0; ch < c; ch++) j->dst[r * c + ch] = j->src[r * c + ch] * p->mul[ch] + p->add[ch];
    if (p->alpha) vx_snake_beta(j->dst + begin * c, p->alpha, p->inv_alpha, end - begin, c, j->dst + begin * c);
}

/* im2col of output rows [begin, end) of a tile (rows are independent: any split gives the same bits) */
typedef struct col_job {
    const float *xp;
    int64_t rows, c, k, dil, stride;
    float *col;
} col_job;

static void col_rows(void *ctx, int64_t begin, int64_t end) {
    col_job *j = ctx;
    const float *x = j->xp + begin * j->stride * j->c;
    vx_im2col(x, j->rows - begin * j->stride, j->c, j->k, j->dil, j->stride, end - begin, j->col + begin * j->c * j->k);
}

vox_status kk_conv1x1(vx_pool *pool, const kk_conv *c, const float *bias, const float *x, int64_t t, float *y) {
    if (c->iw.data) return vx_conv1d_i8w(pool, &c->iw, bias, x, t, 0, y);
    if (c->bw.data) return vx_linear_bf16w(pool, &c->bw, bias, x, t, y);
    vx_linear(pool, &c->w, bias, x, t, y);
    return VOX_OK;
}

/* Long f32 convolutions (the generator's conv_post and first noise convolution: thousands of rows,
 * few output channels): each task gathers, im2cols and multiplies its own 64-row tiles, so the column
 * buffer stays in the task's cache instead of streaming ~60 MB through memory per call. vx_linear's
 * result never depends on the number of rows: the same bits as the shared-tile path. */
#define KK_CONV_TASK_ROWS 64

typedef struct ctile_job {
    const kk_conv *c;
    const float *x;
    const kk_pre *pre;
    float *y;
    int64_t t_in, to, dil, stride, pad_l;
    atomic_int failed;
} ctile_job;

static void ctile_rows(void *ctx, int64_t begin, int64_t end) {
    ctile_job *j = ctx;
    const int64_t ci = j->c->c_in, k = j->c->k, co = j->c->c_out, T = KK_CONV_TASK_ROWS;
    const int64_t span = (T - 1) * j->stride + j->dil * (k - 1) + 1;
    const int f32 = j->c->w.dtype == VOX_DTYPE_F32; /* then the columns are read in place */
    float *xp = malloc((size_t)(span * ci) * sizeof *xp), *col = f32 ? NULL : malloc((size_t)(T * ci * k) * sizeof *col);
    if (!xp || (!f32 && !col)) {
        atomic_store(&j->failed, 1);
        free(xp), free(col);
        return;
    }
    for (int64_t ti = begin; ti < end; ti++) {
        const int64_t t0 = ti * T, nt = j->to - t0 < T ? j->to - t0 : T;
        const int64_t first = t0 * j->stride - j->pad_l, rows = (nt - 1) * j->stride + j->dil * (k - 1) + 1;
        int64_t lo = first < 0 ? -first : 0, hi = first + rows > j->t_in ? j->t_in - first : rows;
        if (hi < lo) hi = lo;
        if (lo > 0) memset(xp, 0, (size_t)(lo * ci) * sizeof *xp);
        if (hi > lo) {
            if (j->pre) {
                pre_job pj = {.pre = j->pre, .src = j->x + (first + lo) * ci, .dst = xp + lo * ci, .c = ci};
                pre_rows(&pj, 0, hi - lo);
            } else {
                memcpy(xp + lo * ci, j->x + (first + lo) * ci, (size_t)((hi - lo) * ci) * sizeof *xp);
            }
        }
        if (hi < rows) memset(xp + hi * ci, 0, (size_t)((rows - hi) * ci) * sizeof *xp);
        if (f32) {
            vx_conv1d_f32(NULL, &j->c->w, ci, k, j->dil, j->stride, j->c->b, xp, nt, j->y + t0 * co);
        } else {
            vx_im2col(xp, rows, ci, k, j->dil, j->stride, nt, col);
            vx_linear(NULL, &j->c->w, j->c->b, col, nt, j->y + t0 * co);
        }
    }
    free(xp), free(col);
}

static vox_status conv1d_ex(vx_pool *pool, const kk_conv *c, const float *x, int64_t t_in, int64_t dil, int64_t stride,
                            int64_t pad_l, int64_t pad_r, const kk_pre *pre, int accumulate, float *y, int64_t *t_out) {
    const int64_t ci = c->c_in, k = c->k, co = c->c_out;
    const int64_t tp = t_in + pad_l + pad_r;
    const int64_t to = (tp - dil * (k - 1) - 1) / stride + 1;
    *t_out = to > 0 ? to : 0;
    if (to <= 0) return VOX_OK;
    if (k == 1 && stride == 1 && pad_l == 0 && pad_r == 0 && !pre && !accumulate)
        return kk_conv1x1(pool, c, c->b, x, t_in, y);
    /* per tile of output rows: the input rows it reads (zeros outside the signal), im2col, one GEMM */
    const int i8 = c->iw.data && stride == 1, bf16 = !i8 && c->bw.data && stride == 1;
    const int f32 = !i8 && !bf16 && c->w.dtype == VOX_DTYPE_F32, direct = i8 || bf16 || f32;
    if (!direct && !accumulate && to >= 16 * KK_CONV_TASK_ROWS) {
        ctile_job j = {.c = c, .x = x, .pre = pre, .y = y, .t_in = t_in, .to = to, .dil = dil, .stride = stride,
                       .pad_l = pad_l};
        atomic_init(&j.failed, 0);
        vx_pool_for(pool, (to + KK_CONV_TASK_ROWS - 1) / KK_CONV_TASK_ROWS, 1, ctile_rows, &j);
        return atomic_load(&j.failed) ? vox_oom() : VOX_OK;
    }
    /* without a column buffer a tile costs only its input rows: larger tiles, fewer pool dispatches */
    const int64_t max_tile = direct ? 4 * KK_CONV_TILE : KK_CONV_TILE;
    int64_t tile = to < max_tile ? to : max_tile;
    int64_t span = (tile - 1) * stride + dil * (k - 1) + 1;
    float *xp = malloc((size_t)(span * ci) * sizeof *xp);
    float *col = direct ? NULL : malloc((size_t)(tile * ci * k) * sizeof *col);
    float *acc = accumulate ? malloc((size_t)(tile * co) * sizeof *acc) : NULL;
    if (!xp || (!direct && !col) || (accumulate && !acc)) {
        free(xp), free(col), free(acc);
        return vox_oom();
    }
    for (int64_t t0 = 0; t0 < to; t0 += tile) {
        int64_t nt = to - t0 < tile ? to - t0 : tile;
        int64_t first = t0 * stride - pad_l, rows = (nt - 1) * stride + dil * (k - 1) + 1;
        int64_t lo = first < 0 ? -first : 0, hi = first + rows > t_in ? t_in - first : rows;
        if (hi < lo) hi = lo;
        if (lo > 0) memset(xp, 0, (size_t)(lo * ci) * sizeof *xp);
        if (hi > lo) {
            float *dst = xp + lo * ci;
            const float *src = x + (first + lo) * ci;
            if (pre) {
                pre_job j = {.pre = pre, .src = src, .dst = dst, .c = ci};
                vx_pool_for(pool, hi - lo, 16, pre_rows, &j);
            } else {
                memcpy(dst, src, (size_t)((hi - lo) * ci) * sizeof *xp);
            }
        }
        if (hi < rows) memset(xp + hi * ci, 0, (size_t)((rows - hi) * ci) * sizeof *xp);
        float *dst = accumulate ? acc : y + t0 * co;
        if (f32) { /* the columns read in place: the bits of im2col + vx_linear */
            vx_conv1d_f32(pool, &c->w, ci, k, dil, stride, c->b, xp, nt, dst);
        } else if (direct) { /* shifted products straight from the gathered rows: no im2col */
            vox_status st = i8 ? vx_conv1d_i8w(pool, &c->iw, c->b, xp, nt, dil, dst)
                               : vx_conv1d_bf16w(pool, &c->bw, c->b, xp, nt, dil, dst);
            if (st != VOX_OK) {
                free(xp), free(col), free(acc);
                return st;
            }
        } else {
            col_job cj = {.xp = xp, .rows = rows, .c = ci, .k = k, .dil = dil, .stride = stride, .col = col};
            vx_pool_for(pool, nt, 16, col_rows, &cj);
            vx_linear(pool, &c->w, c->b, col, nt, dst);
        }
        if (accumulate) vx_add(y + t0 * co, acc, nt * co, y + t0 * co);
    }
    free(xp), free(col), free(acc);
    return VOX_OK;
}

vox_status kk_conv1d(vx_pool *pool, const kk_conv *c, const float *x, int64_t t_in, int64_t dil, int64_t stride,
                     int64_t pad_l, int64_t pad_r, float *y, int64_t *t_out) {
    return conv1d_ex(pool, c, x, t_in, dil, stride, pad_l, pad_r, NULL, 0, y, t_out);
}

/* ConvTranspose1d: out[o] = b + sum over (t, j) with o = t * stride - pad + j of x[t] . w[:, :, j].
 * Dense: one GEMM per tile of input rows gives every (t, c_out, j) product, then overlap-add split
 * over output rows, each adding its contributions in t order (the same order for any tiling or
 * split). Depthwise (groups == channels): direct. */
typedef struct convt_job {
    const kk_convt *c;
    const float *prod; /* [nt][co * k]: the products of input rows t0 .. t0 + nt */
    float *y;
    int64_t t0, nt, to;
} convt_job;

static void convt_bias_rows(void *ctx, int64_t begin, int64_t end) {
    const convt_job *j = ctx;
    const int64_t co = j->c->c_out;
    for (int64_t o = begin; o < end; o++)
        for (int64_t ch = 0; ch < co; ch++) j->y[o * co + ch] = j->c->b ? j->c->b[ch] : 0.0f;
}

/* output rows o0 + [begin, end) take the tile's contributions, t ascending */
static void convt_add_rows(void *ctx, int64_t begin, int64_t end) {
    const convt_job *j = ctx;
    const int64_t k = j->c->k, s = j->c->stride, p = j->c->pad, co = j->c->c_out;
    const int64_t o0 = j->t0 * s - p;
    for (int64_t oo = begin; oo < end; oo++) {
        const int64_t o = o0 + oo;
        if (o < 0 || o >= j->to) continue;
        /* t with 0 <= o - t s + p < k, inside the tile */
        int64_t t_lo = o + p - (k - 1) <= 0 ? 0 : (o + p - (k - 1) + s - 1) / s, t_hi = (o + p) / s;
        if (t_lo < j->t0) t_lo = j->t0;
        if (t_hi > j->t0 + j->nt - 1) t_hi = j->t0 + j->nt - 1;
        float *restrict yr = j->y + o * co;
        for (int64_t t = t_lo; t <= t_hi; t++) {
            const int64_t tap = o + p - t * s;
            if (j->c->bw.data) { /* tap-major products: the tap's channels contiguous */
                const float *restrict pr = j->prod + (t - j->t0) * co * k + tap * co;
                for (int64_t ch = 0; ch < co; ch++) yr[ch] += pr[ch];
            } else {
                const float *pr = j->prod + (t - j->t0) * co * k + tap;
                for (int64_t ch = 0; ch < co; ch++) yr[ch] += pr[ch * k];
            }
        }
    }
}

vox_status kk_convt1d(vx_pool *pool, const kk_convt *c, const float *x, int64_t t_in, int64_t out_pad, float *y,
                      int64_t *t_out) {
    const int64_t k = c->k, s = c->stride, p = c->pad, co = c->c_out;
    const int64_t to = (t_in - 1) * s - 2 * p + k + out_pad;
    *t_out = to;
    convt_job j = {.c = c, .y = y, .to = to};
    vx_pool_for(pool, to, 64, convt_bias_rows, &j);
    if (c->groups == c->c_in && c->groups == co) {
        for (int64_t t = 0; t < t_in; t++)
            for (int64_t jj = 0; jj < k; jj++) {
                int64_t o = t * s - p + jj;
                if (o < 0 || o >= to) continue;
                const float *xr = x + t * co;
                float *yr = y + o * co;
                for (int64_t ch = 0; ch < co; ch++) yr[ch] += xr[ch] * c->w[ch * k + jj];
            }
        return VOX_OK;
    }
    int64_t tile = t_in < 64 ? t_in : 64; /* the products of a tile stay in L2 for the overlap-add */
    float *prod = malloc((size_t)(tile * co * k) * sizeof *prod);
    if (!prod) return vox_oom();
    j.prod = prod;
    for (int64_t t0 = 0; t0 < t_in; t0 += tile) {
        int64_t nt = t_in - t0 < tile ? t_in - t0 : tile;
        if (c->bw.data) {
            vox_status st = vx_linear_bf16w(pool, &c->bw, NULL, x + t0 * c->c_in, nt, prod);
            if (st != VOX_OK) {
                free(prod);
                return st;
            }
        } else {
            vx_matmul_nn_f32(pool, c->w, c->c_in, co * k, x + t0 * c->c_in, nt, prod);
        }
        j.t0 = t0, j.nt = nt;
        vx_pool_for(pool, (nt - 1) * s + k, 16, convt_add_rows, &j); /* the rows this tile reaches */
    }
    free(prod);
    return VOX_OK;
}

/* ------------------------------------------------------------------------------ residual blocks */
/* The residual block's row-wise passes, split over the pool (each element on its own: any split). */
typedef struct rb_job {
    float *y;
    const float *a, *b;
    int64_t c;
} rb_job;

static void rb_upsample_rows(void *ctx, int64_t begin, int64_t end) { /* nearest 2x: y[2i] = y[2i + 1] = a[i] */
    const rb_job *j = ctx;
    for (int64_t i = begin; i < end; i++) {
        memcpy(j->y + 2 * i * j->c, j->a + i * j->c, (size_t)j->c * sizeof *j->y);
        memcpy(j->y + (2 * i + 1) * j->c, j->a + i * j->c, (size_t)j->c * sizeof *j->y);
    }
}

static void rb_out_rows(void *ctx, int64_t begin, int64_t end) { /* y = (a + b) / sqrt(2) */
    const rb_job *j = ctx;
    const float rs2 = 0.70710677f; /* torch.rsqrt(torch.tensor(2)) in float32 */
    for (int64_t i = begin * j->c; i < end * j->c; i++) j->y[i] = (j->a[i] + j->b[i]) * rs2;
}

/* AdainResBlk1d: (residual + shortcut) / sqrt(2), residual = conv2(lrelu(norm2(conv1(pool(lrelu(norm1 x))))))
 * and shortcut = conv1x1(upsample2x(x)). */
vox_status kk_resblk_run(vx_pool *pool, const kk_resblk *b, const float *s, const float *x, int64_t t, float **y,
                         int64_t *t_out) {
    const int64_t ci = b->norm1.c, co = b->conv1.c_out, t2 = b->upsample ? 2 * t : t;
    vox_status st = VOX_OK;
    float *a = malloc((size_t)(t * ci) * sizeof *a);
    float *u = malloc((size_t)(t2 * ci) * sizeof *u);
    float *r = malloc((size_t)(t2 * co) * sizeof *r);
    float *out = malloc((size_t)(t2 * co) * sizeof *out);
    if (!a || !u || !r || !out) {
        st = vox_oom();
        goto done;
    }
    int64_t tt;
    if ((st = vx_nn_adain(pool, &b->norm1, s, x, t, 1, 0.2f, a)) != VOX_OK) goto done;
    const float *cin = a;
    if (b->upsample) {
        if ((st = kk_convt1d(pool, &b->pool, a, t, 1, u, &tt)) != VOX_OK) goto done;
        cin = u;
    }
    if ((st = kk_conv1d(pool, &b->conv1, cin, t2, 1, 1, 1, 1, r, &tt)) != VOX_OK) goto done;
    float *r2 = realloc(a, (size_t)(t2 * co) * sizeof *a);
    if (!r2) {
        st = vox_oom();
        goto done;
    }
    a = r2;
    if ((st = vx_nn_adain(pool, &b->norm2, s, r, t2, 1, 0.2f, a)) != VOX_OK) goto done;
    if ((st = kk_conv1d(pool, &b->conv2, a, t2, 1, 1, 1, 1, r, &tt)) != VOX_OK) goto done;
    /* shortcut: nearest 2x upsample, then the learned 1x1 conv */
    const float *sx = x;
    if (b->upsample) {
        rb_job uj = {.y = u, .a = x, .c = ci};
        vx_pool_for(pool, t, 16, rb_upsample_rows, &uj);
        sx = u;
    }
    if (b->sc.w.data) {
        if ((st = kk_conv1x1(pool, &b->sc, NULL, sx, t2, out)) != VOX_OK) goto done;
        sx = out;
    }
    rb_job oj = {.y = out, .a = r, .b = sx, .c = co};
    vx_pool_for(pool, t2, 16, rb_out_rows, &oj);
    *y = out;
    out = NULL;
    *t_out = t2;
done:
    free(a);
    free(u);
    free(r);
    free(out);
    return st;
}

/* The int8 path: each convolution quantizes its mapped input rows itself, adds the residual in its
 * epilogue and returns its output's moments for the next AdaIN, so the block makes no pass of its own
 * over the activations. */
static vox_status snakeblk_i8(vx_pool *pool, const kk_snakeblk *b, const float *s, const float *x_in, float *x,
                              int64_t t, const double *in_mean, const double *in_m2, kk_work *w) {
    const int64_t c = b->adain1[0].c, k = b->k;
    vox_status st = VOX_OK;
    float *ma = malloc((size_t)(2 * c) * sizeof *ma);
    double *mom = malloc((size_t)(4 * c) * sizeof *mom); /* [mean | m2] of r, then of x */
    float *r = w && w->r_cap >= t * c ? w->r : malloc((size_t)(t * c) * sizeof *r);
    if (!ma || !mom || !r) {
        st = vox_oom();
        goto done;
    }
    const double *xm = in_mean, *xm2 = in_m2;
    for (int i = 0; i < 3; i++) {
        const int64_t p1 = (k * b->dil[i] - b->dil[i]) / 2, p2 = (k - 1) / 2;
        const vx_i8_pre pre1 = {ma, ma + c, b->alpha1[i], b->inv_alpha1[i]}, pre2 = {ma, ma + c, b->alpha2[i], b->inv_alpha2[i]};
        const float *src = i == 0 ? x_in : x;
        const vx_i8_conv c1 = {.x = src, .t_in = t, .pad_l = p1, .pad_r = p1, .dil = b->dil[i], .pre = &pre1, .y = r,
                               .mean = mom, .m2 = mom + c, .work = w ? w->q : NULL, .work_size = w ? w->q_size : 0};
        const vx_i8_conv c2 = {.x = r, .t_in = t, .pad_l = p2, .pad_r = p2, .dil = 1, .pre = &pre2, .res = src, .y = x,
                               .mean = i < 2 ? mom + 2 * c : NULL, .m2 = mom + 3 * c,
                               .work = w ? w->q : NULL, .work_size = w ? w->q_size : 0};
        if ((st = vx_nn_adain_map(pool, &b->adain1[i], s, src, t, xm, xm2, ma, ma + c)) != VOX_OK ||
            (st = vx_conv1d_i8w_ex(pool, &b->convs1[i].iw, b->convs1[i].b, &c1)) != VOX_OK ||
            (st = vx_nn_adain_map(pool, &b->adain2[i], s, r, t, mom, mom + c, ma, ma + c)) != VOX_OK ||
            (st = vx_conv1d_i8w_ex(pool, &b->convs2[i].iw, b->convs2[i].b, &c2)) != VOX_OK)
            goto done;
        xm = mom + 2 * c, xm2 = mom + 3 * c;
    }
done:
    if (!(w && r == w->r)) free(r);
    free(ma);
    free(mom);
    return st;
}

vox_status kk_snakeblk_run_ex(vx_pool *pool, const kk_snakeblk *b, const float *s, const float *x_in, float *x,
                              int64_t t, const double *in_mean, const double *in_m2, kk_work *w) {
    const int64_t c = b->adain1[0].c, k = b->k;
    if (b->convs1[0].iw.data && t > 0) return snakeblk_i8(pool, b, s, x_in, x, t, in_mean, in_m2, w);
    if (x_in != x) memcpy(x, x_in, (size_t)(t * c) * sizeof *x);
    float *r = malloc((size_t)(t * c) * sizeof *r), *ma = malloc((size_t)(2 * c) * sizeof *ma);
    vox_status st = VOX_OK;
    if (!r || !ma) {
        st = vox_oom();
        goto done;
    }
    for (int i = 0; i < 3; i++) {
        int64_t tt, p1 = (k * b->dil[i] - b->dil[i]) / 2, p2 = (k - 1) / 2;
        kk_pre pre1 = {ma, ma + c, b->alpha1[i], b->inv_alpha1[i]}, pre2 = {ma, ma + c, b->alpha2[i], b->inv_alpha2[i]};
        if ((st = vx_nn_adain_map(pool, &b->adain1[i], s, x, t, NULL, NULL, ma, ma + c)) != VOX_OK ||
            (st = conv1d_ex(pool, &b->convs1[i], x, t, b->dil[i], 1, p1, p1, &pre1, 0, r, &tt)) != VOX_OK ||
            (st = vx_nn_adain_map(pool, &b->adain2[i], s, r, t, NULL, NULL, ma, ma + c)) != VOX_OK ||
            (st = conv1d_ex(pool, &b->convs2[i], r, t, 1, 1, p2, p2, &pre2, 1, x, &tt)) != VOX_OK)
            goto done;
    }
done:
    free(r);
    free(ma);
    return st;
}
