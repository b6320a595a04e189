/* Internal to mimi.c and rvq.c: the Mimi encoder's configuration and weights. */
#ifndef VOX_QWEN3_MIMI_INTERNAL_H
#define VOX_QWEN3_MIMI_INTERNAL_H

#include <pthread.h>
#include <stdbool.h>

#include "voice_encoder.h"

#define MIMI_MAX_RATIOS 8
#define MIMI_MAX_OPS 80
#define MIMI_MAX_QUANTIZERS 256

typedef struct mimi_cfg {
    int64_t sample_rate, hidden, filters, n_residual, kernel, last_kernel, residual_kernel, growth, compress;
    int64_t ratios[MIMI_MAX_RATIOS];
    int n_ratios;
    int64_t hop;                               /* prod(ratios): 960 */
    int64_t layers, heads, kv_heads, head_dim, intermediate;
    double rope_theta;
    float norm_eps;
    int64_t codebook_size, codebook_dim, n_quantizers, n_semantic, valid_quantizers, downsample_rate;
    int64_t audio_channels;
} mimi_cfg;

typedef struct mimi_conv {
    vx_mat w;          /* [c_out][c_in * k] */
    const float *b;    /* NULL: no bias */
    int64_t k, stride, dilation, c_in, c_out, k_eff;
} mimi_conv;

typedef enum { MIMI_OP_CONV, MIMI_OP_RESIDUAL } mimi_op_kind;

typedef struct mimi_op {
    mimi_op_kind kind;
    bool elu;          /* CONV: ELU on the input first */
    mimi_conv conv;    /* CONV: the convolution; RESIDUAL: block.1 (ELU first) */
    mimi_conv conv2;   /* RESIDUAL: block.3 (ELU first) */
} mimi_op;

typedef struct mimi_tlayer {
    const float *ln1_w, *ln1_b, *ln2_w, *ln2_b, *scale1, *scale2;
    vx_mat wq, wk, wv, wo, fc1, fc2;
} mimi_tlayer;

/* One codebook: e = embed_sum / max(cluster_usage, 1e-5); ext rows [e, 1, |e|^2] (float32, built on
 * first use) so that one vx_linear against [-2 r, |r|^2, 1] gives the squared distances. */
typedef struct mimi_book {
    vx_mat embed_sum;              /* [size][dim] */
    const float *usage;            /* [size] */
    float *ext;                    /* [size][dim + 2] */
} mimi_book;

struct q3_mimi {
    mimi_cfg cfg;
    mimi_op ops[MIMI_MAX_OPS];
    int n_ops;
    mimi_tlayer *tlayers;
    mimi_conv down;
    bool has_proj[2];              /* semantic, acoustic input_proj present */
    vx_mat proj[2];                /* [dim][hidden] */
    mimi_book books[MIMI_MAX_QUANTIZERS]; /* the kept ones: semantic first */
    pthread_mutex_t lock;          /* building ext on first use */
    bool lock_init, ext_ready;
};

vox_status q3_rvq_bind(const q3_model *m, q3_mimi *mm);

#endif
