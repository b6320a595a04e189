#version 450
// gemv_f16v_norm.comp with 4 output rows a segment (RPS, gemv_common.glsl): one x chunk serves 4 weight rows
// and a workgroup 16 rows; the same bits as gemv_f16v_norm.comp.
#extension GL_GOOGLE_include_directive : require
#define RPS 4
#define GEMV_NORM
#include "gemv_f16v.glsl"
