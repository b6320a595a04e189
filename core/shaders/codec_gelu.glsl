// Exact GELU (vx_gelu): 0.5 x (1 + erf(x / sqrt(2))), erf from Abramowitz & Stegun 7.1.26 (absolute
// error below 1.5e-7; GLSL has no erf). Shared by codec_act.comp and the convolutions' epilogue.
float erf_as(float z) {
    precise float a = abs(z), t = 1.0 / (1.0 + 0.3275911 * a);
    precise float poly = t * (0.254829592 + t * (-0.284496736 + t * (1.421413741 + t * (-1.453152027 + t * 1.061405429))));
    precise float r = 1.0 - poly * exp(-a * a);
    return z < 0.0 ? -r : r;
}
float gelu(float v) {
    precise float y = 0.5 * v * (1.0 + erf_as(v * 0.7071067811865476));
    return y;
}
