/* Verification runs (vox_engine_run) and the traces that keep their outputs.
 *
 * One mechanism for every family: an entry of the family's table computes on named input arrays and
 * hands each intermediate it produces to the trace (vx_trace_put); the trace keeps the ones the caller
 * asked for, and the entry may stop once it has them all (vx_trace_complete). */
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "family.h"

typedef struct kept {
    char *name;
    vox_dtype dtype;
    int32_t ndim;
    int64_t shape[VOX_MAX_DIMS];
    void *data;
} kept;

struct vox_trace {
    char **wanted;       /* NULL: every output */
    size_t n_wanted;
    kept *items;
    size_t n, cap;
};

static size_t dtype_size(vox_dtype t) { return t == VOX_DTYPE_U8 ? 1 : t == VOX_DTYPE_I64 ? 8 : 4; }

size_t vx_array_count(const vox_array *a) {
    size_t n = 1;
    for (int i = 0; i < a->ndim; i++) n *= (size_t)a->shape[i];
    return n;
}

bool vx_trace_wants(const vox_trace *t, const char *name) {
    if (!t->wanted) return true;
    for (size_t i = 0; i < t->n_wanted; i++)
        if (!strcmp(t->wanted[i], name)) return true;
    return false;
}

static const kept *find_kept(const vox_trace *t, const char *name) {
    for (size_t i = 0; i < t->n; i++)
        if (!strcmp(t->items[i].name, name)) return &t->items[i];
    return NULL;
}

bool vx_trace_complete(const vox_trace *t) {
    if (!t->wanted) return false;
    for (size_t i = 0; i < t->n_wanted; i++)
        if (!find_kept(t, t->wanted[i])) return false;
    return true;
}

vox_status vx_trace_put(vox_trace *t, const char *name, vox_dtype dtype, int32_t ndim, const int64_t *shape,
                        const void *data) {
    if (!vx_trace_wants(t, name) || (t->wanted && find_kept(t, name))) return VOX_OK;
    if (ndim < 0 || ndim > VOX_MAX_DIMS) return vox_set_error(VOX_ERR_INTERNAL, "trace %s: %d dimensions", name, ndim);
    if (t->n == t->cap) {
        size_t cap = t->cap ? 2 * t->cap : 8;
        kept *k = realloc(t->items, cap * sizeof *k);
        if (!k) return vox_set_error(VOX_ERR_OUT_OF_MEMORY, "out of memory");
        t->items = k;
        t->cap = cap;
    }
    kept *k = &t->items[t->n];
    memset(k, 0, sizeof *k);
    size_t n = 1;
    for (int i = 0; i < ndim; i++) n *= (size_t)(k->shape[i] = shape[i]);
    k->ndim = ndim;
    k->dtype = dtype;
    k->name = strdup(name);
    k->data = malloc(n * dtype_size(dtype) + 1);
    if (!k->name || !k->data) {
        free(k->name);
        free(k->data);
        return vox_set_error(VOX_ERR_OUT_OF_MEMORY, "out of memory (trace %s)", name);
    }
    if (n) memcpy(k->data, data, n * dtype_size(dtype));
    t->n++;
    return VOX_OK;
}

const vox_array *vx_run_input(const vox_array *in, size_t n, const char *name) {
    for (size_t i = 0; i < n; i++)
        if (in[i].name && !strcmp(in[i].name, name)) return &in[i];
    return NULL;
}

void vox_trace_free(vox_trace *t) {
    if (!t) return;
    for (size_t i = 0; i < t->n; i++) free(t->items[i].name), free(t->items[i].data);
    for (size_t i = 0; i < t->n_wanted; i++) free(t->wanted[i]);
    free(t->wanted);
    free(t->items);
    free(t);
}

static vox_status parse_taps(vox_trace *t, const char *taps) {
    if (!taps || !*taps || !strcmp(taps, "*")) return VOX_OK;
    size_t n = 1;
    for (const char *c = taps; *c; c++) n += *c == ',';
    t->wanted = calloc(n, sizeof *t->wanted);
    if (!t->wanted) return vox_set_error(VOX_ERR_OUT_OF_MEMORY, "out of memory");
    for (const char *c = taps; *c;) {
        size_t len = strcspn(c, ",");
        if (len) {
            char *w = strndup(c, len);
            if (!w) return vox_set_error(VOX_ERR_OUT_OF_MEMORY, "out of memory");
            t->wanted[t->n_wanted++] = w;
        }
        c += len;
        if (*c == ',') c++;
    }
    return VOX_OK;
}

static vox_status check_inputs(const vox_array *in, size_t n) {
    for (size_t i = 0; i < n; i++) {
        const vox_array *a = &in[i];
        if (!a->name) return vox_set_error(VOX_ERR_INVALID_ARGUMENT, "vox_engine_run: input %zu has no name", i);
        if (a->dtype != VOX_DTYPE_F32 && a->dtype != VOX_DTYPE_I32 && a->dtype != VOX_DTYPE_U8)
            return vox_set_error(VOX_ERR_INVALID_ARGUMENT, "vox_engine_run: input %s must be F32, I32 or U8", a->name);
        if (a->ndim < 0 || a->ndim > VOX_MAX_DIMS)
            return vox_set_error(VOX_ERR_INVALID_ARGUMENT, "vox_engine_run: input %s has %d dimensions", a->name, a->ndim);
        size_t count = 1;
        for (int d = 0; d < a->ndim; d++) {
            if (a->shape[d] < 0 || a->shape[d] > (int64_t)1 << 31)
                return vox_set_error(VOX_ERR_INVALID_ARGUMENT, "vox_engine_run: input %s has a bad shape", a->name);
            count *= (size_t)a->shape[d];
            if (count > (size_t)1 << 32)
                return vox_set_error(VOX_ERR_LIMIT, "vox_engine_run: input %s is too large", a->name);
        }
        if (count && !a->data) return vox_set_error(VOX_ERR_INVALID_ARGUMENT, "vox_engine_run: input %s has no data", a->name);
        for (size_t j = 0; j < i; j++)
            if (!strcmp(in[j].name, a->name))
                return vox_set_error(VOX_ERR_INVALID_ARGUMENT, "vox_engine_run: input %s is given twice", a->name);
    }
    return VOX_OK;
}

vox_status vox_engine_run(vox_engine *e, const char *entry, const vox_voice *voice, const vox_synth_params *params,
                          const vox_array *inputs, size_t n_inputs, const char *taps, vox_trace **out) {
    if (!out) return vox_set_error(VOX_ERR_INVALID_ARGUMENT, "vox_engine_run: out is NULL");
    *out = NULL;
    if (!e || !entry || (!inputs && n_inputs)) return vox_set_error(VOX_ERR_INVALID_ARGUMENT, "vox_engine_run: NULL argument");
    const vx_family *f = e->family;
    const vx_entry *en = NULL;
    for (size_t i = 0; i < f->n_entries; i++)
        if (!strcmp(f->entries[i].name, entry)) en = &f->entries[i];
    if (!en || !f->run) {
        vx_buf b = {0};
        for (size_t i = 0; i < f->n_entries; i++) vx_buf_printf(&b, "%s%s", i ? ", " : "", f->entries[i].name);
        vox_status st = vox_set_error(VOX_ERR_NOT_FOUND, "the %s family has no verification entry \"%s\" (it has: %s)",
                                      f->name, entry, b.s ? b.s : "none");
        vx_buf_free(&b);
        return st;
    }
    if (en->needs_voice && !voice)
        return vox_set_error(VOX_ERR_INVALID_ARGUMENT, "vox_engine_run: the %s entry needs a voice", entry);
    vox_status st = check_inputs(inputs, n_inputs);
    if (st != VOX_OK) return st;
    vox_trace *t = calloc(1, sizeof *t);
    if (!t) return vox_set_error(VOX_ERR_OUT_OF_MEMORY, "out of memory");
    if ((st = parse_taps(t, taps)) != VOX_OK) {
        vox_trace_free(t);
        return st;
    }
    vox_session *s = NULL;
    if (voice) {
        const vox_array *text = vx_run_input(inputs, n_inputs, "text");
        if (text && (text->dtype != VOX_DTYPE_U8 || text->ndim != 1)) {
            vox_trace_free(t);
            return vox_set_error(VOX_ERR_INVALID_ARGUMENT, "vox_engine_run: the text input must be U8 [bytes]");
        }
        char *str = NULL;
        if (text) {
            str = malloc((size_t)text->shape[0] + 1);
            if (!str) {
                vox_trace_free(t);
                return vox_set_error(VOX_ERR_OUT_OF_MEMORY, "out of memory");
            }
            memcpy(str, text->data, (size_t)text->shape[0]);
            str[text->shape[0]] = '\0';
            if (strlen(str) != (size_t)text->shape[0]) {
                free(str);
                vox_trace_free(t);
                return vox_set_error(VOX_ERR_INVALID_ARGUMENT, "vox_engine_run: the text holds a NUL byte");
            }
        }
        if ((st = vx_session_create(e, voice, params, &s)) == VOX_OK && str) st = vox_session_feed(s, str);
        if (st == VOX_OK) st = vox_session_end(s);
        free(str);
    }
    if (st == VOX_OK && s) st = vx_session_sync(s);
    if (st == VOX_OK) st = f->run(e, s, en, inputs, n_inputs, t);
    vox_session_free(s);
    if (st != VOX_OK) {
        vox_trace_free(t);
        return st;
    }
    *out = t;
    return VOX_OK;
}

size_t vox_trace_count(const vox_trace *t) { return t ? t->n : 0; }

static void fill(const kept *k, vox_array *out) {
    memset(out, 0, sizeof *out);
    out->name = k->name;
    out->dtype = k->dtype;
    out->ndim = k->ndim;
    memcpy(out->shape, k->shape, sizeof out->shape);
    out->data = k->data;
}

vox_status vox_trace_get(const vox_trace *t, size_t index, vox_array *out) {
    if (!t || !out) return vox_set_error(VOX_ERR_INVALID_ARGUMENT, "vox_trace_get: NULL argument");
    if (index >= t->n)
        return vox_set_error(VOX_ERR_INVALID_ARGUMENT, "vox_trace_get: index %zu out of range (%zu outputs)", index, t->n);
    fill(&t->items[index], out);
    return VOX_OK;
}

vox_status vox_trace_find(const vox_trace *t, const char *name, vox_array *out) {
    if (!t || !name || !out) return vox_set_error(VOX_ERR_INVALID_ARGUMENT, "vox_trace_find: NULL argument");
    const kept *k = find_kept(t, name);
    if (!k) return vox_set_error(VOX_ERR_NOT_FOUND, "the trace has no output \"%s\"", name);
    fill(k, out);
    return VOX_OK;
}
