#version 450
// Elementwise activations over n floats (y may alias x), as the CPU computes them:
//   mode 0  SiLU         x / (1 + e^-x)                                  (vx_silu)
//   mode 1  Mish         x tanh(softplus(x)) = x u (u + 2) / (u (u + 2) + 2), u = e^x; x > 20: x   (vx_nn_mish)
//   mode 2  GELU (tanh)  0.5 x (1 + tanh(sqrt(2 / pi) (x + 0.044715 x^3)))  (vx_nn_gelu_tanh)
// tanh as 1 - 2 / (e^(2|u|) + 1) with the sign: no inf / inf for large |u|.
layout(local_size_x = 64) in;
layout(std430, binding = 0) readonly buffer X { float x[]; };
layout(std430, binding = 1) writeonly buffer Y { float y[]; };
layout(push_constant) uniform Push { uint n, mode, x_base, y_base; } p;

float tanh_s(float u) {
    float a = abs(u), t = 1.0 - 2.0 / (exp(2.0 * a) + 1.0);
    return u < 0.0 ? -t : t;
}

void main() {
    uint i = gl_GlobalInvocationID.x + gl_NumWorkGroups.x * 64 * gl_GlobalInvocationID.y;
    if (i >= p.n) return;
    float v = x[p.x_base + i], r;
    if (p.mode == 0u) {
        r = v / (1.0 + exp(-v));
    } else if (p.mode == 1u) {
        if (v > 20.0) {
            r = v;
        } else {
            float u = exp(v), q = u * (u + 2.0);
            r = v * (q / (q + 2.0));
        }
    } else {
        float u = 0.7978845608028654 * (v + 0.044715 * (v * v * v));
        r = 0.5 * v * (1.0 + tanh_s(u));
    }
    y[p.y_base + i] = r;
}
