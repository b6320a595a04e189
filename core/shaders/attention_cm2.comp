#version 450
// Full (bidirectional, unmasked) multi-head attention on VK_NV_cooperative_matrix2, d = 64: the arithmetic
// of attention_cm.comp (q, k, v and the softmax weights rounded to float16, float32 sums, exp2 domain with
// scale log2 e folded in, l the sum of the rounded weights) with workgroup-scope matrices, the driver
// staging the tiles. Same layout, bindings and push constants as attention_cm.comp: q, k, v rows of
// [heads][d], row r of sequence b at row b n + r, ld floats apart; out likewise.
// A workgroup (the device's coopmat2 size, specialization constant 0) takes BR = 64 queries of one head
// and sequence and walks the keys in blocks of BC = 64: S = q k^T, the running row maximum m by a row
// reduction, p = exp2(s - m) as float16, l += p 1 (a product with ones: the sum of the rounded values),
// o = o exp2(m_old - m) + p v. Keys past n read as 0 (clamped layouts) and are masked to -1e30 before
// the maximum; rows past n are not stored. A query's result depends only on its row and the keys.
#extension GL_KHR_cooperative_matrix : require
#extension GL_NV_cooperative_matrix2 : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
layout(local_size_x_id = 0) in;
layout(std430, binding = 0) readonly buffer Q { float q[]; };
layout(std430, binding = 1) readonly buffer K { float k[]; };
layout(std430, binding = 2) readonly buffer V { float v[]; };
layout(std430, binding = 3) writeonly buffer O { float o[]; };
layout(push_constant) uniform Push { uint n, heads, d, ld, q_base, k_base, v_base, o_base; float scale; } p;

#define BR 64
#define BC 64
#define D 64
#define ACC(R, C) coopmat<float, gl_ScopeWorkgroup, R, C, gl_MatrixUseAccumulator>

float max_of(const in float a, const in float b) { return max(a, b); }
float first_of(const in float a, const in float b) { return a; }   // a row reduction that smears one value
float to_half_range(const in uint r, const in uint c, const in float e) { return clamp(e, -65504.0, 65504.0); }
float keys_only(const in uint r, const in uint c, const in float e, const in uint keys) { return c < keys ? e : -1e30; }
float pow2(const in uint r, const in uint c, const in float e) { return exp2(e); }
float larger(const in uint r, const in uint c, const in float a, const in float b) { return max(a, b); }

void main() {
    const uint b = gl_WorkGroupID.z, h = gl_WorkGroupID.y, q0 = gl_WorkGroupID.x * BR;
    const uint head = b * p.n * p.ld + h * D;   // the head's first column in sequence b
    tensorLayoutNV<2, gl_CooperativeMatrixClampModeConstantNV> lt = createTensorLayoutNV(2, gl_CooperativeMatrixClampModeConstantNV);
    lt = setTensorLayoutDimensionNV(lt, p.n, D);
    lt = setTensorLayoutStrideNV(lt, p.ld, 1);
    tensorViewNV<2, false, 1, 0> tr = createTensorViewNV(2, false, 1, 0);

    ACC(BR, D) qf;
    coopMatLoadTensorNV(qf, q, p.q_base + head, sliceTensorLayoutNV(lt, q0, BR, 0, D));
    coopMatPerElementNV(qf, qf, to_half_range);
    coopmat<float16_t, gl_ScopeWorkgroup, BR, D, gl_MatrixUseA> qa = coopmat<float16_t, gl_ScopeWorkgroup, BR, D, gl_MatrixUseA>(qf);
    const coopmat<float16_t, gl_ScopeWorkgroup, BC, BC, gl_MatrixUseB> ones = coopmat<float16_t, gl_ScopeWorkgroup, BC, BC, gl_MatrixUseB>(1.0);
    const float sl2 = p.scale * 1.4426950408889634;
    ACC(BR, D) acc = ACC(BR, D)(0.0);
    ACC(BR, BC) l = ACC(BR, BC)(0.0);
    ACC(BR, BC) m = ACC(BR, BC)(-1e30);
    for (uint k0 = 0; k0 < p.n; k0 += BC) {
        ACC(D, BC) kf;   // k^T of the block
        coopMatLoadTensorNV(kf, k, p.k_base + head, sliceTensorLayoutNV(lt, k0, BC, 0, D), tr);
        coopMatPerElementNV(kf, kf, to_half_range);
        coopmat<float16_t, gl_ScopeWorkgroup, D, BC, gl_MatrixUseB> kb = coopmat<float16_t, gl_ScopeWorkgroup, D, BC, gl_MatrixUseB>(kf);
        ACC(BR, BC) s = ACC(BR, BC)(0.0);
        s = coopMatMulAdd(qa, kb, s);
        s = s * sl2;
        if (k0 + BC > p.n) coopMatPerElementNV(s, s, keys_only, p.n - k0);
        ACC(BR, BC) rowmax;
        coopMatReduceNV(rowmax, s, gl_CooperativeMatrixReduceRowNV, max_of);
        ACC(BR, BC) m_old = m;
        coopMatPerElementNV(m, rowmax, larger, m_old);
        ACC(BR, BC) pf;
        coopMatPerElementNV(pf, s - m, pow2);
        ACC(BR, BC) alpha;
        coopMatPerElementNV(alpha, m_old - m, pow2);
        coopmat<float16_t, gl_ScopeWorkgroup, BR, BC, gl_MatrixUseA> pa = coopmat<float16_t, gl_ScopeWorkgroup, BR, BC, gl_MatrixUseA>(pf);
        ACC(BR, BC) rowsum = ACC(BR, BC)(0.0);
        rowsum = coopMatMulAdd(pa, ones, rowsum);
        l = alpha * l + rowsum;
        ACC(BC, D) vf;
        coopMatLoadTensorNV(vf, v, p.v_base + head, sliceTensorLayoutNV(lt, k0, BC, 0, D));
        coopMatPerElementNV(vf, vf, to_half_range);
        coopmat<float16_t, gl_ScopeWorkgroup, BC, D, gl_MatrixUseB> vb = coopmat<float16_t, gl_ScopeWorkgroup, BC, D, gl_MatrixUseB>(vf);
        ACC(BR, D) alpha_d;
        coopMatReduceNV(alpha_d, alpha, gl_CooperativeMatrixReduceRowNV, first_of);
        acc = acc * alpha_d;
        acc = coopMatMulAdd(pa, vb, acc);
    }
    ACC(BR, D) inv;
    coopMatReduceNV(inv, l, gl_CooperativeMatrixReduceRowNV, first_of);
    for (int i = 0; i < inv.length(); ++i) inv[i] = 1.0 / inv[i];
    acc = acc * inv;
    coopMatStoreTensorNV(acc, o, p.o_base + head, sliceTensorLayoutNV(lt, q0, BR, 0, D));
}
