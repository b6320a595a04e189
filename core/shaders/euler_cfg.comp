#version 450
// One Euler step of the guided flow (CFM.sample with torchdiffeq's Euler), over the state x [n][w]:
//   v = v_c + (v_c - v_u) cfg   (guided; else v_c),   x = x + dt v
// flow [batch][n][w] (v_c first), then the new state is written into the DiT's packed input a
// [batch n][a_w] at columns 0 .. w - 1 of every branch (the next step's input embedding reads it there).
layout(local_size_x = 64) in;
layout(std430, binding = 0) buffer Xs { float x[]; };
layout(std430, binding = 1) readonly buffer F { float f[]; };
layout(std430, binding = 2) writeonly buffer A { float a[]; };
layout(push_constant) uniform Push { uint count, w, a_w, batch, guided, x_base, f_base, a_base; float dt, cfg; } p;

void main() {
    uint i = gl_GlobalInvocationID.x + gl_NumWorkGroups.x * 64 * gl_GlobalInvocationID.y;
    if (i >= p.count) return;
    float vc = f[p.f_base + i];
    precise float vel = vc;
    if (p.guided != 0u) {
        precise float dv = (vc - f[p.f_base + p.count + i]) * p.cfg;
        vel = vc + dv;
    }
    precise float step = p.dt * vel;
    precise float xn = x[p.x_base + i] + step;
    x[p.x_base + i] = xn;
    uint n = p.count / p.w, r = i / p.w, c = i % p.w;
    for (uint b = 0u; b < p.batch; b++) a[p.a_base + (b * n + r) * p.a_w + c] = xn;
}
