/* Voice creation for Qwen3-TTS-12Hz Base models (vox.reference.qwen3.voice = the official
 * create_voice_clone_prompt for one recording):
 *
 *   mono recording at any rate (voice.c averages the channels)
 *   -> resample.c         to 24 kHz when it is not (the reference's Kaiser-sinc, librosa's lengths)
 *   -> mel.c + ecapa.c    speaker embedding (x-vector) [enc_dim]
 *   -> mimi.c + rvq.c     reference codes [ceil(samples / 1920)][16]   (ICL voices only)
 *   -> tokenizer          ids of "<|im_start|>assistant\n{ref_text}<|im_end|>\n" (ICL voices only)
 *
 * The parts bind their weights in place at load; the extended codebooks (|e|^2 appended) are built on
 * the first clone. Everything runs on the engine's pool and gives the same bits for any thread count. */
#include "voice_encoder.h"

#include <stdlib.h>
#include <string.h>

#include "../error.h"
#include "../tmod.h"
#include "tokenizer.h"

#define SAMPLE_RATE 24000

struct q3_venc {
    q3_mel *mel;
    q3_ecapa *ecapa;
    q3_mimi *mimi;
};

vox_status q3_venc_load(const q3_model *m, q3_venc **out) {
    *out = NULL;
    if (strcmp(m->variant, "base") != 0) return VOX_OK; /* only Base models clone voices */
    q3_venc *v = calloc(1, sizeof *v);
    if (!v) return vox_set_error(VOX_ERR_OUT_OF_MEMORY, "out of memory");
    vox_status st = q3_mel_create(&v->mel);
    if (st == VOX_OK) st = q3_ecapa_load(m, &v->ecapa);
    if (st == VOX_OK) st = q3_mimi_load(m, &v->mimi);
    if (st != VOX_OK) {
        q3_venc_free(v);
        return st;
    }
    *out = v;
    return VOX_OK;
}

void q3_venc_free(q3_venc *v) {
    if (!v) return;
    q3_mel_free(v->mel);
    q3_ecapa_free(v->ecapa);
    q3_mimi_free(v->mimi);
    free(v);
}

int32_t q3_venc_embedding_dim(const q3_venc *v) { return v ? q3_ecapa_dim(v->ecapa) : 0; }
const q3_mel *q3_venc_mel(const q3_venc *v) { return v ? v->mel : NULL; }
const q3_ecapa *q3_venc_ecapa(const q3_venc *v) { return v ? v->ecapa : NULL; }
const q3_mimi *q3_venc_mimi(const q3_venc *v) { return v ? v->mimi : NULL; }

/* Fewest 24 kHz samples whose mel spectrogram has `frames` frames (and that reflect padding accepts). */
static int64_t min_samples(int64_t frames) {
    int64_t pad = (Q3_MEL_NFFT - Q3_MEL_HOP) / 2, n = Q3_MEL_NFFT - 2 * pad + (frames - 1) * Q3_MEL_HOP;
    return n > pad + 1 ? n : pad + 1;
}

static vox_status check_length(const q3_venc *v, int64_t n) {
    int64_t frames = q3_ecapa_min_frames(v->ecapa), need = min_samples(frames);
    if (n < need)
        return vox_set_error(VOX_ERR_INVALID_ARGUMENT,
                             "reference audio too short: %lld samples at 24 kHz (%.3f s), the speaker encoder needs at "
                             "least %lld (%lld mel frames); the official code fails on it too",
                             (long long)n, (double)n / SAMPLE_RATE, (long long)need, (long long)frames);
    return VOX_OK;
}

vox_status q3_speaker_embedding(const q3_venc *v, vx_pool *pool, const float *wav24k, int64_t n, float *emb) {
    if (!v) return vox_set_error(VOX_ERR_UNSUPPORTED, "this model has no speaker encoder (Base models have one)");
    vox_status st = check_length(v, n);
    if (st != VOX_OK) return st;
    int64_t frames = q3_mel_frames(n);
    float *mel = malloc((size_t)(frames * Q3_MEL_BINS) * sizeof *mel);
    if (!mel) return vox_set_error(VOX_ERR_OUT_OF_MEMORY, "out of memory (%lld mel frames)", (long long)frames);
    st = q3_mel_spectrogram(v->mel, pool, wav24k, n, mel);
    if (st == VOX_OK) st = q3_ecapa_forward(v->ecapa, pool, mel, frames, emb);
    free(mel);
    return st;
}

vox_status q3_encode_codes(const q3_venc *v, vx_pool *pool, const float *wav24k, int64_t n, int32_t **codes,
                           int64_t *n_frames) {
    *codes = NULL, *n_frames = 0;
    if (!v) return vox_set_error(VOX_ERR_UNSUPPORTED, "this model cannot encode reference audio (Base models can)");
    if (n < 1) return vox_set_error(VOX_ERR_INVALID_ARGUMENT, "empty audio");
    float *latent = NULL;
    int64_t t = 0;
    vox_status st = q3_mimi_latent(v->mimi, pool, wav24k, n, &latent, &t);
    if (st != VOX_OK) return st;
    int64_t groups = q3_mimi_groups(v->mimi), keep = q3_mimi_frames(v->mimi, n);
    if (keep > t) keep = t;
    int32_t *c = malloc((size_t)((t ? t : 1) * groups) * sizeof *c);
    if (!c) {
        free(latent);
        return vox_set_error(VOX_ERR_OUT_OF_MEMORY, "out of memory");
    }
    st = q3_mimi_quantize(v->mimi, pool, latent, keep, c, NULL);
    free(latent);
    if (st != VOX_OK) {
        free(c);
        return st;
    }
    *codes = c, *n_frames = keep;
    return VOX_OK;
}

/* ids of the official reference-text template (Qwen3TTSModel._build_ref_text). */
static vox_status ref_text_tokens(const q3_model *m, const char *ref_text, int32_t **ids, size_t *n) {
    static const char pre[] = "<|im_start|>assistant\n", post[] = "<|im_end|>\n";
    size_t lt = strlen(ref_text), len = sizeof pre - 1 + lt + sizeof post - 1;
    char *s = malloc(len + 1);
    if (!s) return vox_set_error(VOX_ERR_OUT_OF_MEMORY, "out of memory");
    memcpy(s, pre, sizeof pre - 1);
    memcpy(s + sizeof pre - 1, ref_text, lt);
    memcpy(s + sizeof pre - 1 + lt, post, sizeof post);
    vox_status st = q3_tokenize(m->tok, s, len, ids, n);
    free(s);
    if (st != VOX_OK) {
        char msg[512];
        strncpy(msg, vox_last_error(), sizeof msg - 1);
        msg[sizeof msg - 1] = '\0';
        return vox_set_error(st, "cloning a voice with its transcript (ICL): tokenizing the transcript failed: %s "
                             "(x_vector_only needs no transcript)", msg);
    }
    return VOX_OK;
}

vox_status q3_voice_clone(vox_engine *e, const float *mono, size_t n, int32_t sample_rate, const vox_clone_params *p,
                          int x_vector_only, vox_voice *v) {
    const q3_model *m = e->impl;
    const q3_venc *venc = m->venc;
    if (!venc)
        return vox_set_error(VOX_ERR_UNSUPPORTED, "%s has no voice encoder: cloning a voice needs a Base model",
                             vox_model_path(m->file));
    vox_status st = VOX_OK;
    int32_t *ids = NULL, *codes = NULL;
    size_t n_ids = 0;
    float *wav = NULL, *emb = NULL;
    int64_t n24 = 0, n_frames = 0;
    bool icl = !x_vector_only;
    if (icl && (!p->ref_text || !*p->ref_text))
        return vox_set_error(VOX_ERR_INVALID_ARGUMENT, "cloning a voice needs the transcript of the recording "
                             "(ref_text), or x_vector_only for a voice from the speaker embedding alone");
    /* the transcript first: it is cheap, and a failure should not cost the encoders' time */
    if (icl && (st = ref_text_tokens(m, p->ref_text ? p->ref_text : "", &ids, &n_ids)) != VOX_OK) goto fail;
    if (sample_rate != SAMPLE_RATE) {
        /* the official checks nothing before resampling; the speaker encoder's minimum is checked below */
        if ((st = vx_resample_pool(e->pool, mono, (int64_t)n, sample_rate, SAMPLE_RATE, &wav, &n24)) != VOX_OK) goto fail;
    }
    const float *w24 = wav ? wav : mono;
    if (!wav) n24 = (int64_t)n;
    if ((st = check_length(venc, n24)) != VOX_OK) goto fail;
    int32_t dim = q3_venc_embedding_dim(venc);
    if (!(emb = malloc((size_t)dim * sizeof *emb))) {
        st = vox_set_error(VOX_ERR_OUT_OF_MEMORY, "out of memory");
        goto fail;
    }
    if ((st = q3_speaker_embedding(venc, e->pool, w24, n24, emb)) != VOX_OK) goto fail;
    if (icl && (st = q3_encode_codes(venc, e->pool, w24, n24, &codes, &n_frames)) != VOX_OK) goto fail;
    free(wav);
    wav = NULL;
    int64_t es[1] = {dim}, cs[2] = {n_frames, q3_mimi_groups(venc->mimi)}, ts[1] = {(int64_t)n_ids};
    st = vx_voice_put_array(v, "speaker_embedding", VOX_DTYPE_F32, 1, es, emb);
    emb = NULL;
    if (icl) {
        if (st == VOX_OK) st = vx_voice_put_array(v, "ref_codes", VOX_DTYPE_I32, 2, cs, codes);
        else free(codes);
        codes = NULL;
        if (st == VOX_OK) st = vx_voice_put_array(v, "ref_text_tokens", VOX_DTYPE_I32, 1, ts, ids);
        else free(ids);
        ids = NULL;
        if (st == VOX_OK) st = vx_voice_put_text(v, "ref_text", p->ref_text);
    }
    return st;
fail:
    free(ids), free(codes), free(wav), free(emb);
    return st;
}
