#version 450
// Full (bidirectional, unmasked) multi-head attention on cooperative matrices (tensor cores), d = 64: the
// arithmetic of an fp16 model on a GPU. The layout and push constants are attention_full.comp's (q, k, v
// rows of [heads][d], row r of sequence b at row b n + r, ld floats apart; out likewise) with ld and the
// bases multiples of 4: out_h = softmax(scale q_h k_h^T) v_h.
// Flash attention: a workgroup of 4 subgroups takes 64 queries of one head and sequence (16 a subgroup,
// their q as float16 fragments held in registers) and walks the keys in blocks of 64: K and V of the
// block go to shared memory as float16; S = q k^T (float32 sums) goes through the subgroup's staging
// tile, where each row's lanes take the running maximum m (exp2 domain: scale log2 e folded in), form
// p = exp2(s - m) rounded to float16 (the values the next product uses; l sums those same values) and
// scale what they hold of the output by exp2(m_old - m_new); P V (float32 sums) comes back through
// the staging tile and is added. At the end out = o / l. A query's result depends only on its row and
// the keys, in a fixed order: the same on every run. Subgroups of 32 or 64 invocations (the host checks);
// another subgroup size or count gives NaN outputs, never silent garbage.
#extension GL_KHR_cooperative_matrix : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
layout(local_size_x_id = 0) in;
layout(std430, binding = 0) readonly buffer Q { vec4 q4[]; };
layout(std430, binding = 1) readonly buffer K { vec4 k4[]; };
layout(std430, binding = 2) readonly buffer V { vec4 v4[]; };
layout(std430, binding = 3) writeonly buffer O { vec4 o4[]; };
layout(push_constant) uniform Push { uint n, heads, d, ld, q_base, k_base, v_base, o_base; float scale; } p;

#define NSG 4
#define BC 64      // keys a block
#define LDH 18     // row stride of the float16 tiles in f16vec4: 72 halves (64 + 8 against bank conflicts)
#define LDS 68     // row stride of the float32 staging tiles
#define CM_ACC coopmat<float, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator>
shared f16vec4 ks[BC * LDH], vs[BC * LDH];
shared f16vec4 ps[NSG * 16 * LDH];   // a subgroup's 16 rows: q at the start, then each block's p
shared float ss[NSG * 16 * LDS];     // a subgroup's 16 x 64 staging tile: s, then p v
shared float red[NSG * 64];          // the partial maxima of a row's lanes

void main() {
    uint lid = gl_LocalInvocationID.x, nt = gl_WorkGroupSize.x;
    uint b = gl_WorkGroupID.z, h = gl_WorkGroupID.y, q0 = gl_WorkGroupID.x * 64;
    uint sz = gl_SubgroupSize, lane = gl_SubgroupInvocationID;
    if (gl_NumSubgroups != NSG || sz < 32 || sz > 64) {   // uniform: no barrier is skipped by some only
        for (uint e = lid; e < 64 * 16; e += nt) {
            uint qi = q0 + e / 16;
            if (qi < p.n) o4[(p.o_base + (b * p.n + qi) * p.ld + h * 64) / 4 + e % 16] = vec4(uintBitsToFloat(0x7fc00000u));
        }
        return;
    }
    uint sg = gl_SubgroupID, lpr = sz / 16, row = lane / lpr, part = lane % lpr, cpl = 16 / lpr;   // cpl: vec4 a lane
    uint pb = sg * 16 * LDH, sb = sg * 16 * LDS + row * LDS, qs = q0 + sg * 16;
    // the subgroup's q rows as float16 fragments
    for (uint e = lane; e < 16 * 16; e += sz) {
        uint r = e / 16, qi = qs + r;
        vec4 v = qi < p.n ? q4[(p.q_base + (b * p.n + qi) * p.ld + h * 64) / 4 + e % 16] : vec4(0.0);
        ps[pb + r * LDH + e % 16] = f16vec4(clamp(v, vec4(-65504.0), vec4(65504.0)));
    }
    subgroupMemoryBarrierShared();
    subgroupBarrier();
    coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseA> qa[4];
    for (uint kk = 0; kk < 4; kk++) coopMatLoad(qa[kk], ps, pb + kk * 4, LDH, gl_CooperativeMatrixLayoutRowMajor);
    const float sl2 = p.scale * 1.4426950408889634;
    float m = -1e30, l = 0.0;
    vec4 o[8];   // this lane's output columns 4 (part + lpr t) .. + 3 of its row, t < cpl
    for (uint t = 0; t < 8; t++) o[t] = vec4(0.0);
    for (uint k0 = 0; k0 < p.n; k0 += BC) {
        barrier();   // the last block's k and v are read
        for (uint e = lid; e < BC * 16; e += nt) {
            uint kr = e / 16, key = k0 + kr;
            vec4 kv = vec4(0.0), vv = vec4(0.0);
            if (key < p.n) {
                kv = k4[(p.k_base + (b * p.n + key) * p.ld + h * 64) / 4 + e % 16];
                vv = v4[(p.v_base + (b * p.n + key) * p.ld + h * 64) / 4 + e % 16];
            }
            ks[kr * LDH + e % 16] = f16vec4(clamp(kv, vec4(-65504.0), vec4(65504.0)));
            vs[kr * LDH + e % 16] = f16vec4(clamp(vv, vec4(-65504.0), vec4(65504.0)));
        }
        barrier();
        // S = q k^T: B (k = dimension, n = key) is ks read column-major
        for (uint c = 0; c < 4; c++) {
            CM_ACC s = CM_ACC(0.0);
            for (uint kk = 0; kk < 4; kk++) {
                coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseB> kb;
                coopMatLoad(kb, ks, c * 16 * LDH + kk * 4, LDH, gl_CooperativeMatrixLayoutColumnMajor);
                s = coopMatMulAdd(qa[kk], kb, s);
            }
            coopMatStore(s, ss, sg * 16 * LDS + c * 16, LDS, gl_CooperativeMatrixLayoutRowMajor);
        }
        subgroupMemoryBarrierShared();
        subgroupBarrier();
        float mx = -1e30;
        for (uint t = 0; t < 8; t++)
            if (t < cpl) {
                uint c4 = part + lpr * t, key = k0 + 4 * c4;
                vec4 sv = vec4(ss[sb + 4 * c4], ss[sb + 4 * c4 + 1], ss[sb + 4 * c4 + 2], ss[sb + 4 * c4 + 3]) * sl2;
                if (key + 3 >= p.n) sv = mix(sv, vec4(-1e30), greaterThanEqual(uvec4(key) + uvec4(0, 1, 2, 3), uvec4(p.n)));
                mx = max(mx, max(max(sv.x, sv.y), max(sv.z, sv.w)));
            }
        red[sg * 64 + lane] = mx;
        subgroupMemoryBarrierShared();
        subgroupBarrier();
        for (uint j = 0; j < lpr; j++) mx = max(mx, red[sg * 64 + row * lpr + j]);
        float mn = max(m, mx), alpha = exp2(m - mn);
        m = mn;
        l *= alpha;
        for (uint t = 0; t < 8; t++)
            if (t < cpl) {
                uint c4 = part + lpr * t, key = k0 + 4 * c4;
                vec4 sv = vec4(ss[sb + 4 * c4], ss[sb + 4 * c4 + 1], ss[sb + 4 * c4 + 2], ss[sb + 4 * c4 + 3]) * sl2;
                f16vec4 ph = f16vec4(exp2(sv - mn));
                if (key + 3 >= p.n) ph = mix(ph, f16vec4(0.0), greaterThanEqual(uvec4(key) + uvec4(0, 1, 2, 3), uvec4(p.n)));
                vec4 pf = vec4(ph);
                l += (pf.x + pf.y) + (pf.z + pf.w);
                ps[pb + row * LDH + c4] = ph;
                o[t] *= alpha;
            }
        subgroupMemoryBarrierShared();
        subgroupBarrier();
        // P V: A = p (16 x 64 keys), B (k = key, n = dimension) is vs read row-major
        coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseA> pa[4];
        for (uint kk = 0; kk < 4; kk++) coopMatLoad(pa[kk], ps, pb + kk * 4, LDH, gl_CooperativeMatrixLayoutRowMajor);
        for (uint c = 0; c < 4; c++) {
            CM_ACC a = CM_ACC(0.0);
            for (uint kk = 0; kk < 4; kk++) {
                coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseB> vb;
                coopMatLoad(vb, vs, kk * 16 * LDH + c * 4, LDH, gl_CooperativeMatrixLayoutRowMajor);
                a = coopMatMulAdd(pa[kk], vb, a);
            }
            coopMatStore(a, ss, sg * 16 * LDS + c * 16, LDS, gl_CooperativeMatrixLayoutRowMajor);
        }
        subgroupMemoryBarrierShared();
        subgroupBarrier();
        for (uint t = 0; t < 8; t++)
            if (t < cpl) {
                uint c4 = part + lpr * t;
                o[t] += vec4(ss[sb + 4 * c4], ss[sb + 4 * c4 + 1], ss[sb + 4 * c4 + 2], ss[sb + 4 * c4 + 3]);
            }
        subgroupBarrier();   // ss and ps are rewritten by the next block
    }
    // l of the row: the sum of its lanes' parts
    red[sg * 64 + lane] = l;
    subgroupMemoryBarrierShared();
    subgroupBarrier();
    float lt = 0.0;
    for (uint j = 0; j < lpr; j++) lt += red[sg * 64 + row * lpr + j];
    uint qi = qs + row;
    if (qi < p.n) {
        float inv = 1.0 / lt;
        for (uint t = 0; t < 8; t++)
            if (t < cpl) o4[(p.o_base + (b * p.n + qi) * p.ld + h * 64) / 4 + part + lpr * t] = o[t] * inv;
    }
}
