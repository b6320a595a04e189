/* The generation loop (reference generate.Session) as a resumable state machine: the talker's
 * batched prefill, one talker step per frame, the code predictor (a fresh cache per frame, one pass
 * per group), the talker's logits processing and Philox sampling, the stop rules. Every buffer is
 * allocated once per session; a frame allocates nothing. */
#include <stdatomic.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../error.h"
#include "lm_internal.h"
#include "gpu_lm.h"

vox_status q3_sess_alloc(q3_sess *q) {
    const q3_lm *lm = q->lm;
    const int64_t H = lm->talker.hidden, PH = lm->pred.hidden, R = Q3_CHUNK_ROWS;
    vox_status st;
    if ((st = q3_scratch_init(&q->tsc, &lm->talker, R)) || (st = q3_scratch_init(&q->psc, &lm->pred, 2)) ||
        (st = q3_kv_init(&q->pkv, &lm->pred, lm->n_groups + 1)) || (st = q3_sample_work_init(&q->swt, lm->vocab)) ||
        (st = q3_sample_work_init(&q->swp, lm->pvocab)))
        return st;
    q->x = malloc((size_t)(R * H) * sizeof(float));
    q->hid = malloc((size_t)(R * H) * sizeof(float));
    q->hidden = malloc((size_t)H * sizeof(float));
    q->logits = malloc((size_t)lm->vocab * sizeof(float));
    q->scores = malloc((size_t)(lm->vocab > lm->pvocab ? lm->vocab : lm->pvocab) * sizeof(float));
    q->ftmp = malloc((size_t)H * sizeof(float));
    q->pin = malloc((size_t)(2 * H) * sizeof(float));
    q->px = malloc((size_t)(2 * PH) * sizeof(float));
    q->pout = malloc((size_t)(2 * PH) * sizeof(float));
    q->plogits = malloc((size_t)lm->pvocab * sizeof(float));
    q->twork = malloc((size_t)(R * (lm->text_hidden + lm->text_inter)) * sizeof(float));
    q->seen = calloc((size_t)lm->vocab, 1);
    q->distinct = malloc((size_t)lm->vocab * sizeof(int32_t));
    if (!q->x || !q->hid || !q->hidden || !q->logits || !q->scores || !q->ftmp || !q->pin || !q->px || !q->pout ||
        !q->plogits || !q->twork || !q->seen || !q->distinct)
        return vox_set_error(VOX_ERR_OUT_OF_MEMORY, "out of memory");
    if (q->m->gpu) {
        /* VOX_GPU_SAMPLING=0 keeps the predictor's choices on the CPU (one submission per group) */
        const char *gs = getenv("VOX_GPU_SAMPLING");
        q->gpu_sampling = !(gs && !strcmp(gs, "0")) && lm->n_groups <= 65 && lm->pvocab <= 8192;
        return vx_q3_gsess_create(q->m->gpu, 0, &q->gpu);
    }
    return VOX_OK;
}

/* On a GPU the rows' forward, the last row's final norm and the codec head are one dispatch chain
 * (vx_q3_talker); the CPU KV cache then only counts positions. A GPU failure (device lost) is
 * remembered and returned by the next pull. */
static void talker_rows(q3_sess *q, int64_t n, int last) {
    const q3_lm *lm = q->lm;
    q3_rope_table(&lm->talker, q->kv.len, n, q->tsc.cos, q->tsc.sin);
    if (q->gpu) {
        vox_status st = vx_q3_talker(q->gpu, q->x, n, q->kv.len, q->tsc.cos, q->tsc.sin, last ? q->hidden : NULL,
                                     last ? q->logits : NULL);
        if (st != VOX_OK && q->gpu_status == VOX_OK) q->gpu_status = st;
        q->kv.len += n;
        return;
    }
    q3_decoder_forward(&lm->talker, q->pool, &q->tsc, &q->kv, q->x, n, q->tsc.cos, q->tsc.sin, q->hid);
    if (last) {
        const int64_t H = lm->talker.hidden;
        memcpy(q->hidden, q->hid + (n - 1) * H, (size_t)H * sizeof(float));
        vx_linear(q->pool, &lm->codec_head, NULL, q->hidden, 1, q->logits);
    }
}

static vox_status reserve_positions(q3_sess *q, int64_t need) {
    if (q->gpu) {   /* the cache is the GPU's; q->kv only counts positions */
        int64_t have = vx_q3_gsess_cap(q->gpu);
        if (need <= have) return VOX_OK;
        vox_status st = vx_q3_gsess_reserve(q->gpu, have * 2 > need ? have * 2 : need);
        if (st == VOX_OK && q->kv.cap < need) q->kv.cap = need;
        return st;
    }
    if (need <= q->kv.cap) return VOX_OK;
    int64_t cap = q->kv.cap * 2 > need ? q->kv.cap * 2 : need;
    return q3_kv_reserve(&q->kv, cap);
}

vox_status q3_prefill(q3_sess *q) {
    const q3_lm *lm = q->lm;
    const int64_t H = lm->talker.hidden, L = q->n_prompt;
    const int64_t lim = q3_sess_limit(q);
    int64_t cap = L + (lim < 1024 ? lim : 1024) + 1;
    vox_status st = q->kv.k || q->gpu ? reserve_positions(q, cap) : q3_kv_init(&q->kv, &lm->talker, cap);
    if (st) return st;
    for (int64_t b = 0; b < L; b += Q3_CHUNK_ROWS) {
        if (atomic_load(&q->s->cancelled)) return vox_set_error(VOX_ERR_CANCELLED, "the session was cancelled");
        const int64_t n = L - b < Q3_CHUNK_ROWS ? L - b : Q3_CHUNK_ROWS;
        memcpy(q->x, q->prompt + b * H, (size_t)(n * H) * sizeof(float));
        talker_rows(q, n, b + n == L);
        if (q->gpu_status != VOX_OK) return q->gpu_status;
    }
    q->prefilled = 1;
    return VOX_OK;
}

void q3_talker_step(q3_sess *q, const int32_t *codes, const float *trailing) {
    const int64_t H = q->lm->talker.hidden;
    q3_frame_embed(q->lm, codes, q->ftmp, q->x);
    vx_add(q->x, trailing, H, q->x);
    talker_rows(q, 1, 1);
}

/* one predictor pass over n rows (talker width) in q->pin, at positions pkv.len.. -> logits of `head` */
static void pred_pass(q3_sess *q, int64_t n, int64_t head, float *logits) {
    const q3_lm *lm = q->lm;
    const int64_t PH = lm->pred.hidden, hd = lm->pred.head_dim, pos = q->pkv.len;
    if (q->gpu) {
        vox_status st = vx_q3_predictor(q->gpu, q->pin, n, pos, head, logits);
        if (st != VOX_OK && q->gpu_status == VOX_OK) q->gpu_status = st;
        q->pkv.len += n;
        return;
    }
    if (lm->has_proj) vx_linear(q->pool, &lm->proj, lm->proj_b, q->pin, n, q->px);
    else memcpy(q->px, q->pin, (size_t)(n * PH) * sizeof(float));
    q3_decoder_forward(&lm->pred, q->pool, &q->psc, &q->pkv, q->px, n, lm->pred_cos + pos * hd,
                       lm->pred_sin + pos * hd, q->pout);
    vx_linear(q->pool, &lm->phead[head], NULL, q->pout + (n - 1) * PH, 1, logits);
}

void q3_predict(q3_sess *q, int32_t *codes, int forced, float *logits_out) {
    const q3_lm *lm = q->lm;
    const int64_t H = lm->talker.hidden, V = lm->pvocab, G = lm->n_groups;
    const uint32_t frame = (uint32_t)q->n_frames;
    q->pkv.len = 0;
    memcpy(q->pin, q->hidden, (size_t)H * sizeof(float));
    vx_gather_rows(&lm->codec_emb, &codes[0], 1, q->pin + H);
    if (q->gpu && !forced && q->gpu_sampling) {
        /* the whole frame in one submission: passes, heads, choices and embeddings on the GPU */
        float u[64];
        for (int64_t g = 1; g < G && g <= 64; g++) u[g - 1] = (float)vox_philox_uniform(q->s->seed, frame, (uint32_t)g);
        vx_gsampler sp = {q->pred_sp.do_sample, q->pred_sp.temperature, q->pred_sp.top_k, q->pred_sp.top_p};
        vox_status st = vx_q3_predict_frame(q->gpu, q->pin, &sp, u, codes);
        if (st != VOX_OK && q->gpu_status == VOX_OK) q->gpu_status = st;
        return;
    }
    int64_t n = 2;
    for (int64_t g = 1; g < G; g++) {
        float *lg = logits_out ? logits_out + (g - 1) * V : q->plogits;
        pred_pass(q, n, g - 1, lg);
        if (!forced) {
            memcpy(q->scores, lg, (size_t)V * sizeof(float));
            q3_warp(q->scores, V, &q->pred_sp, &q->swp);
            codes[g] = q3_choose(q->scores, V, q->pred_sp.do_sample, q->s->seed, frame, (uint32_t)g, &q->swp);
        }
        if (g + 1 < G) {
            vx_gather_rows(&lm->pemb[g - 1], &codes[g], 1, q->pin);
            n = 1;
        }
    }
}

static vox_status reserve_frames(q3_sess *q) {
    if (q->n_frames < q->cap_frames) return VOX_OK;
    int64_t cap = q->cap_frames ? 2 * q->cap_frames : 256;
    int32_t *c = realloc(q->codes, (size_t)(cap * q->lm->n_groups) * sizeof *c);
    if (!c) return vox_set_error(VOX_ERR_OUT_OF_MEMORY, "out of memory");
    q->codes = c;
    q->cap_frames = cap;
    return VOX_OK;
}

/* Sample the next frame's group-0 code (after feeding the previous frame to the talker, which needs
 * its trailing text). Q3_FRAME: q->code0 holds it; Q3_STOP: EOS or the limit. */
static int next_code0(q3_sess *q, vox_status *st) {
    const q3_lm *lm = q->lm;
    if (q->stopped) return Q3_STOP;
    if (q->have_code0) return Q3_FRAME;
    const int64_t f = q->n_frames;
    if (f >= q3_sess_limit(q) - 1) { /* the N-th group-0 code would never be expanded */
        q->stopped = 1;
        return Q3_STOP;
    }
    if (q->pending_adv) {
        if (!q3_trailing_ready(q, f - 1)) return Q3_NEED_TEXT;
        if ((*st = reserve_positions(q, q->kv.len + 1))) return Q3_ERROR;
        double t0 = vx_now_ms();
        q3_talker_step(q, q->codes + (f - 1) * lm->n_groups, q3_trailing(q, f - 1));
        q->gen.talker_ms += vx_now_ms() - t0;
        if ((*st = q->gpu_status)) return Q3_ERROR;
        q->tot_steps++;
        q->pending_adv = 0;
    }
    /* a NaN or infinite logit comes only from non-finite weights (or a corrupt voice): sampling on it
     * would pick garbage codes silently */
    for (int64_t i = 0; i < lm->vocab; i++)
        if (!isfinite(q->logits[i])) {
            *st = vox_set_error(VOX_ERR_FORMAT, "the talker computed a non-finite logit at frame %lld: the model's "
                                "weights or the voice are not finite (vox inspect --check MODEL)", (long long)f);
            return Q3_ERROR;
        }
    memcpy(q->scores, q->logits, (size_t)lm->vocab * sizeof(float));
    q3_process_talker(q->scores, lm->vocab, q->distinct, q->n_distinct, q->n_hist, q->o->repetition_penalty,
                      lm->codec_eos, 2, &q->talker_sp, &q->swt);
    const int32_t c = q3_choose(q->scores, lm->vocab, q->talker_sp.do_sample, q->s->seed, (uint32_t)f, 0, &q->swt);
    q->n_hist++;
    if (!q->seen[c]) {
        q->seen[c] = 1;
        q->distinct[q->n_distinct++] = c;
    }
    if (c == lm->codec_eos) {
        q->stopped = 1;
        return Q3_STOP;
    }
    q->code0 = c;
    q->have_code0 = 1;
    return Q3_FRAME;
}

int q3_next_frame(q3_sess *q, vox_status *st) {
    int r = next_code0(q, st);
    if (r != Q3_FRAME) return r;
    if ((*st = reserve_frames(q))) return Q3_ERROR;
    int32_t *codes = q->codes + q->n_frames * q->lm->n_groups;
    codes[0] = q->code0;
    double t0 = vx_now_ms();
    q3_predict(q, codes, 0, NULL);
    q->gen.predictor_ms += vx_now_ms() - t0;
    if ((*st = q->gpu_status)) return Q3_ERROR;
    q->have_code0 = 0;
    q->pending_adv = 1;
    q->n_frames++;
    q->gen.frames++;
    return Q3_FRAME;
}

int q3_peek(q3_sess *q, vox_status *st) { return next_code0(q, st); }
