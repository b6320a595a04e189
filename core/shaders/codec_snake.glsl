// SnakeBeta of one value (vx_snake_beta): v + inv_beta * sin(v * alpha)^2, alpha = exp(log_alpha) and
// inv_beta = 1 / (exp(log_beta) + 1e-9) precomputed on the host. The argument is first reduced by 2 pi
// in two steps (Cody-Waite), so the result does not depend on how well the device's sin handles large
// arguments. Shared by codec_snake.comp and the convolutions' epilogue (codec_epilogue.glsl).
float snake_beta(float v, float alpha, float inv_beta) {
    precise float a = v * alpha;
    precise float k = round(a * 0.15915494309189535);
    precise float r = fma(-k, 6.28318548202514648, a);
    r = fma(-k, -1.7484556000744883e-7, r);
    float s = sin(r);
    precise float y = v + inv_beta * (s * s);
    return y;
}
