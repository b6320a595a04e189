/* A bidirectional one-layer LSTM (torch.nn.LSTM(bidirectional=True, batch_first=True)) on time-major rows. */
#include <stdlib.h>
#include <string.h>

#include "../error.h"
#include "nn.h"


typedef struct lstm_job {
    const vx_lstm *l;
    const float *gx;   /* [2][t][4H]: input projections of every step, both directions */
    int64_t t;
    float *y;
    float *work;       /* [2][6H] */
} lstm_job;

/* One direction per task: only the recurrent matvec runs per step; the two directions run in
 * parallel, each wholly on one thread (so the result never depends on the thread count). */
static void lstm_dir(void *ctx, int64_t begin, int64_t end) {
    lstm_job *j = ctx;
    const int64_t H = j->l->hidden;
    for (int64_t d = begin; d < end; d++) {
        float *g = j->work + d * 6 * H, *h = g + 4 * H, *c = h + H;
        memset(h, 0, (size_t)(2 * H) * sizeof *h);
        const float *gx = j->gx + d * j->t * 4 * H;
        for (int64_t step = 0; step < j->t; step++) {
            int64_t t = d == 0 ? step : j->t - 1 - step;
            vx_linear(NULL, &j->l->w_hh[d], j->l->b_hh[d], h, 1, g);
            const float *gt = gx + t * 4 * H;
            float *yt = j->y + t * 2 * H + d * H;
            /* the gates through the vectorized sigmoid and tanh (a few ulps from libm's, as torch's
             * own vectorized ones are): per step they cost as much as the recurrent matvec in libm */
            for (int64_t u = 0; u < 4 * H; u++) g[u] = gt[u] + g[u];
            vx_sigmoid(g, 2 * H, g);              /* input, forget */
            vx_tanh(g + 2 * H, H, g + 2 * H);     /* cell candidate */
            vx_sigmoid(g + 3 * H, H, g + 3 * H);  /* output */
            for (int64_t u = 0; u < H; u++) c[u] = g[H + u] * c[u] + g[u] * g[2 * H + u];
            vx_tanh(c, H, g);
            for (int64_t u = 0; u < H; u++) {
                h[u] = g[3 * H + u] * g[u];
                yt[u] = h[u];
            }
        }
    }
}

vox_status vx_nn_bilstm(vx_pool *pool, const vx_lstm *l, const float *x, int64_t t, float *y) {
    const int64_t H = l->hidden;
    float *gx = malloc((size_t)(2 * t * 4 * H + 2 * 6 * H) * sizeof *gx);
    if (!gx) return vox_oom();
    for (int d = 0; d < 2; d++) vx_linear(pool, &l->w_ih[d], l->b_ih[d], x, t, gx + d * t * 4 * H);
    lstm_job j = {.l = l, .gx = gx, .t = t, .y = y, .work = gx + 2 * t * 4 * H};
    vx_pool_for(pool, 2, 1, lstm_dir, &j);
    free(gx);
    return VOX_OK;
}
