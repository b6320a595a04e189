#version 450
// The ISTFT head's spectrum (vocos ISTFTHead): head output y [frames][2 bins] = [log-magnitude | phase]
// -> s [frames][2 bins] = [re | im] with mag = min(exp(logmag), 100), re = mag cos(phase),
// im = mag sin(phase). sin and cos with a three-part Cody-Waite reduction by pi/2 and minimax
// polynomials on [-pi/4, pi/4] (about an ulp; the built-in ones may be far less accurate for large
// phases).
layout(local_size_x = 64) in;
layout(std430, binding = 0) readonly buffer Yb { float y[]; };
layout(std430, binding = 1) writeonly buffer S { float s[]; };
layout(push_constant) uniform Push { uint frames, bins, y_base, s_base; } p;

void sincos_acc(float x, out float sn, out float cs) {
    precise float k = roundEven(x * 0.63661977236758134);
    precise float r = fma(-k, 1.5703125, x);
    r = fma(-k, 4.837512969970703125e-4, r);
    r = fma(-k, 7.549789948768648e-8, r);
    precise float z = r * r;
    precise float ps = r + r * z * (-1.6666654611e-1 + z * (8.3321608736e-3 + z * -1.9515295891e-4));
    precise float pc = 1.0 - 0.5 * z + z * z * (4.166664568298827e-2 + z * (-1.388731625493765e-3 + z * 2.443315711809948e-5));
    int q = int(k) & 3;
    sn = q == 0 ? ps : q == 1 ? pc : q == 2 ? -ps : -pc;
    cs = q == 0 ? pc : q == 1 ? -ps : q == 2 ? -pc : ps;
}

void main() {
    uint i = gl_GlobalInvocationID.x + gl_NumWorkGroups.x * 64 * gl_GlobalInvocationID.y;
    if (i >= p.frames * p.bins) return;
    uint f = i / p.bins, b = i % p.bins, yo = p.y_base + f * 2u * p.bins;
    float mag = exp(y[yo + b]);
    if (!(mag <= 100.0)) mag = 100.0;
    float sn, cs;
    sincos_acc(y[yo + p.bins + b], sn, cs);
    uint so = p.s_base + f * 2u * p.bins;
    s[so + b] = mag * cs;
    s[so + p.bins + b] = mag * sn;
}
