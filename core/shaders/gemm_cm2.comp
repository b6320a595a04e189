#version 450
// The GEMM on VK_NV_cooperative_matrix2: workgroup-scope cooperative matrices with tensor-addressed
// loads, where the driver stages the tiles through shared memory and schedules the tensor cores itself
// (gemm_cm.glsl does that by hand with 16 x 16 subgroup matrices). y[i][y_offset + r] = x[i] . W[r]
// (+ bias), or y += that, with the push constants, bindings and epilogue of the other linear layers
// (linear_out.glsl), so the host records it like them; and two epilogues of a DiT (vx_gop_linear_epi).
// The weights are float16 [rows][cols] (the host converts bf16 to float16 when it uploads them: the
// values gemm_cm_bf16.comp makes of them in its tiles). x keeps the precision of gemm_cm.glsl: each value
// goes in as hi = x cut to float16's 11 significant bits and lo = (x - hi) * 2^12 (exact, scaled into
// float16's normal range), two products accumulated apart and joined at the end as hi . w + lo . w / 2^12;
// or (flags bit 5, vx_gop_linear_h) x is given as float16 (x_base and x_stride in float16 elements), one
// product: the arithmetic of an fp16 model, and half the tensor-core work and x traffic.
// A workgroup of the device's coopmat2 size (specialization constant 0, 256 preferred) computes a tile
// of TM x rows by TN weight rows (constants 1, 2) in K steps of BK (constant 3). Out-of-range rows and
// columns read as 0 (clamped tensor layouts), so any n, rows and cols work; in-range tiles take
// unclamped layouts. An output's sums depend only on the row length, not on n or the tile.
#extension GL_GOOGLE_include_directive : require
#extension GL_KHR_cooperative_matrix : require
#extension GL_NV_cooperative_matrix2 : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
#extension GL_EXT_shader_16bit_storage : require
layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint TM = 128;
layout(constant_id = 2) const uint TN = 128;
layout(constant_id = 3) const uint BK = 32;
#define YB 2
#include "linear_out.glsl"
layout(std430, binding = 0) readonly buffer W { float16_t w[]; };
layout(std430, binding = 1) readonly buffer X { float x[]; };
layout(std430, binding = 1) readonly buffer X16 { float16_t x16[]; };   // the same binding, x as float16 (flags bit 5)
layout(std430, binding = 6) readonly buffer Aux { float aux[]; };   // the gate of flags bit 4

#define MAT_X coopmat<float, gl_ScopeWorkgroup, TM, BK, gl_MatrixUseAccumulator>   // loaded as float32, converted
#define MAT_A coopmat<float16_t, gl_ScopeWorkgroup, TM, BK, gl_MatrixUseA>
#define MAT_B coopmat<float16_t, gl_ScopeWorkgroup, BK, TN, gl_MatrixUseB>
#define MAT_ACC coopmat<float, gl_ScopeWorkgroup, TM, TN, gl_MatrixUseAccumulator>

// x's float16 head by a mask (a conversion round trip may be folded away by a compiler, and lo lost)
float hi_part(const in uint i, const in uint k, const in float v) {
    return uintBitsToFloat(floatBitsToUint(v) & 0xffffe000u);
}

float tanh_s(float u) {   // act.comp's: no inf / inf for large |u|
    float a = abs(u), t = 1.0 - 2.0 / (exp(2.0 * a) + 1.0);
    return u < 0.0 ? -t : t;
}

// What goes to output row R (global) for the sum v: x . w + b, then (flags bits 3, 4: one output) GELU-tanh
// as act.comp computes it, or gate[R] times it as gated_add.comp does (y += that: flags bit 1)
float out_value(const in uint R, const in float v) {
    float t = (p.flags & 1u) != 0u ? v + bias[p.b_base + R] : v;
    if ((p.flags & 8u) != 0u) {
        float u = 0.7978845608028654 * (t + 0.044715 * (t * t * t));
        t = 0.5 * t * (1.0 + tanh_s(u));
    }
    if ((p.flags & 16u) != 0u) {
        precise float gv = aux[p.a_base + R] * t;
        t = gv;
    }
    return t;
}

// the epilogue element by element, (i, j) of the tile at (i0, r0): linear_store, or the epilogues of
// flags bits 3, 4 into output 0
float store_out(const in uint i, const in uint j, const in float v, const in uint i0, const in uint r0) {
    uint xi = i0 + i, r = r0 + j;
    if (xi >= p.n || r >= p.rows) return v;
    if ((p.flags & 24u) == 0u) {
        linear_store(v, xi, r);
        return v;
    }
    uint R = p.y_offset + r, yi = p.y_base0 + xi * p.y_stride0 + R;
    float t = out_value(R, v);
    y0[yi] = (p.flags & 2u) != 0u ? y0[yi] + t : t;
    return v;
}

// the same values for a tile stored whole (flags bit 6)
float tile_value(const in uint i, const in uint j, const in float v, const in uint r0) {
    uint r = r0 + j;
    return r < p.rows ? out_value(p.y_offset + r, v) : v;
}

// A tile whose rows lie in one output Y: a tensor store of the whole tile (y + the values with flags
// bit 1, as linear_store adds)
#define TILE_OUT(Y, BASE, STRIDE)                                                                   \
    {                                                                                               \
        ly = setTensorLayoutStrideNV(ly, STRIDE, 1);                                                \
        if ((p.flags & 2u) != 0u) {                                                                 \
            MAT_ACC prev;                                                                           \
            coopMatLoadTensorNV(prev, Y, BASE, sliceTensorLayoutNV(ly, i0, TM, R0 - s0, TN));       \
            y = prev + y;                                                                           \
        }                                                                                           \
        coopMatStoreTensorNV(y, Y, BASE, sliceTensorLayoutNV(ly, i0, TM, R0 - s0, TN));             \
    }

// One K step with x as float16 (flags bit 5: an fp16 model's arithmetic): one product.
#define CM2_STEP_H(LX, LW)                                                                          \
    {                                                                                               \
        MAT_A a;                                                                                    \
        coopMatLoadTensorNV(a, x16, p.x_base, sliceTensorLayoutNV(LX, i0, TM, k0, BK));             \
        MAT_B b;                                                                                    \
        coopMatLoadTensorNV(b, w, 0, sliceTensorLayoutNV(LW, r0, TN, k0, BK), tr);                  \
        acc = coopMatMulAdd(a, b, acc);                                                             \
    }

// One K step: the x tile (float32) split into hi and lo, the weight tile as B = W^T (a transposed view
// of the rows), two products.
#define CM2_STEP(LX, LW)                                                                            \
    {                                                                                               \
        MAT_X xa;                                                                                   \
        coopMatLoadTensorNV(xa, x, p.x_base, sliceTensorLayoutNV(LX, i0, TM, k0, BK));              \
        MAT_X xh;                                                                                   \
        coopMatPerElementNV(xh, xa, hi_part);                                                       \
        MAT_A ah = MAT_A(xh);                                                                       \
        MAT_A al = MAT_A((xa - xh) * 4096.0);                                                       \
        MAT_B b;                                                                                    \
        coopMatLoadTensorNV(b, w, 0, sliceTensorLayoutNV(LW, r0, TN, k0, BK), tr);                  \
        acc = coopMatMulAdd(ah, b, acc);                                                            \
        acl = coopMatMulAdd(al, b, acl);                                                            \
    }

void main() {
    const uint r0 = gl_WorkGroupID.x * TN, i0 = gl_WorkGroupID.y * TM;
    tensorViewNV<2, false, 1, 0> tr = createTensorViewNV(2, false, 1, 0);
    MAT_ACC acc = MAT_ACC(0.0);
    MAT_ACC acl = MAT_ACC(0.0);
    if (i0 + TM <= p.n && r0 + TN <= p.rows && p.cols % BK == 0) {   // uniform: the tile lies inside
        tensorLayoutNV<2> lx = createTensorLayoutNV(2);
        lx = setTensorLayoutDimensionNV(lx, p.n, p.cols);
        lx = setTensorLayoutStrideNV(lx, p.x_stride, 1);
        tensorLayoutNV<2> lw = createTensorLayoutNV(2);
        lw = setTensorLayoutDimensionNV(lw, p.rows, p.cols);
        lw = setTensorLayoutStrideNV(lw, p.cols, 1);
        if ((p.flags & 32u) != 0u)
            for (uint k0 = 0; k0 < p.cols; k0 += BK) CM2_STEP_H(lx, lw)
        else
            for (uint k0 = 0; k0 < p.cols; k0 += BK) CM2_STEP(lx, lw)
    } else {
        tensorLayoutNV<2, gl_CooperativeMatrixClampModeConstantNV> lx = createTensorLayoutNV(2, gl_CooperativeMatrixClampModeConstantNV);
        lx = setTensorLayoutDimensionNV(lx, p.n, p.cols);
        lx = setTensorLayoutStrideNV(lx, p.x_stride, 1);
        tensorLayoutNV<2, gl_CooperativeMatrixClampModeConstantNV> lw = createTensorLayoutNV(2, gl_CooperativeMatrixClampModeConstantNV);
        lw = setTensorLayoutDimensionNV(lw, p.rows, p.cols);
        lw = setTensorLayoutStrideNV(lw, p.cols, 1);
        if ((p.flags & 32u) != 0u)
            for (uint k0 = 0; k0 < p.cols; k0 += BK) CM2_STEP_H(lx, lw)
        else
            for (uint k0 = 0; k0 < p.cols; k0 += BK) CM2_STEP(lx, lw)
    }
    MAT_ACC y = (p.flags & 32u) != 0u ? acc : acc + acl * (1.0 / 4096.0);
    if ((p.flags & 64u) != 0u) {   // the tile stored whole where its rows lie in one output: the same bits
        const uint R0 = p.y_offset + r0, Rend = min(R0 + TN, p.y_offset + p.rows);
        const uint seg = R0 < p.seg1 ? 0u : R0 < p.seg2 ? 1u : 2u;
        const uint s0 = seg == 0u ? 0u : seg == 1u ? p.seg1 : p.seg2;
        const uint s1 = seg == 0u ? p.seg1 : seg == 1u ? p.seg2 : 0xffffffffu;
        if (Rend <= s1) {   // uniform
            coopMatPerElementNV(y, y, tile_value, r0);
            tensorLayoutNV<2, gl_CooperativeMatrixClampModeConstantNV> ly = createTensorLayoutNV(2, gl_CooperativeMatrixClampModeConstantNV);
            ly = setTensorLayoutDimensionNV(ly, p.n, min(s1, p.y_offset + p.rows) - s0);
            if (seg == 0u) TILE_OUT(y0, p.y_base0, p.y_stride0)
            else if (seg == 1u) TILE_OUT(y1, p.y_base1, p.y_stride1)
            else TILE_OUT(y2, p.y_base2, p.y_stride2)
            return;
        }
    }
    coopMatPerElementNV(y, y, store_out, i0, r0);
}
