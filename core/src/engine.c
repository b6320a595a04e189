/* The engine part of the C ABI: creation, info, tokenization, statistics. */

#include "engine.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "error.h"
#include "kernels.h"
#include "strbuf.h"
#include "tmod.h"
#include "vulkan/vk.h"

extern const vx_family vx_family_qwen3;
extern const vx_family vx_family_kokoro;
static const vx_family *const families[] = {&vx_family_qwen3, &vx_family_kokoro};

const vx_family *vx_family_find(const char *name) {
    for (size_t i = 0; i < sizeof families / sizeof families[0]; i++)
        if (!strcmp(families[i]->name, name)) return families[i];
    return NULL;
}

char *vx_strdup(const char *s) { return s ? strdup(s) : NULL; }

double vx_now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}

vox_engine_params vox_engine_default_params(void) {
    vox_engine_params p;
    memset(&p, 0, sizeof p);
    p.struct_size = sizeof p;
    p.device = "cpu";
    return p;
}

/* Copy what the caller gave into a full current-version struct (older callers pass less). */
static vox_status read_params(const vox_engine_params *in, vox_engine_params *out) {
    *out = vox_engine_default_params();
    if (!in) return VOX_OK;
    if (in->struct_size < offsetof(vox_engine_params, device) + sizeof in->device || in->struct_size > 4096)
        return vox_set_error(VOX_ERR_INVALID_ARGUMENT, "vox_engine_params.struct_size is %u: set the params with "
                             "vox_engine_default_params()", in->struct_size);
    memcpy(out, in, in->struct_size < sizeof *out ? in->struct_size : sizeof *out);
    out->struct_size = sizeof *out;
    return VOX_OK;
}

/* No silent fallback: with a GPU (or VOX_VERBOSE=1) one stderr line says how many matrices went to
 * VRAM, how many stayed on the CPU and why. Strict mode makes a fallback an error: too little video
 * memory (the family refuses then) or a model family with no GPU path at all; matrices whose stage
 * runs on the CPU by design (today: embeddings, codec decoder, voice encoders) are reported only. */
static vox_status report_placement(vox_engine *e, const vx_device_spec *spec) {
    if (!e->gpu) {
        e->matrices_gpu = 0;
        e->matrices_cpu = 0;
    }
    if (e->gpu && e->matrices_gpu == 0 && e->matrices_cpu == 0) {
        for (size_t i = 0; i < vox_model_tensor_count(e->model); i++) {
            vox_tensor_info t;
            if (vox_model_tensor(e->model, i, &t) == VOX_OK && t.ndim == 2) e->matrices_cpu++;
        }
        if (!e->cpu_reason) e->cpu_reason = "this model family has no GPU path yet";
    }
    const char *verbose = getenv("VOX_VERBOSE");
    int say = e->gpu || (verbose && !strcmp(verbose, "1"));
    if (say && !e->gpu)
        fprintf(stderr, "vox: device cpu%s: every matrix on the CPU\n",
                spec->asked_auto ? " (auto: no hardware Vulkan device)" : "");
    if (!e->gpu) return VOX_OK;
    const vx_vk_device_info *gi = vx_gpu_info(e->gpu);
    if (say)
        fprintf(stderr, "vox: device vulkan:%d (%s%s): %lld matrices in VRAM (%.1f MiB), %lld on the CPU%s%s%s\n",
                e->gpu_index, gi->name, gi->software ? ", software renderer" : "", (long long)e->matrices_gpu,
                (double)e->bytes_gpu / 1048576.0, (long long)e->matrices_cpu, e->matrices_cpu ? " (" : "",
                e->matrices_cpu ? e->cpu_reason : "", e->matrices_cpu ? ")" : "");
    if (e->gpu_strict && e->matrices_gpu == 0)
        return vox_set_error(VOX_ERR_UNSUPPORTED, "device vulkan:%d,strict: no matrix would run on the GPU (%s)",
                             e->gpu_index, e->cpu_reason);
    return VOX_OK;
}

/* vox_engine_info gets "device" ("cpu" or "vulkan:N": where the model runs) and "gpu" (null, or the
 * device's name and what the engine placed in its memory). */
static vox_status add_device_info(vox_engine *e) {
    if (!e->info) return VOX_OK;
    size_t len = strlen(e->info);
    if (len < 2 || e->info[len - 1] != '}') return VOX_OK;
    vx_buf b = {0};
    vx_buf_printf(&b, "%.*s%s", (int)(len - 1), e->info, len > 2 ? "," : "");
    if (!e->gpu) {
        vx_buf_printf(&b, "\"device\":\"cpu\",\"gpu\":null}");
    } else {
        const vx_vk_device_info *gi = vx_gpu_info(e->gpu);
        vx_buf_printf(&b, "\"device\":\"vulkan:%d\",\"gpu\":{\"index\":%d,\"name\":", e->gpu_index, e->gpu_index);
        vx_buf_json_string(&b, gi->name, (size_t)-1);
        vx_buf_printf(&b, ",\"software\":%s,\"strict\":%s,\"codec_cpu\":%s,\"matrices_gpu\":%lld,"
                          "\"matrices_cpu\":%lld,\"weights_vram_bytes\":%llu,\"vram_allocated_at_load_bytes\":%llu}}",
                      gi->software ? "true" : "false", e->gpu_strict ? "true" : "false", e->codec_cpu ? "true" : "false",
                      (long long)e->matrices_gpu, (long long)e->matrices_cpu, (unsigned long long)e->bytes_gpu,
                      (unsigned long long)vx_gpu_bytes_allocated(e->gpu));
    }
    char *s = vx_buf_take(&b);
    if (!s) return vox_set_error(VOX_ERR_OUT_OF_MEMORY, "out of memory");
    free(e->info);
    e->info = s;
    return VOX_OK;
}

vox_status vox_engine_create(const char *model_path, const vox_engine_params *params, vox_engine **out) {
    if (!out) return vox_set_error(VOX_ERR_INVALID_ARGUMENT, "vox_engine_create: out is NULL");
    *out = NULL;
    if (!model_path) return vox_set_error(VOX_ERR_INVALID_ARGUMENT, "vox_engine_create: model_path is NULL");
    vox_status st = vx_cpu_check(); /* VOX_CPU named a kernel path this CPU lacks: refused, never replaced */
    if (st != VOX_OK) return st;
    vox_engine_params p;
    st = read_params(params, &p);
    if (st != VOX_OK) return st;
    vx_device_spec spec;
    if ((st = vx_device_spec_parse(p.device, &spec)) != VOX_OK) return st;
    if (p.n_threads < 0 || p.max_sessions < 0)
        return vox_set_error(VOX_ERR_INVALID_ARGUMENT, "n_threads and max_sessions must be >= 0");

    vox_engine *e = calloc(1, sizeof *e);
    if (!e) return vox_set_error(VOX_ERR_OUT_OF_MEMORY, "out of memory");
    pthread_mutex_init(&e->lock, NULL);
    e->params = p;
    e->device = vx_strdup(p.device ? p.device : "cpu");
    e->cpu_affinity = vx_strdup(p.cpu_affinity);
    e->params.device = e->device;
    e->params.cpu_affinity = e->cpu_affinity;
    e->stats.struct_size = sizeof e->stats;

    if ((st = vox_model_open(model_path, &e->model)) != VOX_OK) goto fail;
    e->manifest = vox_model_json(e->model);
    const vox_json *fam = vox_json_get(e->manifest, "family");
    e->family = fam && fam->type == VOX_JSON_STRING ? vx_family_find(fam->str) : NULL;
    if (!e->family) {
        st = vox_set_error(VOX_ERR_UNSUPPORTED, "%s: model family \"%s\" is not supported by this build", model_path,
                           fam && fam->type == VOX_JSON_STRING ? fam->str : "?");
        goto fail;
    }
    for (size_t i = 0; i < vox_model_tensor_count(e->model); i++) {
        vox_tensor_info t;
        if (vox_model_tensor(e->model, i, &t) == VOX_OK) e->stats.weights_bytes += t.nbytes;
    }
    vx_pool_opts po = {.n_threads = p.n_threads, .cpu_affinity = e->cpu_affinity, .nice = p.nice, .spin_us = 200};
    if ((st = vx_pool_create(&po, &e->pool)) != VOX_OK) goto fail;
    e->gpu_index = spec.index;
    e->gpu_strict = spec.strict;
    e->codec_cpu = spec.codec_cpu;
    if (spec.gpu && (st = vx_gpu_create(spec.index, &e->gpu)) != VOX_OK) goto fail;
    if ((st = e->family->load(e)) != VOX_OK) goto fail;
    if ((st = report_placement(e, &spec)) != VOX_OK) goto fail;
    if ((st = add_device_info(e)) != VOX_OK) goto fail;
    *out = e;
    return VOX_OK;
fail:
    vox_engine_free(e);
    return st;
}

void vox_engine_free(vox_engine *e) {
    if (!e) return;
    if (e->family && e->impl) e->family->unload(e);
    vx_pool_free(e->pool);
    if (e->gpu) {   /* VOX_PROFILE=gpu: where the device's time went, once the engine is done */
        const char *prof = getenv("VOX_PROFILE");
        if (prof && !strcmp(prof, "gpu")) vx_gpu_profile_print(e->gpu, stderr);
    }
    vx_gpu_free(e->gpu);
    vox_model_close(e->model);
    pthread_mutex_destroy(&e->lock);
    free(e->info);
    free(e->device);
    free(e->cpu_affinity);
    free(e);
}

const char *vox_engine_info(const vox_engine *e) { return e && e->info ? e->info : "{}"; }

vox_status vox_engine_tokenize(vox_engine *e, const char *text, int32_t *ids, size_t capacity, size_t *n_ids) {
    if (!e || !text || !n_ids || (!ids && capacity))
        return vox_set_error(VOX_ERR_INVALID_ARGUMENT, "vox_engine_tokenize: NULL argument");
    if (!e->family->tokenize)
        return vox_set_error(VOX_ERR_UNSUPPORTED, "family %s has no text tokenizer", e->family->name);
    return e->family->tokenize(e, text, ids, capacity, n_ids);
}

vox_status vox_engine_stats_get(const vox_engine *e, vox_engine_stats *out) {
    if (!e || !out) return vox_set_error(VOX_ERR_INVALID_ARGUMENT, "vox_engine_stats_get: NULL argument");
    if (out->struct_size < sizeof(uint32_t))
        return vox_set_error(VOX_ERR_INVALID_ARGUMENT, "vox_engine_stats.struct_size must be set to sizeof(vox_engine_stats)");
    uint32_t size = out->struct_size < sizeof *out ? out->struct_size : (uint32_t)sizeof *out;
    pthread_mutex_lock((pthread_mutex_t *)&e->lock);
    vox_engine_stats s = e->stats;
    s.sessions_active = e->sessions_active;
    pthread_mutex_unlock((pthread_mutex_t *)&e->lock);
    s.struct_size = size;
    memcpy(out, &s, size);
    return VOX_OK;
}

void vx_stats_add(vox_engine *e, const vox_engine_stats *d) {
    pthread_mutex_lock(&e->lock);
    e->stats.sessions_created += d->sessions_created;
    e->stats.frames_generated += d->frames_generated;
    e->stats.samples_produced += d->samples_produced;
    e->stats.prefill_ms += d->prefill_ms;
    e->stats.talker_ms += d->talker_ms;
    e->stats.predictor_ms += d->predictor_ms;
    e->stats.decoder_ms += d->decoder_ms;
    e->stats.voice_ms += d->voice_ms;
    pthread_mutex_unlock(&e->lock);
}

vox_status vox_engine_trace(vox_engine *e, const int32_t *ids, size_t n_ids, const float *style, float speed,
                            uint64_t seed, int32_t noise, const char *tap, float *out, size_t capacity, size_t *n_rows,
                            size_t *n_cols) {
    if (!e || !ids || !style || !tap || !n_rows || !n_cols || (!out && capacity))
        return vox_set_error(VOX_ERR_INVALID_ARGUMENT, "vox_engine_trace: NULL argument");
    if (!e->family->trace) return vox_set_error(VOX_ERR_UNSUPPORTED, "family %s has no trace entry", e->family->name);
    if (!(speed > 0.0f)) return vox_set_error(VOX_ERR_INVALID_ARGUMENT, "vox_engine_trace: speed must be > 0");
    return e->family->trace(e, ids, n_ids, style, speed, seed, noise, tap, out, capacity, n_rows, n_cols);
}

vox_status vox_engine_decode(vox_engine *e, const int32_t *codes, size_t n_frames, const int32_t *ref_codes,
                             size_t n_ref, vox_decoder_mode mode, int32_t context, int32_t chunk_frames, float *pcm,
                             size_t capacity, size_t *n_samples) {
    if (!e || !n_samples || (!codes && n_frames) || (!ref_codes && n_ref) || (!pcm && capacity))
        return vox_set_error(VOX_ERR_INVALID_ARGUMENT, "vox_engine_decode: NULL argument");
    if (mode != VOX_DECODER_STREAM && mode != VOX_DECODER_REFERENCE)
        return vox_set_error(VOX_ERR_INVALID_ARGUMENT, "vox_engine_decode: unknown decoder mode %d", (int)mode);
    if (mode == VOX_DECODER_STREAM && chunk_frames <= 0)
        return vox_set_error(VOX_ERR_INVALID_ARGUMENT, "vox_engine_decode: chunk_frames must be > 0");
    if (!e->family->decode)
        return vox_set_error(VOX_ERR_UNSUPPORTED, "family %s has no codec decoder", e->family->name);
    double t0 = vx_now_ms();
    vox_status st = e->family->decode(e, codes, n_frames, ref_codes, n_ref, mode, context, chunk_frames, pcm,
                                      capacity, n_samples);
    vox_engine_stats d = {.decoder_ms = vx_now_ms() - t0};
    vx_stats_add(e, &d);
    return st;
}
