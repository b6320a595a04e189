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
#include "error.h"
#include "json.h"
#include "strbuf.h"

#define TVOICE_FORMAT "vox.tvoice"
#define TVOICE_VERSION 1
#define TVOICE_MAX_FILE (1ull << 30)
#define TVOICE_MAX_HEADER (100ull << 20)

vox_status vx_voice_finish(vox_voice *v);

/* T_STYLE: a Kokoro style pack [510, 256]; in memory it is the voice's embedding (510 * 256 floats). */
enum { T_EMB, T_CODES, T_TOKENS, T_WAV, T_STYLE, T_COUNT };
#define STYLE_ROWS 510
#define STYLE_DIM 256
static const struct {
    const char *name, *dtype;
    int ndim;
} tensors[T_COUNT] = {{"speaker_embedding", "F32", 1}, {"ref_codes", "I64", 2}, {"ref_text_tokens", "I64", 1},
                      {"source_wav", "F32", 1}, {"style_pack", "F32", 2}};

/* mode -> family, variant, required tensors (bit set), allowed extra tensors, required text */
static const struct {
    const char *mode, *family, *variant;
    unsigned required, allowed;
    const char *text;
} modes[] = {
    {"icl", "qwen3_tts", "base", 1u << T_EMB | 1u << T_CODES | 1u << T_TOKENS, 1u << T_WAV, "ref_text"},
    {"xvector", "qwen3_tts", "base", 1u << T_EMB, 1u << T_WAV, NULL},
    {"speaker", "qwen3_tts", "custom_voice", 0, 0, "speaker"},
    {"design", "qwen3_tts", "voice_design", 0, 0, "instruct"},
    {"style", "kokoro", "v1.0", 1u << T_STYLE, 0, NULL},
};

static bool is_style(const vox_voice *v) { return v->mode && !strcmp(v->mode, "style"); }

static int find_mode(const char *mode) {
    for (size_t i = 0; i < sizeof modes / sizeof modes[0]; i++)
        if (mode && !strcmp(modes[i].mode, mode)) return (int)i;
    return -1;
}

static bool hex64(const char *s) {
    if (!s || strlen(s) != 64) return false;
    for (int i = 0; i < 64; i++)
        if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f'))) return false;
    return true;
}

static const char *text_field(const vox_voice *v, const char *key) {
    if (!strcmp(key, "ref_text")) return v->ref_text;
    if (!strcmp(key, "speaker")) return v->speaker;
    if (!strcmp(key, "instruct")) return v->instruct;
    return NULL;
}

/* The checks every voice passes before it is written and after it is read. */
/* A string of the file, quoted for a message (escapes for anything unprintable, cut when long). */
#define QUOTED(q, s) vox_json_quote(q, sizeof q, (s) ? (s) : "", (s) ? strlen(s) : 0)

static vox_status validate(const vox_voice *v, const char *path) {
    char q[64];
    if (!v->family || (strcmp(v->family, "qwen3_tts") != 0 && strcmp(v->family, "kokoro") != 0))
        return vox_set_error(VOX_ERR_FORMAT, "%s: unknown model family %s (this vox knows: qwen3_tts, kokoro)",
                             path, QUOTED(q, v->family));
    int m = find_mode(v->mode);
    if (m < 0) return vox_set_error(VOX_ERR_FORMAT, "%s: unknown voice mode %s", path, QUOTED(q, v->mode));
    if (strcmp(v->family, modes[m].family) != 0)
        return vox_set_error(VOX_ERR_FORMAT, "%s: a %s voice belongs to the %s family, not \"%s\"", path, v->mode,
                             modes[m].family, v->family);
    if (!v->variant || strcmp(v->variant, modes[m].variant) != 0)
        return vox_set_error(VOX_ERR_FORMAT, "%s: a %s voice belongs to the %s variant, not %s", path, v->mode,
                             modes[m].variant, QUOTED(q, v->variant));
    if (!hex64(v->model_id)) return vox_set_error(VOX_ERR_FORMAT, "%s: model_id must be 64 lowercase hex digits", path);
    if (!v->language || !*v->language)
        return vox_set_error(VOX_ERR_FORMAT, "%s: language must not be empty (use \"auto\")", path);
    if (modes[m].text) {
        const char *t = text_field(v, modes[m].text);
        if (!t || !*t) return vox_set_error(VOX_ERR_FORMAT, "%s: a %s voice needs %s", path, v->mode, modes[m].text);
    }
    bool style = is_style(v);
    size_t have_n[T_COUNT] = {style ? 0 : v->n_embedding, v->n_ref_frames, v->n_ref_text_tokens, v->n_source,
                              style ? v->n_embedding : 0};
    for (int t = 0; t < T_COUNT; t++) {
        unsigned bit = 1u << t;
        if ((modes[m].required & bit) && !have_n[t])
            return vox_set_error(VOX_ERR_FORMAT, "%s: a %s voice needs the tensor %s", path, v->mode, tensors[t].name);
        if (have_n[t] && !(modes[m].required & bit) && !(modes[m].allowed & bit))
            return vox_set_error(VOX_ERR_FORMAT, "%s: a %s voice has no %s", path, v->mode, tensors[t].name);
    }
    if (style && v->n_embedding != (size_t)STYLE_ROWS * STYLE_DIM)
        return vox_set_error(VOX_ERR_FORMAT, "%s: style_pack must be %d x %d", path, STYLE_ROWS, STYLE_DIM);
    if (v->n_ref_frames && v->n_groups == 0)
        return vox_set_error(VOX_ERR_FORMAT, "%s: ref_codes has an empty axis", path);
    for (size_t i = 0; i < v->n_embedding; i++)
        if (!isfinite(v->embedding[i]))
            return vox_set_error(VOX_ERR_FORMAT, "%s: %s holds non-finite values", path, style ? "style_pack" : "speaker_embedding");
    for (size_t i = 0; i < v->n_source; i++)
        if (!isfinite(v->source[i])) return vox_set_error(VOX_ERR_FORMAT, "%s: source_wav holds non-finite values", path);
    for (size_t i = 0; i < v->n_ref_frames * v->n_groups; i++)
        if (v->ref_codes[i] < 0) return vox_set_error(VOX_ERR_FORMAT, "%s: ref_codes holds negative ids", path);
    for (size_t i = 0; i < v->n_ref_text_tokens; i++)
        if (v->ref_text_tokens[i] < 0) return vox_set_error(VOX_ERR_FORMAT, "%s: ref_text_tokens holds negative ids", path);
    if (v->n_source && !(v->source_rate > 0 && v->source_rate <= 1000000))
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
    uint64_t begin, end, count;
    int64_t shape[2];
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
    tensor_ref refs[T_COUNT];
    memset(refs, 0, sizeof refs);
#define FAIL(...) do { st = vox_set_error(VOX_ERR_FORMAT, __VA_ARGS__); goto done; } while (0)
    if (root->type != VOX_JSON_OBJECT) FAIL("%s: not a valid .tvoice (safetensors) file: the header is not an object", path);
    if (!meta || meta->type != VOX_JSON_OBJECT) FAIL("%s: not a .tvoice file (no metadata)", path);
    for (const vox_json *c = meta->child; c; c = c->next)
        if (c->type != VOX_JSON_STRING) FAIL("%s: not a valid .tvoice file: __metadata__ must map strings to strings", path);
    if (!vox_json_is_string(vox_json_get(meta, "format"), TVOICE_FORMAT)) FAIL("%s: not a .tvoice file (metadata format is not \"vox.tvoice\")", path);
    uint64_t ver;
    if (!digits(vox_json_get(meta, "format_version"), &ver)) FAIL("%s: invalid format_version", path);
    if (ver > TVOICE_VERSION) FAIL("%s: voice format version %llu was written by a newer vox; this one reads version %d", path, (unsigned long long)ver, TVOICE_VERSION);
    if (ver < TVOICE_VERSION) FAIL("%s: voice format version %llu is no longer supported; this vox reads version %d", path, (unsigned long long)ver, TVOICE_VERSION);
    const char *need[] = {"family", "mode", "model_id", "variant"};
    for (int i = 0; i < 4; i++)
        if (!vox_json_get(meta, need[i])) FAIL("%s: metadata has no %s", path, need[i]);

    /* the tensor entries */
    for (const vox_json *c = root->child; c; c = c->next) {
        if (c == meta) continue;
        int t = -1;
        for (int k = 0; k < T_COUNT; k++)
            if (strlen(tensors[k].name) == c->key_len && !memcmp(tensors[k].name, c->key, c->key_len)) t = k;
        if (t < 0) FAIL("%s: unknown tensor %s", path, vox_json_quote(q, sizeof q, c->key, c->key_len));
        const vox_json *dt = vox_json_get(c, "dtype"), *shape = vox_json_get(c, "shape"), *off = vox_json_get(c, "data_offsets");
        if (c->type != VOX_JSON_OBJECT || !dt || !shape || !off || shape->type != VOX_JSON_ARRAY || off->type != VOX_JSON_ARRAY || off->count != 2)
            FAIL("%s: tensor %s has a malformed entry", path, tensors[t].name);
        if (!vox_json_is_string(dt, tensors[t].dtype)) FAIL("%s: %s must be %s", path, tensors[t].name, tensors[t].dtype);
        if ((int)shape->count != tensors[t].ndim) FAIL("%s: %s must have %d axes", path, tensors[t].name, tensors[t].ndim);
        uint64_t count = 1, a, b;
        int k = 0;
        for (const vox_json *d = shape->child; d; d = d->next, k++) {
            uint64_t x;
            if (!vox_json_get_uint(d, 1ull << 31, &x) || x == 0) FAIL("%s: %s has an empty or invalid axis", path, tensors[t].name);
            refs[t].shape[k] = (int64_t)x;
            count *= x;
            if (count > TVOICE_MAX_FILE) FAIL("%s: %s is too large", path, tensors[t].name);
        }
        if (!vox_json_get_uint(off->child, data_len, &a) || !vox_json_get_uint(off->child->next, data_len, &b) || a > b)
            FAIL("%s: tensor %s data lies outside the file", path, tensors[t].name);
        uint64_t item = tensors[t].dtype[0] == 'F' ? 4 : 8;
        if (count * item != b - a) FAIL("%s: %s has %llu elements, which does not match its %llu bytes", path, tensors[t].name,
                                        (unsigned long long)count, (unsigned long long)(b - a));
        refs[t] = (tensor_ref){c, a, b, count, {refs[t].shape[0], refs[t].shape[1]}};
    }
    /* the tensors tile the data section exactly: no holes, overlaps or trailing bytes */
    int order[T_COUNT], k = 0;
    for (int t = 0; t < T_COUNT; t++)
        if (refs[t].entry) order[k++] = t;
    for (int a = 1; a < k; a++)  /* insertion sort by offset: at most five tensors */
        for (int b = a; b > 0 && refs[order[b]].begin < refs[order[b - 1]].begin; b--) {
            int x = order[b];
            order[b] = order[b - 1];
            order[b - 1] = x;
        }
    uint64_t end = 0;
    for (int a = 0; a < k; a++) {
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
    size_t n_tensors = 0;
    for (int t = 0; t < T_COUNT; t++) n_tensors += refs[t].entry != NULL;
    bool crc_ok = crcs->type == VOX_JSON_OBJECT && crcs->count == n_tensors;
    for (int t = 0; crc_ok && t < T_COUNT; t++) {
        if (!refs[t].entry) continue;
        uint64_t want;
        if (!vox_json_get_uint(vox_json_get(crcs, tensors[t].name), 0xFFFFFFFFull, &want)) {
            crc_ok = false;
            break;
        }
        uint32_t got = vox_crc32(0, buf + start + refs[t].begin, (size_t)(refs[t].end - refs[t].begin));
        if (got != (uint32_t)want) {
            vox_json_free(crc_doc);
            FAIL("%s: tensor %s is corrupt: CRC-32 %08x, the metadata says %08x", path, tensors[t].name, got, (unsigned)want);
        }
    }
    vox_json_free(crc_doc);
    if (!crc_ok) FAIL("%s: metadata crc32 must give a CRC-32 for every tensor", path);

    /* the voice */
    v->family = meta_dup(meta, "family");
    v->mode = meta_dup(meta, "mode");
    v->model_id = meta_dup(meta, "model_id");
    v->variant = meta_dup(meta, "variant");
    v->name = meta_dup(meta, "name");
    v->ref_text = meta_dup(meta, "ref_text");
    v->speaker = meta_dup(meta, "speaker");
    v->instruct = meta_dup(meta, "instruct");
    v->language = meta_dup(meta, "language");
    if (!v->language) v->language = strdup("auto");
    if (!v->name) v->name = strdup("");
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
    if (sr && !refs[T_WAV].entry) FAIL("%s: source_sample_rate given without source_wav", path);
    v->source_rate = (int32_t)rate;
    for (int t = 0; t < T_COUNT; t++) {
        if (!refs[t].entry) continue;
        const unsigned char *p = buf + start + refs[t].begin;
        size_t cnt = (size_t)refs[t].count;
        if (t == T_STYLE && (refs[t].shape[0] != STYLE_ROWS || refs[t].shape[1] != STYLE_DIM))
            FAIL("%s: style_pack has shape [%lld, %lld], a Kokoro style pack is [%d, %d]", path,
                 (long long)refs[t].shape[0], (long long)refs[t].shape[1], STYLE_ROWS, STYLE_DIM);
        if (tensors[t].dtype[0] == 'F') {
            float *f = malloc(cnt * sizeof *f);
            if (!f) { st = vox_set_error(VOX_ERR_OUT_OF_MEMORY, "out of memory"); goto done; }
            memcpy(f, p, cnt * sizeof *f); /* little-endian hosts only (x86-64, aarch64) */
            if (t == T_EMB || t == T_STYLE) {
                free(v->embedding);  /* a file with both fails below; keep one */
                v->embedding = f, v->n_embedding = cnt;
            }
            else v->source = f, v->n_source = cnt;
        } else {
            int32_t *ids = malloc(cnt * sizeof *ids);
            if (!ids) { st = vox_set_error(VOX_ERR_OUT_OF_MEMORY, "out of memory"); goto done; }
            for (size_t i = 0; i < cnt; i++) {
                int64_t x;
                memcpy(&x, p + 8 * i, 8);
                if (x < 0) { free(ids); FAIL("%s: %s holds negative ids", path, tensors[t].name); }
                if (x > INT32_MAX) { free(ids); FAIL("%s: %s holds an id beyond 2^31", path, tensors[t].name); }
                ids[i] = (int32_t)x;
            }
            if (t == T_CODES) {
                v->ref_codes = ids;
                v->n_ref_frames = (size_t)refs[t].shape[0];
                v->n_groups = (size_t)refs[t].shape[1];
            } else {
                v->ref_text_tokens = ids;
                v->n_ref_text_tokens = cnt;
            }
        }
    }
    if (!v->family || !v->mode || !v->model_id || !v->variant || !v->language || !v->name)
        FAIL("%s: metadata family, mode, model_id and variant must be strings", path);
    /* the embedding slot holds either tensor: which one the file had must fit the mode */
    int m = find_mode(v->mode);
    if (m >= 0 && is_style(v) && !refs[T_STYLE].entry) FAIL("%s: a %s voice needs the tensor style_pack", path, v->mode);
    if (m >= 0 && is_style(v) && refs[T_EMB].entry) FAIL("%s: a %s voice has no speaker_embedding", path, v->mode);
    if (m >= 0 && !is_style(v) && refs[T_STYLE].entry) {
        if ((modes[m].required & 1u << T_EMB) && !refs[T_EMB].entry)
            FAIL("%s: a %s voice needs the tensor speaker_embedding", path, v->mode);
        FAIL("%s: a %s voice has no style_pack", path, v->mode);
    }
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
    bool portable = st == VOX_OK && !strcmp(v->family, "kokoro");  /* a style pack fits any v1.0 conversion */
    if (portable && !vox_json_is_string(variant, v->variant))
        st = vox_set_error(VOX_ERR_FORMAT, "%s: a Kokoro %s style pack cannot be used with a Kokoro %s model", path,
                           v->variant, variant && variant->type == VOX_JSON_STRING ? variant->str : "?");
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
    /* tensors in the fixed order, each as little-endian bytes */
    bool style = is_style(v);
    size_t counts[T_COUNT] = {style ? 0 : v->n_embedding, v->n_ref_frames * v->n_groups, v->n_ref_text_tokens,
                              v->n_source, style ? v->n_embedding : 0};
    unsigned char *blobs[T_COUNT] = {0};
    size_t sizes[T_COUNT] = {0};
    uint32_t crcs[T_COUNT] = {0};
    for (int t = 0; t < T_COUNT; t++) {
        if (!counts[t]) continue;
        size_t item = tensors[t].dtype[0] == 'F' ? 4 : 8;
        sizes[t] = counts[t] * item;
        blobs[t] = malloc(sizes[t]);
        if (!blobs[t]) {
            st = vox_set_error(VOX_ERR_OUT_OF_MEMORY, "out of memory");
            goto out;
        }
        if (item == 4) {
            memcpy(blobs[t], t == T_WAV ? v->source : v->embedding, sizes[t]);
        } else {
            const int32_t *src = t == T_CODES ? v->ref_codes : v->ref_text_tokens;
            for (size_t i = 0; i < counts[t]; i++) {
                int64_t x = src[i];
                memcpy(blobs[t] + 8 * i, &x, 8);
            }
        }
        crcs[t] = vox_crc32(0, blobs[t], sizes[t]);
    }
    vx_buf h = {0}, crc = {0};
    vx_buf_printf(&crc, "{");
    int first = 1;
    for (int t = 0; t < T_COUNT; t++)  /* sorted keys, as the Python writer */
        if (counts[t]) vx_buf_printf(&crc, "%s\"%s\": %u", first ? "" : ", ", tensors[t].name, crcs[t]), first = 0;
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
    const char *opt[] = {"ref_text", "speaker", "instruct"};
    for (int i = 0; i < 3; i++) {
        const char *s = text_field(v, opt[i]);
        if (s && *s) {
            vx_buf_printf(&h, ",\"%s\":", opt[i]);
            vx_buf_json_string(&h, s, (size_t)-1);
        }
    }
    if (v->n_source) vx_buf_printf(&h, ",\"source_sample_rate\":\"%d\"", v->source_rate);
    vx_buf_printf(&h, "}");
    size_t off = 0;
    for (int t = 0; t < T_COUNT; t++) {
        if (!counts[t]) continue;
        vx_buf_printf(&h, ",\"%s\":{\"dtype\":\"%s\",\"shape\":[", tensors[t].name, tensors[t].dtype);
        if (t == T_CODES) vx_buf_printf(&h, "%zu,%zu", v->n_ref_frames, v->n_groups);
        else if (t == T_STYLE) vx_buf_printf(&h, "%d,%d", STYLE_ROWS, STYLE_DIM);
        else vx_buf_printf(&h, "%zu", counts[t]);
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
        for (int t = 0; ok && t < T_COUNT; t++)
            if (counts[t]) ok = fwrite(blobs[t], 1, sizes[t], f) == sizes[t];
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
    for (int t = 0; t < T_COUNT; t++) free(blobs[t]);
    return st;
}
