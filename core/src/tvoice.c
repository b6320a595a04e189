/* .tvoice files (docs/formats.md): reading with complete validation, and atomic writing.
 *
 * The same rules as vox.formats.tvoice (the Python reader/writer): a file one of them writes, the
 * other reads; a file one of them rejects, the other rejects too (the conformance suite checks both
 * on mutated files). Voices are small, so a voice file is read whole and every CRC is verified. */

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "crc32.h"
#include "engine.h"
#include "family.h"
#include "error.h"
#include "json.h"
#include "strbuf.h"
#include "unicode/unicode.h"

#define TVOICE_FORMAT "vox.tvoice"
#define TVOICE_VERSION 1
#define TVOICE_MAX_FILE (1ull << 30)
#define TVOICE_MAX_HEADER (100ull << 20)

/* The family's schema of a voice (NULL with a message when the family is unknown). */
/* A string of the file, quoted for a message (escapes for anything unprintable, cut when long): the raw
 * bytes of a hostile file never reach a message. */
#define QUOTED(q, s) vox_json_quote(q, sizeof q, (s) ? (s) : "", (s) ? strlen(s) : 0)

static const vx_voice_schema *schema_of(const vox_voice *v, const char *path, vox_status *st) {
    const vx_family *f = vx_family_find(v->family);
    if (!f || !f->voices) {
        char q[64];
        *st = vox_set_error(VOX_ERR_FORMAT, "%s: unknown model family %s (this vox knows: %s)", path,
                            QUOTED(q, v->family), vx_family_names());
        return NULL;
    }
    return f->voices;
}

static const vx_voice_mode *find_mode(const vx_voice_schema *sc, const char *mode) {
    for (size_t i = 0; mode && i < sc->n_modes; i++)
        if (!strcmp(sc->modes[i].mode, mode)) return &sc->modes[i];
    return NULL;
}

static const vx_voice_array_spec *find_spec(const vx_voice_schema *sc, const char *name, size_t len) {
    for (size_t i = 0; i < sc->n_arrays; i++)
        if (strlen(sc->arrays[i].name) == len && !memcmp(sc->arrays[i].name, name, len)) return &sc->arrays[i];
    return NULL;
}

static bool in_list(const char *const *list, size_t n, const char *name) {
    for (size_t i = 0; i < n && list[i]; i++)
        if (!strcmp(list[i], name)) return true;
    return false;
}

/* The first control character of s[0, n) (C0 but tab, line feed and carriage return; DEL; C1), as the
 * session's text check defines them: a voice's texts reach the model as text does, and a NUL would
 * silently cut a C string. false when there is none. */
static bool control_char(const char *s, size_t n, size_t *at, uint32_t *cp_out) {
    for (size_t i = 0; i < n;) {
        uint32_t cp;
        bool incomplete = false;
        size_t len = vx_utf8_decode(s, n, i, &cp, &incomplete);
        if (!len) return false;   /* invalid UTF-8 is refused elsewhere (the JSON parser, the writer's caller) */
        if ((cp < 0x20 && cp != '\t' && cp != '\n' && cp != '\r') || cp == 0x7f || (cp >= 0x80 && cp < 0xa0)) {
            *at = i, *cp_out = cp;
            return true;
        }
        i += len;
    }
    return false;
}

static bool hex64(const char *s) {
    if (!s || strlen(s) != 64) return false;
    for (int i = 0; i < 64; i++)
        if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f'))) return false;
    return true;
}

/* The checks every voice passes before it is written and after it is read: its family's schema. */
static vox_status validate(const vox_voice *v, const char *path) {
    char q[64];
    vox_status st = VOX_OK;
    const vx_voice_schema *sc = schema_of(v, path, &st);
    if (!sc) return st;
    const vx_voice_mode *m = find_mode(sc, v->mode);
    if (!m) return vox_set_error(VOX_ERR_FORMAT, "%s: unknown voice mode %s", path, QUOTED(q, v->mode));
    if (m->variant && (!v->variant || strcmp(v->variant, m->variant) != 0))
        return vox_set_error(VOX_ERR_FORMAT, "%s: a %s voice belongs to the %s variant, not %s", path, v->mode,
                             m->variant, QUOTED(q, v->variant));
    if (!hex64(v->model_id)) return vox_set_error(VOX_ERR_FORMAT, "%s: model_id must be 64 lowercase hex digits", path);
    if (!v->language || !*v->language)
        return vox_set_error(VOX_ERR_FORMAT, "%s: language must not be empty (use \"auto\")", path);
    size_t at;
    uint32_t cp;
    const char *names[VX_VOICE_MAX_TEXTS + 2] = {"name", "language"}, *vals[VX_VOICE_MAX_TEXTS + 2] = {v->name, v->language};
    int nv = 2;
    for (int i = 0; i < v->n_texts; i++) names[nv] = v->texts[i].name, vals[nv++] = v->texts[i].value;
    for (int i = 0; i < nv; i++)
        if (vals[i] && control_char(vals[i], strlen(vals[i]), &at, &cp))
            return vox_set_error(VOX_ERR_FORMAT, "%s: %s holds the control character U+%04X at byte %zu", path, names[i],
                                 (unsigned)cp, at);
    if (m->text) {
        const char *t = vx_voice_text(v, m->text);
        if (!t || !*t) return vox_set_error(VOX_ERR_FORMAT, "%s: a %s voice needs %s", path, v->mode, m->text);
    }
    for (size_t i = 0; i < 4 && m->required[i]; i++)
        if (!vx_voice_get_array(v, m->required[i]))
            return vox_set_error(VOX_ERR_FORMAT, "%s: a %s voice needs the tensor %s", path, v->mode, m->required[i]);
    for (int i = 0; i < v->n_arrays; i++) {
        const vx_voice_array *a = &v->arrays[i];
        if (!in_list(m->required, 4, a->name) && !in_list(m->allowed, 4, a->name))
            return vox_set_error(VOX_ERR_FORMAT, "%s: a %s voice has no %s", path, v->mode, a->name);
        const vx_voice_array_spec *sp = find_spec(sc, a->name, strlen(a->name));
        if (!sp || sp->dtype != a->dtype || sp->ndim != a->ndim)
            return vox_set_error(VOX_ERR_FORMAT, "%s: %s has the wrong type or rank", path, a->name);
        for (int d = 0; d < a->ndim; d++) {
            if (a->shape[d] <= 0) return vox_set_error(VOX_ERR_FORMAT, "%s: %s has an empty axis", path, a->name);
            if (d < 2 && sp->shape[d] && a->shape[d] != sp->shape[d])
                return vox_set_error(VOX_ERR_FORMAT, "%s: %s must be %lld x %lld", path, a->name,
                                     (long long)sp->shape[0], (long long)sp->shape[1]);
        }
        if (a->dtype == VOX_DTYPE_F32) {
            const float *f = a->data;
            for (size_t k = 0; k < a->count; k++)
                if (!isfinite(f[k])) return vox_set_error(VOX_ERR_FORMAT, "%s: %s holds non-finite values", path, a->name);
        } else {
            const int32_t *x = a->data;
            for (size_t k = 0; k < a->count; k++)
                if (x[k] < 0) return vox_set_error(VOX_ERR_FORMAT, "%s: %s holds negative ids", path, a->name);
        }
    }
    if (vx_voice_get_array(v, "source_wav") && !(v->source_rate > 0 && v->source_rate <= 1000000))
        return vox_set_error(VOX_ERR_FORMAT, "%s: source_wav needs a positive source_sample_rate", path);
    return VOX_OK;
}

/* ------------------------------------------------------------------------------------------ read */
static vox_status read_all(const char *path, unsigned char **data, size_t *size) {
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0) return vox_set_error(VOX_ERR_IO, "%s: %s", path, strerror(errno));
    struct stat sb;
    if (fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode)) {
        close(fd);
        return vox_set_error(VOX_ERR_IO, "%s: not a regular file", path);
    }
    if ((unsigned long long)sb.st_size > TVOICE_MAX_FILE) {
        close(fd);
        return vox_set_error(VOX_ERR_FORMAT, "%s: %lld bytes is too large for a voice file", path, (long long)sb.st_size);
    }
    size_t n = (size_t)sb.st_size;
    unsigned char *buf = malloc(n ? n : 1);
    if (!buf) {
        close(fd);
        return vox_set_error(VOX_ERR_OUT_OF_MEMORY, "%s: out of memory", path);
    }
    size_t got = 0;
    while (got < n) {
        ssize_t r = read(fd, buf + got, n - got);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) {
            free(buf);
            close(fd);
            return vox_set_error(VOX_ERR_IO, "%s: read failed", path);
        }
        got += (size_t)r;
    }
    close(fd);
    *data = buf;
    *size = n;
    return VOX_OK;
}

static char *meta_dup(const vox_json *meta, const char *key) {
    const vox_json *v = vox_json_get(meta, key);
    if (!v || v->type != VOX_JSON_STRING) return NULL;
    char *s = malloc(v->str_len + 1);
    if (s) memcpy(s, v->str, v->str_len + 1);
    return s;
}

static bool digits(const vox_json *v, uint64_t *out) {
    if (!v || v->type != VOX_JSON_STRING || v->str_len == 0 || v->str_len > 9) return false;
    uint64_t x = 0;
    for (size_t i = 0; i < v->str_len; i++) {
        if (v->str[i] < '0' || v->str[i] > '9') return false;
        x = x * 10 + (uint64_t)(v->str[i] - '0');
    }
    *out = x;
    return true;
}

typedef struct {
    const vox_json *entry;
    const vx_voice_array_spec *spec;
    uint64_t begin, end, count;
    int64_t shape[VOX_MAX_DIMS];
} tensor_ref;

static vox_status parse_voice(const char *path, const unsigned char *buf, size_t size, vox_voice *v) {
    char q[96];
    if (size < 8) return vox_set_error(VOX_ERR_FORMAT, "%s: not a valid .tvoice (safetensors) file: truncated (%zu bytes)", path, size);
    uint64_t n = 0;
    for (int i = 7; i >= 0; i--) n = n << 8 | buf[i];
    if (n > TVOICE_MAX_HEADER || 8 + n > size)
        return vox_set_error(VOX_ERR_FORMAT, "%s: not a valid .tvoice (safetensors) file: header length %llu exceeds "
                             "the file size %zu", path, (unsigned long long)n, size);
    vox_json_doc *doc = NULL;
    vox_json_error jerr;
    if (vox_json_parse((const char *)buf + 8, (size_t)n, &doc, &jerr) != VOX_OK)
        return vox_set_error(VOX_ERR_FORMAT, "%s: not a valid .tvoice (safetensors) file: corrupt header (%s)", path,
                             jerr.message);
    vox_status st = VOX_OK;
    const vox_json *root = vox_json_root(doc);
    const vox_json *meta = vox_json_get(root, "__metadata__");
    uint64_t start = 8 + n, data_len = size - start;
    tensor_ref refs[VX_VOICE_MAX_ARRAYS];
    int n_refs = 0;
    const vx_voice_schema *sc = NULL;
#define FAIL(...) do { st = vox_set_error(VOX_ERR_FORMAT, __VA_ARGS__); goto done; } while (0)
    if (root->type != VOX_JSON_OBJECT) FAIL("%s: not a valid .tvoice (safetensors) file: the header is not an object", path);
    if (!meta || meta->type != VOX_JSON_OBJECT) FAIL("%s: not a .tvoice file (no metadata)", path);
    for (const vox_json *c = meta->child; c; c = c->next) {
        if (c->type != VOX_JSON_STRING) FAIL("%s: not a valid .tvoice file: __metadata__ must map strings to strings", path);
        size_t at;
        uint32_t cp;
        if (control_char(c->str, c->str_len, &at, &cp))   /* before strdup: a NUL would cut the text short */
            FAIL("%s: metadata %s holds the control character U+%04X at byte %zu", path,
                 vox_json_quote(q, sizeof q, c->key, c->key_len), (unsigned)cp, at);
    }
    if (!vox_json_is_string(vox_json_get(meta, "format"), TVOICE_FORMAT)) FAIL("%s: not a .tvoice file (metadata format is not \"vox.tvoice\")", path);
    uint64_t ver;
    if (!digits(vox_json_get(meta, "format_version"), &ver)) FAIL("%s: invalid format_version", path);
    if (ver > TVOICE_VERSION) FAIL("%s: voice format version %llu was written by a newer vox; this one reads version %d", path, (unsigned long long)ver, TVOICE_VERSION);
    if (ver < TVOICE_VERSION) FAIL("%s: voice format version %llu is no longer supported; this vox reads version %d", path, (unsigned long long)ver, TVOICE_VERSION);
    const char *need[] = {"family", "mode", "model_id", "variant"};
    for (int i = 0; i < 4; i++)
        if (!vox_json_get(meta, need[i])) FAIL("%s: metadata has no %s", path, need[i]);
    v->family = meta_dup(meta, "family");
    if (!v->family) FAIL("%s: metadata family must be a string", path);
    if (!(sc = schema_of(v, path, &st))) goto done;

    /* the tensor entries */
    for (const vox_json *c = root->child; c; c = c->next) {
        if (c == meta) continue;
        const vx_voice_array_spec *sp = find_spec(sc, c->key, c->key_len);
        if (!sp) FAIL("%s: unknown tensor %s", path, vox_json_quote(q, sizeof q, c->key, c->key_len));
        if (n_refs == VX_VOICE_MAX_ARRAYS) FAIL("%s: too many tensors", path);
        const char *fdt = sp->dtype == VOX_DTYPE_F32 ? "F32" : "I64";
        const vox_json *dt = vox_json_get(c, "dtype"), *shape = vox_json_get(c, "shape"), *off = vox_json_get(c, "data_offsets");
        if (c->type != VOX_JSON_OBJECT || !dt || !shape || !off || shape->type != VOX_JSON_ARRAY || off->type != VOX_JSON_ARRAY || off->count != 2)
            FAIL("%s: tensor %s has a malformed entry", path, sp->name);
        if (!vox_json_is_string(dt, fdt)) FAIL("%s: %s must be %s", path, sp->name, fdt);
        if ((int)shape->count != sp->ndim) FAIL("%s: %s must have %d axes", path, sp->name, sp->ndim);
        tensor_ref *r = &refs[n_refs];
        memset(r, 0, sizeof *r);
        uint64_t count = 1, a, b;
        int k = 0;
        for (const vox_json *d = shape->child; d; d = d->next, k++) {
            uint64_t x;
            if (!vox_json_get_uint(d, 1ull << 31, &x) || x == 0) FAIL("%s: %s has an empty or invalid axis", path, sp->name);
            r->shape[k] = (int64_t)x;
            count *= x;
            if (count > TVOICE_MAX_FILE) FAIL("%s: %s is too large", path, sp->name);
        }
        if (!vox_json_get_uint(off->child, data_len, &a) || !vox_json_get_uint(off->child->next, data_len, &b) || a > b)
            FAIL("%s: tensor %s data lies outside the file", path, sp->name);
        uint64_t item = sp->dtype == VOX_DTYPE_F32 ? 4 : 8;
        if (count * item != b - a) FAIL("%s: %s has %llu elements, which does not match its %llu bytes", path, sp->name,
                                        (unsigned long long)count, (unsigned long long)(b - a));
        r->entry = c, r->spec = sp, r->begin = a, r->end = b, r->count = count;
        n_refs++;
    }
    /* the tensors tile the data section exactly: no holes, overlaps or trailing bytes */
    int order[VX_VOICE_MAX_ARRAYS];
    for (int i = 0; i < n_refs; i++) order[i] = i;
    for (int a = 1; a < n_refs; a++)  /* insertion sort by offset: a handful of tensors */
        for (int b = a; b > 0 && refs[order[b]].begin < refs[order[b - 1]].begin; b--) {
            int x = order[b];
            order[b] = order[b - 1];
            order[b - 1] = x;
        }
    uint64_t end = 0;
    for (int a = 0; a < n_refs; a++) {
        if (refs[order[a]].begin != end)
            FAIL("%s: tensor data has holes or overlaps (at byte %llu of the data)", path, (unsigned long long)end);
        end = refs[order[a]].end;
    }
    if (end != data_len) FAIL("%s: %llu trailing bytes after the last tensor", path, (unsigned long long)(data_len - end));

    /* checksums */
    const vox_json *crcs_s = vox_json_get(meta, "crc32");
    vox_json_doc *crc_doc = NULL;
    if (!crcs_s || vox_json_parse(crcs_s->str, crcs_s->str_len, &crc_doc, &jerr) != VOX_OK)
        FAIL("%s: metadata crc32 must give a CRC-32 for every tensor", path);
    const vox_json *crcs = vox_json_root(crc_doc);
    bool crc_ok = crcs->type == VOX_JSON_OBJECT && crcs->count == (size_t)n_refs;
    for (int t = 0; crc_ok && t < n_refs; t++) {
        uint64_t want;
        if (!vox_json_get_uint(vox_json_get(crcs, refs[t].spec->name), 0xFFFFFFFFull, &want)) {
            crc_ok = false;
            break;
        }
        uint32_t got = vox_crc32(0, buf + start + refs[t].begin, (size_t)(refs[t].end - refs[t].begin));
        if (got != (uint32_t)want) {
            vox_json_free(crc_doc);
            FAIL("%s: tensor %s is corrupt: CRC-32 %08x, the metadata says %08x", path, refs[t].spec->name, got, (unsigned)want);
        }
    }
    vox_json_free(crc_doc);
    if (!crc_ok) FAIL("%s: metadata crc32 must give a CRC-32 for every tensor", path);

    /* the voice */
    v->mode = meta_dup(meta, "mode");
    v->model_id = meta_dup(meta, "model_id");
    v->variant = meta_dup(meta, "variant");
    v->name = meta_dup(meta, "name");
    v->language = meta_dup(meta, "language");
    if (!v->language) v->language = strdup("auto");
    if (!v->name) v->name = strdup("");
    for (const char *const *t = sc->texts; t && *t; t++) {
        const vox_json *val = vox_json_get(meta, *t);
        if (val && (st = vx_voice_put_text(v, *t, val->str)) != VOX_OK) goto done;
    }
    const vox_json *defaults = vox_json_get(meta, "defaults");
    if (defaults) {
        vox_json_doc *d = NULL;
        if (vox_json_parse(defaults->str, defaults->str_len, &d, &jerr) != VOX_OK || vox_json_root(d)->type != VOX_JSON_OBJECT) {
            vox_json_free(d);
            FAIL("%s: metadata defaults is not a JSON object", path);
        }
        vox_json_free(d);
        free(v->defaults);
        v->defaults = meta_dup(meta, "defaults");
    }
    uint64_t rate = 0;
    const vox_json *sr = vox_json_get(meta, "source_sample_rate");
    if (sr && !digits(sr, &rate)) FAIL("%s: invalid source_sample_rate", path);
    bool has_wav = false;
    for (int t = 0; t < n_refs; t++) has_wav |= !strcmp(refs[t].spec->name, "source_wav");
    if (sr && !has_wav) FAIL("%s: source_sample_rate given without source_wav", path);
    v->source_rate = (int32_t)rate;
    for (int t = 0; t < n_refs; t++) {
        const unsigned char *p = buf + start + refs[t].begin;
        const vx_voice_array_spec *sp = refs[t].spec;
        size_t cnt = (size_t)refs[t].count;
        for (int d = 0; d < sp->ndim && d < 2; d++)
            if (sp->shape[d] && refs[t].shape[d] != sp->shape[d])
                FAIL("%s: %s has shape [%lld, %lld], it must be [%lld, %lld]", path, sp->name,
                     (long long)refs[t].shape[0], (long long)refs[t].shape[1], (long long)sp->shape[0],
                     (long long)sp->shape[1]);
        void *data;
        if (sp->dtype == VOX_DTYPE_F32) {
            float *f = malloc(cnt * sizeof *f + 1);
            if (!f) { st = vox_set_error(VOX_ERR_OUT_OF_MEMORY, "out of memory"); goto done; }
            memcpy(f, p, cnt * sizeof *f); /* little-endian hosts only (x86-64, aarch64) */
            data = f;
        } else {
            int32_t *ids = malloc(cnt * sizeof *ids + 1);
            if (!ids) { st = vox_set_error(VOX_ERR_OUT_OF_MEMORY, "out of memory"); goto done; }
            for (size_t i = 0; i < cnt; i++) {
                int64_t x;
                memcpy(&x, p + 8 * i, 8);
                if (x < 0) { free(ids); FAIL("%s: %s holds negative ids", path, sp->name); }
                if (x > INT32_MAX) { free(ids); FAIL("%s: %s holds an id beyond 2^31", path, sp->name); }
                ids[i] = (int32_t)x;
            }
            data = ids;
        }
        if ((st = vx_voice_put_array(v, sp->name, sp->dtype, sp->ndim, refs[t].shape, data)) != VOX_OK) goto done;
    }
    if (!v->family || !v->mode || !v->model_id || !v->variant || !v->language || !v->name)
        FAIL("%s: metadata family, mode, model_id and variant must be strings", path);
    st = validate(v, path);
#undef FAIL
done:
    vox_json_free(doc);
    return st;
}

vox_status vox_voice_load(vox_engine *e, const char *path, vox_voice **out) {
    if (!out) return vox_set_error(VOX_ERR_INVALID_ARGUMENT, "vox_voice_load: out is NULL");
    *out = NULL;
    if (!e || !path) return vox_set_error(VOX_ERR_INVALID_ARGUMENT, "vox_voice_load: NULL argument");
    unsigned char *buf = NULL;
    size_t size = 0;
    vox_status st = read_all(path, &buf, &size);
    if (st != VOX_OK) return st;
    vox_voice *v = vx_voice_new();
    if (!v) {
        free(buf);
        return vox_set_error(VOX_ERR_OUT_OF_MEMORY, "out of memory");
    }
    st = parse_voice(path, buf, size, v);
    free(buf);
    const vox_json *fam = vox_json_get(e->manifest, "family"), *mid = vox_json_get(e->manifest, "model_id");
    if (st == VOX_OK && !vox_json_is_string(fam, v->family))
        st = vox_set_error(VOX_ERR_FORMAT, "%s: a %s voice cannot be used with a %s model", path, v->family, fam->str);
    const vox_json *variant = vox_json_get(e->manifest, "variant");
    /* a portable voice fits any weights of its family and variant */
    bool portable = st == VOX_OK && e->family->voices && e->family->voices->portable;
    if (portable && !vox_json_is_string(variant, v->variant))
        st = vox_set_error(VOX_ERR_FORMAT, "%s: a %s %s voice cannot be used with a %s %s model", path, v->family,
                           v->variant, v->family, variant && variant->type == VOX_JSON_STRING ? variant->str : "?");
    if (st == VOX_OK && !portable && !vox_json_is_string(mid, v->model_id))
        st = vox_set_error(VOX_ERR_FORMAT, "%s: the voice was made with model %.12s, this model is %.12s (other "
                           "weights): re-create the voice from its source recording", path, v->model_id, mid->str);
    if (st == VOX_OK && e->family->voice_check) {
        st = e->family->voice_check(e, v);
        if (st != VOX_OK) {
            char msg[1024];
            snprintf(msg, sizeof msg, "%s", vox_last_error());
            st = vox_set_error(st, "%s: %s", path, msg);
        }
    }
    if (st == VOX_OK) st = vx_voice_finish(v);
    if (st != VOX_OK) {
        vox_voice_free(v);
        return st;
    }
    *out = v;
    return VOX_OK;
}

/* ----------------------------------------------------------------------------------------- write */
vox_status vox_voice_save(const vox_voice *v, const char *path) {
    if (!v || !path) return vox_set_error(VOX_ERR_INVALID_ARGUMENT, "vox_voice_save: NULL argument");
    vox_status st = validate(v, path);
    if (st != VOX_OK) return st;
    /* tensors in the schema's order, each as little-endian bytes (ids as I64) */
    const vx_voice_schema *sc = vx_family_find(v->family)->voices;
    const vx_voice_array *arr[VX_VOICE_MAX_ARRAYS];
    int n = 0;
    for (size_t i = 0; i < sc->n_arrays; i++) {
        const vx_voice_array *a = vx_voice_get_array(v, sc->arrays[i].name);
        if (a) arr[n++] = a;
    }
    unsigned char *blobs[VX_VOICE_MAX_ARRAYS] = {0};
    size_t sizes[VX_VOICE_MAX_ARRAYS] = {0};
    uint32_t crcs[VX_VOICE_MAX_ARRAYS] = {0};
    for (int t = 0; t < n; t++) {
        size_t item = arr[t]->dtype == VOX_DTYPE_F32 ? 4 : 8;
        sizes[t] = arr[t]->count * item;
        blobs[t] = malloc(sizes[t] + 1);
        if (!blobs[t]) {
            st = vox_set_error(VOX_ERR_OUT_OF_MEMORY, "out of memory");
            goto out;
        }
        if (item == 4) {
            memcpy(blobs[t], arr[t]->data, sizes[t]);
        } else {
            const int32_t *src = arr[t]->data;
            for (size_t i = 0; i < arr[t]->count; i++) {
                int64_t x = src[i];
                memcpy(blobs[t] + 8 * i, &x, 8);
            }
        }
        crcs[t] = vox_crc32(0, blobs[t], sizes[t]);
    }
    /* the JSON keys sorted, as the Python writer writes them */
    int sorted[VX_VOICE_MAX_ARRAYS];
    for (int i = 0; i < n; i++) sorted[i] = i;
    for (int a = 1; a < n; a++)
        for (int b = a; b > 0 && strcmp(arr[sorted[b]]->name, arr[sorted[b - 1]]->name) < 0; b--) {
            int x = sorted[b];
            sorted[b] = sorted[b - 1];
            sorted[b - 1] = x;
        }
    vx_buf h = {0}, crc = {0};
    vx_buf_printf(&crc, "{");
    for (int i = 0; i < n; i++)
        vx_buf_printf(&crc, "%s\"%s\": %u", i ? ", " : "", arr[sorted[i]]->name, crcs[sorted[i]]);
    vx_buf_printf(&crc, "}");
    char *crc_json = vx_buf_take(&crc);
    vx_buf_printf(&h, "{\"__metadata__\":{\"format\":\"" TVOICE_FORMAT "\",\"format_version\":\"%d\",\"family\":",
                  TVOICE_VERSION);
    vx_buf_json_string(&h, v->family, (size_t)-1);
    const char *keys[] = {"model_id", "variant", "mode", "name", "language", "defaults"};
    const char *vals[] = {v->model_id, v->variant, v->mode, v->name ? v->name : "", v->language,
                          v->defaults ? v->defaults : "{}"};
    for (int i = 0; i < 6; i++) {
        vx_buf_printf(&h, ",\"%s\":", keys[i]);
        vx_buf_json_string(&h, vals[i], (size_t)-1);
    }
    vx_buf_printf(&h, ",\"crc32\":");
    vx_buf_json_string(&h, crc_json ? crc_json : "{}", (size_t)-1);
    free(crc_json);
    for (const char *const *t = sc->texts; t && *t; t++) {
        const char *s = vx_voice_text(v, *t);
        if (s && *s) {
            vx_buf_printf(&h, ",\"%s\":", *t);
            vx_buf_json_string(&h, s, (size_t)-1);
        }
    }
    if (vx_voice_get_array(v, "source_wav")) vx_buf_printf(&h, ",\"source_sample_rate\":\"%d\"", v->source_rate);
    vx_buf_printf(&h, "}");
    size_t off = 0;
    for (int t = 0; t < n; t++) {
        vx_buf_printf(&h, ",\"%s\":{\"dtype\":\"%s\",\"shape\":[", arr[t]->name,
                      arr[t]->dtype == VOX_DTYPE_F32 ? "F32" : "I64");
        for (int d = 0; d < arr[t]->ndim; d++) vx_buf_printf(&h, "%s%lld", d ? "," : "", (long long)arr[t]->shape[d]);
        vx_buf_printf(&h, "],\"data_offsets\":[%zu,%zu]}", off, off + sizes[t]);
        off += sizes[t];
    }
    vx_buf_printf(&h, "}");
    while (h.len % 8) vx_buf_append(&h, " ", 1);  /* data 8-byte aligned, as the reference writer */
    char *header = vx_buf_take(&h);
    if (!header) {
        st = vox_set_error(VOX_ERR_OUT_OF_MEMORY, "out of memory");
        goto out;
    }
    size_t hlen = strlen(header);
    char *tmp = malloc(strlen(path) + 32);
    if (!tmp) {
        free(header);
        st = vox_set_error(VOX_ERR_OUT_OF_MEMORY, "out of memory");
        goto out;
    }
    sprintf(tmp, "%s.%d.tmp", path, (int)getpid());
    FILE *f = fopen(tmp, "wb");
    if (!f) {
        st = vox_set_error(VOX_ERR_IO, "%s: cannot write (%s)", path, strerror(errno));
    } else {
        unsigned char len8[8];
        for (int i = 0; i < 8; i++) len8[i] = (unsigned char)((uint64_t)hlen >> (8 * i));
        bool ok = fwrite(len8, 1, 8, f) == 8 && fwrite(header, 1, hlen, f) == hlen;
        for (int t = 0; ok && t < n; t++) ok = fwrite(blobs[t], 1, sizes[t], f) == sizes[t];
        ok = fflush(f) == 0 && fsync(fileno(f)) == 0 && ok;
        ok = fclose(f) == 0 && ok;
        if (!ok || rename(tmp, path) != 0) {
            st = vox_set_error(VOX_ERR_IO, "%s: write failed (%s)", path, strerror(errno));
            unlink(tmp);
        }
    }
    free(tmp);
    free(header);
out:
    for (int t = 0; t < n; t++) free(blobs[t]);
    return st;
}
