#version 450
// The codec transformer's key/value rings (window W; position q in slot q % W), of `layers` layers at
// once: ring l is [W][kvd] at l * W * kvd, its work rows [.][kvd] at l * c_stride of kc / vc:
//   mode 0  gather: kc[j] = kring[(p0 + j) % W], vc[j] = vring[(p0 + j) % W] for j < n (the ring in
//           position order, before the new keys)
//   mode 1  scatter: kring[(p0 + j) % W] = kc[src + j], vring likewise, for the newest W of the n rows
layout(local_size_x = 64) in;
layout(std430, binding = 0) buffer KR { float kr[]; };
layout(std430, binding = 1) buffer VR { float vr[]; };
layout(std430, binding = 2) buffer KC { float kc[]; };
layout(std430, binding = 3) buffer VC { float vc[]; };
layout(push_constant) uniform Push { uint n, kvd, W, p0, src, mode, r_base, vr_base, c_base, vc_base, layers, c_stride; } p;

void main() {
    uint e = gl_GlobalInvocationID.x + gl_NumWorkGroups.x * 64 * gl_GlobalInvocationID.y;
    uint per = p.n * p.kvd;
    if (e >= p.layers * per) return;
    uint l = e / per, r = e % per, j = r / p.kvd, i = r % p.kvd;
    uint ring = l * p.W * p.kvd + ((p.p0 + j) % p.W) * p.kvd + i, cl = l * p.c_stride;
    if (p.mode == 0u) {
        kc[p.c_base + cl + r] = kr[p.r_base + ring];
        vc[p.vc_base + cl + r] = vr[p.vr_base + ring];
    } else {
        // more rows than slots: only the newest W rows are written, so no two invocations store to
        // one slot (their order is not defined on a GPU; lavapipe happens to run them in order)
        if (p.n > p.W && j < p.n - p.W) return;
        uint c = cl + (p.src + j) * p.kvd + i;
        kr[p.r_base + ring] = kc[p.c_base + c];
        vr[p.vr_base + ring] = vc[p.vc_base + c];
    }
}
