#version 450
// The codec transformer's key/value ring (window W; position q in slot q % W), per layer [W][kvd]:
//   mode 0  gather: kc[j] = kring[(p0 + j) % W], vc[j] = vring[(p0 + j) % W] for j < n (the ring in
//           position order, before the new keys)
//   mode 1  scatter: kring[(p0 + j) % W] = kc[src + j], vring likewise (keep the newest positions)
layout(local_size_x = 64) in;
layout(std430, binding = 0) buffer KR { float kr[]; };
layout(std430, binding = 1) buffer VR { float vr[]; };
layout(std430, binding = 2) buffer KC { float kc[]; };
layout(std430, binding = 3) buffer VC { float vc[]; };
layout(push_constant) uniform Push { uint n, kvd, W, p0, src, mode, r_base, vr_base, c_base, vc_base; } p;

void main() {
    uint e = gl_GlobalInvocationID.x + gl_NumWorkGroups.x * 64 * gl_GlobalInvocationID.y;
    if (e >= p.n * p.kvd) return;
    uint j = e / p.kvd, i = e % p.kvd;
    uint ring = ((p.p0 + j) % p.W) * p.kvd + i;
    if (p.mode == 0u) {
        kc[p.c_base + e] = kr[p.r_base + ring];
        vc[p.vc_base + e] = vr[p.vr_base + ring];
    } else {
        uint c = (p.src + j) * p.kvd + i;
        kr[p.r_base + ring] = kc[p.c_base + c];
        vr[p.vr_base + ring] = vc[p.vc_base + c];
    }
}
