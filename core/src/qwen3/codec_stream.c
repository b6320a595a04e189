/* Stream mode of the Qwen3-TTS-12Hz codec decoder (see codec.h and StreamDecoder / StreamState in
 * vox.reference.qwen3.codec_decoder).
 *
 * Layout: every activation is time-major, [time][channels] row-major float32, so a causal
 * convolution is im2col over [left context rows; new rows] + vx_linear with the torch weight
 * [c_out][c_in * k] used in place, and a transposed convolution is x . W with the torch weight
 * [c_in][c_out * k] used in place, followed by an overlap-add that carries the last input's
 * overhang (its partial sums without bias) to the next chunk.
 *
 * State (all zeros at the start = the official zero left padding; q3_stream_reset):
 *   pos                       frames consumed (RoPE position of the next frame)
 *   pre_ctx      [2][cbd]      last 2 inputs of pre_conv (k = 3)
 *   k/v ring     [layers][W][kv_heads * head_dim]   keys (after RoPE) / values of the last W
 *                             positions; position p in slot p % W
 *   dw_ctx[i]    [6][latent]   last 6 inputs of ConvNeXt i's depthwise k = 7 conv
 *   dec0_ctx     [6][latent]   last 6 inputs of decoder.0 (k = 7)
 *   tail[b]      [r_b][dim_b]  overlap-add tail of block b's transposed conv (k = 2 r_b)
 *   unit_ctx[b][u] [6 d_u][dim_b]  last 6 d_u inputs of the dilated k = 7 conv of residual unit u
 *   final_ctx    [6][dim_last] last 6 inputs of the final conv
 *
 * Determinism: every output element is computed by kernels whose order of operations does not
 * depend on how many rows a call holds or on the thread count (kernels.h), and the code below
 * takes the same path for every chunk size: a frame pushed alone or inside a chunk of 300 meets
 * the same operations on the same values, so the audio is bit-identical for any chunking and any
 * thread count. Pushes are split into sub-chunks of at most Q3_STREAM_MAX_FRAMES frames (memory is
 * sized by that, never by the utterance), which is just another chunking.
 *
 * Warm-up (q3_stream_prime) runs the frame-rate half (quantizer, pre_conv, transformer: its KV ring
 * reaches back 72 frames per layer) on every frame, but the vocoder only on the last
 * `vocoder_frames` of them: the vocoder has a finite receptive field (10 latent frames for the 12 Hz
 * codec, computed at load from the kernel sizes), so its state after those frames, started from
 * zeros, is bit for bit the state after all of them.
 *
 * On a GPU: when the codec has a copy in VRAM (codec->gpu), a stream decodes there
 * (core/src/vulkan/codec_gpu.c, the same steps); its state lives in VRAM in the layout of lat_state /
 * voc_state below, which then hold it only around reset / save / restore (gpu_stale: the VRAM copy must
 * be replaced by them before the next push). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../error.h"
#include "gpu_codec.h"
#include "codec.h"

#define Q3_STREAM_MAX_FRAMES 16
/* im2col tile budget (floats): a convolution's column matrix is built and multiplied in row tiles.
 * Every tile streams all of the weights (up to 16 MB for the 768-channel k = 7 convolutions) while the
 * tile itself is re-read from L2/L3 for each panel of weight rows, so the tile is made as large as
 * helps: 4 MB (one tile for a 4-frame chunk of the first block) decodes ~9% faster than 1 MB (L2
 * sized) and than 8 MB (tools/codec_bench.c, 12 Hz codec, chunks of 4 and 16 frames). */
#ifndef COL_BUDGET
#  define COL_BUDGET (1 << 20)
#endif
#define COL_MIN_ROWS 64
/* Rows per tile of an int8 convolution whose c_out is not a multiple of 64 (its padded output goes
 * through the im2col buffer): four of the kernel's 96-row tasks. */
#define I8_PAD_ROWS 384
_Static_assert(Q3_STREAM_MAX_FRAMES <= I8_PAD_ROWS, "the pre_conv's padded tile is sized for one sub-chunk");

struct q3_stream {
    const q3_codec *c;
    int64_t pos;
    int64_t vocoder_frames;  /* receptive field of the vocoder in latent frames */
    /* state */
    float *lat_state, *voc_state; /* two blocks, zeroed by reset */
    size_t lat_state_n, voc_state_n;
    float *pre_ctx, *k_ring, *v_ring;
    float *dw_ctx[Q3_CODEC_MAX_UP], *dec0_ctx, *tail[Q3_CODEC_MAX_BLOCKS], *unit_ctx[Q3_CODEC_MAX_BLOCKS][Q3_CODEC_UNITS],
        *final_ctx;
    /* frame-rate scratch (sized for Q3_STREAM_MAX_FRAMES) */
    float *lat_scratch;
    int32_t *ids;
    float *e, *qf, *qr, *pa, *pb, *P, *pcol, *lat0, *x, *h, *q, *kc, *vc, *att, *o, *g, *u, *cos, *sin, *latent;
    /* vocoder scratch (grown to the largest sub-chunk seen) */
    int64_t voc_cap;
    float *sig, *act, *tmp, *tmp2, *col, *pcm_discard;
    /* the GPU decoder of this stream, or NULL */
    vx_codec_gstream *gpu;
    int gpu_stale;           /* lat_state / voc_state / pos are newer than the VRAM state */
};

static const int64_t DIL[Q3_CODEC_UNITS] = {1, 3, 9};

static int64_t imax(int64_t a, int64_t b) { return a > b ? a : b; }
static int64_t imin(int64_t a, int64_t b) { return a < b ? a : b; }

/* floor(a / b) for b > 0 */
static int64_t floordiv(int64_t a, int64_t b) { return a >= 0 ? a / b : -((-a + b - 1) / b); }

/* The vocoder's receptive field in latent frames: walk the stages backwards from the state buffers
 * of the last stage, tracking the earliest input sample (relative to the end, <= 0) that the final
 * state depends on; each stage's own context buffer adds its own requirement. */
static int64_t vocoder_receptive_frames(const q3_codec *c) {
    int64_t e = -6; /* final conv: last 6 inputs */
    for (int64_t b = c->n_blocks - 1; b >= 0; b--) {
        for (int u = Q3_CODEC_UNITS - 1; u >= 0; u--) e = imin(e, 0) - 6 * DIL[u]; /* conv1 context */
        e = imin(floordiv(e, c->rate[b]) - 1, -1);                                    /* tconv tail: last input */
    }
    e -= 6; /* decoder.0 */
    for (int64_t i = c->n_up - 1; i >= 0; i--) {
        e -= 6; /* ConvNeXt dwconv */
        e = floordiv(e, c->up_ratio[i]);
    }
    return -e; /* exact: core/tests/test_codec.c fails with one frame less */
}

int64_t q3_codec_vocoder_frames(const q3_codec *c) { return vocoder_receptive_frames(c); }

/* ------------------------------------------------------------------------------ parallel helpers */
typedef struct {
    const float *x;
    float *y;
    const float *a, *b;
    int64_t c;
} ew_job;

static void snake_range(void *ctx, int64_t r0, int64_t r1) {
    const ew_job *j = ctx;
    vx_snake_beta(j->x + r0 * j->c, j->a, j->b, r1 - r0, j->c, j->y + r0 * j->c);
}
/* y[t][c] = SnakeBeta(x) (x == y allowed) */
static void snake(vx_pool *pool, const q3_snake *sn, const float *x, int64_t t, float *y) {
    ew_job j = {.x = x, .y = y, .a = sn->alpha, .b = sn->inv_beta, .c = sn->c};
    vx_pool_for(pool, t, imax(1, 4096 / sn->c), snake_range, &j);
}

static void gelu_range(void *ctx, int64_t i0, int64_t i1) {
    const ew_job *j = ctx;
    vx_gelu(j->x + i0, i1 - i0, j->y + i0);
}
static void add_range(void *ctx, int64_t i0, int64_t i1) {
    const ew_job *j = ctx;
    vx_add(j->x + i0, j->a + i0, i1 - i0, j->y + i0);
}

typedef struct {
    const float *x;
    float *col;
    int64_t c, k, dil;
} col_job;
static void im2col_range(void *ctx, int64_t r0, int64_t r1) {
    const col_job *j = ctx;
    vx_im2col(j->x + r0 * j->c, r1 - r0 + (j->k - 1) * j->dil, j->c, j->k, j->dil, 1, r1 - r0,
              j->col + r0 * j->c * j->k);
}

/* Rows per im2col tile of a convolution with `cols` = c_in * k columns: an L2-sized tile, but at
 * least the rows the linear kernel blocks together anyway (no extra weight traffic). */
static int64_t col_tile(int64_t cols) { return imax(COL_MIN_ROWS, COL_BUDGET / cols); }

/* The padded width of an int8 convolution of c_out channels (conv_rows: c_out not a multiple of 64, its
 * output tiles of up to I8_PAD_ROWS rows go through the im2col buffer), else 0. */
static int64_t pad_width(int64_t c_out) { return c_out % 64 ? (c_out + 63) / 64 * 64 : 0; }

/* Causal conv (stride 1) over xp = [(k-1)*dilation context rows; t rows] (time-major, c_in wide):
 * y[t][c_out]. */
static void conv_rows(vx_pool *pool, const q3_conv *cv, const float *xp, int64_t t, float *col, float *y) {
    if (cv->iw.data && cv->iw.rows == cv->c_out) { /* int8 dot products (q3_codec.math); scratch is its only failure */
        if (vx_conv1d_i8w(pool, &cv->iw, cv->b, xp, t, cv->dilation, y) == VOX_OK) return;
    } else if (cv->iw.data) { /* c_out padded to 64k channels: tiles of I8_PAD_ROWS rows through col */
        const int64_t rp = cv->iw.rows;
        vox_status st = VOX_OK;
        for (int64_t r = 0; r < t && !st; r += I8_PAD_ROWS) {
            const int64_t n = imin(I8_PAD_ROWS, t - r);
            st = vx_conv1d_i8w(pool, &cv->iw, NULL, xp + r * cv->c_in, n, cv->dilation, col);
            for (int64_t i = 0; i < n && !st; i++)
                for (int64_t o = 0; o < cv->c_out; o++) y[(r + i) * cv->c_out + o] = col[i * rp + o] + (cv->b ? cv->b[o] : 0.0f);
        }
        if (!st) return;
    }
    if (cv->pw.data) { /* bf16 dot products (q3_codec.math); the packing's scratch is its only failure */
        if (vx_conv1d_bf16w(pool, &cv->pw, cv->b, xp, t, cv->dilation, y) == VOX_OK) return;
    }
    if (cv->k == 1) {
        vx_linear(pool, &cv->w, cv->b, xp, t, y);
        return;
    }
    if (cv->w.dtype == VOX_DTYPE_F32) { /* the columns read in place: the bits of im2col + vx_linear */
        vx_conv1d_f32(pool, &cv->w, cv->c_in, cv->k, cv->dilation, 1, cv->b, xp, t, y);
        return;
    }
    const int64_t cols = cv->c_in * cv->k, tile = col_tile(cols);
    for (int64_t r = 0; r < t; r += tile) {
        const int64_t n = imin(tile, t - r);
        col_job j = {.x = xp + r * cv->c_in, .col = col, .c = cv->c_in, .k = cv->k, .dil = cv->dilation};
        vx_pool_for(pool, n, imax(1, 16384 / cols), im2col_range, &j);
        vx_linear(pool, &cv->w, cv->b, col, n, y + r * cv->c_out);
    }
}

typedef struct {
    const float *Y, *tail_in, *bias;
    float *out;
    int64_t co, k, r;
} ola_job;
/* out[t*r + j][o] = (Y[t][o*k + j] + Y[t-1][o*k + j + r]) + b[o], Y[-1] being the carried tail
 * (k == 2r), or Y[t][o*k + j] + b[o] (k == r). */
static void ola_range(void *ctx, int64_t t0, int64_t t1) {
    const ola_job *J = ctx;
    const int64_t co = J->co, k = J->k, r = J->r;
    for (int64_t t = t0; t < t1; t++) {
        const float *y = J->Y + t * co * k;
        for (int64_t j = 0; j < r; j++) {
            float *o = J->out + (t * r + j) * co;
            if (k == r) {
                for (int64_t c = 0; c < co; c++) o[c] = y[c * k + j] + J->bias[c];
            } else if (t == 0) {
                const float *p = J->tail_in + j * co;
                for (int64_t c = 0; c < co; c++) o[c] = (y[c * k + j] + p[c]) + J->bias[c];
            } else {
                const float *p = y - co * k + r;
                for (int64_t c = 0; c < co; c++) o[c] = (y[c * k + j] + p[c * k + j]) + J->bias[c];
            }
        }
    }
}

/* Causal transposed conv of x [t][c_in] -> out [t * stride][c_out]; Y [t][c_out * k] scratch;
 * tail [stride][c_out] carried (k == 2 * stride) or NULL (k == stride). */
static void tconv_rows(vx_pool *pool, const q3_tconv *tc, const float *x, int64_t t, float *Y, float *tail, float *out) {
    if (!tc->iw.data || vx_conv1d_i8w(pool, &tc->iw, NULL, x, t, 1, Y) != VOX_OK) /* int8 (q3_codec.math) or f32 */
        vx_matmul_nn(pool, &tc->w, x, t, Y);
    ola_job j = {.Y = Y, .tail_in = tail, .bias = tc->b, .out = out, .co = tc->c_out, .k = tc->k, .r = tc->stride};
    vx_pool_for(pool, t, 1, ola_range, &j);
    if (tc->k != tc->stride) { /* new tail: the last input's overhang, taps stride .. k-1 */
        const float *y = Y + (t - 1) * tc->c_out * tc->k;
        for (int64_t jj = 0; jj < tc->stride; jj++)
            for (int64_t c = 0; c < tc->c_out; c++) tail[jj * tc->c_out + c] = y[c * tc->k + jj + tc->stride];
    }
}

/* ------------------------------------------------------------------------------ create / reset */
static float *take(float **arena, int64_t n) {
    float *p = *arena;
    *arena += (n + 15) & ~(int64_t)15; /* 64-byte steps */
    return p;
}

void q3_stream_free(q3_stream *s) {
    if (!s) return;
    vx_codec_gstream_free(s->gpu);
    free(s->lat_state);
    free(s->voc_state);
    free(s->lat_scratch);
    free(s->ids);
    free(s->sig);
    free(s->act);
    free(s->tmp);
    free(s->tmp2);
    free(s->col);
    free(s->pcm_discard);
    free(s);
}

static size_t round16(int64_t n) { return (size_t)((n + 15) & ~(int64_t)15); }

vox_status q3_stream_create(const q3_codec *c, q3_stream **out) {
    if (!out) return vox_set_error(VOX_ERR_INVALID_ARGUMENT, "q3_stream_create: NULL argument");
    *out = NULL;
    if (!c) return vox_set_error(VOX_ERR_UNSUPPORTED, "this model has no codec decoder");
    q3_stream *s = calloc(1, sizeof *s);
    if (!s) return vox_set_error(VOX_ERR_OUT_OF_MEMORY, "out of memory");
    s->c = c;
    s->vocoder_frames = vocoder_receptive_frames(c);
    const int64_t L = c->latent, kvd = c->n_kv_heads * c->head_dim, W = c->window;
    /* frame-rate state */
    s->lat_state_n = round16(2 * c->codebook_dim) + 2 * round16(c->n_layers * W * kvd);
    /* vocoder state */
    size_t vn = 0;
    for (int64_t i = 0; i < c->n_up; i++) vn += round16(6 * L);
    vn += round16(6 * L);
    for (int64_t b = 0; b < c->n_blocks; b++) {
        const int64_t d = c->decoder_dim >> (b + 1);
        vn += round16(c->rate[b] * d);
        for (int u = 0; u < Q3_CODEC_UNITS; u++) vn += round16(6 * DIL[u] * d);
    }
    vn += round16(6 * (c->decoder_dim >> c->n_blocks));
    s->voc_state_n = vn;
    /* frame-rate scratch */
    const int64_t S = Q3_STREAM_MAX_FRAMES, half = c->codebook_dim / 2, H = c->hidden,
                  qd = c->n_heads * c->head_dim, I = c->intermediate, d = c->head_dim;
    const int64_t sizes[] = {S * half, S * half, S * half, S * c->codebook_dim, S * c->codebook_dim,
                             (S + 2) * c->codebook_dim, imax(S * 3 * c->codebook_dim, S * pad_width(L)) /* S <= I8_PAD_ROWS */,
                             S * L, S * H, S * H, S * qd,
                             (W - 1 + S) * kvd, (W - 1 + S) * kvd, S * qd, S * H, S * I, S * I, S * d, S * d, S * L};
    size_t ln = 0;
    for (size_t i = 0; i < sizeof sizes / sizeof *sizes; i++) ln += round16(sizes[i]);
    s->lat_state = calloc(s->lat_state_n, sizeof(float));
    s->voc_state = calloc(s->voc_state_n, sizeof(float));
    s->lat_scratch = malloc(ln * sizeof(float));
    s->ids = malloc((size_t)S * sizeof(int32_t));
    if (!s->lat_state || !s->voc_state || !s->lat_scratch || !s->ids) {
        q3_stream_free(s);
        return vox_set_error(VOX_ERR_OUT_OF_MEMORY, "out of memory");
    }
    float *a = s->lat_state;
    s->pre_ctx = take(&a, 2 * c->codebook_dim);
    s->k_ring = take(&a, c->n_layers * W * kvd);
    s->v_ring = take(&a, c->n_layers * W * kvd);
    a = s->voc_state;
    for (int64_t i = 0; i < c->n_up; i++) s->dw_ctx[i] = take(&a, 6 * L);
    s->dec0_ctx = take(&a, 6 * L);
    for (int64_t b = 0; b < c->n_blocks; b++) {
        const int64_t dd = c->decoder_dim >> (b + 1);
        s->tail[b] = take(&a, c->rate[b] * dd);
        for (int u = 0; u < Q3_CODEC_UNITS; u++) s->unit_ctx[b][u] = take(&a, 6 * DIL[u] * dd);
    }
    s->final_ctx = take(&a, 6 * (c->decoder_dim >> c->n_blocks));
    float **dst[] = {&s->e, &s->qf, &s->qr, &s->pa, &s->pb, &s->P, &s->pcol, &s->lat0, &s->x, &s->h,
                     &s->q, &s->kc, &s->vc, &s->att, &s->o, &s->g, &s->u, &s->cos, &s->sin, &s->latent};
    a = s->lat_scratch;
    for (size_t i = 0; i < sizeof sizes / sizeof *sizes; i++) *dst[i] = take(&a, sizes[i]);
    if (c->gpu) {
        vox_status st = vx_codec_gstream_create(c->gpu, s->lat_state_n, s->voc_state_n, &s->gpu);
        if (st) {
            q3_stream_free(s);
            return st;
        }
    }
    *out = s;
    return VOX_OK;
}

void q3_stream_reset(q3_stream *s) {
    memset(s->lat_state, 0, s->lat_state_n * sizeof(float));
    memset(s->voc_state, 0, s->voc_state_n * sizeof(float));
    s->pos = 0;
    s->gpu_stale = 1;
}

/* The GPU stream's state brought up to date with lat_state / voc_state / pos when they are newer. */
static vox_status gpu_sync(q3_stream *s) {
    if (!s->gpu_stale) return VOX_OK;
    vox_status st = vx_codec_gstream_set(s->gpu, s->pos, s->lat_state, s->voc_state);
    if (st == VOX_OK) s->gpu_stale = 0;
    return st;
}

int64_t q3_stream_position(const q3_stream *s) { return s->pos; }

const q3_codec *q3_stream_codec(const q3_stream *s) { return s->c; }

q3_voc_sizes q3_vocoder_sizes(const q3_codec *c, int64_t k) {
    const int64_t L = c->latent;
    int64_t sig = k * L, act = 0, tmp = 0, tmp2 = 0, col = 0, t = k;
    for (int64_t i = 0; i < c->n_up; i++) {
        tmp2 = imax(tmp2, t * L * c->up_ratio[i]); /* the transposed conv's taps */
        t *= c->up_ratio[i];
        sig = imax(sig, t * L);
        act = imax(act, (6 + t) * L);
        tmp = imax(tmp, t * L);
        tmp2 = imax(tmp2, t * 4 * L);
    }
    act = imax(act, (6 + t) * L);
    sig = imax(sig, t * c->decoder_dim);
    col = imax(col, imin(t, col_tile(7 * L)) * 7 * L);
    for (int64_t b = 0; b < c->n_blocks; b++) {
        const int64_t cin = c->decoder_dim >> b, cout = cin / 2, r = c->rate[b];
        tmp = imax(tmp, t * cin);
        tmp2 = imax(tmp2, t * cout * 2 * r);
        t *= r;
        sig = imax(sig, t * cout);
        act = imax(act, (6 * DIL[Q3_CODEC_UNITS - 1] + t) * cout);
        tmp = imax(tmp, t * cout);
        tmp2 = imax(tmp2, t * cout);
        col = imax(col, imin(t, col_tile(7 * cout)) * 7 * cout);
    }
    const int64_t last = c->decoder_dim >> c->n_blocks;
    act = imax(act, (6 + t) * last);
    tmp = imax(tmp, t);
    col = imax(col, I8_PAD_ROWS * pad_width(c->decoder_dim)); /* the padded int8 convolutions' output tiles */
    for (int64_t b = 0; b < c->n_blocks; b++) col = imax(col, I8_PAD_ROWS * pad_width((c->decoder_dim >> b) / 2));
    col = imax(col, imin(t, col_tile(7 * last)) * 7 * last);
    return (q3_voc_sizes){sig, act, tmp, tmp2, col};
}

/* Vocoder scratch for sub-chunks of up to k frames. */
static vox_status ensure_vocoder(q3_stream *s, int64_t k) {
    if (k <= s->voc_cap) return VOX_OK;
    const q3_voc_sizes z = q3_vocoder_sizes(s->c, k);
    float *p[5] = {0};
    const int64_t n[5] = {z.sig, z.act, z.tmp, z.tmp2, z.col};
    for (int i = 0; i < 5; i++) {
        p[i] = malloc((size_t)n[i] * sizeof(float));
        if (!p[i]) {
            for (int j = 0; j < i; j++) free(p[j]);
            return vox_set_error(VOX_ERR_OUT_OF_MEMORY, "out of memory (codec scratch for %lld frames)", (long long)k);
        }
    }
    free(s->sig), free(s->act), free(s->tmp), free(s->tmp2), free(s->col);
    s->sig = p[0], s->act = p[1], s->tmp = p[2], s->tmp2 = p[3], s->col = p[4];
    s->voc_cap = k;
    return VOX_OK;
}

/* ------------------------------------------------------------------------------ frame-rate half */
/* codes [k][n_q] (checked) -> s->latent [k][latent]; advances pos. */
static void push_latent(q3_stream *s, vx_pool *pool, const int32_t *codes, int64_t k) {
    const q3_codec *c = s->c;
    const int64_t half = c->codebook_dim / 2, cbd = c->codebook_dim, H = c->hidden, d = c->head_dim,
                  hq = c->n_heads, hkv = c->n_kv_heads, kvd = hkv * d, W = c->window, I = c->intermediate;
    /* quantizer (SplitResidualVectorQuantizer.decode): sum of codebook rows, group 0 alone and groups
     * 1.. in order, each sum through its 1x1 output projection, then first + rest */
    for (int64_t gq = 0; gq < c->n_q; gq++) {
        for (int64_t i = 0; i < k; i++) {
            const int32_t id = codes[i * c->n_q + gq];
            s->ids[i] = id < 0 ? 0 : id;
        }
        float *dst = gq == 0 ? s->qf : gq == 1 ? s->qr : s->e;
        vx_gather_rows(&c->cb_sum[gq], s->ids, k, dst);
        for (int64_t i = 0; i < k; i++) {
            const float us = c->cb_usage[gq][s->ids[i]], den = us > 1e-5f ? us : 1e-5f;
            float *row = dst + i * half;
            for (int64_t j = 0; j < half; j++) row[j] = row[j] / den;
        }
        if (gq >= 2) vx_add(s->qr, s->e, k * half, s->qr);
    }
    vx_linear(pool, &c->proj_first, NULL, s->qf, k, s->pa);
    vx_linear(pool, &c->proj_rest, NULL, s->qr, k, s->pb);
    /* pre_conv (k = 3) over [pre_ctx; hidden] */
    memcpy(s->P, s->pre_ctx, (size_t)(2 * cbd) * sizeof(float));
    vx_add(s->pa, s->pb, k * cbd, s->P + 2 * cbd);
    memcpy(s->pre_ctx, s->P + k * cbd, (size_t)(2 * cbd) * sizeof(float));
    conv_rows(pool, &c->pre_conv, s->P, k, s->pcol, s->lat0);

    /* pre_transformer at positions pos .. pos + k - 1 */
    float *x = s->x, *h = s->h;
    vx_linear(pool, &c->in_proj, c->in_proj_b, s->lat0, k, x);
    for (int64_t i = 0; i < k; i++) {
        const float p = (float)(s->pos + i);
        for (int64_t j = 0; j < d / 2; j++) {
            const float f = p * c->inv_freq[j];
            s->cos[i * d + j] = s->cos[i * d + j + d / 2] = cosf(f);
            s->sin[i * d + j] = s->sin[i * d + j + d / 2] = sinf(f);
        }
    }
    const int64_t npast = imin(s->pos, W - 1);
    for (int64_t l = 0; l < c->n_layers; l++) {
        const q3_codec_layer *y = &c->layers[l];
        float *kr = s->k_ring + l * W * kvd, *vr = s->v_ring + l * W * kvd;
        float *kn = s->kc + npast * kvd, *vn = s->vc + npast * kvd;
        vx_rms_norm(x, y->in_norm, k, H, c->rms_eps, h);
        vx_linear(pool, &y->q, NULL, h, k, s->q);
        vx_linear(pool, &y->k, NULL, h, k, kn);
        vx_linear(pool, &y->v, NULL, h, k, vn);
        vx_rope(s->q, k, hq, d, s->cos, s->sin);
        vx_rope(kn, k, hkv, d, s->cos, s->sin);
        for (int64_t j = 0; j < npast; j++) { /* the ring in logical (position) order */
            const int64_t slot = (s->pos - npast + j) % W;
            memcpy(s->kc + j * kvd, kr + slot * kvd, (size_t)kvd * sizeof(float));
            memcpy(s->vc + j * kvd, vr + slot * kvd, (size_t)kvd * sizeof(float));
        }
        vx_attention(pool, s->q, k, hq, s->kc, s->vc, npast + k, hkv, d, c->attn_scale, W, s->att);
        for (int64_t i = imax(0, k - W); i < k; i++) { /* keep the last W positions */
            const int64_t slot = (s->pos + i) % W;
            memcpy(kr + slot * kvd, kn + i * kvd, (size_t)kvd * sizeof(float));
            memcpy(vr + slot * kvd, vn + i * kvd, (size_t)kvd * sizeof(float));
        }
        vx_linear(pool, &y->o, NULL, s->att, k, s->o);
        vx_scale_channels(s->o, y->attn_scale, k, H, s->o);
        vx_add(x, s->o, k * H, x);
        vx_rms_norm(x, y->post_norm, k, H, c->rms_eps, h);
        vx_linear(pool, &y->gate, NULL, h, k, s->g);
        vx_linear(pool, &y->up, NULL, h, k, s->u);
        vx_silu_mul(s->g, s->u, k * I, s->g);
        vx_linear(pool, &y->down, NULL, s->g, k, s->o);
        vx_scale_channels(s->o, y->mlp_scale, k, H, s->o);
        vx_add(x, s->o, k * H, x);
    }
    vx_rms_norm(x, c->norm, k, H, c->rms_eps, h);
    vx_linear(pool, &c->out_proj, c->out_proj_b, h, k, s->latent);
    s->pos += k;
}

/* ------------------------------------------------------------------------------ vocoder */
/* latent [k][latent] -> pcm [k * spf] (scratch from ensure_vocoder(k)). */
static void vocoder(q3_stream *s, vx_pool *pool, const float *latent, int64_t k, float *pcm) {
    const q3_codec *c = s->c;
    const int64_t L = c->latent;
    float *sig = s->sig, *act = s->act, *tmp = s->tmp, *tmp2 = s->tmp2;
    int64_t t = k;
    memcpy(sig, latent, (size_t)(k * L) * sizeof(float));
    for (int64_t i = 0; i < c->n_up; i++) {
        const q3_convnext *u = &c->up[i];
        /* transposed conv (k = stride) into act after the dwconv context */
        memcpy(act, s->dw_ctx[i], (size_t)(6 * L) * sizeof(float));
        tconv_rows(pool, &u->up, sig, t, tmp2, NULL, act + 6 * L);
        t *= c->up_ratio[i];
        memcpy(s->dw_ctx[i], act + t * L, (size_t)(6 * L) * sizeof(float));
        /* ConvNeXt: x + gamma * pwconv2(gelu(pwconv1(layer_norm(dwconv(x))))) */
        vx_depthwise_conv(act, t, L, u->dw_w, 7, 1, u->dw_b, tmp);
        vx_layer_norm(tmp, u->ln_w, u->ln_b, t, L, 1e-6f, sig);
        vx_linear(pool, &u->pw1, u->pw1_b, sig, t, tmp2);
        ew_job gj = {.x = tmp2, .y = tmp2};
        vx_pool_for(pool, t * 4 * L, 4096, gelu_range, &gj);
        vx_linear(pool, &u->pw2, u->pw2_b, tmp2, t, tmp);
        vx_scale_channels(tmp, u->gamma, t, L, tmp);
        vx_add(act + 6 * L, tmp, t * L, sig);
    }
    /* decoder.0: causal conv k = 7 */
    memcpy(act, s->dec0_ctx, (size_t)(6 * L) * sizeof(float));
    memcpy(act + 6 * L, sig, (size_t)(t * L) * sizeof(float));
    memcpy(s->dec0_ctx, act + t * L, (size_t)(6 * L) * sizeof(float));
    conv_rows(pool, &c->dec0, act, t, s->col, sig);
    for (int64_t b = 0; b < c->n_blocks; b++) {
        const q3_codec_block *bl = &c->blocks[b];
        const int64_t cout = bl->up.c_out;
        snake(pool, &bl->act, sig, t, tmp);
        tconv_rows(pool, &bl->up, tmp, t, tmp2, s->tail[b], sig);
        t *= c->rate[b];
        for (int u = 0; u < Q3_CODEC_UNITS; u++) {
            /* residual unit: x + conv2(snake2(conv1(snake1(x)))) with conv1 dilated, k = 7 */
            const int64_t ctx = 6 * DIL[u];
            memcpy(act, s->unit_ctx[b][u], (size_t)(ctx * cout) * sizeof(float));
            snake(pool, &bl->act1[u], sig, t, act + ctx * cout);
            memcpy(s->unit_ctx[b][u], act + t * cout, (size_t)(ctx * cout) * sizeof(float));
            conv_rows(pool, &bl->conv1[u], act, t, s->col, tmp);
            snake(pool, &bl->act2[u], tmp, t, tmp);
            conv_rows(pool, &bl->conv2[u], tmp, t, s->col, tmp2);
            ew_job aj = {.x = tmp2, .a = sig, .y = sig};
            vx_pool_for(pool, t * cout, 8192, add_range, &aj);
        }
    }
    /* final SnakeBeta, causal conv k = 7 to one channel, clamp */
    const int64_t last = c->final_act.c;
    memcpy(act, s->final_ctx, (size_t)(6 * last) * sizeof(float));
    snake(pool, &c->final_act, sig, t, act + 6 * last);
    memcpy(s->final_ctx, act + t * last, (size_t)(6 * last) * sizeof(float));
    conv_rows(pool, &c->final_conv, act, t, s->col, tmp);
    vx_clamp(tmp, t, -1.0f, 1.0f, pcm);
}

/* ------------------------------------------------------------------------------ API */
static vox_status check_push(const q3_stream *s, const int32_t *codes, int64_t n, const char *fn) {
    if (!s || n < 0 || (!codes && n))
        return vox_set_error(VOX_ERR_INVALID_ARGUMENT, "%s: bad arguments (n = %lld)", fn, (long long)n);
    const int64_t total = n * s->c->n_q;
    for (int64_t i = 0; i < total; i++)
        if (codes[i] >= s->c->codebook_size)
            return vox_set_error(VOX_ERR_INVALID_ARGUMENT, "%s: code [%lld][%lld] = %d is out of range (codebook size %lld)",
                                 fn, (long long)(i / s->c->n_q), (long long)(i % s->c->n_q), (int)codes[i],
                                 (long long)s->c->codebook_size);
    return VOX_OK;
}

vox_status q3_stream_push(q3_stream *s, vx_pool *pool, const int32_t *codes, int64_t n, float *pcm) {
    vox_status st = check_push(s, codes, n, "q3_stream_push");
    if (st) return st;
    if (n && !pcm) return vox_set_error(VOX_ERR_INVALID_ARGUMENT, "q3_stream_push: NULL pcm");
    if (s->gpu) {
        if ((st = gpu_sync(s)) || (st = vx_codec_gstream_push(s->gpu, codes, n, pcm))) return st;
        s->pos = vx_codec_gstream_pos(s->gpu);
        return VOX_OK;
    }
    const int64_t S = Q3_STREAM_MAX_FRAMES, nq = s->c->n_q, spf = s->c->spf;
    if ((st = ensure_vocoder(s, imin(n, S)))) return st;
    uint32_t fp = vx_fp_fast(); /* flush denormals on this thread too, as the pool's workers do */
    for (int64_t f = 0; f < n; f += S) {
        const int64_t k = imin(S, n - f);
        push_latent(s, pool, codes + f * nq, k);
        vocoder(s, pool, s->latent, k, pcm + f * spf);
    }
    vx_fp_restore(fp);
    return VOX_OK;
}

/* ------------------------------------------------------------------------------ saved states */
struct q3_stream_state {
    const q3_codec *c;
    int64_t pos;
    size_t lat_n, voc_n;
    float data[]; /* lat_state [lat_n] then voc_state [voc_n] */
};

vox_status q3_stream_save(const q3_stream *s, q3_stream_state **out) {
    *out = NULL;
    if (s->gpu && !s->gpu_stale) { /* the state is in VRAM: fetch it into the host copy first */
        q3_stream *m = (q3_stream *)s; /* the host copy is a cache of the VRAM state, not the stream's value */
        vox_status st = vx_codec_gstream_get(m->gpu, m->lat_state, m->voc_state);
        if (st) return st;
    }
    q3_stream_state *st = malloc(sizeof *st + (s->lat_state_n + s->voc_state_n) * sizeof(float));
    if (!st) return vox_set_error(VOX_ERR_OUT_OF_MEMORY, "out of memory (a decoder state)");
    st->c = s->c;
    st->pos = s->pos;
    st->lat_n = s->lat_state_n;
    st->voc_n = s->voc_state_n;
    memcpy(st->data, s->lat_state, s->lat_state_n * sizeof(float));
    memcpy(st->data + s->lat_state_n, s->voc_state, s->voc_state_n * sizeof(float));
    *out = st;
    return VOX_OK;
}

void q3_stream_restore(q3_stream *s, const q3_stream_state *st) {
    memcpy(s->lat_state, st->data, st->lat_n * sizeof(float));
    memcpy(s->voc_state, st->data + st->lat_n, st->voc_n * sizeof(float));
    s->pos = st->pos;
    s->gpu_stale = 1;
}

size_t q3_stream_state_bytes(const q3_stream_state *st) {
    return st ? sizeof *st + (st->lat_n + st->voc_n) * sizeof(float) : 0;
}

void q3_stream_state_free(q3_stream_state *st) { free(st); }

vox_status q3_stream_prime(q3_stream *s, vx_pool *pool, const int32_t *codes, int64_t n) {
    vox_status st = check_push(s, codes, n, "q3_stream_prime");
    if (st || n == 0) return st;
    if (s->gpu) {
        if ((st = gpu_sync(s)) || (st = vx_codec_gstream_prime(s->gpu, codes, n, s->vocoder_frames))) return st;
        s->pos = vx_codec_gstream_pos(s->gpu);
        return VOX_OK;
    }
    const int64_t S = Q3_STREAM_MAX_FRAMES, nq = s->c->n_q, spf = s->c->spf, R = s->vocoder_frames;
    /* the frame-rate half on every frame; the vocoder on the last R frames only (from a zero state
     * when frames were skipped: its state depends on those R frames alone) */
    const int64_t first_voc = n > R ? n - R : 0;
    if ((st = ensure_vocoder(s, imin(imin(n, R), S)))) return st;
    if (!s->pcm_discard && !(s->pcm_discard = malloc((size_t)(S * spf) * sizeof(float))))
        return vox_set_error(VOX_ERR_OUT_OF_MEMORY, "out of memory");
    if (first_voc > 0) memset(s->voc_state, 0, s->voc_state_n * sizeof(float));
    uint32_t fp = vx_fp_fast();
    for (int64_t f = 0; f < n;) {
        /* sub-chunks never straddle first_voc */
        const int64_t k = f < first_voc ? imin(S, first_voc - f) : imin(S, n - f);
        push_latent(s, pool, codes + f * nq, k);
        if (f >= first_voc) vocoder(s, pool, s->latent, k, s->pcm_discard);
        f += k;
    }
    vx_fp_restore(fp);
    return VOX_OK;
}
