/* Described option sets: JSON in, validated struct fields out, and the description back (options.h). */
#include "options.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "error.h"

static const char *type_name(vx_opt_type t) {
    static const char *const names[] = {"bool", "int", "float", "enum", "string", "json"};
    return names[t];
}

/* The index of s[0..n) in "a|b|c", or -1. */
static int choice_index(const char *choices, const char *s, size_t n) {
    int i = 0;
    for (const char *c = choices; *c; i++) {
        size_t len = strcspn(c, "|");
        if (len == n && !memcmp(c, s, n)) return i;
        c += len;
        if (*c == '|') c++;
    }
    return -1;
}

static void choice_name(const char *choices, int index, const char **s, size_t *n) {
    const char *c = choices;
    for (int i = 0; i < index && *c; i++) {
        c += strcspn(c, "|");
        if (*c == '|') c++;
    }
    *s = c;
    *n = strcspn(c, "|");
}

static const vx_option *find(const vx_option_set *set, const char *key, size_t len) {
    for (size_t i = 0; i < set->n; i++)
        if (strlen(set->opts[i].name) == len && !memcmp(set->opts[i].name, key, len)) return &set->opts[i];
    return NULL;
}

static vox_status unknown(const vx_option_set *set, const vox_json *c, const char *what) {
    vx_buf b = {0};
    for (size_t i = 0; i < set->n; i++) vx_buf_printf(&b, "%s%s", i ? ", " : "", set->opts[i].name);
    char q[80];
    vox_status st = vox_set_error(VOX_ERR_INVALID_ARGUMENT, "%s: unknown option %s; this model takes: %s", what,
                                  vox_json_quote(q, sizeof q, c->key, c->key_len), b.s ? b.s : "none");
    vx_buf_free(&b);
    return st;
}

static void range_text(const vx_option *o, char *dst, size_t cap) {
    if (o->type == VX_OPT_INT)
        snprintf(dst, cap, "an integer in [%.17g, %.17g]", o->min, o->max);
    else
        snprintf(dst, cap, "a number in %c%.9g, %.9g%c", o->min_open ? '(' : '[', o->min, o->max,
                 o->max_open ? ')' : ']');
}

static vox_status apply_one(const vx_option *o, void *dst, const vox_json *v, const char *what) {
    char *field = (char *)dst + o->offset;
    char got[48];
    if (v->type == VOX_JSON_NUMBER)
        snprintf(got, sizeof got, "%.17g", v->number);
    else
        snprintf(got, sizeof got, "%s", v->type == VOX_JSON_STRING ? "a string" : v->type == VOX_JSON_NULL ? "null"
                                      : v->type == VOX_JSON_ARRAY ? "an array" : v->type == VOX_JSON_OBJECT ? "an object"
                                      : "a boolean");
    switch (o->type) {
    case VX_OPT_BOOL:
        if (v->type != VOX_JSON_TRUE && v->type != VOX_JSON_FALSE)
            return vox_set_error(VOX_ERR_INVALID_ARGUMENT, "%s: %s must be true or false, not %s", what, o->name, got);
        *(int32_t *)field = v->type == VOX_JSON_TRUE;
        return VOX_OK;
    case VX_OPT_INT: {
        char r[96];
        range_text(o, r, sizeof r);
        if (v->type != VOX_JSON_NUMBER || !v->is_integer || (double)v->integer < o->min || (double)v->integer > o->max)
            return vox_set_error(VOX_ERR_INVALID_ARGUMENT, "%s: %s must be %s, not %s", what, o->name, r, got);
        *(int32_t *)field = (int32_t)v->integer;
        return VOX_OK;
    }
    case VX_OPT_FLOAT: {
        char r[96];
        range_text(o, r, sizeof r);
        double x = v->number;
        bool ok = v->type == VOX_JSON_NUMBER && isfinite(x) && (o->min_open ? x > o->min : x >= o->min) &&
                  (o->max_open ? x < o->max : x <= o->max) && isfinite((float)x);
        if (!ok) return vox_set_error(VOX_ERR_INVALID_ARGUMENT, "%s: %s must be %s, not %s", what, o->name, r, got);
        *(float *)field = (float)x;
        return VOX_OK;
    }
    case VX_OPT_ENUM: {
        int i = v->type == VOX_JSON_STRING ? choice_index(o->choices, v->str, v->str_len) : -1;
        if (i < 0) {
            char q[64];
            if (v->type == VOX_JSON_STRING) vox_json_quote(q, sizeof q, v->str, v->str_len);
            return vox_set_error(VOX_ERR_INVALID_ARGUMENT, "%s: %s must be one of %s, not %s", what, o->name,
                                 o->choices, v->type == VOX_JSON_STRING ? q : got);
        }
        *(int32_t *)field = i;
        return VOX_OK;
    }
    case VX_OPT_STRING:
        if (v->type != VOX_JSON_STRING && v->type != VOX_JSON_NULL)
            return vox_set_error(VOX_ERR_INVALID_ARGUMENT, "%s: %s must be a string, not %s", what, o->name, got);
        if (v->type == VOX_JSON_STRING && memchr(v->str, '\0', v->str_len))
            return vox_set_error(VOX_ERR_INVALID_ARGUMENT, "%s: %s holds a NUL character", what, o->name);
        *(const char **)field = v->type == VOX_JSON_STRING ? v->str : NULL;
        return VOX_OK;
    case VX_OPT_JSON:
        if (v->type != VOX_JSON_OBJECT && v->type != VOX_JSON_NULL)
            return vox_set_error(VOX_ERR_INVALID_ARGUMENT, "%s: %s must be a JSON object, not %s", what, o->name, got);
        *(const vox_json **)field = v->type == VOX_JSON_OBJECT ? v : NULL;
        return VOX_OK;
    }
    return vox_set_error(VOX_ERR_INTERNAL, "option %s: unknown type", o->name);
}

vox_status vx_options_apply(const vx_option_set *set, void *dst, const vox_json *obj, const char *what,
                            const char *const *ignore) {
    if (!obj) return VOX_OK;
    if (obj->type != VOX_JSON_OBJECT)
        return vox_set_error(VOX_ERR_INVALID_ARGUMENT, "%s must be a JSON object", what);
    for (const vox_json *c = obj->child; c; c = c->next) {
        bool skip = false;
        for (const char *const *g = ignore; g && *g && !skip; g++) skip = strlen(*g) == c->key_len && !memcmp(*g, c->key, c->key_len);
        if (skip) continue;
        const vx_option *o = find(set, c->key, c->key_len);
        if (!o) return unknown(set, c, what);
        vox_status st = apply_one(o, dst, c, what);
        if (st != VOX_OK) return st;
    }
    return VOX_OK;
}

vox_status vx_options_apply_some(const vx_option_set *set, void *dst, const vox_json *obj, const char *what) {
    if (!obj || obj->type != VOX_JSON_OBJECT) return VOX_OK;
    for (const vox_json *c = obj->child; c; c = c->next) {
        const vx_option *o = find(set, c->key, c->key_len);
        vox_status st = o ? apply_one(o, dst, c, what) : VOX_OK;
        if (st != VOX_OK) return st;
    }
    return VOX_OK;
}

vox_status vx_options_parse(const char *json, const char *what, vox_json_doc **out) {
    *out = NULL;
    if (!json || !*json) json = "{}";
    vox_json_error err;
    vox_status st = vox_json_parse(json, strlen(json), out, &err);
    if (st == VOX_ERR_OUT_OF_MEMORY) return vox_set_error(st, "out of memory");
    if (st != VOX_OK)
        return vox_set_error(VOX_ERR_INVALID_ARGUMENT, "%s is not valid JSON: %s (at byte %zu)", what, err.message,
                             err.offset);
    if (vox_json_root(*out)->type != VOX_JSON_OBJECT) {
        vox_json_free(*out);
        *out = NULL;
        return vox_set_error(VOX_ERR_INVALID_ARGUMENT, "%s must be a JSON object", what);
    }
    return VOX_OK;
}

/* Writes a JSON value (non-recursive callers: json.c trees are bounded in depth). */
static void json_value(vx_buf *b, const vox_json *v) {
    switch (v->type) {
    case VOX_JSON_NULL: vx_buf_printf(b, "null"); return;
    case VOX_JSON_FALSE: vx_buf_printf(b, "false"); return;
    case VOX_JSON_TRUE: vx_buf_printf(b, "true"); return;
    case VOX_JSON_NUMBER: vx_buf_printf(b, "%.17g", v->number); return;
    case VOX_JSON_STRING: vx_buf_json_string(b, v->str, v->str_len); return;
    case VOX_JSON_ARRAY:
    case VOX_JSON_OBJECT: {
        int obj = v->type == VOX_JSON_OBJECT;
        vx_buf_printf(b, obj ? "{" : "[");
        for (const vox_json *c = v->child; c; c = c->next) {
            if (c != v->child) vx_buf_printf(b, ",");
            if (obj) {
                vx_buf_json_string(b, c->key, c->key_len);
                vx_buf_printf(b, ":");
            }
            json_value(b, c);
        }
        vx_buf_printf(b, obj ? "}" : "]");
        return;
    }
    }
}

static void value(const vx_option *o, const void *cur, vx_buf *b) {
    const char *field = (const char *)cur + o->offset;
    switch (o->type) {
    case VX_OPT_BOOL: vx_buf_printf(b, *(const int32_t *)field ? "true" : "false"); return;
    case VX_OPT_INT: vx_buf_printf(b, "%d", *(const int32_t *)field); return;
    case VX_OPT_FLOAT: vx_buf_printf(b, "%.9g", (double)*(const float *)field); return;
    case VX_OPT_ENUM: {
        const char *s;
        size_t n;
        choice_name(o->choices, *(const int32_t *)field, &s, &n);
        vx_buf_json_string(b, s, n);
        return;
    }
    case VX_OPT_STRING: {
        const char *s = *(const char *const *)field;
        if (s)
            vx_buf_json_string(b, s, (size_t)-1);
        else
            vx_buf_printf(b, "null");
        return;
    }
    case VX_OPT_JSON: {
        const vox_json *j = *(const vox_json *const *)field;
        if (j)
            json_value(b, j);
        else
            vx_buf_printf(b, "null");
        return;
    }
    }
}

void vx_options_describe(const vx_option_set *set, const void *cur, vx_buf *b) {
    vx_buf_printf(b, "[");
    for (size_t i = 0; i < set->n; i++) {
        const vx_option *o = &set->opts[i];
        vx_buf_printf(b, "%s{\"name\":\"%s\",\"type\":\"%s\",\"default\":", i ? "," : "", o->name, type_name(o->type));
        value(o, cur, b);
        if (o->type == VX_OPT_INT || o->type == VX_OPT_FLOAT) {
            vx_buf_printf(b, ",\"min\":%.17g,\"max\":%.17g", o->min, o->max);
            if (o->type == VX_OPT_FLOAT)
                vx_buf_printf(b, ",\"min_open\":%s,\"max_open\":%s", o->min_open ? "true" : "false",
                              o->max_open ? "true" : "false");
        }
        if (o->type == VX_OPT_ENUM) {
            vx_buf_printf(b, ",\"choices\":[");
            int k = 0;
            for (const char *c = o->choices; *c; k++) {
                size_t len = strcspn(c, "|");
                vx_buf_printf(b, "%s", k ? "," : "");
                vx_buf_json_string(b, c, len);
                c += len;
                if (*c == '|') c++;
            }
            vx_buf_printf(b, "]");
        }
        vx_buf_printf(b, ",\"doc\":");
        vx_buf_json_string(b, o->doc ? o->doc : "", (size_t)-1);
        vx_buf_printf(b, "}");
    }
    vx_buf_printf(b, "]");
}

void vx_options_values(const vx_option_set *set, const void *cur, vx_buf *b) {
    vx_buf_printf(b, "{");
    for (size_t i = 0; i < set->n; i++) {
        vx_buf_printf(b, "%s\"%s\":", i ? "," : "", set->opts[i].name);
        value(&set->opts[i], cur, b);
    }
    vx_buf_printf(b, "}");
}
