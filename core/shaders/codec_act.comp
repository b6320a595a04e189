#version 450
// Elementwise activations of the codec decoder, y may alias x:
//   mode 0  exact GELU (vx_gelu): 0.5 x (1 + erf(x / sqrt(2))), erf from Abramowitz & Stegun 7.1.26
//           (absolute error below 1.5e-7; GLSL has no erf)
//   mode 1  clamp to [lo, hi] (vx_clamp: the decoder's final clamp to [-1, 1])
layout(local_size_x = 64) in;
layout(std430, binding = 0) readonly buffer X { float x[]; };
layout(std430, binding = 1) buffer Y { float y[]; };
layout(push_constant) uniform Push { uint n, mode, x_base, y_base; float lo, hi; } p;

float erf_as(float z) {
    float a = abs(z), t = 1.0 / (1.0 + 0.3275911 * a);
    float poly = t * (0.254829592 + t * (-0.284496736 + t * (1.421413741 + t * (-1.453152027 + t * 1.061405429))));
    float r = 1.0 - poly * exp(-a * a);
    return z < 0.0 ? -r : r;
}

void main() {
    uint e = gl_GlobalInvocationID.x + gl_NumWorkGroups.x * 64 * gl_GlobalInvocationID.y;
    if (e >= p.n) return;
    float v = x[p.x_base + e];
    y[p.y_base + e] = p.mode == 0u ? 0.5 * v * (1.0 + erf_as(v * 0.7071067811865476)) : min(max(v, p.lo), p.hi);
}
