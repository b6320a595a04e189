#version 450
// gemv_bf16v.comp with 4 output rows a segment (RPS, gemv_common.glsl): one x chunk serves 4 weight rows
// and a workgroup 16 rows; the same bits as gemv_bf16v.comp.
#extension GL_GOOGLE_include_directive : require
#define RPS 4
#include "gemv_bf16v.glsl"
