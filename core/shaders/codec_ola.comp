#version 450
// Overlap-add of a causal transposed convolution (stride r, taps k = r or 2 r). Y [t][c_out * k] is
// x . W (every output tap of each input step, o * k + j), tail [r][c_out] the overhang of the previous
// chunk's last input (partial sums without bias):
//   mode 0  out[t r + j][o] = (Y[t][o k + j] + prev) + b[o], prev = Y[t-1][o k + j + r] (tail[j][o] for
//           t = 0) when k = 2 r; Y[t][o k + j] + b[o] when k = r
//   mode 1  tail[j][o] = Y[T-1][o k + j + r]: the new overhang (run after mode 0)
layout(local_size_x = 64) in;
layout(std430, binding = 0) readonly buffer Yb { float Y[]; };
layout(std430, binding = 1) buffer Tl { float tail[]; };
layout(std430, binding = 2) readonly buffer B { float bias[]; };
layout(std430, binding = 3) writeonly buffer O { float o[]; };
layout(push_constant) uniform Push { uint T, co, k, r, mode, y_base, t_base, b_base, o_base; } p;

void main() {
    uint e = gl_GlobalInvocationID.x + gl_NumWorkGroups.x * 64 * gl_GlobalInvocationID.y;
    uint ck = p.co * p.k;
    if (p.mode == 1u) {
        if (e >= p.r * p.co) return;
        uint j = e / p.co, c = e % p.co;
        tail[p.t_base + e] = Y[p.y_base + (p.T - 1u) * ck + c * p.k + j + p.r];
        return;
    }
    if (e >= p.T * p.r * p.co) return;
    uint c = e % p.co, s = e / p.co, t = s / p.r, j = s % p.r;
    float v = Y[p.y_base + t * ck + c * p.k + j];
    if (p.k != p.r) {
        float prev = t == 0u ? tail[p.t_base + j * p.co + c] : Y[p.y_base + (t - 1u) * ck + c * p.k + j + p.r];
        v = v + prev;
    }
    o[p.o_base + e] = v + bias[p.b_base + c];
}
