#version 450
// sample.comp and then gather.comp of the chosen code in one dispatch (the predictor's next input): the
// same code and the same embedding row.
#extension GL_GOOGLE_include_directive : require
#define SAMPLE_GATHER
#include "sample.glsl"
