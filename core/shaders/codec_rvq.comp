#version 450
// The codec's quantizer lookup (SplitResidualVectorQuantizer.decode before its projections): for
// frame i and column j < half, with id_g = max(codes[i][g], 0) and cb the codebooks already divided
// by their usage (the official init's single float32 division, done once at upload):
//   first[i][j] = cb[0][id_0][j]
//   rest[i][j]  = ((cb[1][id_1][j] + cb[2][id_2][j]) + cb[3][id_3][j]) + ...   (groups in order)
layout(local_size_x = 64) in;
layout(std430, binding = 0) readonly buffer C { int codes[]; };
layout(std430, binding = 1) readonly buffer B { float cb[]; };
layout(std430, binding = 2) writeonly buffer F { float first[]; };
layout(std430, binding = 3) writeonly buffer R { float rest[]; };
layout(push_constant) uniform Push { uint n, nq, half_dim, size, c_base, f_base, r_base; } p;

void main() {
    uint e = gl_GlobalInvocationID.x + gl_NumWorkGroups.x * 64 * gl_GlobalInvocationID.y;
    if (e >= p.n * p.half_dim) return;
    uint i = e / p.half_dim, j = e % p.half_dim;
    uint row = p.c_base + i * p.nq;
    uint id0 = uint(max(codes[row], 0)), id1 = uint(max(codes[row + 1u], 0));
    first[p.f_base + e] = cb[id0 * p.half_dim + j];
    float r = cb[(p.size + id1) * p.half_dim + j];
    for (uint g = 2; g < p.nq; g++) r = r + cb[(g * p.size + uint(max(codes[row + g], 0))) * p.half_dim + j];
    rest[p.r_base + e] = r;
}
