/* The public kernels of kernels.h: argument handling, the split of the work into pool tasks, and the
 * dispatch to the active path's implementation (dispatch.h).
 *
 * How work is split never changes results (each output element is computed whole, in a fixed order,
 * inside one task), so the split here is chosen freely for speed: by weight rows for matrix-vector
 * products (each thread streams its own rows once), by rows and time steps for long convolutions. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cpu/dispatch.h"
#include "cpu/scratch.h"
#include "error.h"

/* ------------------------------------------------------------------------------ dispatch */
static vx_kernels tables[VX_PATHS];
static _Atomic(const vx_kernels *) active;
static pthread_once_t once = PTHREAD_ONCE_INIT;

static void init_tables(void) {
    vx_kernels_init_scalar(&tables[VX_PATH_SCALAR]);
    tables[VX_PATH_SCALAR].path = VX_PATH_SCALAR;
#ifdef VOX_X86
    /* each table starts as its parent's (kernels.h lists the paths; dispatch.h the chain) */
    static const struct { vx_cpu_path path, parent; void (*init)(vx_kernels *); } chain[] = {
        {VX_PATH_AVX2, VX_PATH_SCALAR, vx_kernels_init_avx2},
        {VX_PATH_AVX2_VNNI, VX_PATH_AVX2, vx_kernels_init_avx2_vnni},
        {VX_PATH_AVX512, VX_PATH_AVX2, vx_kernels_init_avx512},
        {VX_PATH_AVX512_VNNI, VX_PATH_AVX512, vx_kernels_init_avx512_vnni},
        {VX_PATH_AVX512_VNNI_BF16, VX_PATH_AVX512_VNNI, vx_kernels_init_avx512_bf16},
        {VX_PATH_AMX, VX_PATH_AVX512_VNNI_BF16, vx_kernels_init_amx},
    };
    for (size_t i = 0; i < sizeof chain / sizeof chain[0]; i++) {
        if (!vx_cpu_supports(chain[i].path)) continue;
        tables[chain[i].path] = tables[chain[i].parent];
        chain[i].init(&tables[chain[i].path]);
        tables[chain[i].path].name = vx_path(chain[i].path)->name;
        tables[chain[i].path].path = chain[i].path;
    }
#endif
#ifdef VOX_ARM64
    /* neon -> neon-dotprod -> neon-i8mm -> neon-i8mm-bf16 (dispatch.h) */
    static const struct { vx_cpu_path path, parent; void (*init)(vx_kernels *); } arm[] = {
        {VX_PATH_NEON, VX_PATH_SCALAR, vx_kernels_init_neon},
        {VX_PATH_NEON_DOTPROD, VX_PATH_NEON, vx_kernels_init_neon_dotprod},
        {VX_PATH_NEON_I8MM, VX_PATH_NEON_DOTPROD, vx_kernels_init_neon_i8mm},
        {VX_PATH_NEON_I8MM_BF16, VX_PATH_NEON_I8MM, vx_kernels_init_neon_bf16},
    };
    for (size_t i = 0; i < sizeof arm / sizeof arm[0]; i++) {
        if (!vx_cpu_supports(arm[i].path)) continue;
        tables[arm[i].path] = tables[arm[i].parent];
        arm[i].init(&tables[arm[i].path]);
        tables[arm[i].path].name = vx_path(arm[i].path)->name;
        tables[arm[i].path].path = arm[i].path;
    }
#endif
    atomic_store(&active, &tables[vx_cpu()->path]);
}

const vx_kernels *vx_kernels_active(void) {
    pthread_once(&once, init_tables);
    return atomic_load_explicit(&active, memory_order_relaxed);
}

const vx_kernels *vx_kernels_of(vx_cpu_path path) {
    pthread_once(&once, init_tables);
    return path >= 0 && path < VX_PATHS && vx_cpu_supports(path) && tables[path].name ? &tables[path] : NULL;
}

int vx_kernels_force_path(vx_cpu_path path) {
    const vx_kernels *t = vx_kernels_of(path);
    if (!t) return 0;
    atomic_store(&active, t);
    return 1;
}

vx_dot_caps vx_cpu_dots(void) { return vx_kernels_active()->dots; }

/* Below this many multiply-adds a matrix product runs on the caller alone: waking threads costs more. */
#define SERIAL_MACS (1 << 15)

/* ------------------------------------------------------------------------------ linear */
/* Tasks: blocks of LIN_TASK_N x rows by LIN_TASK_R weight rows (for n <= LIN_TASK_N all x rows are in
 * every task, so each weight row is read once per call: the memory-bound decode case). */
#ifndef LIN_TASK_N
#  define LIN_TASK_N 64
#endif
#ifndef LIN_TASK_R
#  define LIN_TASK_R 64
#endif
#define LIN_ROW_GRAIN 16
/* f32 weights (column order): a task packs each weight panel once per K block and streams all its x
 * rows against it, so more x rows per task amortize the packing; enough tasks remain for an even
 * split between threads. */
#ifndef LIN_TASK_N_F32
#  define LIN_TASK_N_F32 192
#endif
#ifndef LIN_TASK_R_F32
#  define LIN_TASK_R_F32 64
#endif

typedef struct linear_job {
    const vx_kernels *k;
    const vx_mat *w;
    const float *bias, *x;
    const void *qact;
    size_t qrow;
    float *y;
    int64_t n, nb, rb, n_rb;
} linear_job;

static void linear_tile(const linear_job *j, int64_t i0, int64_t i1, int64_t r0, int64_t r1) {
    if (j->qact)
        j->k->linear_quant(j->w, j->bias, j->qact, j->qrow, j->y, i0, i1, r0, r1);
    else
        j->k->linear_float(j->w, j->bias, j->x, j->y, i0, i1, r0, r1);
}

static void linear_rows(void *ctx, int64_t r0, int64_t r1) {
    const linear_job *j = ctx;
    linear_tile(j, 0, j->n, r0, r1);
}

static void linear_tasks(void *ctx, int64_t t0, int64_t t1) {
    const linear_job *j = ctx;
    for (int64_t t = t0; t < t1; t++) {
        int64_t ib = t / j->n_rb, rbk = t % j->n_rb;
        int64_t i0 = ib * j->nb, i1 = i0 + j->nb < j->n ? i0 + j->nb : j->n;
        int64_t r0 = rbk * j->rb, r1 = r0 + j->rb < j->w->rows ? r0 + j->rb : j->w->rows;
        linear_tile(j, i0, i1, r0, r1);
    }
}

static void linear_run(vx_pool *pool, linear_job *j) {
    int64_t rows = j->w->rows;
    if (rows * j->w->cols * j->n < SERIAL_MACS) {
        linear_tile(j, 0, j->n, 0, rows);
    } else if (j->n <= LIN_TASK_N) {
        vx_pool_for(pool, rows, LIN_ROW_GRAIN, linear_rows, j);
    } else {
        j->nb = j->w->dtype == VOX_DTYPE_F32 ? LIN_TASK_N_F32 : LIN_TASK_N;
        j->rb = j->w->dtype == VOX_DTYPE_F32 ? LIN_TASK_R_F32 : LIN_TASK_R;
        j->n_rb = (rows + j->rb - 1) / j->rb;
        int64_t n_ib = (j->n + j->nb - 1) / j->nb;
        j->nb = (j->n + n_ib - 1) / n_ib; /* equal blocks of x rows: no small leftover tasks */
        vx_pool_for(pool, n_ib * j->n_rb, 1, linear_tasks, j);
    }
}

/* Streamed products (a few x rows: GEMV and the like) over one or several matrices sharing x: their
 * rows are numbered one after the other (matrix m owns [start[m], start[m + 1])) and split between
 * threads as one range, so one pool dispatch covers them all and each thread streams its rows
 * (every weight byte read once, prefetched ahead) across matrix boundaries. */
#define GEMV_MAX_MATS 8
typedef struct gemv_job {
    const vx_kernels *k;
    int n_mats;
    const vx_mat *w[GEMV_MAX_MATS];
    const float *bias[GEMV_MAX_MATS];
    float *y[GEMV_MAX_MATS];
    int64_t start[GEMV_MAX_MATS + 1];
    const float *x;
    const void *qact;
    size_t qrow;
    int64_t n;
} gemv_job;

static void gemv_range(void *ctx, int64_t g0, int64_t g1) {
    const gemv_job *j = ctx;
    vx_gemv_part parts[GEMV_MAX_MATS];
    int np = 0;
    for (int m = 0; m < j->n_mats; m++) {
        int64_t a = g0 > j->start[m] ? g0 : j->start[m], b = g1 < j->start[m + 1] ? g1 : j->start[m + 1];
        if (a < b) parts[np++] = (vx_gemv_part){j->w[m], j->bias[m], j->y[m], a - j->start[m], b - j->start[m]};
    }
    if (np == 0) return;
    if (j->qact) j->k->gemv_quant(j->k, parts, np, j->qact, j->qrow, j->n);
    else j->k->gemv_float(j->k, parts, np, j->x, j->n);
}

static void gemv_run(vx_pool *pool, gemv_job *j) {
    int64_t total = j->start[j->n_mats];
    if (total * j->w[0]->cols * j->n < SERIAL_MACS) gemv_range(j, 0, total);
    else vx_pool_for(pool, total, LIN_ROW_GRAIN, gemv_range, j);
}

typedef struct quant_job {
    const vx_kernels *k;
    const float *x;
    int64_t cols;
    vox_dtype wtype;
    unsigned char *qact;
    size_t qrow;
} quant_job;

static void quant_rows(void *ctx, int64_t i0, int64_t i1) {
    const quant_job *q = ctx;
    for (int64_t i = i0; i < i1; i++)
        q->k->qact_quantize(q->x + i * q->cols, q->cols, q->wtype, q->qact + (size_t)i * q->qrow);
}

static int is_quant(vox_dtype d) { return d == VOX_DTYPE_Q8 || d == VOX_DTYPE_Q4; }

/* n <= VX_STREAM_MAX_X x rows times n_mats <= GEMV_MAX_MATS matrices of one dtype and cols (> 0). */
static void gemv_multi(vx_pool *pool, int n_mats, const vx_mat *const *w, const float *const *bias, const float *x,
                       int64_t n, float *const *y) {
    const vx_kernels *k = vx_kernels_active();
    gemv_job j = {.k = k, .n_mats = n_mats, .x = x, .n = n};
    for (int m = 0; m < n_mats; m++) {
        j.w[m] = w[m];
        j.bias[m] = bias ? bias[m] : NULL;
        j.y[m] = y[m];
        j.start[m + 1] = j.start[m] + w[m]->rows;
    }
    _Alignas(64) unsigned char stack_buf[32768];
    if (is_quant(w[0]->dtype)) {
        const int64_t cols = w[0]->cols;
        size_t qrow = k->qact_row_bytes(cols, w[0]->dtype);
        unsigned char *qact = vx_scratch(VX_SLOT_ACT, qrow * (size_t)n);
        if (!qact) {
            if (qrow * (size_t)n > sizeof stack_buf) { /* one row at a time: the same values */
                for (int64_t i = 0; i < n; i++) {
                    float *yi[GEMV_MAX_MATS];
                    for (int m = 0; m < n_mats; m++) yi[m] = y[m] + i * w[m]->rows;
                    if (qrow > sizeof stack_buf) {
                        fprintf(stderr, "vox: out of memory quantizing a %lld-column activation\n", (long long)cols);
                        abort();
                    }
                    gemv_multi(pool, n_mats, w, bias, x + i * cols, 1, yi);
                }
                return;
            }
            qact = stack_buf;
        }
        for (int64_t i = 0; i < n; i++) k->qact_quantize(x + i * cols, cols, w[0]->dtype, qact + (size_t)i * qrow);
        j.qact = qact;
        j.qrow = qrow;
    }
    gemv_run(pool, &j);
}

void vx_linear_multi(vx_pool *pool, int n_mats, const vx_mat *const *w, const float *const *bias, const float *x,
                     int64_t n, float *const *y) {
    if (n <= 0 || n_mats <= 0) return;
    int same = n <= VX_STREAM_MAX_X && n_mats <= GEMV_MAX_MATS && w[0]->cols > 0;
    for (int m = 0; same && m < n_mats; m++)
        same = w[m]->dtype == w[0]->dtype && w[m]->cols == w[0]->cols && w[m]->rows > 0;
    if (!same) {
        for (int m = 0; m < n_mats; m++) vx_linear(pool, w[m], bias ? bias[m] : NULL, x, n, y[m]);
        return;
    }
    uint32_t fp = vx_fp_fast();
    gemv_multi(pool, n_mats, w, bias, x, n, y);
    vx_fp_restore(fp);
}

void vx_linear(vx_pool *pool, const vx_mat *w, const float *bias, const float *x, int64_t n, float *y) {
    if (n <= 0 || w->rows <= 0) return;
    if (n <= VX_STREAM_MAX_X && w->cols > 0) {
        vx_linear_multi(pool, 1, &w, &bias, x, n, &y);
        return;
    }
    uint32_t fp = vx_fp_fast(); /* the whole call, quantization included, runs like the workers */
    const vx_kernels *k = vx_kernels_active();
    int64_t rows = w->rows, cols = w->cols;
    if (cols == 0) {
        for (int64_t i = 0; i < n; i++)
            for (int64_t r = 0; r < rows; r++) y[i * rows + r] = bias ? bias[r] : 0.0f;
        vx_fp_restore(fp);
        return;
    }
    linear_job j = {.k = k, .w = w, .bias = bias, .x = x, .y = y, .n = n};
    if (w->dtype != VOX_DTYPE_Q8 && w->dtype != VOX_DTYPE_Q4) {
        linear_run(pool, &j);
        vx_fp_restore(fp);
        return;
    }
    /* q8/q4: quantize the activation rows once, then every weight row reuses them. */
    size_t qrow = k->qact_row_bytes(cols, w->dtype);
    _Alignas(64) unsigned char stack_buf[32768];
    int64_t chunk = n;
    unsigned char *qact = vx_scratch(VX_SLOT_ACT, qrow * (size_t)n);
    if (!qact) {
        /* Out of memory: go in chunks of rows through a stack buffer. Rows are independent and every
         * element's value is independent of n, so the result is the same. */
        chunk = (int64_t)(sizeof stack_buf / qrow);
        if (chunk < 1) {
            fprintf(stderr, "vox: out of memory quantizing a %lld-column activation\n", (long long)cols);
            abort();
        }
        qact = stack_buf;
    }
    for (int64_t i0 = 0; i0 < n; i0 += chunk) {
        int64_t m = n - i0 < chunk ? n - i0 : chunk;
        quant_job q = {k, x + i0 * cols, cols, w->dtype, qact, qrow};
        if (m * cols >= (1 << 16))
            vx_pool_for(pool, m, 4, quant_rows, &q);
        else
            quant_rows(&q, 0, m);
        j.qact = qact;
        j.qrow = qrow;
        j.n = m;
        j.y = y + i0 * rows;
        linear_run(pool, &j);
    }
    vx_fp_restore(fp);
}

/* ------------------------------------------------------------------------------ f32 convolution */
typedef struct conv_job {
    const vx_kernels *k;
    const vx_mat *w;
    const float *bias, *x;
    float *y;
    int64_t c_in, taps, dil, stride, n, nb, rb, n_rb;
} conv_job;

static void conv_tasks(void *ctx, int64_t t0, int64_t t1) {
    const conv_job *j = ctx;
    for (int64_t t = t0; t < t1; t++) {
        int64_t ib = t / j->n_rb, rbk = t % j->n_rb;
        int64_t i0 = ib * j->nb, i1 = i0 + j->nb < j->n ? i0 + j->nb : j->n;
        int64_t r0 = rbk * j->rb, r1 = r0 + j->rb < j->w->rows ? r0 + j->rb : j->w->rows;
        j->k->conv_f32(j->w, j->c_in, j->taps, j->dil, j->stride, j->bias, j->x, j->y, i0, i1, r0, r1);
    }
}

void vx_conv1d_f32(vx_pool *pool, const vx_mat *w, int64_t c_in, int64_t k, int64_t dil, int64_t stride, const float *bias,
                   const float *x, int64_t n_out, float *y) {
    if (n_out <= 0 || w->rows <= 0) return;
    uint32_t fp = vx_fp_fast();
    /* the split of vx_linear's f32 GEMM (tasks of x rows by weight rows; each output whole in one) */
    conv_job j = {.k = vx_kernels_active(), .w = w, .bias = bias, .x = x, .y = y, .c_in = c_in, .taps = k, .dil = dil,
                  .stride = stride, .n = n_out, .rb = LIN_TASK_R_F32};
    j.n_rb = (w->rows + j.rb - 1) / j.rb;
    int64_t n_ib = (n_out + LIN_TASK_N_F32 - 1) / LIN_TASK_N_F32;
    /* enough tasks for every thread: shorter row blocks when there are few */
    const int64_t want = 4 * (int64_t)(pool ? vx_pool_size(pool) : 1);
    if (n_ib * j.n_rb < want) n_ib = (want + j.n_rb - 1) / j.n_rb;
    j.nb = (n_out + n_ib - 1) / n_ib;
    if (j.nb < 1) j.nb = 1;
    n_ib = (n_out + j.nb - 1) / j.nb;
    if (w->rows * w->cols * n_out < SERIAL_MACS)
        conv_tasks(&j, 0, n_ib * j.n_rb);
    else
        vx_pool_for(pool, n_ib * j.n_rb, 1, conv_tasks, &j);
    vx_fp_restore(fp);
}

/* ------------------------------------------------------------------------------ matmul (W [k, m]) */
#ifndef NN_TASK_N
#  define NN_TASK_N 96
#endif
#ifndef NN_TASK_C
#  define NN_TASK_C 256
#endif

typedef struct nn_job {
    const vx_kernels *k;
    const vx_mat *w;
    const float *x;
    float *y;
    int64_t n, nb, cb, n_cb;
} nn_job;

static void nn_tasks(void *ctx, int64_t t0, int64_t t1) {
    const nn_job *j = ctx;
    const int64_t m = j->w->cols;
    for (int64_t t = t0; t < t1; t++) {
        int64_t ib = t / j->n_cb, cbk = t % j->n_cb;
        int64_t i0 = ib * j->nb, i1 = i0 + j->nb < j->n ? i0 + j->nb : j->n;
        int64_t c0 = cbk * j->cb, c1 = c0 + j->cb < m ? c0 + j->cb : m;
        j->k->matmul_nn(j->w, j->x, j->y, i0, i1, c0, c1);
    }
}

void vx_matmul_nn(vx_pool *pool, const vx_mat *w, const float *x, int64_t n, float *y) {
    const int64_t k = w->rows, m = w->cols;
    if (n <= 0 || m <= 0) return;
    uint32_t fp = vx_fp_fast();
    nn_job j = {vx_kernels_active(), w, x, y, n, 0, 0, 0};
    j.nb = n <= NN_TASK_N ? n : NN_TASK_N;
    j.cb = NN_TASK_C;
    j.n_cb = (m + j.cb - 1) / j.cb;
    int64_t tasks = (n + j.nb - 1) / j.nb * j.n_cb;
    if (k * m * n < SERIAL_MACS)
        nn_tasks(&j, 0, tasks);
    else
        vx_pool_for(pool, tasks, 1, nn_tasks, &j);
    vx_fp_restore(fp);
}

void vx_matmul_nn_f32(vx_pool *pool, const float *w, int64_t k, int64_t m, const float *x, int64_t n, float *y) {
    const vx_mat wm = {.dtype = VOX_DTYPE_F32, .rows = k, .cols = m, .data = w};
    vx_matmul_nn(pool, &wm, x, n, y);
}

/* ------------------------------------------------------------------------------ attention */
typedef struct attn_job {
    const vx_kernels *k;
    const float *q, *kc, *v;
    float *out;
    int64_t nq, hq, nk, hkv, d, window;
    float scale;
} attn_job;

/* Tasks: (query, KV head) pairs; each computes the query heads sharing that KV head together, so the
 * keys and values are read once for the group. */
static void attn_tasks(void *ctx, int64_t t0, int64_t t1) {
    const attn_job *j = ctx;
    int64_t group = j->hq / j->hkv;
    for (int64_t t = t0; t < t1; t++) {
        int64_t i = t / j->hkv, kv = t % j->hkv;
        int64_t pos = j->nk - j->nq + i;
        int64_t lo = j->window > 0 && pos - j->window + 1 > 0 ? pos - j->window + 1 : 0;
        int64_t h = kv * group;
        j->k->attention_heads(j->q + (i * j->hq + h) * j->d, group, j->kc + kv * j->d, j->v + kv * j->d, j->hkv * j->d,
                              lo, pos + 1, j->d, j->scale, j->out + (i * j->hq + h) * j->d);
    }
}

void vx_attention(vx_pool *pool, const float *q, int64_t nq, int64_t hq, const float *k, const float *v,
                  int64_t nk, int64_t hkv, int64_t d, float scale, int64_t window, float *out) {
    if (nq <= 0 || hq <= 0 || d <= 0 || hkv <= 0 || hq % hkv != 0 || nk < nq) return;
    uint32_t fp = vx_fp_fast();
    attn_job j = {vx_kernels_active(), q, k, v, out, nq, hq, nk, hkv, d, window, scale};
    if (nq * hq * nk * d < SERIAL_MACS)
        attn_tasks(&j, 0, nq * hkv);
    else
        vx_pool_for(pool, nq * hkv, 1, attn_tasks, &j);
    vx_fp_restore(fp);
}

/* ------------------------------------------------------------------------------ the rest: direct */
void vx_gather_rows(const vx_mat *w, const int32_t *ids, int64_t n, float *out) {
    if (n > 0) vx_kernels_active()->gather_rows(w, ids, n, out);
}
uint16_t vx_f32_to_f16(float f) {
    uint32_t u;
    memcpy(&u, &f, 4);
    uint32_t sign = (u >> 16) & 0x8000u, a = u & 0x7fffffffu;
    if (a >= 0x47800000u) return (uint16_t)(sign | 0x7c00u | (a > 0x7f800000u ? 0x200u : 0u));   /* inf, nan */
    if (a < 0x38800000u) {   /* below 2^-14: a multiple of 2^-24 */
        uint32_t e = a >> 23;
        if (e < 102) return (uint16_t)sign;   /* below 2^-25: 0 */
        uint32_t m = (a & 0x7fffffu) | 0x800000u, sh = 126 - e, r = m >> sh, rem = m & ((1u << sh) - 1), half = 1u << (sh - 1);
        if (rem > half || (rem == half && (r & 1u))) r++;
        return (uint16_t)(sign | r);
    }
    uint32_t r = a - 0x38000000u, out = r >> 13, rem = r & 0x1fffu;
    if (rem > 0x1000u || (rem == 0x1000u && (out & 1u))) out++;
    return (uint16_t)(sign | out);
}

vox_status vx_to_f32(vox_dtype dtype, const void *src, int64_t n, float *out) {
    if (dtype != VOX_DTYPE_F32 && dtype != VOX_DTYPE_F16 && dtype != VOX_DTYPE_BF16)
        return vox_set_error(VOX_ERR_UNSUPPORTED, "conversion of dtype %d to f32", (int)dtype);
    /* one row of n columns through the exact conversions of the gather */
    const vx_mat w = {.dtype = dtype, .rows = 1, .cols = n, .data = src};
    const int32_t id = 0;
    if (n > 0) vx_kernels_active()->gather_rows(&w, &id, 1, out);
    return VOX_OK;
}
void vx_harmonic_source(const vx_harmonic *a, int64_t begin, int64_t end, float *y) {
    if (end > begin) vx_kernels_active()->harmonic_source(a, begin, end, y);
}
void vx_rms_norm(const float *x, const float *w, int64_t rows, int64_t d, float eps, float *y) {
    if (rows > 0 && d > 0) vx_kernels_active()->rms_norm(x, w, rows, d, eps, y);
}
void vx_layer_norm(const float *x, const float *w, const float *b, int64_t rows, int64_t d, float eps, float *y) {
    if (rows > 0 && d > 0) vx_kernels_active()->layer_norm(x, w, b, rows, d, eps, y);
}
void vx_add(const float *a, const float *b, int64_t n, float *y) {
    if (n > 0) vx_kernels_active()->add(a, b, n, y);
}
void vx_mul(const float *a, const float *b, int64_t n, float *y) {
    if (n > 0) vx_kernels_active()->mul(a, b, n, y);
}
void vx_scale_channels(const float *x, const float *s, int64_t rows, int64_t d, float *y) {
    if (rows > 0 && d > 0) vx_kernels_active()->scale_channels(x, s, rows, d, y);
}
void vx_add_channels(const float *x, const float *b, int64_t rows, int64_t d, float *y) {
    if (rows > 0 && d > 0) vx_kernels_active()->add_channels(x, b, rows, d, y);
}
void vx_silu(const float *x, int64_t n, float *y) {
    if (n > 0) vx_kernels_active()->silu(x, n, y);
}
void vx_silu_mul(const float *gate, const float *up, int64_t n, float *y) {
    if (n > 0) vx_kernels_active()->silu_mul(gate, up, n, y);
}
void vx_gelu(const float *x, int64_t n, float *y) {
    if (n > 0) vx_kernels_active()->gelu(x, n, y);
}
void vx_elu(const float *x, int64_t n, float *y) {
    if (n > 0) vx_kernels_active()->elu(x, n, y);
}
void vx_relu(const float *x, int64_t n, float *y) {
    if (n > 0) vx_kernels_active()->relu(x, n, y);
}
void vx_tanh(const float *x, int64_t n, float *y) {
    if (n > 0) vx_kernels_active()->tanh(x, n, y);
}
void vx_sigmoid(const float *x, int64_t n, float *y) {
    if (n > 0) vx_kernels_active()->sigmoid(x, n, y);
}
void vx_snake_beta(const float *x, const float *alpha, const float *inv_beta, int64_t t, int64_t c, float *y) {
    if (t > 0 && c > 0) vx_kernels_active()->snake_beta(x, alpha, inv_beta, t, c, y);
}
void vx_channel_moments(const float *x, int64_t t, int64_t c, int64_t c0, int64_t c1, double *mean, double *m2) {
    if (t > 0 && c1 > c0) vx_kernels_active()->channel_moments(x, t, c, c0, c1, mean, m2);
}
void vx_clamp(const float *x, int64_t n, float lo, float hi, float *y) {
    if (n > 0) vx_kernels_active()->clamp(x, n, lo, hi, y);
}
void vx_exp_rows(const float *s, int64_t lds, int64_t rows, int64_t n, float scale, float *p, float *sum) {
    if (rows > 0 && n > 0) vx_kernels_active()->exp_rows(s, lds, rows, n, scale, p, sum);
}
void vx_exp_rows_bf16(const float *s, int64_t lds, int64_t rows, int64_t n, float scale, uint16_t *p, int64_t ldp,
                      float *sum) {
    if (rows > 0 && n > 0) vx_kernels_active()->exp_rows_bf16(s, lds, rows, n, scale, p, ldp, sum);
}

void vx_softmax_rows(float *x, int64_t rows, int64_t d) {
    if (rows > 0 && d > 0) vx_kernels_active()->softmax_rows(x, rows, d);
}
void vx_rope(float *x, int64_t n, int64_t heads, int64_t d, const float *cos, const float *sin) {
    if (n > 0 && heads > 0 && d >= 2) vx_kernels_active()->rope(x, n, heads, d, cos, sin);
}
void vx_im2col(const float *x, int64_t t_in, int64_t c, int64_t k, int64_t dilation, int64_t stride,
               int64_t t_out, float *out) {
    if (t_out > 0 && c > 0 && k > 0) vx_kernels_active()->im2col(x, t_in, c, k, dilation, stride, t_out, out);
}
void vx_depthwise_conv(const float *x, int64_t t_out, int64_t c, const float *w, int64_t k, int64_t dilation,
                       const float *b, float *y) {
    if (t_out > 0 && c > 0) vx_kernels_active()->depthwise_conv(x, t_out, c, w, k, dilation, b, y);
}
