/* The Qwen3 LM's sampling and rotary helpers (core/src/qwen3/sampling.c, talker.c): the rules of
 * vox.reference.qwen3.sampling on hand-made scores, and the 3-axis mrope selection. The whole model
 * is checked against the reference and the official code by conformance/test_native_lm.py. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "qwen3/lm_internal.h"

static void test_greedy_and_sample(q3_sample_work *w) {
    const float s[6] = {1.0f, 3.0f, 3.0f, -INFINITY, 0.5f, 2.0f};
    CHECK(q3_greedy(s, 6) == 1, "argmax: the lowest index on ties");
    CHECK(q3_sample(s, 6, 0.0, w) == 0, "u = 0: the first finite entry");
    CHECK(q3_sample(s, 6, 1.0 - 0x1p-53, w) == 5, "u -> 1: the last finite entry");
    const float t[4] = {-INFINITY, 0.0f, -INFINITY, -INFINITY};
    for (int k = 0; k < 5; k++) CHECK(q3_sample(t, 4, k / 5.0, w) == 1, "a single finite entry");
    int prev = 0;
    for (int k = 0; k < 200; k++) {
        int c = q3_sample(s, 6, k / 200.0, w);
        CHECK(c >= prev && c != 3, "monotone in u, never a removed entry (u %d/200 -> %d)", k, c);
        prev = c;
    }
    /* the bucket walk: weights exp(s - 3) in index order */
    double wt[6], tot = 0;
    for (int i = 0; i < 6; i++) tot += wt[i] = isinf(s[i]) ? 0 : exp((double)s[i] - 3.0);
    double c0 = wt[0] / tot;
    CHECK(q3_sample(s, 6, c0 * 0.999, w) == 0 && q3_sample(s, 6, c0 * 1.001, w) == 1, "bucket boundary");
    CHECK(q3_choose(s, 6, 0, 123, 4, 5, w) == 1, "greedy choose");
    int a = q3_choose(s, 6, 1, 123, 4, 5, w), b = q3_choose(s, 6, 1, 123, 4, 5, w);
    CHECK(a == b && a == q3_sample(s, 6, vox_philox_uniform(123, 4, 5), w), "choose = sample at philox(seed, frame, book)");
}

static void test_warpers(q3_sample_work *w) {
    float s[6] = {1.0f, 3.0f, 3.0f, 2.0f, 0.5f, 3.0f};
    q3_sampler p = {1, 1.0f, 2, 1.0f};
    q3_warp(s, 6, &p, w);
    CHECK(s[1] == 3.0f && s[2] == 3.0f && s[5] == 3.0f, "top-k keeps every tie at the boundary");
    CHECK(isinf(s[0]) && isinf(s[3]) && isinf(s[4]), "top-k removes the rest");
    /* top-p 0.5 on softmax(0, 1, 2, 3): ascending cumulative 0.032, 0.119, 0.356, 1 -> keep only 3 */
    float t[4] = {0.0f, 1.0f, 2.0f, 3.0f};
    q3_sampler pp = {1, 1.0f, 0, 0.5f};
    q3_warp(t, 4, &pp, w);
    CHECK(isinf(t[0]) && isinf(t[1]) && isinf(t[2]) && t[3] == 3.0f, "top-p 0.5");
    float u[4] = {0.0f, 1.0f, 2.0f, 3.0f};
    pp.top_p = 0.7f; /* 1 - 0.7 = 0.3: 0.032 and 0.119 go, 0.356 stays */
    q3_warp(u, 4, &pp, w);
    CHECK(isinf(u[0]) && isinf(u[1]) && u[2] == 2.0f && u[3] == 3.0f, "top-p 0.7");
    float e[3] = {1.0f, 1.0f, 1.0f};
    pp.top_p = 0.5f; /* equal scores: the lower indices go first */
    q3_warp(e, 3, &pp, w);
    CHECK(isinf(e[0]) && e[1] == 1.0f && e[2] == 1.0f, "top-p ties: lower indices removed first (%g %g %g)", e[0],
          e[1], e[2]);
    float v[3] = {1.0f, -2.0f, 0.25f};
    q3_sampler tp = {1, 0.7f, 0, 1.0f};
    q3_warp(v, 3, &tp, w);
    CHECK(v[0] == 1.0f / 0.7f && v[1] == -2.0f / 0.7f && v[2] == 0.25f / 0.7f, "temperature: s / float32(t)");
    float g[3] = {1.0f, 2.0f, 3.0f};
    q3_sampler greedy = {0, 0.5f, 1, 0.1f};
    q3_warp(g, 3, &greedy, w);
    CHECK(g[0] == 1.0f && g[1] == 2.0f && g[2] == 3.0f, "greedy: no warpers");
}

static void test_talker_processing(void) {
    enum { V = 3072, EOS = 2150 };
    q3_sample_work w;
    CHECK(q3_sample_work_init(&w, V) == VOX_OK, "work");
    float *s = malloc(V * sizeof *s);
    for (int i = 0; i < V; i++) s[i] = (float)((i * 37) % 101) / 10.0f - 5.0f;
    const float s7 = s[7], s9 = s[9];
    const int32_t hist[2] = {7, 9};
    q3_sampler greedy = {0, 1.0f, 0, 1.0f};
    q3_process_talker(s, V, hist, 2, 1, 1.05f, EOS, 2, &greedy, &w);
    CHECK(s[7] == (s7 < 0 ? s7 * 1.05f : s7 / 1.05f) && s[9] == (s9 < 0 ? s9 * 1.05f : s9 / 1.05f), "penalty");
    CHECK(isinf(s[EOS]), "EOS held back before min_new_tokens");
    for (int i = V - 1024; i < V; i++)
        if (i != EOS) CHECK(isinf(s[i]) && s[i] < 0, "suppressed control code %d", i);
    CHECK(!isinf(s[V - 1025]), "codes below the control range stay");
    s[EOS] = 1.0f;
    q3_process_talker(s, V, hist, 0, 2, 1.0f, EOS, 2, &greedy, &w);
    CHECK(s[EOS] == 1.0f, "EOS allowed after 2 codes");
    free(s);
    q3_sample_work_free(&w);
}

static void test_mrope(void) {
    q3_decoder d;
    memset(&d, 0, sizeof d);
    d.head_dim = 16;
    d.theta = 1000000.0;
    float inv[8];
    for (int i = 0; i < 8; i++) inv[i] = 1.0f / (float)pow(d.theta, (double)((float)(2 * i) / 16.0f));
    d.inv_freq = inv;
    d.n_section = 3;
    d.section[0] = 4, d.section[1] = 2, d.section[2] = 2;
    const int64_t pos[3] = {5, 17, 301}; /* one row: temporal, height, width */
    float c[16], s[16];
    for (int il = 0; il < 2; il++) {
        d.interleaved = il;
        q3_mrope_table(&d, pos, 1, c, s);
        /* interleaved: j % 3 == a and j < 3 * section[a] -> axis a (1, 2), else 0;
         * sectioned: chunks 4, 2, 2, 4, 2, 2 of the duplicated table from axes 0, 1, 2, 0, 1, 2 */
        const int want_il[8] = {0, 1, 2, 0, 1, 2, 0, 0};
        const int want_sec[16] = {0, 0, 0, 0, 1, 1, 2, 2, 0, 0, 0, 0, 1, 1, 2, 2};
        for (int x = 0; x < 16; x++) {
            int a = il ? want_il[x % 8] : want_sec[x];
            float ang = (float)pos[a] * inv[x % 8];
            CHECK(c[x] == (float)cos((double)ang) && s[x] == (float)sin((double)ang), "mrope %s entry %d axis %d",
                  il ? "interleaved" : "sectioned", x, a);
        }
    }
}

int main(void) {
    q3_sample_work w;
    CHECK(q3_sample_work_init(&w, 64) == VOX_OK, "work");
    test_greedy_and_sample(&w);
    test_warpers(&w);
    q3_sample_work_free(&w);
    test_talker_processing();
    test_mrope();
    if (fails) fprintf(stderr, "%d checks failed\n", fails);
    return fails != 0;
}
