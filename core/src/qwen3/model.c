/* Binding .tmod tensors and reading config values for the Qwen3 family. */
#include "model.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#if defined(__linux__)
#  include <sys/mman.h>
#endif

#include "../error.h"
#include "../tmod.h"

vox_status q3_bind_mat(const q3_model *m, const char *name, int64_t rows, int64_t cols, vx_mat *out) {
    vox_tensor_info t;
    if (vox_model_find_tensor(m->file, name, &t) != VOX_OK)
        return vox_set_error(VOX_ERR_FORMAT, "%s: the model has no tensor %s", vox_model_path(m->file), name);
    if (t.ndim != 2 || (rows >= 0 && t.shape[0] != rows) || (cols >= 0 && t.shape[1] != cols))
        return vox_set_error(VOX_ERR_FORMAT, "%s: tensor %s has shape [%lld, %lld] (ndim %d), expected [%lld, %lld]",
                             vox_model_path(m->file), name, (long long)t.shape[0], (long long)t.shape[1], t.ndim,
                             (long long)rows, (long long)cols);
    if (t.dtype > VOX_DTYPE_Q4)
        return vox_set_error(VOX_ERR_FORMAT, "%s: tensor %s is not a float tensor", vox_model_path(m->file), name);
    out->dtype = t.dtype;
    out->rows = t.shape[0];
    out->cols = t.shape[1];
    out->data = t.data;
    out->scales = NULL;
    if (t.dtype == VOX_DTYPE_Q8)
        out->scales = (const float *)((const char *)t.data + t.shape[0] * t.shape[1]);
    else if (t.dtype == VOX_DTYPE_Q4)
        out->scales = (const float *)((const char *)t.data + t.shape[0] * t.shape[1] / 2);
    return VOX_OK;
}

vox_status q3_bind_f32(const q3_model *m, const char *name, int64_t n, const float **out) {
    vox_tensor_info t;
    if (vox_model_find_tensor(m->file, name, &t) != VOX_OK)
        return vox_set_error(VOX_ERR_FORMAT, "%s: the model has no tensor %s", vox_model_path(m->file), name);
    int64_t count = 1;
    for (int i = 0; i < t.ndim; i++) count *= t.shape[i];
    if (t.dtype != VOX_DTYPE_F32 || (n >= 0 && count != n))
        return vox_set_error(VOX_ERR_FORMAT, "%s: tensor %s should be f32 with %lld elements (is %s, %lld)",
                             vox_model_path(m->file), name, (long long)n, vox_dtype_name(t.dtype), (long long)count);
    *out = (const float *)t.data;
    return VOX_OK;
}

vox_status q3_bind_matf(const q3_model *m, vx_mat *out, int64_t rows, int64_t cols, const char *fmt, ...) {
    char name[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(name, sizeof name, fmt, ap);
    va_end(ap);
    return q3_bind_mat(m, name, rows, cols, out);
}

vox_status q3_bind_f32f(const q3_model *m, const float **out, int64_t n, const char *fmt, ...) {
    char name[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(name, sizeof name, fmt, ap);
    va_end(ap);
    return q3_bind_f32(m, name, n, out);
}

vox_status q3_cfg_int(const vox_json *obj, const char *key, int64_t *out) {
    const vox_json *v = vox_json_get(obj, key);
    if (!v || v->type != VOX_JSON_NUMBER || !v->is_integer)
        return vox_set_error(VOX_ERR_FORMAT, "model config: %s must be an integer", key);
    *out = v->integer;
    return VOX_OK;
}

vox_status q3_cfg_num(const vox_json *obj, const char *key, double *out) {
    const vox_json *v = vox_json_get(obj, key);
    if (!v || v->type != VOX_JSON_NUMBER)
        return vox_set_error(VOX_ERR_FORMAT, "model config: %s must be a number", key);
    *out = v->number;
    return VOX_OK;
}

void q3_release_tensors(const q3_model *m, const char *const *prefixes, int n_prefixes) {
#if defined(__linux__) && defined(MADV_DONTNEED)
    const size_t count = vox_model_tensor_count(m->file);
    for (size_t i = 0; i < count; i++) {
        vox_tensor_info t;
        if (vox_model_tensor(m->file, i, &t) != VOX_OK || !t.data || t.nbytes == 0) continue;
        int match = 0;
        for (int p = 0; p < n_prefixes && !match; p++) match = !strncmp(t.name, prefixes[p], strlen(prefixes[p]));
        if (!match) continue;
        /* tensors start on 4096-byte boundaries, so the pages from a tensor's start to its end rounded
         * up hold nothing else */
        const uintptr_t a = (uintptr_t)t.data, b = (a + (uintptr_t)t.nbytes + 4095) & ~(uintptr_t)4095;
        if (a % 4096 == 0) madvise((void *)a, b - a, MADV_DONTNEED);
    }
#else
    (void)m, (void)prefixes, (void)n_prefixes;
#endif
}
