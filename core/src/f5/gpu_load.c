/* F5-TTS on the GPU: what goes to video memory, and the workspace (gpu.h). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../error.h"
#include "gpu_internal.h"

/* ------------------------------------------------------------------------------ the vector buffer */
typedef struct vecs {
    float *data;
    uint64_t n, cap;
    int failed;
    vx_gbuf *buf;
} vecs;

/* Appends v[0..n) (16-byte aligned) and returns its binding in the buffer-to-be. */
static vx_gbind vec_add(vecs *s, const float *v, int64_t n) {
    uint64_t at = (s->n + 3) & ~(uint64_t)3, need = at + (uint64_t)(n > 0 ? n : 1);
    if (need > s->cap) {
        uint64_t cap = s->cap ? s->cap : 4096;
        while (cap < need) cap *= 2;
        float *d = realloc(s->data, cap * sizeof *d);
        if (!d) {
            s->failed = 1;
            return (vx_gbind){s->buf, 0, 0};
        }
        s->data = d, s->cap = cap;
    }
    for (uint64_t i = s->n; i < at; i++) s->data[i] = 0.0f;
    if (v) memcpy(s->data + at, v, (size_t)n * sizeof *v);
    else memset(s->data + at, 0, (size_t)(n > 0 ? n : 1) * sizeof *s->data);
    s->n = need;
    return (vx_gbind){s->buf, at * 4, 0};
}

static int float_mat(const vx_mat *w) {
    return w->dtype == VOX_DTYPE_F32 || w->dtype == VOX_DTYPE_F16 || w->dtype == VOX_DTYPE_BF16;
}

static uint64_t raw_bytes(const vx_mat *w) {
    return (uint64_t)w->rows * (uint64_t)w->cols * (w->dtype == VOX_DTYPE_F32 ? 4u : 2u);
}

/* A grouped convolution's weight [c][cg 31] (any dtype) as f32, transposed to [cg 31][c]. */
static vox_status upload_gconv(vx_gpu *g, const vx_mat *w, vx_gbuf *out) {
    const int64_t rows = w->rows, cols = w->cols;
    float *f = malloc((size_t)(rows * cols) * sizeof *f), *t = malloc((size_t)(rows * cols) * sizeof *t);
    vox_status st = f && t ? VOX_OK : vox_set_error(VOX_ERR_OUT_OF_MEMORY, "out of memory");
    if (st == VOX_OK && w->dtype == VOX_DTYPE_F32) memcpy(f, w->data, (size_t)(rows * cols) * sizeof *f);
    else if (st == VOX_OK && (st = vx_to_f32(w->dtype, w->data, rows * cols, f)) != VOX_OK) {}
    if (st == VOX_OK) {
        for (int64_t r = 0; r < rows; r++)
            for (int64_t k = 0; k < cols; k++) t[k * rows + r] = f[r * cols + k];
        if ((st = vx_gpu_alloc(g, (uint64_t)(rows * cols) * 4, 0, out)) == VOX_OK)
            st = vx_gpu_upload(g, out, 0, t, (uint64_t)(rows * cols) * 4);
    }
    free(f), free(t);
    return st;
}

static vox_status upload_raw(vx_gpu *g, const vx_mat *w, vx_gbuf *out) {
    vox_status st = vx_gpu_alloc(g, raw_bytes(w), 0, out);
    return st == VOX_OK ? vx_gpu_upload(g, out, 0, w->data, raw_bytes(w)) : st;
}

/* The inverse real DFT of n_fft points as a matrix over [re | im] (bins = n_fft / 2 + 1 each), with
 * the synthesis window and 1 / n_fft folded in: wave[j] = window[j] / N (re_0 + re_{N/2} (-1)^j +
 * 2 sum_{0<b<N/2} (re_b cos(2 pi b j / N) - im_b sin(2 pi b j / N))), as the c2r FFT of vx_istft
 * computes it (the imaginary parts of bins 0 and N/2 ignored). */
static float *dft_matrix(int64_t nf, const float *window) {
    const int64_t bins = nf / 2 + 1, cols = 2 * bins;
    float *d = malloc((size_t)(nf * cols) * sizeof *d);
    if (!d) return NULL;
    for (int64_t j = 0; j < nf; j++) {
        const double w = (double)window[j] / (double)nf;
        for (int64_t b = 0; b < bins; b++) {
            const double a = 2.0 * M_PI * (double)((b * j) % nf) / (double)nf, c = (b == 0 || b == bins - 1) ? 1.0 : 2.0;
            d[j * cols + b] = (float)(w * c * cos(a));
            d[j * cols + bins + b] = (b == 0 || b == bins - 1) ? 0.0f : (float)(-w * c * sin(a));
        }
    }
    return d;
}

void f5_gpu_free(void *gpu) {
    f5_gpu *G = gpu;
    if (!G) return;
    vx_gpu *g = G->g;
    vx_gmat *mats[] = {&G->in_proj, &G->t1, &G->t2, &G->norm_out, &G->proj_out, &G->voc_head, &G->dft};
    for (size_t i = 0; i < sizeof mats / sizeof mats[0]; i++) vx_gmat_free(g, mats[i]);
    if (G->blocks) {
        for (int64_t i = 0; G->blocks && i < G->n_blocks; i++) {
            f5_gblock *b = &G->blocks[i];
            vx_gmat_free(g, &b->mod), vx_gmat_free(g, &b->qkv), vx_gmat_free(g, &b->o), vx_gmat_free(g, &b->ff1),
                vx_gmat_free(g, &b->ff2);
        }
        free(G->blocks);
    }
    if (G->vblocks) {
        for (int64_t i = 0; i < G->n_vblocks; i++) vx_gpu_release(g, &G->vblocks[i].pw1), vx_gpu_release(g, &G->vblocks[i].pw2);
        free(G->vblocks);
    }
    vx_gbuf *bufs[] = {&G->vec, &G->conv0_wt, &G->conv2_wt, &G->voc_embed};
    for (size_t i = 0; i < sizeof bufs / sizeof bufs[0]; i++) vx_gpu_release(g, bufs[i]);
    f5_gws *ws[] = {&G->A, &G->H, &G->AN, &G->Y, &G->Q, &G->K, &G->V, &G->O, &G->U, &G->FLOW, &G->X, &G->COND,
                    &G->TS, &G->CS, &G->T1, &G->TEMB, &G->SIL, &G->MODS, &G->MP, &G->P, &G->D, &G->VU, &G->YH,
                    &G->S, &G->WV, &G->PCM};
    for (size_t i = 0; i < sizeof ws / sizeof ws[0]; i++) vx_gpu_release(g, &ws[i]->b);
    pthread_mutex_destroy(&G->lock);
    free(G);
}

vox_status f5_gws_need(vx_gpu *g, f5_gws *w, uint64_t n) {
    if (n < 16) n = 16;
    if (w->cap >= n) return VOX_OK;
    if (n > vx_gpu_max_range(g))
        return vox_set_error(VOX_ERR_LIMIT, "F5 on the GPU: a work buffer of %.1f MiB exceeds the device's storage "
                             "buffer range (%.1f MiB): use shorter pieces (max_chars)", (double)n / 1048576.0,
                             (double)vx_gpu_max_range(g) / 1048576.0);
    vx_gpu_release(g, &w->b);
    w->cap = 0;
    vox_status st = vx_gpu_alloc(g, n, 0, &w->b);
    if (st == VOX_OK) w->cap = n;
    return st;
}

/* Why the DiT cannot run on this device's kernels ("" when it can). */
static const char *dit_unsupported(const f5_model *m) {
    const f5_config *c = &m->c;
    const vx_mat *all[] = {&m->in_proj, &m->t1, &m->t2, &m->norm_out, &m->proj_out};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        if (!float_mat(all[i])) return "q8/q4 weights";
    for (int64_t i = 0; i < c->depth; i++) {
        const f5_block *b = &m->blocks[i];
        const vx_mat *bl[] = {&b->mod, &b->q, &b->k, &b->v, &b->o, &b->ff1, &b->ff2};
        for (size_t j = 0; j < sizeof bl / sizeof bl[0]; j++)
            if (!float_mat(bl[j])) return "q8/q4 weights";
    }
    if (c->dim_head > 64 || c->dim_head % 4) return "the GPU attention takes dim_head <= 64, a multiple of 4";
    if (c->dim % 64 || 64 % (c->dim / 16)) return "the GPU convolutions take dim a multiple of 64 with dim / 16 dividing 64";
    if (m->conv0.cols != c->dim / 16 * VX_GCONV_K) return "the GPU convolutions take kernel 31";
    return "";
}

static const char *vocos_unsupported(const f5_model *m) {
    const f5_vocos *v = &m->voc;
    if (!float_mat(&v->embed) || !float_mat(&v->head)) return "q8/q4 weights";
    for (int64_t i = 0; i < m->c.voc_layers; i++)
        if (!float_mat(&v->blocks[i].pw1) || !float_mat(&v->blocks[i].pw2) || v->blocks[i].pw1.dtype != v->embed.dtype ||
            v->blocks[i].pw2.dtype != v->embed.dtype)
            return "q8/q4 or mixed-dtype weights";
    return "";
}

static uint64_t dit_bytes(const f5_model *m, int64_t *n_mats) {
    const f5_config *c = &m->c;
    uint64_t b = vx_gmat_bytes(&m->in_proj) + vx_gmat_bytes(&m->t1) + vx_gmat_bytes(&m->t2) +
                 vx_gmat_bytes(&m->norm_out) + vx_gmat_bytes(&m->proj_out) + 2 * (uint64_t)(m->conv0.rows * m->conv0.cols) * 4;
    *n_mats = 7 + 7 * c->depth;
    for (int64_t i = 0; i < c->depth; i++) {
        const f5_block *k = &m->blocks[i];
        b += vx_gmat_bytes(&k->mod) + vx_gmat_bytes(&k->q) + vx_gmat_bytes(&k->k) + vx_gmat_bytes(&k->v) +
             vx_gmat_bytes(&k->o) + vx_gmat_bytes(&k->ff1) + vx_gmat_bytes(&k->ff2);
    }
    return b;
}

static uint64_t vocos_bytes(const f5_model *m, int64_t *n_mats) {
    const f5_vocos *v = &m->voc;
    uint64_t b = raw_bytes(&v->embed) + vx_gmat_bytes(&v->head) + (uint64_t)m->c.voc_n_fft * (uint64_t)(m->c.voc_n_fft + 2) * 4;
    for (int64_t i = 0; i < m->c.voc_layers; i++) b += raw_bytes(&v->blocks[i].pw1) + raw_bytes(&v->blocks[i].pw2);
    *n_mats = 2 + 2 * m->c.voc_layers;
    return b;
}

/* The large products on VK_NV_cooperative_matrix2 where the device has it (gemm_cm2.comp: the weights
 * as float16, x as hi + lo), unless VOX_VK_F5_GEMM names the subgroup-scope kernels (cm: gemm_cm.glsl's
 * hi + lo, cmh: x in float16). */
static int use_cm2(vx_gpu *g) {
    const char *e = getenv("VOX_VK_F5_GEMM");
    return vx_gpu_coopmat2(g) && !(e && (!strcmp(e, "cm") || !strcmp(e, "cmh")));
}

static vox_status load_dit(f5_gpu *G, const f5_model *m, vecs *vs) {
    vx_gpu *g = G->g;
    const f5_config *c = &m->c;
    vox_status st;
    const int cm2 = use_cm2(g);
    vox_status (*up)(vx_gpu *, const vx_mat *, vx_gmat *) = cm2 ? vx_gmat_upload_f16 : vx_gmat_upload;
    vox_status (*up_stack)(vx_gpu *, const vx_mat *const *, const float *const *, int, vx_gmat *) =
        cm2 ? vx_gmat_upload_stack_f16 : vx_gmat_upload_stack;
    if ((st = up(g, &m->in_proj, &G->in_proj)) != VOX_OK || (st = vx_gmat_upload(g, &m->t1, &G->t1)) != VOX_OK ||
        (st = vx_gmat_upload(g, &m->t2, &G->t2)) != VOX_OK || (st = vx_gmat_upload(g, &m->norm_out, &G->norm_out)) != VOX_OK ||
        (st = vx_gmat_upload(g, &m->proj_out, &G->proj_out)) != VOX_OK ||
        (st = upload_gconv(g, &m->conv0, &G->conv0_wt)) != VOX_OK || (st = upload_gconv(g, &m->conv2, &G->conv2_wt)) != VOX_OK)
        return st;
    G->in_proj.cm_wide = !getenv("VOX_VK_F5_NARROW");   /* the wide tensor-core tiles (VOX_VK_F5_NARROW=1: the 64 x 32 ones) */
    G->in_proj.cm2 = cm2;
    const char *fe = getenv("VOX_VK_F5_FUSE");
    G->fuse = !(fe && !strcmp(fe, "0"));
    G->in_proj_b = vec_add(vs, m->in_proj_b, c->dim);
    G->t1_b = vec_add(vs, m->t1_b, c->dim);
    G->t2_b = vec_add(vs, m->t2_b, c->dim);
    G->norm_out_b = vec_add(vs, m->norm_out_b, 2 * c->dim);
    G->proj_out_b = vec_add(vs, m->proj_out_b, c->mel_dim);
    G->conv0_b = vec_add(vs, m->conv0_b, c->dim);
    G->conv2_b = vec_add(vs, m->conv2_b, c->dim);
    G->blocks = calloc((size_t)c->depth, sizeof *G->blocks);
    if (!G->blocks) return vox_set_error(VOX_ERR_OUT_OF_MEMORY, "out of memory");
    G->n_blocks = c->depth;
    for (int64_t i = 0; i < c->depth; i++) {
        const f5_block *b = &m->blocks[i];
        f5_gblock *d = &G->blocks[i];
        const vx_mat *qkv[3] = {&b->q, &b->k, &b->v};
        const float *qkv_b[3] = {b->q_b, b->k_b, b->v_b};
        if ((st = vx_gmat_upload(g, &b->mod, &d->mod)) != VOX_OK || (st = up_stack(g, qkv, qkv_b, 3, &d->qkv)) != VOX_OK ||
            (st = up(g, &b->o, &d->o)) != VOX_OK || (st = up(g, &b->ff1, &d->ff1)) != VOX_OK ||
            (st = up(g, &b->ff2, &d->ff2)) != VOX_OK)
            return st;
        d->qkv.cm_wide = d->o.cm_wide = d->ff1.cm_wide = d->ff2.cm_wide = !getenv("VOX_VK_F5_NARROW");   /* 2 x frames rows */
        d->qkv.cm2 = d->o.cm2 = d->ff1.cm2 = d->ff2.cm2 = cm2;
        d->mod_b = vec_add(vs, b->mod_b, 6 * c->dim);
        d->o_b = vec_add(vs, b->o_b, c->dim);
        d->ff1_b = vec_add(vs, b->ff1_b, b->ff1.rows);
        d->ff2_b = vec_add(vs, b->ff2_b, c->dim);
    }
    return VOX_OK;
}

/* The DiT's attention in float16 arithmetic on tensor cores, as an fp16 model runs on a GPU (the official
 * F5-TTS puts its DiT in fp16 on CUDA): q, k, v and the softmax weights rounded to float16, float32 sums
 * (attention_cm.comp), where the device has cooperative matrices, the blocks' weights are f16 / bf16 that
 * float16 holds (vx_gmat.coopmat) and heads are 64 wide. The products keep x's float32 precision (hi + lo
 * on tensor cores, gemm_cm.glsl): on an H100 the one-product GEMM with x in float16 (gemm_cmh.glsl,
 * VOX_VK_F5_GEMM=cmh) measured slower than it (docs/benchmarks.md). VOX_VK_F5_MATH=f32 keeps the float32
 * attention too. */
static void choose_math(f5_gpu *G, const f5_model *m) {
    const f5_config *c = &m->c;
    const char *want = getenv("VOX_VK_F5_MATH");
    int ok = vx_gop_attention_cm_ok(G->g, c->dim_head, c->heads * c->dim_head);
    for (int64_t i = 0; i < c->depth && ok; i++) {
        const f5_gblock *b = &G->blocks[i];
        ok = b->qkv.coopmat && b->o.coopmat && b->ff1.coopmat && b->ff2.coopmat;
    }
    G->f16 = 0;
    if (!vx_gpu_coopmat(G->g)) G->math = "float32 (no cooperative matrices on this device)";
    else if (!ok) G->math = "float32 (the blocks' weights are not all f16 / bf16 within float16's range, or heads are not 64 wide)";
    else if (want && !strcmp(want, "f32")) G->math = "float32 activations (VOX_VK_F5_MATH=f32)";
    else {
        const char *gemm = getenv("VOX_VK_F5_GEMM");
        const int half = gemm && !strcmp(gemm, "cmh");
        G->f16 = 1;
        G->math = half ? "float16 on tensor cores, float32 sums (VOX_VK_F5_GEMM=cmh: x in float16 in the products too)"
                  : G->blocks[0].qkv.cm2 && vx_gpu_coopmat2(G->g)
                      ? "the attention in float16 on tensor cores, the products with float32 activations on "
                        "VK_NV_cooperative_matrix2 (VOX_VK_F5_GEMM=cm: the subgroup-scope GEMM; VOX_VK_F5_MATH=f32: "
                        "the float32 attention)"
                      : "the attention in float16 on tensor cores, the products with float32 activations "
                        "(VOX_VK_F5_MATH=f32: the float32 attention)";
        G->in_proj.cm_half = half && G->in_proj.coopmat;
        for (int64_t i = 0; i < c->depth; i++) {
            f5_gblock *b = &G->blocks[i];
            b->qkv.cm_half = b->o.cm_half = b->ff1.cm_half = b->ff2.cm_half = half;
        }
    }
}

static vox_status load_vocos(f5_gpu *G, const f5_model *m, vecs *vs) {
    vx_gpu *g = G->g;
    const f5_config *c = &m->c;
    const f5_vocos *v = &m->voc;
    vox_status st;
    G->voc_dtype = v->embed.dtype;
    if ((st = upload_raw(g, &v->embed, &G->voc_embed)) != VOX_OK || (st = vx_gmat_upload(g, &v->head, &G->voc_head)) != VOX_OK)
        return st;
    float *dft = dft_matrix(c->voc_n_fft, v->window);
    if (!dft) return vox_set_error(VOX_ERR_OUT_OF_MEMORY, "out of memory");
    vx_mat dm = {VOX_DTYPE_F32, c->voc_n_fft, c->voc_n_fft + 2, dft, NULL};
    st = vx_gmat_upload(g, &dm, &G->dft);
    free(dft);
    if (st != VOX_OK) return st;
    G->voc_embed_b = vec_add(vs, v->embed_b, c->voc_dim);
    G->voc_norm_w = vec_add(vs, v->norm_w, c->voc_dim);
    G->voc_norm_b = vec_add(vs, v->norm_b, c->voc_dim);
    G->voc_final_w = vec_add(vs, v->final_w, c->voc_dim);
    G->voc_final_b = vec_add(vs, v->final_b, c->voc_dim);
    G->voc_head_b = vec_add(vs, v->head_b, c->voc_n_fft + 2);
    G->voc_window = vec_add(vs, v->window, c->voc_n_fft);
    G->vblocks = calloc((size_t)(c->voc_layers ? c->voc_layers : 1), sizeof *G->vblocks);
    if (!G->vblocks) return vox_set_error(VOX_ERR_OUT_OF_MEMORY, "out of memory");
    G->n_vblocks = c->voc_layers;
    for (int64_t i = 0; i < c->voc_layers; i++) {
        const vx_convnext *b = &v->blocks[i];
        f5_gconvnext *d = &G->vblocks[i];
        if ((st = upload_raw(g, &b->pw1, &d->pw1)) != VOX_OK || (st = upload_raw(g, &b->pw2, &d->pw2)) != VOX_OK) return st;
        d->dw_w = vec_add(vs, b->dw_w, b->dim * b->k);
        d->dw_b = vec_add(vs, b->dw_b, b->dim);
        d->ln_w = vec_add(vs, b->ln_w, b->dim);
        d->ln_b = vec_add(vs, b->ln_b, b->dim);
        d->pw1_b = vec_add(vs, b->pw1_b, b->hidden);
        d->pw2_b = vec_add(vs, b->pw2_b, b->dim);
        d->has_gamma = b->gamma != NULL;
        d->gamma = vec_add(vs, b->gamma, b->dim);
    }
    return VOX_OK;
}

vox_status f5_gpu_place(vox_engine *e, f5_model *m) {
    const f5_config *c = &m->c;
    int64_t n_dit = 0, n_voc = 0;
    const int64_t n_text = 1 + 2 * c->conv_layers;
    uint64_t need_dit = dit_bytes(m, &n_dit), need_voc = vocos_bytes(m, &n_voc);
    const char *why_dit = dit_unsupported(m), *why_voc = vocos_unsupported(m);
    const uint64_t margin = 64ull << 20;   /* the workspace of a piece of a few thousand frames */
    uint64_t avail = vx_gpu_info(e->gpu)->memory_free;
    const char *lim = getenv("VOX_VRAM_LIMIT_MB");   /* a smaller card, simulated (tests), as for Qwen3-TTS */
    if (lim && *lim && (uint64_t)strtoull(lim, NULL, 10) * 1048576ull < avail) avail = (uint64_t)strtoull(lim, NULL, 10) * 1048576ull;
    int dit = !why_dit[0], voc = !why_voc[0];
    char mem[160] = "";
    if (dit && need_dit + margin > avail) {
        dit = 0;
        snprintf(mem, sizeof mem, "not enough video memory: the DiT needs %.1f MiB, %.1f MiB free",
                 (double)(need_dit + margin) / 1048576.0, (double)avail / 1048576.0);
        why_dit = mem;
    }
    char memv[160] = "";
    if (voc && (dit ? need_dit : 0) + need_voc + margin > avail) {
        voc = 0;
        snprintf(memv, sizeof memv, "not enough video memory: Vocos needs %.1f MiB, %.1f MiB free%s",
                 (double)(need_voc + margin) / 1048576.0, (double)(avail - (dit ? need_dit : 0)) / 1048576.0,
                 dit ? " beside the DiT" : "");
        why_voc = memv;
    }
    if (e->gpu_strict && (!dit || !voc))   /* too little memory, or weights the GPU kernels do not take */
        return vox_set_error(mem[0] || memv[0] ? VOX_ERR_OUT_OF_MEMORY : VOX_ERR_UNSUPPORTED, "device vulkan:%d,strict: %s on the CPU (%s)",
                             e->gpu_index, !dit ? "the DiT stays" : "Vocos stays", !dit ? why_dit : why_voc);
    e->matrices_gpu = 0;
    e->matrices_cpu = n_text + n_dit + n_voc;
    e->bytes_gpu = 0;
    if (!dit && !voc) {
        vx_placement_reason(e, "the text encoder, the DiT (%s) and Vocos (%s) run on the CPU", why_dit, why_voc);
        return VOX_OK;
    }
    f5_gpu *G = calloc(1, sizeof *G);
    if (!G) return vox_set_error(VOX_ERR_OUT_OF_MEMORY, "out of memory");
    G->g = e->gpu;
    pthread_mutex_init(&G->lock, NULL);
    vecs vs = {.buf = &G->vec};
    vox_status st = VOX_OK;
    if (dit && (st = load_dit(G, m, &vs)) == VOX_OK) choose_math(G, m);
    if (st == VOX_OK && voc) st = load_vocos(G, m, &vs);
    if (st == VOX_OK && vs.failed) st = vox_set_error(VOX_ERR_OUT_OF_MEMORY, "out of memory");
    if (st == VOX_OK && (st = vx_gpu_alloc(G->g, vs.n * 4, 0, &G->vec)) == VOX_OK)
        st = vx_gpu_upload(G->g, &G->vec, 0, vs.data, vs.n * 4);
    free(vs.data);
    if (st == VOX_OK) st = vx_gpu_prepare(G->g);   /* pipelines built at load, not in the first piece */
    if (st != VOX_OK) {
        f5_gpu_free(G);
        return st;
    }
    G->dit = dit, G->vocos = voc;
    m->gpu = G;
    e->matrices_gpu = (dit ? n_dit : 0) + (voc ? n_voc : 0);
    e->matrices_cpu = n_text + (dit ? 0 : n_dit) + (voc ? 0 : n_voc);
    e->bytes_gpu = (dit ? need_dit : 0) + (voc ? need_voc : 0);
    if (dit && voc)
        vx_placement_reason(e, "the text encoder runs on the CPU, once a piece; the DiT, its ODE loop and Vocos on the GPU "
                            "(DiT arithmetic: %s)", G->math);
    else if (dit)
        vx_placement_reason(e, "the text encoder and Vocos run on the CPU (%s); the DiT and its ODE loop on the GPU "
                            "(DiT arithmetic: %s)", why_voc, G->math);
    else
        vx_placement_reason(e, "the text encoder and the DiT run on the CPU (%s); Vocos on the GPU", why_dit);
    return VOX_OK;
}

int f5_gpu_dit_on(const f5_model *m) { return m->gpu && ((const f5_gpu *)m->gpu)->dit; }
int f5_gpu_vocos_on(const f5_model *m) { return m->gpu && ((const f5_gpu *)m->gpu)->vocos; }
