#version 450
// SnakeBeta on time-major x[t][c] (vx_snake_beta): y = x + inv_beta[c] * sin(x * alpha[c])^2, with
// alpha = exp(log_alpha) and inv_beta = 1 / (exp(log_beta) + 1e-9) precomputed on the host. The
// argument is first reduced by 2 pi in two steps (Cody-Waite), so the result does not depend on how
// well the device's sin handles large arguments. y may alias x.
layout(local_size_x = 64) in;
layout(std430, binding = 0) readonly buffer X { float x[]; };
layout(std430, binding = 1) readonly buffer A { float alpha[]; };
layout(std430, binding = 2) readonly buffer IB { float inv_beta[]; };
layout(std430, binding = 3) buffer Y { float y[]; };
layout(push_constant) uniform Push { uint n, c, x_base, a_base, y_base; } p;

void main() {
    uint e = gl_GlobalInvocationID.x + gl_NumWorkGroups.x * 64 * gl_GlobalInvocationID.y;
    if (e >= p.n) return;
    uint ch = e % p.c;
    float v = x[p.x_base + e];
    float a = v * alpha[p.a_base + ch];
    float k = round(a * 0.15915494309189535);
    float r = fma(-k, 6.28318548202514648, a);
    r = fma(-k, -1.7484556000744883e-7, r);
    float s = sin(r);
    y[p.y_base + e] = v + inv_beta[p.a_base + ch] * (s * s);
}
