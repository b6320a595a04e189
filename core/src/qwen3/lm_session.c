/* The family's sessions: pulling audio chunks (text as it arrives, frames in chunks, the stream or
 * reference decoder), cancellation, statistics, codes, and the verification entry points (prompt,
 * teacher forcing). */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../error.h"
#include "../family.h"
#include "codec.h"
#include "lm_internal.h"
#include "gpu_lm.h"

static void join_worker(q3_sess *q);

static void sess_free(q3_sess *q) {
    if (!q) return;
    join_worker(q);
    free(q->dec_codes);
    q3_stream_free(q->stream);
    free(q->instr_ids), free(q->tmpl), free(q->closed), free(q->ids), free(q->S), free(q->semb), free(q->twork), free(q->prompt);
    vx_q3_gsess_free(q->gpu);
    q3_kv_free(&q->kv);
    q3_kv_free(&q->pkv);
    q3_scratch_free(&q->tsc);
    q3_scratch_free(&q->psc);
    free(q->x), free(q->hid), free(q->hidden), free(q->logits), free(q->scores), free(q->ftmp);
    free(q->pin), free(q->px), free(q->pout), free(q->plogits);
    q3_sample_work_free(&q->swt);
    q3_sample_work_free(&q->swp);
    free(q->codes), free(q->seen), free(q->distinct), free(q->pcm);
    free(q);
}

vox_status q3_session_init(vox_session *s) {
    const q3_model *m = s->engine->impl;
    if (!m->lm) return vox_set_error(VOX_ERR_UNSUPPORTED, "this model has no language model");
    q3_sess *q = calloc(1, sizeof *q);
    if (!q) return vox_set_error(VOX_ERR_OUT_OF_MEMORY, "out of memory");
    q->s = s;
    q->m = m;
    q->lm = m->lm;
    q->pool = s->engine->pool;
    const q3_options *p = q->o = s->opts;
    q->talker_sp = (q3_sampler){p->do_sample != 0, p->temperature, p->top_k, p->top_p};
    q->pred_sp = (q3_sampler){p->subtalker_do_sample != 0, p->subtalker_temperature, p->subtalker_top_k,
                              p->subtalker_top_p};
    vox_status st;
    if ((st = q3_sess_alloc(q)) || (st = q3_sess_resolve(q))) {
        sess_free(q);
        return st;
    }
    /* With the LM on a GPU and the decoder on the CPU (codec=cpu, or the decoder did not fit), chunk k
     * is decoded while a worker generates chunk k+1; a decoder on the GPU runs in the LM's sequence.
     * VOX_CODEC_OVERLAP=0 keeps the two in sequence. */
    const char *ov = getenv("VOX_CODEC_OVERLAP");
    q->overlap = q->gpu != NULL && q->m->codec->gpu == NULL && !(ov && !strcmp(ov, "0"));
    s->impl = q;
    return VOX_OK;
}

static void report(q3_sess *q) {
    q3_stats *d = &q->delta;
    if (!q->worker_on) {   /* the generation's own counters, while no worker writes them */
        d->talker_ms += q->gen.talker_ms, d->predictor_ms += q->gen.predictor_ms;
        d->frames += q->gen.frames;
        memset(&q->gen, 0, sizeof q->gen);
    }
    q->tot_prefill += d->prefill_ms, q->tot_talker += d->talker_ms, q->tot_pred += d->predictor_ms;
    q->tot_dec += d->decoder_ms, q->tot_frames += (int64_t)d->frames;
    vox_engine *e = q->s->engine;
    if (d->prefills || d->prefill_ms > 0) vx_stats_stage(e, Q3_ST_PREFILL, d->prefill_ms, d->prefills);
    if (d->frames || d->talker_ms > 0) {
        vx_stats_stage(e, Q3_ST_TALKER, d->talker_ms, d->frames);
        vx_stats_stage(e, Q3_ST_PREDICTOR, d->predictor_ms, d->frames);
    }
    if (d->decoded || d->decoder_ms > 0) vx_stats_stage(e, Q3_ST_DECODER, d->decoder_ms, d->decoded);
    memset(d, 0, sizeof *d);
}

void q3_session_free(vox_session *s) {
    q3_sess *q = s->impl;
    if (!q) return;
    join_worker(q);
    report(q);
    const char *prof = getenv("VOX_PROFILE");
    if (prof && prof[0] && strcmp(prof, "0") != 0) {
        const double f = q->tot_frames > 0 ? (double)q->tot_frames : 1.0;
        const double audio_ms = (double)q->tot_samples * 1000.0 / (double)q3_codec_sample_rate(q->m->codec);
        const double total = q->tot_prefill + q->tot_talker + q->tot_pred + q->tot_dec;
        fprintf(stderr,
                "vox profile: %lld frames, prompt %lld rows; prefill %.1f ms; per frame: talker %.2f ms, predictor "
                "%.2f ms, decoder %.2f ms; total %.1f ms for %.1f ms of audio (RTF %.3f)\n",
                (long long)q->tot_frames, (long long)q->n_prompt, q->tot_prefill, q->tot_talker / f, q->tot_pred / f,
                q->tot_dec / f, total, audio_ms, audio_ms > 0 ? total / audio_ms : 0.0);
        if (q->n_overlapped)   /* then the stages' sum overstates the time taken */
            fprintf(stderr, "vox profile: %lld of %lld chunks decoded on the CPU while the GPU generated the next\n",
                    (long long)q->n_overlapped, (long long)q->n_chunks);
    }
    sess_free(q);
    s->impl = NULL;
}

static vox_status ensure_pcm(q3_sess *q, size_t n) {
    if (n <= q->pcm_cap) return VOX_OK;
    float *p = realloc(q->pcm, n * sizeof *p);
    if (!p) return vox_set_error(VOX_ERR_OUT_OF_MEMORY, "out of memory");
    q->pcm = p;
    q->pcm_cap = n;
    return VOX_OK;
}

/* text and prefill: VOX_OK with *need_text set when the prompt cannot be built yet */
static vox_status prepare(q3_sess *q, int *need_text) {
    vox_status st;
    *need_text = 0;
    if ((st = q3_sess_update_text(q))) return st;
    if (q->prefilled) return VOX_OK;
    if (!q3_sess_can_prefill(q)) {
        *need_text = 1;
        return VOX_OK;
    }
    if ((st = q3_sess_build_prompt(q))) return st;
    double t0 = vx_now_ms();
    st = q3_prefill(q);
    q->delta.prefill_ms += vx_now_ms() - t0;
    q->delta.prefills++;
    return st;
}

/* Frames [first, first + n) (their codes: `codes`) through the streaming decoder. */
static vox_status decode_stream(q3_sess *q, const int32_t *codes, int64_t first, int64_t n, vox_chunk *out) {
    const q3_codec *codec = q->m->codec;
    vox_status st;
    const int64_t spf = q3_codec_samples_per_frame(codec), G = q->lm->n_groups;
    double t0 = vx_now_ms();
    if (!q->stream) {
        if ((st = q3_stream_create(codec, &q->stream))) return st;
        int64_t ctx = q->o->decoder_context;
        if (ctx < 0 || ctx > q->n_ref) ctx = q->n_ref;
        if (ctx > 0 &&
            (st = q3_stream_prime_cached(q->m->primes, q->stream, q->pool, q->ref_codes + (q->n_ref - ctx) * G, ctx)))
            return st;
    }
    if ((st = ensure_pcm(q, (size_t)(n * spf)))) return st;
    if ((st = q3_stream_push(q->stream, q->pool, codes, n, q->pcm))) return st;
    q->delta.decoder_ms += vx_now_ms() - t0;
    q->delta.decoded += (uint64_t)n;
    out->kind = VOX_CHUNK_AUDIO;
    out->samples = q->pcm;
    out->n_samples = (size_t)(n * spf);
    out->sample_rate = q3_codec_sample_rate(codec);
    out->first_frame = (uint32_t)first;
    out->n_frames = (uint32_t)n;
    q->tot_samples += (int64_t)out->n_samples;
    return VOX_OK;
}

/* The official scheme: reference + generated codes decoded together, the reference part cut. */
static vox_status decode_reference(q3_sess *q, vox_chunk *out) {
    const q3_codec *codec = q->m->codec;
    const int64_t spf = q3_codec_samples_per_frame(codec), G = q->lm->n_groups;
    const int64_t nr = q->mode == Q3_ICL ? q->n_ref : 0, total = nr + q->n_frames;
    vox_status st;
    double t0 = vx_now_ms();
    int32_t *all = malloc((size_t)(total * G) * sizeof *all);
    if (!all) return vox_set_error(VOX_ERR_OUT_OF_MEMORY, "out of memory");
    if (nr) memcpy(all, q->ref_codes, (size_t)(nr * G) * sizeof *all);
    memcpy(all + nr * G, q->codes, (size_t)(q->n_frames * G) * sizeof *all);
    const int64_t ns = total * spf;
    if ((st = ensure_pcm(q, (size_t)ns)) || (st = q3_codec_decode_reference(codec, q->pool, all, total, q->pcm))) {
        free(all);
        return st;
    }
    free(all);
    const int64_t cut = nr ? q3_reference_cut(nr, total, ns) : 0;
    q->delta.decoder_ms += vx_now_ms() - t0;
    q->delta.decoded += (uint64_t)total;
    out->kind = VOX_CHUNK_AUDIO;
    out->samples = q->pcm + cut;
    out->n_samples = (size_t)(ns - cut);
    out->sample_rate = q3_codec_sample_rate(codec);
    out->first_frame = 0;
    out->n_frames = (uint32_t)q->n_frames;
    out->is_last = 1;
    q->tot_samples += (int64_t)out->n_samples;
    return VOX_OK;
}

/* The frames of one chunk: up to `want` (fewer at EOS, the limit or missing text), then whether more
 * follow (q3_peek: is this chunk the last?). Q3_ERROR with *st on failure or cancellation. */
static int generate_chunk(q3_sess *q, int64_t want, vox_status *st) {
    const int64_t first = q->n_frames;
    int r = Q3_FRAME;
    while (q->n_frames - first < want) {
        if (atomic_load(&q->s->cancelled)) {
            *st = vox_set_error(VOX_ERR_CANCELLED, "the session was cancelled");
            return Q3_ERROR;
        }
        r = q3_next_frame(q, st);
        if (r == Q3_ERROR) return r;
        if (r != Q3_FRAME) break;
    }
    if (r == Q3_FRAME) r = q3_peek(q, st);
    return r;
}

/* The worker: the next chunk's frames, in the pulling thread's floating-point mode. */
static void *chunk_worker(void *arg) {
    q3_sess *q = arg;
    vx_fp_fast();
    q->worker_r = generate_chunk(q, q->o->chunk_frames, &q->worker_st);
    if (q->worker_r == Q3_ERROR) snprintf(q->worker_err, sizeof q->worker_err, "%s", vox_last_error());
    return NULL;
}

/* Waits for the worker (if any); its statistics become reportable again. */
static void join_worker(q3_sess *q) {
    if (!q->worker_on) return;
    pthread_join(q->worker, NULL);
    q->worker_on = 0;
}

/* Starts generating the chunk after this one on a worker, when the session may overlap: the LM on a
 * GPU, the decoder on the CPU, the text complete (generation never waits for text, so the worker never
 * races the caller's feeding) and the streaming decoder. The chunk being decoded keeps its own copy of
 * its codes (the worker may grow q->codes). Returns the codes to decode. */
static const int32_t *overlap_next(q3_sess *q, int64_t first, int64_t n) {
    const int64_t G = q->lm->n_groups;
    const int32_t *codes = q->codes + first * G;
    if (!q->overlap || !q->final || q->o->decoder == Q3_DECODER_REFERENCE) return codes;
    if ((size_t)(n * G) > q->dec_cap) {
        int32_t *c = realloc(q->dec_codes, (size_t)(n * G) * sizeof *c);
        if (!c) return codes;   /* no overlap this time: decoded in sequence */
        q->dec_codes = c;
        q->dec_cap = (size_t)(n * G);
    }
    memcpy(q->dec_codes, codes, (size_t)(n * G) * sizeof *codes);
    q->worker_first = q->n_frames;
    q->worker_st = VOX_OK;
    if (pthread_create(&q->worker, NULL, chunk_worker, q) != 0) return codes;
    q->worker_on = q->ahead = 1;
    q->n_overlapped++;
    return q->dec_codes;
}

static vox_status pull(q3_sess *q, vox_chunk *out) {
    vox_status st;
    int need_text;
    if (q->spent) return vox_set_error(VOX_ERR_INVALID_ARGUMENT, "the session was used for teacher forcing");
    if (q->finished) {
        out->kind = VOX_CHUNK_END;
        return VOX_OK;
    }
    const int reference = q->o->decoder == Q3_DECODER_REFERENCE;
    int64_t first;
    int r;
    if (q->ahead) {   /* this chunk's frames were generated while the last one was decoded */
        join_worker(q);
        q->ahead = 0;
        first = q->worker_first;
        r = q->worker_r;
        if (r == Q3_ERROR) return vox_set_error(q->worker_st, "%s", q->worker_err);
    } else {
        if ((st = prepare(q, &need_text))) return st;
        if (need_text) {
            out->kind = VOX_CHUNK_NEED_TEXT;
            return VOX_OK;
        }
        first = q->n_frames;
        r = generate_chunk(q, reference ? INT64_MAX : q->o->chunk_frames, &st);
        if (r == Q3_ERROR) return st;
    }
    if (reference) {
        if (r == Q3_NEED_TEXT) {
            out->kind = VOX_CHUNK_NEED_TEXT;
            return VOX_OK;
        }
        q->finished = 1;
        if (q->n_frames == 0) {
            out->kind = VOX_CHUNK_END;
            return VOX_OK;
        }
        return decode_reference(q, out);
    }
    const int64_t n = q->n_frames - first;
    if (n == 0) {
        if (r == Q3_STOP) {
            q->finished = 1;
            out->kind = VOX_CHUNK_END;
        } else {
            out->kind = VOX_CHUNK_NEED_TEXT;
        }
        return VOX_OK;
    }
    const int32_t *codes = r == Q3_FRAME ? overlap_next(q, first, n) : q->codes + first * q->lm->n_groups;
    q->n_chunks++;
    if ((st = decode_stream(q, codes, first, n, out))) return st;
    if (r == Q3_STOP) {
        out->is_last = 1;
        q->finished = 1;
    }
    return VOX_OK;
}

vox_status q3_session_pull(vox_session *s, vox_chunk *out) {
    q3_sess *q = s->impl;
    uint32_t fp = vx_fp_fast();
    vox_status st = pull(q, out);
    vx_fp_restore(fp);
    report(q);
    if (st != VOX_OK) memset(out, 0, sizeof *out);
    return st;
}

size_t q3_session_used(const vox_session *s) {
    const q3_sess *q = s->impl;
    return q ? q3_sess_used(q) : s->text_len;
}

vox_status q3_session_output(vox_session *s, const char *name, vox_array *out) {
    q3_sess *q = s->impl;
    (void)name;   /* "codes", the only one (family.c's list) */
    join_worker(q);   /* the codes so far, the chunk being generated ahead included */
    static const int32_t none[1] = {0};
    out->name = "codes";
    out->dtype = VOX_DTYPE_I32;
    out->ndim = 2;
    out->shape[0] = q->n_frames;
    out->shape[1] = q->lm->n_groups;
    out->data = q->codes ? q->codes : none;
    return VOX_OK;
}

vox_status q3_run_prompt(vox_session *s, vox_trace *t) {
    q3_sess *q = s->impl;
    vox_status st;
    uint32_t fp = vx_fp_fast();
    if (!(st = q3_sess_update_text(q))) st = q3_sess_build_prompt(q);
    vx_fp_restore(fp);
    if (st) return st;
    int64_t shape[2] = {q->n_prompt, q->lm->talker.hidden};
    return vx_trace_put(t, "prompt", VOX_DTYPE_F32, 2, shape, q->prompt);
}

static vox_status teacher_force(q3_sess *q, const int32_t *codes, size_t n_frames, float *tl, float *pl) {
    const q3_lm *lm = q->lm;
    const int64_t G = lm->n_groups, V = lm->vocab, PV = lm->pvocab;
    vox_status st;
    if (q->spent || q->prefilled || q->n_frames)
        return vox_set_error(VOX_ERR_INVALID_ARGUMENT, "teacher forcing needs a fresh session");
    for (size_t i = 0; i < n_frames * (size_t)G; i++)
        if (codes[i] < 0 || codes[i] >= (i % (size_t)G ? PV : V))
            return vox_set_error(VOX_ERR_INVALID_ARGUMENT, "code %d (frame %zu, group %zu) is out of range", codes[i],
                                 i / (size_t)G, i % (size_t)G);
    q->spent = 1;
    if ((st = q3_sess_update_text(q)) || (st = q3_sess_build_prompt(q))) return st;
    if ((st = q3_kv_init(&q->kv, &lm->talker, q->n_prompt + (int64_t)n_frames + 1)) || (st = q3_prefill(q))) return st;
    memcpy(tl, q->logits, (size_t)V * sizeof *tl);
    int32_t *frame = malloc((size_t)G * sizeof *frame);
    if (!frame) return vox_set_error(VOX_ERR_OUT_OF_MEMORY, "out of memory");
    for (size_t f = 0; f < n_frames; f++) {
        if (atomic_load(&q->s->cancelled)) {
            free(frame);
            return vox_set_error(VOX_ERR_CANCELLED, "the session was cancelled");
        }
        memcpy(frame, codes + f * (size_t)G, (size_t)G * sizeof *frame);
        q->n_frames = (int64_t)f;
        q3_predict(q, frame, 1, pl + f * (size_t)((G - 1) * PV));
        q3_talker_step(q, frame, q3_trailing(q, (int64_t)f));
        memcpy(tl + (f + 1) * (size_t)V, q->logits, (size_t)V * sizeof *tl);
        if (q->gpu_status) break;
    }
    free(frame);
    if (q->gpu_status) return q->gpu_status;
    q->n_frames = 0;
    return VOX_OK;
}

/* teacher_force: codes (I32 [frames][groups]) instead of sampling; the raw talker logits
 * [frames + 1][vocab] and predictor logits [frames][groups - 1][codebook] of every step. */
vox_status q3_run_teacher_force(vox_session *s, const vox_array *codes, vox_trace *t) {
    q3_sess *q = s->impl;
    const int64_t G = q->lm->n_groups, V = q->lm->vocab, PV = q->lm->pvocab;
    if (!codes || codes->dtype != VOX_DTYPE_I32 || codes->ndim != 2 || codes->shape[1] != G)
        return vox_set_error(VOX_ERR_INVALID_ARGUMENT, "teacher_force: needs codes, I32 [frames][%lld]", (long long)G);
    const size_t n = (size_t)codes->shape[0];
    float *tl = malloc((n + 1) * (size_t)V * sizeof *tl), *pl = malloc((n ? n : 1) * (size_t)((G - 1) * PV) * sizeof *pl);
    vox_status st = tl && pl ? VOX_OK : vox_set_error(VOX_ERR_OUT_OF_MEMORY, "out of memory");
    if (st == VOX_OK) {
        uint32_t fp = vx_fp_fast();
        st = teacher_force(q, codes->data, n, tl, pl);
        vx_fp_restore(fp);
    }
    int64_t ts[2] = {(int64_t)n + 1, V}, ps[3] = {(int64_t)n, G - 1, PV};
    if (st == VOX_OK) st = vx_trace_put(t, "talker_logits", VOX_DTYPE_F32, 2, ts, tl);
    if (st == VOX_OK) st = vx_trace_put(t, "predictor_logits", VOX_DTYPE_F32, 3, ps, pl);
    free(tl);
    free(pl);
    return st;
}
