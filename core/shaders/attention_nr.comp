#version 450
// attention.comp for up to 4 new rows (decode steps, the predictor) with the per-head RMSNorm + RoPE of
// their q and k (norm_rope.comp's operations, the same bits) done in the workgroup: q goes to shared
// memory normalized and rotated; the new keys are read raw from KR, normalized and rotated into shared
// memory, scored from there, and stored into the cache by one workgroup per KV head (the others read only
// the older rows of the cache, which nothing writes here).
#extension GL_GOOGLE_include_directive : require
#define ATT_NORM_ROPE
#include "attention.glsl"
