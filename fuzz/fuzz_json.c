/* The strict JSON parser (core/src/json.c) that reads manifests, .tvoice headers, pronunciation
 * overrides and tokenizer files.
 *
 * Invariants on every input: the parse ends in OK or FORMAT with one line of error text at an offset
 * inside the input. On success the tree is consistent (child counts, NUL-terminated strings whose
 * bytes are valid UTF-8, exact integers that equal their double), writing it back out as JSON and
 * parsing that gives the same tree, and the value limit is exact: the tree's value count parses, one
 * fewer does not. */
#include <math.h>
#include <stdbool.h>

#include "fuzz_common.h"

#include "json.h"
#include "strbuf.h"
#include "unicode/unicode.h"

static size_t count_values(const vox_json *v, int depth) {
    FZ_ASSERT(depth <= VOX_JSON_MAX_DEPTH, "depth %d", depth);
    size_t n = 1, kids = 0;
    if (v->type == VOX_JSON_STRING) {
        FZ_ASSERT(v->str && v->str[v->str_len] == '\0', "string not NUL-terminated");
        FZ_ASSERT(vx_utf8_valid_prefix(v->str, v->str_len) == v->str_len, "string is not UTF-8");
    }
    if (v->type == VOX_JSON_NUMBER) {
        FZ_ASSERT(isfinite(v->number), "non-finite number");
        if (v->is_integer)
            FZ_ASSERT((double)v->integer == v->number && llabs(v->integer) <= VOX_JSON_MAX_EXACT_INT, "integer");
    }
    for (const vox_json *c = v->child; c; c = c->next, kids++) {
        FZ_ASSERT((v->type == VOX_JSON_OBJECT) == (c->key != NULL), "key of a member");
        if (c->key) FZ_ASSERT(vx_utf8_valid_prefix(c->key, c->key_len) == c->key_len, "key is not UTF-8");
        n += count_values(c, depth + 1);
    }
    FZ_ASSERT(kids == v->count, "count %zu, %zu children", v->count, kids);
    FZ_ASSERT(kids == 0 || v->type == VOX_JSON_ARRAY || v->type == VOX_JSON_OBJECT, "children of a scalar");
    return n;
}

static void write_json(vx_buf *b, const vox_json *v) {
    switch (v->type) {
    case VOX_JSON_NULL: vx_buf_append(b, "null", 4); break;
    case VOX_JSON_TRUE: vx_buf_append(b, "true", 4); break;
    case VOX_JSON_FALSE: vx_buf_append(b, "false", 5); break;
    case VOX_JSON_STRING: vx_buf_json_string(b, v->str, v->str_len); break;
    case VOX_JSON_NUMBER:
        if (v->is_integer) {
            vx_buf_printf(b, "%lld", (long long)v->integer);
        } else {  /* %.17g round-trips the double; a fraction keeps it a non-integer ("-0" is -0.0) */
            char num[40];
            snprintf(num, sizeof num, "%.17g", v->number);
            vx_buf_printf(b, "%s%s", num, strpbrk(num, ".e") ? "" : ".0");
        }
        break;
    default: {
        bool obj = v->type == VOX_JSON_OBJECT;
        vx_buf_append(b, obj ? "{" : "[", 1);
        for (const vox_json *c = v->child; c; c = c->next) {
            if (c != v->child) vx_buf_append(b, ",", 1);
            if (obj) {
                vx_buf_json_string(b, c->key, c->key_len);
                vx_buf_append(b, ":", 1);
            }
            write_json(b, c);
        }
        vx_buf_append(b, obj ? "}" : "]", 1);
    }
    }
}

static bool same(const vox_json *a, const vox_json *b) {
    if (a->type != b->type || a->count != b->count || a->key_len != b->key_len) return false;
    if (a->key_len && memcmp(a->key, b->key, a->key_len)) return false;
    if (a->type == VOX_JSON_STRING && (a->str_len != b->str_len || memcmp(a->str, b->str, a->str_len))) return false;
    /* %.17g round-trips a double exactly; an integer written as digits parses back as one */
    if (a->type == VOX_JSON_NUMBER && (a->number != b->number || a->is_integer != b->is_integer)) return false;
    const vox_json *x = a->child, *y = b->child;
    for (; x && y; x = x->next, y = y->next)
        if (!same(x, y)) return false;
    return !x && !y;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    /* The text is a copy of exactly size bytes (no NUL after it): the parser must not read past len. */
    char *text = malloc(size ? size : 1);
    memcpy(text, data, size);
    vox_json_doc *doc = NULL;
    vox_json_error err;
    vox_status st = vox_json_parse(text, size, &doc, &err);
    if (st != VOX_OK) {
        FZ_ASSERT(st == VOX_ERR_FORMAT && doc == NULL, "status %d", st);
        FZ_ASSERT(err.offset <= size, "error offset %zu past %zu", err.offset, size);
        fz_check_message(err.message);
        free(text);
        return 0;
    }
    const vox_json *root = vox_json_root(doc);
    size_t values = count_values(root, 0);
    FZ_ASSERT(values <= VOX_JSON_MAX_VALUES, "%zu values", values);

    vx_buf b = {0};
    write_json(&b, root);
    FZ_ASSERT(!b.failed, "out of memory writing");
    vox_json_doc *again = NULL;
    st = vox_json_parse(b.s, b.len, &again, &err);
    /* A number written with %.17g may have more digits than 2^53 allows as an integer: still a number. */
    FZ_ASSERT(st == VOX_OK, "the tree written out does not parse: %s at %zu: %.200s", err.message, err.offset, b.s);
    FZ_ASSERT(same(root, vox_json_root(again)), "written and parsed back, the tree differs: %.200s", b.s);
    vox_json_free(again);
    vx_buf_free(&b);

    vox_json_doc *lim = NULL;
    FZ_ASSERT(vox_json_parse_limit(text, size, values, &lim, &err) == VOX_OK, "at the limit: %s", err.message);
    vox_json_free(lim);
    FZ_ASSERT(vox_json_parse_limit(text, size, values - 1, &lim, &err) == VOX_ERR_FORMAT &&
              strstr(err.message, "values in one document"), "under the limit: %s", err.message);
    vox_json_free(doc);
    free(text);
    return 0;
}
