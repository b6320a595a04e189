/* The reference recording as f5_tts.infer.utils_infer prepares it (vox.reference.f5.refaudio and
 * pipeline.prepare_reference are the spec):
 *
 *  preprocess_ref_audio_text (pydub on 16-bit PCM, millisecond arithmetic):
 *   length in ms   round(1000 * frames / rate) (half to even)      seg[a:b] frames int(a * rate / 1000) ..
 *   rms            int(sqrt(sum of squares / count))                dBFS 20 log(rms / 32768) / log(10)
 *   1. split_on_silence(1000 ms, -50 dBFS, keep 1000 ms, seek 10 ms); pieces appended while the result is
 *      at most 6 s or stays within 12 s;  2. if still > 12 s: the same with 100 ms, -40 dBFS;
 *   3. if still > 12 s: its first 12000 ms;  4. leading / trailing silence in 10 ms chunks below -42 dBFS
 *      cut;  5. + 50 ms of silence (made at 11025 Hz by pydub: audioop.ratecv's length at the rate).
 *  infer_batch_process: samples / 32768; rms; below target_rms scaled up to it (and the output scaled
 *  back); resampled to 24 kHz (torchaudio's Resample); log-mel. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../dsp/sinc_resample.h"
#include "../error.h"
#include "f5.h"

#define MAX_AMP 32768.0

/* A pydub AudioSegment of mono 16-bit frames: a view [a, a + n) of the recording with its square sums. */
typedef struct seg {
    const int16_t *x;    /* NULL: silence */
    int64_t n, rate;
    const int64_t *cum;  /* cum[i]: sum of squares of x[0, i) (of the recording; x may start inside it) */
    int64_t base;        /* x[0] is sample `base` of the recording */
} seg;

static int64_t seg_ms(const seg *s) { return (int64_t)nearbyint(1000.0 * ((double)s->n / (double)s->rate)); }
static int64_t frame_of(const seg *s, double ms) { return (int64_t)(ms * ((double)s->rate / 1000.0)); }

static void span(const seg *s, int64_t a, int64_t b, int64_t *fa, int64_t *fb, int64_t *pad) {
    int64_t n = seg_ms(s);
    if (a > n) a = n;
    if (b > n) b = n;
    *fa = frame_of(s, (double)a);
    *fb = frame_of(s, (double)b);
    int64_t end = *fb < s->n ? *fb : s->n;
    int64_t have = end - *fa > 0 ? end - *fa : 0;
    *pad = *fb - *fa - have > 0 ? *fb - *fa - have : 0;
}

static double sq_sum(const seg *s, int64_t a, int64_t b) {
    return s->x ? (double)(s->cum[s->base + b] - s->cum[s->base + a]) : 0.0;
}

static int64_t seg_rms(const seg *s, int64_t a, int64_t b) {
    int64_t fa, fb, pad;
    span(s, a, b, &fa, &fb, &pad);
    int64_t end = fb < s->n ? fb : s->n;
    if (end < fa) end = fa;
    int64_t count = end - fa + pad;
    if (count <= 0) return 0;
    return (int64_t)sqrt(sq_sum(s, fa, end) / (double)count);
}

static double seg_dbfs(const seg *s, int64_t a, int64_t b) {
    int64_t r = seg_rms(s, a, b);
    return r == 0 ? -INFINITY : 20.0 * (log((double)r / MAX_AMP) / log(10.0));
}

typedef struct range {
    int64_t a, b;
} range;

typedef struct ranges {
    range *v;
    int64_t n, cap;
    int failed;
} ranges;

static void push_range(ranges *r, int64_t a, int64_t b) {
    if (r->failed) return;
    if (r->n == r->cap) {
        int64_t cap = r->cap ? 2 * r->cap : 16;
        range *v = realloc(r->v, (size_t)cap * sizeof *v);
        if (!v) {
            r->failed = 1;
            return;
        }
        r->v = v, r->cap = cap;
    }
    r->v[r->n++] = (range){a, b};
}

static void detect_silence(const seg *s, int64_t min_len, double thresh_db, int64_t step, ranges *out) {
    int64_t n = seg_ms(s);
    if (n < min_len) return;
    const double thresh = pow(10.0, thresh_db / 20.0) * MAX_AMP;
    const int64_t last = n - min_len;
    int have = 0;
    int64_t prev = 0, cur = 0;
    for (int64_t i = 0;; i += step) {
        int64_t st;
        if (i <= last) st = i;
        else if (last % step && i - step < last) st = last;   /* the last window, once */
        else break;
        if ((double)seg_rms(s, st, st + min_len) <= thresh) {
            if (!have) {
                cur = prev = st;
                have = 1;
            } else {
                if (st != prev + step && st > prev + min_len) {
                    push_range(out, cur, prev + min_len);
                    cur = st;
                }
                prev = st;
            }
        }
        if (st == last) break;
    }
    if (have) push_range(out, cur, prev + min_len);
}

static void detect_nonsilent(const seg *s, int64_t min_len, double thresh_db, int64_t step, ranges *out) {
    ranges sil = {0};
    detect_silence(s, min_len, thresh_db, step, &sil);
    int64_t n = seg_ms(s);
    if (sil.failed) out->failed = 1;
    else if (!sil.n) push_range(out, 0, n);
    else if (!(sil.v[0].a == 0 && sil.v[0].b == n)) {
        int64_t prev_end = 0;
        int64_t first = out->n;
        for (int64_t i = 0; i < sil.n; i++) {
            push_range(out, prev_end, sil.v[i].a);
            prev_end = sil.v[i].b;
        }
        if (sil.v[sil.n - 1].b != n) push_range(out, prev_end, n);
        if (!out->failed && out->n > first && out->v[first].a == 0 && out->v[first].b == 0) {
            memmove(out->v + first, out->v + first + 1, (size_t)(out->n - first - 1) * sizeof *out->v);
            out->n--;
        }
    }
    free(sil.v);
}

static int64_t floordiv2(int64_t x) { return x >= 0 ? x / 2 : -((-x + 1) / 2); }

/* The pieces of split_on_silence as frame ranges [fa, fb) of s plus zero padding past its end. */
typedef struct piece {
    int64_t fa, fb, pad;
} piece;

static vox_status split_on_silence(const seg *s, int64_t min_len, double thresh_db, int64_t keep, int64_t step,
                                   piece **out, int64_t *n_out) {
    ranges r = {0};
    detect_nonsilent(s, min_len, thresh_db, step, &r);
    if (r.failed) {
        free(r.v);
        return vox_set_error(VOX_ERR_OUT_OF_MEMORY, "out of memory");
    }
    for (int64_t i = 0; i < r.n; i++) r.v[i].a -= keep, r.v[i].b += keep;
    for (int64_t i = 0; i + 1 < r.n; i++)
        if (r.v[i + 1].a < r.v[i].b) {
            r.v[i].b = floordiv2(r.v[i].b + r.v[i + 1].a);
            r.v[i + 1].a = r.v[i].b;
        }
    piece *p = malloc((size_t)(r.n ? r.n : 1) * sizeof *p);
    if (!p) {
        free(r.v);
        return vox_set_error(VOX_ERR_OUT_OF_MEMORY, "out of memory");
    }
    int64_t len = seg_ms(s);
    for (int64_t i = 0; i < r.n; i++) {
        int64_t a = r.v[i].a > 0 ? r.v[i].a : 0, b = r.v[i].b < len ? r.v[i].b : len;
        span(s, a, b, &p[i].fa, &p[i].fb, &p[i].pad);
        if (p[i].fb > s->n) p[i].fb = s->n;
        if (p[i].fb < p[i].fa) p[i].fb = p[i].fa;
    }
    free(r.v);
    *out = p;
    *n_out = r.n;
    return VOX_OK;
}

/* A growing output recording (pydub segments appended). */
typedef struct wav {
    int16_t *x;
    int64_t n, cap, rate;
} wav;

static int wav_append(wav *w, const int16_t *x, int64_t n, int64_t zeros) {
    if (w->n + n + zeros > w->cap) {
        int64_t cap = (w->n + n + zeros) * 2 + 1024;
        int16_t *p = realloc(w->x, (size_t)cap * sizeof *p);
        if (!p) return 0;
        w->x = p, w->cap = cap;
    }
    if (n) memcpy(w->x + w->n, x, (size_t)n * sizeof *x);
    memset(w->x + w->n + n, 0, (size_t)zeros * sizeof *x);
    w->n += n + zeros;
    return 1;
}

static int64_t ms_of(int64_t n, int64_t rate) { return (int64_t)nearbyint(1000.0 * ((double)n / (double)rate)); }

/* Append the pieces while the result is at most 6 s or stays within 12 s. */
static vox_status accumulate(const seg *s, const piece *p, int64_t np, wav *w) {
    w->n = 0;
    w->rate = np ? s->rate : 11025;   /* pydub's AudioSegment.silent(0) when nothing was kept */
    for (int64_t i = 0; i < np; i++) {
        int64_t len = p[i].fb - p[i].fa + p[i].pad;
        if (ms_of(w->n, w->rate) > 6000 && ms_of(w->n + len, w->rate) > 12000) break;
        if (!wav_append(w, s->x + p[i].fa, p[i].fb - p[i].fa, p[i].pad))
            return vox_set_error(VOX_ERR_OUT_OF_MEMORY, "out of memory");
    }
    return VOX_OK;
}

static int64_t detect_leading(const seg *s, double thresh, int64_t chunk) {
    int64_t trim = 0, len = seg_ms(s);
    while (seg_dbfs(s, trim, trim + chunk) < thresh && trim < len) trim += chunk;
    return trim < len ? trim : len;
}

/* How many frames audioop.ratecv(fragment of n frames, ..., rate_in, rate_out, None) returns. */
static int64_t ratecv_frames(int64_t n, int64_t rin, int64_t rout) {
    int64_t a = rin, b = rout;
    while (b) {
        int64_t t = a % b;
        a = b;
        b = t;
    }
    const int64_t g = a, ai = rin / g, bo = rout / g;
    int64_t d = -bo, out = 0;
    for (;;) {
        while (d < 0) {
            if (n == 0) return out;
            n--;
            d += bo;
        }
        while (d >= 0) {
            out++;
            d -= ai;
        }
    }
}

static vox_status make_cum(const int16_t *x, int64_t n, int64_t **cum) {
    *cum = malloc((size_t)(n + 1) * sizeof **cum);
    if (!*cum) return vox_set_error(VOX_ERR_OUT_OF_MEMORY, "out of memory");
    (*cum)[0] = 0;
    for (int64_t i = 0; i < n; i++) (*cum)[i + 1] = (*cum)[i] + (int64_t)x[i] * x[i];
    return VOX_OK;
}

vox_status f5_preprocess_pcm(const int16_t *pcm, int64_t n, int32_t rate, int16_t **out, int64_t *n_out,
                             int32_t *rate_out, int64_t *speech) {
    *out = NULL;
    *n_out = 0;
    if (rate < 11025)
        return vox_set_error(VOX_ERR_INVALID_ARGUMENT, "the reference audio's rate %d Hz is below 11025 Hz, which the "
                             "official preprocessing resamples with audioop; resample it first", rate);
    if (n <= 0) return vox_set_error(VOX_ERR_INVALID_ARGUMENT, "the reference audio is empty");
    int64_t *cum = NULL, *cum2 = NULL;
    vox_status st = make_cum(pcm, n, &cum);
    if (st != VOX_OK) return st;
    seg s = {pcm, n, rate, cum, 0};
    piece *p = NULL;
    int64_t np = 0;
    wav w = {0};
    st = split_on_silence(&s, 1000, -50.0, 1000, 10, &p, &np);
    if (st == VOX_OK) st = accumulate(&s, p, np, &w);
    free(p);
    p = NULL;
    if (st == VOX_OK && ms_of(w.n, w.rate) > 12000) {
        st = split_on_silence(&s, 100, -40.0, 1000, 10, &p, &np);
        if (st == VOX_OK) st = accumulate(&s, p, np, &w);
        free(p);
    }
    if (st == VOX_OK && ms_of(w.n, w.rate) > 12000) {   /* its first 12000 ms */
        seg ws = {w.x, w.n, w.rate, NULL, 0};
        int64_t fa, fb, pad;
        span(&ws, 0, 12000, &fa, &fb, &pad);
        w.n = fb < w.n ? fb : w.n;
    }
    /* leading and trailing silence below -42 dBFS, in 10 ms chunks */
    if (st == VOX_OK) st = make_cum(w.x ? w.x : (const int16_t *)"", w.n, &cum2);
    if (st == VOX_OK) {
        seg ws = {w.x, w.n, w.rate, cum2, 0};
        int64_t start = detect_leading(&ws, -42.0, 10), fa, fb, pad;
        span(&ws, start, seg_ms(&ws), &fa, &fb, &pad);
        if (fb > ws.n) fb = ws.n;
        int64_t kept0 = fa, kept1 = fb > fa ? fb : fa, zeros = pad;
        /* the trailing end: the same on the reversed recording */
        int64_t m = kept1 - kept0 + zeros;
        int16_t *rev = malloc((size_t)(m ? m : 1) * sizeof *rev);
        int64_t *cr = NULL;
        if (!rev) st = vox_set_error(VOX_ERR_OUT_OF_MEMORY, "out of memory");
        if (st == VOX_OK) {
            for (int64_t i = 0; i < m; i++) {
                int64_t src = m - 1 - i;   /* index in the kept part (zeros at its end) */
                rev[i] = src < kept1 - kept0 ? w.x[kept0 + src] : 0;
            }
            st = make_cum(rev, m, &cr);
        }
        int64_t end_trim = 0;
        if (st == VOX_OK) {
            seg rs = {rev, m, w.rate, cr, 0};
            end_trim = detect_leading(&rs, -42.0, 10);
        }
        int64_t keep_n = m;
        if (st == VOX_OK && end_trim > 0) {
            seg ks = {rev, m, w.rate, NULL, 0};
            int64_t a2, b2, pad2;
            span(&ks, 0, seg_ms(&ks) - end_trim, &a2, &b2, &pad2);
            keep_n = (b2 < m ? b2 : m) + pad2;
        }
        if (st == VOX_OK) {
            const int64_t tail = ratecv_frames((int64_t)(11025 * (50 / 1000.0)), 11025, w.rate);
            int16_t *o = malloc((size_t)(keep_n + tail) * sizeof *o);
            if (!o) st = vox_set_error(VOX_ERR_OUT_OF_MEMORY, "out of memory");
            else {
                for (int64_t i = 0; i < keep_n; i++) o[i] = i < kept1 - kept0 ? w.x[kept0 + i] : 0;
                memset(o + keep_n, 0, (size_t)tail * sizeof *o);
                *out = o;
                *n_out = keep_n + tail;
                *rate_out = (int32_t)w.rate;
                *speech = keep_n;
            }
        }
        free(rev), free(cr);
    }
    free(cum), free(cum2), free(w.x);
    return st;
}

char *f5_fix_ref_text(const char *t) {
    size_t n = strlen(t);
    int ok = (n >= 2 && !strcmp(t + n - 2, ". ")) || (n >= 3 && !strcmp(t + n - 3, "\xe3\x80\x82"));
    const char *add = ok ? "" : (n && t[n - 1] == '.') ? " " : ". ";
    char *o = malloc(n + strlen(add) + 1);
    if (!o) return NULL;
    memcpy(o, t, n);
    strcpy(o + n, add);
    return o;
}

void f5_reference_free(f5_reference *r) {
    free(r->mel);
    memset(r, 0, sizeof *r);
}

vox_status f5_reference_from_recording(const f5_model *m, vx_pool *pool, const float *mono, int64_t n, int32_t rate,
                                       float target_rms, f5_reference *out) {
    memset(out, 0, sizeof *out);
    /* the PCM the official code reads: a 16-bit file gives back exactly its samples (x * 32768) */
    int16_t *pcm = malloc((size_t)(n ? n : 1) * sizeof *pcm);
    if (!pcm) return vox_set_error(VOX_ERR_OUT_OF_MEMORY, "out of memory");
    for (int64_t i = 0; i < n; i++) {
        double v = nearbyint((double)mono[i] * 32768.0);
        pcm[i] = (int16_t)(v > 32767.0 ? 32767.0 : v < -32768.0 ? -32768.0 : v);
    }
    int16_t *pre = NULL;
    int64_t np = 0, speech = 0;
    int32_t prate = rate;
    vox_status st = f5_preprocess_pcm(pcm, n, rate, &pre, &np, &prate, &speech);
    free(pcm);
    if (st != VOX_OK) return st;
    int any = 0;
    for (int64_t i = 0; i < speech && !any; i++) any = pre[i] != 0;
    if (!any) {
        free(pre);
        return vox_set_error(VOX_ERR_INVALID_ARGUMENT, "the reference recording is silent (nothing above -50 dBFS is "
                             "left after the official silence trimming): record some speech");
    }
    float *a = malloc((size_t)np * sizeof *a);
    if (!a) {
        free(pre);
        return vox_set_error(VOX_ERR_OUT_OF_MEMORY, "out of memory");
    }
    double ss = 0.0;
    for (int64_t i = 0; i < np; i++) {
        a[i] = (float)pre[i] / 32768.0f;
        ss += (double)a[i] * (double)a[i];
    }
    free(pre);
    const float rms = (float)sqrt(ss / (double)np);
    out->rms = rms;
    out->scaled = rms < target_rms;
    if (out->scaled)
        for (int64_t i = 0; i < np; i++) a[i] = (a[i] * target_rms) / rms;
    float *r24 = NULL;
    int64_t n24 = 0;
    st = vx_resample_sinc(pool, a, np, prate, m->c.sample_rate, &r24, &n24);
    free(a);
    if (st == VOX_OK) st = f5_log_mel(m, pool, r24, n24, &out->mel, &out->frames);
    free(r24);
    if (st != VOX_OK) {
        f5_reference_free(out);
        return st;
    }
    out->ref_samples = np;
    out->ref_rate = prate;
    return VOX_OK;
}
