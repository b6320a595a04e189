// Choose one code from a row of logits, as q3_warp + q3_choose on the CPU (sampling.c): the same
// steps in the same order, with probabilities in float32 (the CPU uses float64), so on rare near-ties
// the GPU and the CPU may choose differently; a given device always chooses the same.
//   greedy (do_sample 0): the first index of the maximum;
//   else: s / temperature; top-k (the k-th largest value found exactly by a radix select on the
//   float's ordered bits, 8 bits a pass; below it -> -inf); top-p (an element is removed when the probability mass of
//   the elements before it in the stable ascending order, itself included, is <= 1 - top_p, never
//   the largest); then the inverse CDF at u (Philox, computed on the host: vox_philox_uniform) over
//   w_i = exp(s_i - max) accumulated in index order: the first i with c_i > u * c_{V-1}.
// One workgroup of 256; the chosen code goes to codes[slot]. ws: a scratch row of V floats.
// (The body of sample.comp and sample_gather.comp.)
#define WG 256
layout(local_size_x = WG) in;
layout(std430, binding = 0) readonly buffer L { float logits[]; };
layout(std430, binding = 1) buffer WS { float ws[]; };
layout(std430, binding = 2) buffer C { int codes[]; };
layout(std430, binding = 3) readonly buffer U { float u_in[]; };   // the uniforms, one per slot
layout(push_constant) uniform Push {
    uint v, do_sample, top_k, slot, l_base;
    float temperature, top_p;
    uint w_base, c_base, u_base;   // first elements of ws, codes and u_in
    uint cols, dtype, o_base, rows;   // SAMPLE_GATHER: the embedding table (gather.glsl) and out
} p;
#ifdef SAMPLE_GATHER
#define GATHER_W 4
#define GATHER_S 5
#include "gather.glsl"
layout(std430, binding = 6) buffer O { float o[]; };
#endif

shared float redf[WG];
shared uint redu[WG];
shared float chunk[WG];
shared uint hist[256];   // WG == 256: one bin per invocation

const float NEG_INF = -1.0 / 0.0;

uint okey(float f) {   // order-preserving map of a float's bits to uint
    uint b = floatBitsToUint(f);
    return (b & 0x80000000u) != 0u ? ~b : b | 0x80000000u;
}
float ukey(uint k) { return uintBitsToFloat((k & 0x80000000u) != 0u ? k & 0x7fffffffu : ~k); }

float sum_all(float v) {
    uint t = gl_LocalInvocationID.x;
    redf[t] = v;
    barrier();
    for (uint s = WG / 2; s > 0; s >>= 1) {
        if (t < s) redf[t] += redf[t + s];
        barrier();
    }
    float r = redf[0];
    barrier();
    return r;
}
float max_all(float v) {
    uint t = gl_LocalInvocationID.x;
    redf[t] = v;
    barrier();
    for (uint s = WG / 2; s > 0; s >>= 1) {
        if (t < s) redf[t] = max(redf[t], redf[t + s]);
        barrier();
    }
    float r = redf[0];
    barrier();
    return r;
}
uint count_all(uint v) {
    uint t = gl_LocalInvocationID.x;
    redu[t] = v;
    barrier();
    for (uint s = WG / 2; s > 0; s >>= 1) {
        if (t < s) redu[t] += redu[t + s];
        barrier();
    }
    uint r = redu[0];
    barrier();
    return r;
}
void sync_ws() {
    memoryBarrierBuffer();
    barrier();
}

// the chosen code, in every invocation (each exit reads it from shared memory after a barrier)
int choose() {
    uint t = gl_LocalInvocationID.x, V = p.v;
    if (p.do_sample == 0u) {
        // argmax, first index on ties: the maximum, then the smallest index holding it
        float m = NEG_INF;
        for (uint i = t; i < V; i += WG) m = max(m, logits[p.l_base + i]);
        m = max_all(m);
        uint best = 0xffffffffu;
        for (uint i = t; i < V; i += WG)
            if (logits[p.l_base + i] == m) best = min(best, i);
        redu[t] = best;
        barrier();
        for (uint s = WG / 2; s > 0; s >>= 1) {
            if (t < s) redu[t] = min(redu[t], redu[t + s]);
            barrier();
        }
        int code = int(redu[0] == 0xffffffffu ? 0u : redu[0]);
        if (t == 0) codes[p.c_base + p.slot] = code;
        return code;
    }
    for (uint i = t; i < V; i += WG) {
        float s = logits[p.l_base + i];
        ws[p.w_base + i] = p.temperature != 1.0 ? s / p.temperature : s;
    }
    sync_ws();
    if (p.top_k != 0u) {
        // the k-th largest by a radix select on the ordered bits, 8 bits a pass: a histogram of the
        // next digit among the keys that share the prefix found so far (counts do not depend on order)
        uint k = clamp(p.top_k, 1u, V), prefix = 0u, mask = 0u;
        for (int pass = 3; pass >= 0; pass--) {
            uint shift = uint(pass) * 8u;
            hist[t] = 0u;
            barrier();
            for (uint i = t; i < V; i += WG) {
                uint key = okey(ws[p.w_base + i]);
                if ((key & mask) == prefix) atomicAdd(hist[(key >> shift) & 255u], 1u);
            }
            barrier();
            if (t == 0) {   // from the top digit down: the digit where the count reaches k
                uint above = 0u, digit = 0u;
                for (int dgt = 255; dgt >= 0; dgt--) {
                    uint c = hist[dgt];
                    if (above + c >= k) {
                        digit = uint(dgt);
                        break;
                    }
                    above += c;
                }
                redu[0] = digit;
                redu[1] = k - above;
            }
            barrier();
            prefix |= redu[0] << shift;
            mask |= 255u << shift;
            k = redu[1];
            barrier();
        }
        float kth = ukey(prefix);
        for (uint i = t; i < V; i += WG)
            if (ws[p.w_base + i] < kth) ws[p.w_base + i] = NEG_INF;
        sync_ws();
    }
    float m = NEG_INF;
    for (uint i = t; i < V; i += WG) m = max(m, ws[p.w_base + i]);
    m = max_all(m);
    if (p.top_p < 1.0) {
        float tot = 0.0;
        for (uint i = t; i < V; i += WG) tot += ws[p.w_base + i] > NEG_INF ? exp(ws[p.w_base + i] - m) : 0.0;
        tot = sum_all(tot);
        // the largest in the stable ascending order: the last index holding the maximum
        uint last = 0u;
        for (uint i = t; i < V; i += WG)
            if (ws[p.w_base + i] == m) last = max(last, i);
        redu[t] = last;
        barrier();
        for (uint s = WG / 2; s > 0; s >>= 1) {
            if (t < s) redu[t] = max(redu[t], redu[t + s]);
            barrier();
        }
        last = redu[0];
        barrier();
        float limit = 1.0 - p.top_p;
        bool drop[32];
        uint nd = 0u;
        for (uint i = t; i < V; i += WG, nd++) {
            float si = ws[p.w_base + i];
            float cum = 0.0;
            if (si > NEG_INF)
                for (uint j = 0; j < V; j++) {
                    float sj = ws[p.w_base + j];
                    if (sj < si || (sj == si && j <= i)) cum += sj > NEG_INF ? exp(sj - m) : 0.0;
                }
            drop[nd] = i != last && cum / tot <= limit;
        }
        sync_ws();   // every invocation has read the scores before any is removed
        nd = 0u;
        for (uint i = t; i < V; i += WG, nd++)
            if (drop[nd]) ws[p.w_base + i] = NEG_INF;
        sync_ws();
    }
    // inverse CDF: contiguous chunks per invocation, summed in index order
    uint per = (V + WG - 1) / WG, i0 = t * per, i1 = min(V, i0 + per);
    float acc = 0.0;
    for (uint i = i0; i < i1; i++) acc += ws[p.w_base + i] > NEG_INF ? exp(ws[p.w_base + i] - m) : 0.0;
    chunk[t] = acc;
    barrier();
    if (t == 0) {
        float run = 0.0;
        for (uint c = 0; c < WG; c++) {
            float x = chunk[c];
            chunk[c] = run;   // exclusive prefix
            run += x;
        }
        redf[0] = run;
    }
    barrier();
    float total = redf[0], target = u_in[p.u_base + p.slot] * total;
    uint found = 0xffffffffu, lastpos = 0u;
    float c = chunk[t];
    for (uint i = i0; i < i1; i++) {
        float w = ws[p.w_base + i] > NEG_INF ? exp(ws[p.w_base + i] - m) : 0.0;
        if (w > 0.0) lastpos = i;
        c += w;
        if (found == 0xffffffffu && c > target) found = i;
    }
    barrier();
    redu[t] = found;
    barrier();
    for (uint s = WG / 2; s > 0; s >>= 1) {
        if (t < s) redu[t] = min(redu[t], redu[t + s]);
        barrier();
    }
    uint f = redu[0];
    barrier();
    redu[t] = lastpos;
    barrier();
    for (uint s = WG / 2; s > 0; s >>= 1) {
        if (t < s) redu[t] = max(redu[t], redu[t + s]);
        barrier();
    }
    int code = int(f != 0xffffffffu ? f : redu[0]);
    if (t == 0) codes[p.c_base + p.slot] = code;
    return code;
}

void main() {
    int code = choose();
#ifdef SAMPLE_GATHER   // gather.comp's row of the chosen code, from the value every invocation holds
    uint r = uint(clamp(code, 0, int(p.rows) - 1));
    for (uint e = gl_LocalInvocationID.x; e < p.cols; e += WG) o[p.o_base + e] = gather_value(r, e);
#endif
}
