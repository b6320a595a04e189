/* The engine part of the C ABI: creation, info, tokenization, statistics, freeing. */

#include "engine.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "error.h"
#include "family.h"
#include "kernels.h"
#include "strbuf.h"
#include "tmod.h"
#include "vulkan/vk.h"

void vx_session_destroy(vox_session *s);   /* session.c: free a session the engine is freeing */

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
    if (out->n_threads < 0 || out->n_threads > 1024)
        return vox_set_error(VOX_ERR_INVALID_ARGUMENT, "n_threads must be in [0, 1024] (0: every CPU), not %d",
                             out->n_threads);
    if (out->nice < -20 || out->nice > 19)
        return vox_set_error(VOX_ERR_INVALID_ARGUMENT, "nice must be in [-20, 19], not %d", out->nice);
    if (out->max_sessions < 0 || out->max_sessions > 65536)
        return vox_set_error(VOX_ERR_INVALID_ARGUMENT, "max_sessions must be in [0, 65536] (0: unlimited), not %d",
                             out->max_sessions);
    return VOX_OK;
}

const char *vx_device_opt(const vox_engine *e, const char *key) {
    for (int i = 0; i < e->n_device_opts; i++)
        if (!strcmp(e->device_opts[i].key, key)) return e->device_opts[i].value;
    return NULL;
}

void vx_placement_reason(vox_engine *e, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(e->cpu_reason, sizeof e->cpu_reason, fmt, ap);
    va_end(ap);
}

/* The device string's key=value options must be the family's. */
static vox_status take_device_opts(vox_engine *e, const vx_device_spec *spec) {
    for (int i = 0; i < spec->n_opts; i++) {
        bool known = false;
        for (const char *const *k = e->family->device_options; k && *k && !known; k++)
            known = !strcmp(*k, spec->opts[i].key);
        if (!known) {
            vx_buf b = {0};
            for (const char *const *k = e->family->device_options; k && *k; k++)
                vx_buf_printf(&b, ", %s=...", *k);
            vox_status st = vox_set_error(VOX_ERR_INVALID_ARGUMENT, "device \"%s\": unknown option \"%s\" for a %s "
                                          "model (options: strict%s)", e->device, spec->opts[i].key, e->family->name,
                                          b.s ? b.s : "");
            vx_buf_free(&b);
            return st;
        }
        snprintf(e->device_opts[i].key, sizeof e->device_opts[i].key, "%s", spec->opts[i].key);
        snprintf(e->device_opts[i].value, sizeof e->device_opts[i].value, "%s", spec->opts[i].value);
        e->n_device_opts = i + 1;
    }
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
        if (!e->cpu_reason[0]) vx_placement_reason(e, "the %s family has no GPU path yet", e->family->name);
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
                (double)e->bytes_gpu / 1048576.0, (long long)e->matrices_cpu, e->matrices_cpu && e->cpu_reason[0] ? " (" : "",
                e->matrices_cpu ? e->cpu_reason : "", e->matrices_cpu && e->cpu_reason[0] ? ")" : "");
    if (e->gpu_strict && e->matrices_gpu == 0)
        return vox_set_error(VOX_ERR_UNSUPPORTED, "device vulkan:%d,strict: no matrix would run on the GPU (%s)",
                             e->gpu_index, e->cpu_reason);
    return VOX_OK;
}

/* vox_engine_info gets "device" ("cpu" or "vulkan:N": where the model runs), "gpu" (null, or the
 * device's name and what the engine placed in its memory), "placement" (what runs where and why: the
 * resource planner reads it), "stages" and "entries" from the family's tables. */
static vox_status add_engine_info(vox_engine *e) {
    if (!e->info) return VOX_OK;
    size_t len = strlen(e->info);
    if (len < 2 || e->info[len - 1] != '}') return VOX_OK;
    vx_buf b = {0};
    vx_buf_printf(&b, "%.*s%s", (int)(len - 1), e->info, len > 2 ? "," : "");
    if (!e->gpu) {
        vx_buf_printf(&b, "\"device\":\"cpu\",\"gpu\":null");
    } else {
        const vx_vk_device_info *gi = vx_gpu_info(e->gpu);
        vx_buf_printf(&b, "\"device\":\"vulkan:%d\",\"gpu\":{\"index\":%d,\"name\":", e->gpu_index, e->gpu_index);
        vx_buf_json_string(&b, gi->name, (size_t)-1);
        vx_buf_printf(&b, ",\"software\":%s,\"strict\":%s,\"options\":{", gi->software ? "true" : "false",
                      e->gpu_strict ? "true" : "false");
        for (int i = 0; i < e->n_device_opts; i++) {
            vx_buf_printf(&b, "%s", i ? "," : "");
            vx_buf_json_string(&b, e->device_opts[i].key, (size_t)-1);
            vx_buf_printf(&b, ":");
            vx_buf_json_string(&b, e->device_opts[i].value, (size_t)-1);
        }
        vx_buf_printf(&b, "},\"matrices_gpu\":%lld,\"matrices_cpu\":%lld,\"weights_vram_bytes\":%llu,"
                          "\"vram_allocated_at_load_bytes\":%llu}",
                      (long long)e->matrices_gpu, (long long)e->matrices_cpu, (unsigned long long)e->bytes_gpu,
                      (unsigned long long)vx_gpu_bytes_allocated(e->gpu));
    }
    vx_buf_printf(&b, ",\"placement\":{\"matrices_gpu\":%lld,\"matrices_cpu\":%lld,\"cpu_reason\":",
                  (long long)e->matrices_gpu, (long long)e->matrices_cpu);
    vx_buf_json_string(&b, e->cpu_reason, (size_t)-1);
    vx_buf_printf(&b, "},\"stages\":[");
    for (int i = 0; e->family->stages && e->family->stages[i]; i++) {
        vx_buf_printf(&b, "%s", i ? "," : "");
        vx_buf_json_string(&b, e->family->stages[i], (size_t)-1);
    }
    vx_buf_printf(&b, "],\"session_outputs\":[");
    for (int i = 0; e->family->session_outputs && e->family->session_outputs[i]; i++) {
        vx_buf_printf(&b, "%s", i ? "," : "");
        vx_buf_json_string(&b, e->family->session_outputs[i], (size_t)-1);
    }
    vx_buf_printf(&b, "],\"entries\":{");
    for (size_t i = 0; i < e->family->n_entries; i++) {
        const vx_entry *en = &e->family->entries[i];
        vx_buf_printf(&b, "%s", i ? "," : "");
        vx_buf_json_string(&b, en->name, (size_t)-1);
        vx_buf_printf(&b, ":{\"needs_voice\":%s,\"inputs\":", en->needs_voice ? "true" : "false");
        vx_buf_json_string(&b, en->inputs ? en->inputs : "", (size_t)-1);
        vx_buf_printf(&b, ",\"outputs\":");
        vx_buf_json_string(&b, en->outputs ? en->outputs : "", (size_t)-1);
        vx_buf_printf(&b, ",\"doc\":");
        vx_buf_json_string(&b, en->doc ? en->doc : "", (size_t)-1);
        vx_buf_printf(&b, "}");
    }
    vx_buf_printf(&b, "},\"clone_options\":");
    if (e->family->clone_options) {
        void *cur = calloc(1, e->family->clone_options->size ? e->family->clone_options->size : 1);
        if (cur) vx_options_describe(e->family->clone_options, cur, &b);
        else b.failed = true;
        free(cur);
    } else {
        vx_buf_printf(&b, "[]");
    }
    vx_buf_printf(&b, "}");
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

    vox_engine *e = calloc(1, sizeof *e);
    if (!e) return vox_set_error(VOX_ERR_OUT_OF_MEMORY, "out of memory");
    pthread_mutex_init(&e->lock, NULL);
    pthread_cond_init(&e->unlinked, NULL);
    e->params = p;
    e->device = vx_strdup(p.device ? p.device : "cpu");
    e->cpu_affinity = vx_strdup(p.cpu_affinity);
    e->params.device = e->device;
    e->params.cpu_affinity = e->cpu_affinity;
    e->stats.struct_size = sizeof e->stats;

    if ((st = vox_model_open(model_path, &e->model)) != VOX_OK) goto fail;
    e->manifest = vox_model_json(e->model);
    /* vox_model_open refused families this build does not have */
    e->family = vx_family_find(vox_json_get(e->manifest, "family")->str);
    if ((st = take_device_opts(e, &spec)) != VOX_OK) goto fail;
    for (size_t i = 0; i < vox_model_tensor_count(e->model); i++) {
        vox_tensor_info t;
        if (vox_model_tensor(e->model, i, &t) == VOX_OK) e->stats.weights_bytes += t.nbytes;
    }
    vx_pool_opts po = {.n_threads = p.n_threads, .cpu_affinity = e->cpu_affinity, .nice = p.nice, .spin_us = 200};
    if ((st = vx_pool_create(&po, &e->pool)) != VOX_OK) goto fail;
    e->gpu_index = spec.index;
    e->gpu_strict = spec.strict;
    if (spec.gpu && (st = vx_gpu_create(spec.index, &e->gpu)) != VOX_OK) goto fail;
    if ((st = e->family->load(e)) != VOX_OK) goto fail;
    if ((st = report_placement(e, &spec)) != VOX_OK) goto fail;
    if ((st = add_engine_info(e)) != VOX_OK) goto fail;
    *out = e;
    return VOX_OK;
fail:
    vox_engine_free(e);
    return st;
}

void vox_engine_free(vox_engine *e) {
    if (!e) return;
    /* live sessions: cancelled, waited for, freed (their handles die with the engine) */
    for (;;) {
        pthread_mutex_lock(&e->lock);
        vox_session *s = e->sessions;
        while (s && s->freeing) s = s->next;
        if (!s && e->sessions) {   /* all being freed by other threads: wait for them */
            pthread_cond_wait(&e->unlinked, &e->lock);
            pthread_mutex_unlock(&e->lock);
            continue;
        }
        pthread_mutex_unlock(&e->lock);
        if (!s) break;
        vx_session_destroy(s);
    }
    if (e->family && e->impl) e->family->unload(e);
    vx_pool_free(e->pool);
    if (e->gpu) {   /* VOX_PROFILE=gpu: where the device's time went, once the engine is done */
        const char *prof = getenv("VOX_PROFILE");
        if (prof && !strcmp(prof, "gpu")) vx_gpu_profile_print(e->gpu, stderr);
    }
    vx_gpu_free(e->gpu);
    vox_model_close(e->model);
    pthread_mutex_destroy(&e->lock);
    pthread_cond_destroy(&e->unlinked);
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

vox_status vox_engine_stage_stats(const vox_engine *e, vox_stage_stat *out, size_t capacity, size_t *n_stages) {
    if (!e || !n_stages || (!out && capacity))
        return vox_set_error(VOX_ERR_INVALID_ARGUMENT, "vox_engine_stage_stats: NULL argument");
    size_t n = 0;
    while (e->family->stages && e->family->stages[n] && n < VX_MAX_STAGES) n++;
    pthread_mutex_lock((pthread_mutex_t *)&e->lock);
    for (size_t i = 0; i < n && i < capacity; i++)
        out[i] = (vox_stage_stat){e->family->stages[i], e->stage_ms[i], e->stage_count[i]};
    pthread_mutex_unlock((pthread_mutex_t *)&e->lock);
    *n_stages = n;
    return VOX_OK;
}

void vx_stats_stage(vox_engine *e, int stage, double ms, uint64_t count) {
    if (stage < 0 || stage >= VX_MAX_STAGES) return;
    pthread_mutex_lock(&e->lock);
    e->stage_ms[stage] += ms;
    e->stage_count[stage] += count;
    e->stats.compute_ms += ms;
    pthread_mutex_unlock(&e->lock);
}

void vx_stats_samples(vox_engine *e, uint64_t samples) {
    pthread_mutex_lock(&e->lock);
    e->stats.samples_produced += samples;
    pthread_mutex_unlock(&e->lock);
}
