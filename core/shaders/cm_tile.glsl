// The cooperative-matrix tiles and steps shared by gemm_cm.glsl and codec_gemm_cm.glsl (included before
// any declaration: it enables the extensions): TM x TN output tiles of NSG subgroups, K in steps of BK.
// The including file declares, in main, sg (the subgroup: rows sg * 16 .. of the tile) and the
// accumulators acc, acl [TN / 16] (hi . w and lo . w, joined at the end as hi + lo / 2^12).
#extension GL_KHR_cooperative_matrix : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
#define TM 64
#ifndef TN
#define TN 32   // gemm_cm_wide_*.comp: 64
#endif
#define BK 64
#define NSG 4
#define LD (BK + 8)   // shared row stride (elements), padded against bank conflicts

shared float16_t xh[TM * LD], xl[TM * LD], wt[TN * LD];   // x as float16 hi and lo; the weights, a row an output
#ifdef CM_JOIN_ACC   // one output tile in shared memory, used twice (lo . w, then hi . w): gemm_cm.glsl
shared float outs[TM * TN];
#else
shared float outs[TM * TN], outl[TM * TN];                // hi . w and lo . w of the tile, row-major
#endif

// One x value into the tiles at idx: hi is x cut to float16's 11 significant bits with a mask (a
// conversion round trip may be folded away by a compiler, and then lo would be 0); x - hi is exact,
// scaled by 2^12 into float16's range.
#define CM_SPLIT_X(idx, v)                                                                          \
    {                                                                                               \
        float cm_h = uintBitsToFloat(floatBitsToUint(v) & 0xffffe000u);                             \
        xh[idx] = float16_t(cm_h);                                                                  \
        xl[idx] = float16_t(((v) - cm_h) * 4096.0);                                                 \
    }

// The products of one BK-wide K step (after the tiles are filled and a barrier): B = W^T (k x output),
// element (k, j) at wt[j * LD + k], column-major. One declarator per declaration: glslang 13 gives a
// second one an invalid matrix use.
#define CM_MMA_STEP()                                                                               \
    for (uint cm_k = 0; cm_k < BK; cm_k += 16) {                                                    \
        coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseA> ah;                             \
        coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseA> al;                             \
        coopMatLoad(ah, xh, sg * 16 * LD + cm_k, LD, gl_CooperativeMatrixLayoutRowMajor);           \
        coopMatLoad(al, xl, sg * 16 * LD + cm_k, LD, gl_CooperativeMatrixLayoutRowMajor);           \
        for (uint cm_c = 0; cm_c < TN / 16; cm_c++) {                                               \
            coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseB> cm_b;                       \
            coopMatLoad(cm_b, wt, cm_c * 16 * LD + cm_k, LD, gl_CooperativeMatrixLayoutColumnMajor); \
            acc[cm_c] = coopMatMulAdd(ah, cm_b, acc[cm_c]);                                         \
            acl[cm_c] = coopMatMulAdd(al, cm_b, acl[cm_c]);                                         \
        }                                                                                           \
    }

// The accumulators into outs / outl (row-major [TM][TN]); the caller then joins them after a barrier.
#define CM_STORE_ACC()                                                                              \
    for (uint cm_c = 0; cm_c < TN / 16; cm_c++) {                                                   \
        coopMatStore(acc[cm_c], outs, sg * 16 * TN + cm_c * 16, TN, gl_CooperativeMatrixLayoutRowMajor); \
        coopMatStore(acl[cm_c], outl, sg * 16 * TN + cm_c * 16, TN, gl_CooperativeMatrixLayoutRowMajor); \
    }
