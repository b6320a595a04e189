/* The Mimi encoder's split residual vector quantizer (encode side): vox.reference.qwen3.mimi_encoder
 * rvq_encode / quantize / distances in C.
 *
 * Per group (semantic: 1 codebook; acoustic: the rest of the kept ones): r = input_proj(latent)
 * (1x1, no bias), then per codebook index = argmin_j d(r, e_j), r -= e_index. The distances are the
 * reference's (torch.cdist's matrix-product path) in float32:
 *     d = sqrt(max([-2 r, |r|^2, 1] . [e_j, 1, |e_j|^2], 0))
 * one float32 dot product of length dim + 2 per (frame, j) (vx_linear against the extended codebook),
 * with |r|^2 and |e|^2 summed as numpy does (pairwise); argmin takes the first of equal values, so
 * near-ties see rounding of the same kind and size as in the reference and the official code. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../error.h"
#include "../tmod.h"
#include "mimi_internal.h"

#define PFX "speech_tokenizer.encoder.quantizer."
static const char *GROUP[2] = {"semantic_residual_vector_quantizer", "acoustic_residual_vector_quantizer"};

vox_status q3_rvq_bind(const q3_model *m, q3_mimi *mm) {
    mimi_cfg *c = &mm->cfg;
    int64_t dim = -1;
    vox_status st;
    for (int g = 0; g < 2; g++) {
        char name[256];
        snprintf(name, sizeof name, PFX "%s.input_proj.weight", GROUP[g]);
        vox_tensor_info ti;
        mm->has_proj[g] = vox_model_find_tensor(m->file, name, &ti) == VOX_OK;
        if (mm->has_proj[g]) {
            if ((st = q3_bind_conv(m, name, -1, c->hidden, 1, &mm->proj[g])) != VOX_OK) return st;
            if (dim >= 0 && mm->proj[g].rows != dim)
                return vox_set_error(VOX_ERR_FORMAT, "%s: the quantizers' projections differ in width", vox_model_path(m->file));
            dim = mm->proj[g].rows;
        }
    }
    if (mm->has_proj[0] != mm->has_proj[1])
        return vox_set_error(VOX_ERR_FORMAT, "%s: only one quantizer group has an input projection", vox_model_path(m->file));
    if (dim < 0) dim = c->hidden;
    c->codebook_dim = dim;
    if (c->valid_quantizers > MIMI_MAX_QUANTIZERS)
        return vox_set_error(VOX_ERR_UNSUPPORTED, "more than %d quantizers", MIMI_MAX_QUANTIZERS);
    for (int64_t q = 0; q < c->valid_quantizers; q++) {
        int g = q < c->n_semantic ? 0 : 1;
        long long qi = (long long)(g ? q - c->n_semantic : q);
        mimi_book *b = &mm->books[q];
        if ((st = q3_bind_matf(m, &b->embed_sum, c->codebook_size, dim, PFX "%s.layers.%lld.codebook.embed_sum",
                               GROUP[g], qi)) != VOX_OK ||
            (st = q3_bind_f32f(m, &b->usage, c->codebook_size, PFX "%s.layers.%lld.codebook.cluster_usage", GROUP[g],
                               qi)) != VOX_OK)
            return st;
    }
    return VOX_OK;
}

/* The extended codebooks, built once (on the first voice: they are only needed to clone). */
static vox_status build_ext(q3_mimi *mm) {
    const mimi_cfg *c = &mm->cfg;
    int64_t size = c->codebook_size, dim = c->codebook_dim, w = dim + 2;
    vox_status st = VOX_OK;
    pthread_mutex_lock(&mm->lock);
    if (mm->ext_ready) goto out;
    for (int64_t q = 0; q < c->valid_quantizers; q++) {
        mimi_book *b = &mm->books[q];
        float *ext = malloc((size_t)(size * w) * sizeof *ext);
        float *sq = malloc((size_t)dim * sizeof *sq);
        if (!ext || !sq) {
            free(ext), free(sq);
            st = vox_set_error(VOX_ERR_OUT_OF_MEMORY, "out of memory (codebooks)");
            goto out;
        }
        for (int64_t j = 0; j < size; j++) {
            float *row = ext + j * w;
            int32_t id = (int32_t)j;
            vx_gather_rows(&b->embed_sum, &id, 1, row);
            float u = b->usage[j] > 1e-5f ? b->usage[j] : 1e-5f;
            for (int64_t i = 0; i < dim; i++) {
                row[i] = row[i] / u;
                sq[i] = row[i] * row[i];
            }
            row[dim] = 1.0f;
            row[dim + 1] = q3_np_sum(sq, dim, 1);
        }
        free(sq);
        free(b->ext);
        b->ext = ext;
    }
    mm->ext_ready = true;
out:
    pthread_mutex_unlock(&mm->lock);
    return st;
}

vox_status q3_mimi_quantize(const q3_mimi *cmm, vx_pool *pool, const float *latent, int64_t t, int32_t *codes,
                            double *margin) {
    q3_mimi *mm = (q3_mimi *)cmm; /* the lazily built tables only */
    const mimi_cfg *c = &mm->cfg;
    vox_status st = build_ext(mm);
    if (st != VOX_OK) return st;
    if (margin) *margin = INFINITY;
    if (t <= 0) return VOX_OK;
    int64_t size = c->codebook_size, dim = c->codebook_dim, w = dim + 2, nq = c->valid_quantizers;
    float *r = malloc((size_t)(t * dim) * sizeof *r), *a = malloc((size_t)(t * w) * sizeof *a);
    float *d2 = malloc((size_t)(t * size) * sizeof *d2), *sq = malloc((size_t)dim * sizeof *sq);
    if (!r || !a || !d2 || !sq) {
        st = vox_set_error(VOX_ERR_OUT_OF_MEMORY, "out of memory (quantizer, %lld frames)", (long long)t);
        goto done;
    }
    for (int g = 0; g < 2; g++) {
        int64_t q0 = g ? c->n_semantic : 0, q1 = g ? nq : (c->n_semantic < nq ? c->n_semantic : nq);
        if (q0 >= q1) continue;
        if (mm->has_proj[g]) vx_linear(pool, &mm->proj[g], NULL, latent, t, r);
        else memcpy(r, latent, (size_t)(t * dim) * sizeof *r);
        for (int64_t q = q0; q < q1; q++) {
            const float *ext = mm->books[q].ext;
            vx_mat em = {.dtype = VOX_DTYPE_F32, .rows = size, .cols = w, .data = ext, .scales = NULL};
            for (int64_t f = 0; f < t; f++) {
                const float *rf = r + f * dim;
                float *af = a + f * w;
                for (int64_t i = 0; i < dim; i++) {
                    af[i] = -2.0f * rf[i];
                    sq[i] = rf[i] * rf[i];
                }
                af[dim] = q3_np_sum(sq, dim, 1);
                af[dim + 1] = 1.0f;
            }
            vx_linear(pool, &em, NULL, a, t, d2);
            for (int64_t f = 0; f < t; f++) {
                const float *df = d2 + f * size;
                int64_t best = 0;
                float bd = sqrtf(df[0] > 0.0f ? df[0] : 0.0f);
                float b2 = df[0] > 0.0f ? df[0] : 0.0f, s2 = INFINITY; /* best / second-best squared distance */
                for (int64_t j = 1; j < size; j++) {
                    float v2 = df[j] > 0.0f ? df[j] : 0.0f, v = sqrtf(v2);
                    if (v < bd) best = j, bd = v;
                    if (v2 < b2) s2 = b2, b2 = v2;
                    else if (v2 < s2) s2 = v2;
                }
                codes[f * nq + q] = (int32_t)best;
                if (margin) {
                    double gap = ((double)s2 - (double)b2) / fmax(fabs((double)s2), 1e-30);
                    if (gap < *margin) *margin = gap;
                }
                const float *e = ext + best * w;
                float *rf = r + f * dim;
                for (int64_t i = 0; i < dim; i++) rf[i] = rf[i] - e[i];
            }
        }
    }
done:
    free(r), free(a), free(d2), free(sq);
    return st;
}
