#version 450
// The ISTFT's overlap-add (torch.istft / vocos ISTFT): windowed inverse transforms wv [frames][n_fft]
// -> out[s] = sum_f wv[f][p - f hop] / sum_f window[p - f hop]^2 at p = s + trim, over the frames that
// cover p (vx_istft; the host checks that the envelope never vanishes).
layout(local_size_x = 64) in;
layout(std430, binding = 0) readonly buffer Wv { float wv[]; };
layout(std430, binding = 1) readonly buffer Wn { float win[]; };
layout(std430, binding = 2) writeonly buffer O { float o[]; };
layout(push_constant) uniform Push { uint frames, n_fft, hop, trim, n_out, wv_base, win_base, o_base; } p;

void main() {
    uint s = gl_GlobalInvocationID.x + gl_NumWorkGroups.x * 64 * gl_GlobalInvocationID.y;
    if (s >= p.n_out) return;
    int pos = int(s + p.trim), nf = int(p.n_fft), hop = int(p.hop);
    int fa = pos - nf + 1 > 0 ? (pos - nf + 1 + hop - 1) / hop : 0, fb = min(pos / hop, int(p.frames) - 1);
    float acc = 0.0, env = 0.0;
    for (int f = fa; f <= fb; f++) {
        int t = pos - f * hop;
        float w = win[p.win_base + uint(t)];
        acc += wv[p.wv_base + uint(f) * p.n_fft + uint(t)];
        env += w * w;
    }
    o[p.o_base + s] = acc / env;
}
