/* .tmod model files: open (map + validate everything), tensor table, lookup, checksum verification.
 *
 * The layout and the order of the checks are those of docs/formats.md, and the same as the Python
 * reader's (bindings/vox/formats/tmod.py), so both reject the same files with the same reasons.
 * Every offset and length read from the file is checked before it is used and all arithmetic on
 * them is overflow-checked: a hostile file gets an error naming the file, never an out-of-bounds
 * read. Tensor data is used in place, inside the read-only mapping.
 */
#if !defined(_GNU_SOURCE) && !defined(_POSIX_C_SOURCE)
#  define _POSIX_C_SOURCE 200809L
#endif
#if !defined(_DEFAULT_SOURCE)
#  define _DEFAULT_SOURCE /* madvise */
#endif

#include "tmod.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "crc32.h"
#include "error.h"
#include "family.h"

#define MAX_INT53 ((uint64_t)VOX_JSON_MAX_EXACT_INT)
#define MAX_ELEMENTS ((uint64_t)1 << 60) /* 8 * 2^60 bytes still fits a u64 */

typedef struct tensor {
    const char *name; /* inside the parsed manifest */
    size_t name_len;
    vox_dtype dtype;
    int32_t ndim;
    int64_t shape[VOX_MAX_DIMS];
    uint64_t offset, nbytes;
    uint32_t crc32;
} tensor;

struct vox_model {
    char *path;
    const unsigned char *map;
    size_t map_len;
    char *manifest; /* NUL-terminated copy of the manifest bytes */
    vox_json_doc *doc;
    uint64_t data_off, data_len;
    size_t n;
    tensor *tensors;  /* manifest order */
    tensor **by_name; /* sorted by name, for bsearch */
};

static const char *const dtype_names[] = {"f32", "f16", "bf16", "q8", "q4", "i32", "i64", "u8"};
#define N_DTYPES (sizeof dtype_names / sizeof dtype_names[0])

const char *vox_dtype_name(vox_dtype dtype) {
    return (unsigned)dtype < N_DTYPES ? dtype_names[dtype] : NULL;
}

uint64_t vox_dtype_nbytes(vox_dtype dtype, uint64_t n, uint64_t k) {
    if (n > MAX_ELEMENTS) return UINT64_MAX;
    switch (dtype) {
    case VOX_DTYPE_F32: case VOX_DTYPE_I32: return 4 * n;
    case VOX_DTYPE_F16: case VOX_DTYPE_BF16: return 2 * n;
    case VOX_DTYPE_I64: return 8 * n;
    case VOX_DTYPE_U8: return n;
    case VOX_DTYPE_Q8: return k % 32 ? UINT64_MAX : n + n / 8;   /* values + one f32 per 32 */
    case VOX_DTYPE_Q4: return k % 32 ? UINT64_MAX : n / 2 + n / 8;
    }
    return UINT64_MAX;
}

static uint32_t rd32(const unsigned char *p) {
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static uint64_t rd64(const unsigned char *p) { return (uint64_t)rd32(p) | (uint64_t)rd32(p + 4) << 32; }

#define ULL(x) ((unsigned long long)(x))

/* ------------------------------------------------------------------------------------ header */
static vox_status check_header(vox_model *m) {
    const unsigned char *h = m->map;
    const char *p = m->path;
    if (memcmp(h, VOX_TMOD_MAGIC, 4) != 0) {
        char q[32];
        return vox_set_error(VOX_ERR_FORMAT, "%s: not a .tmod file (magic %s, expected \"VOXM\")", p,
                             vox_json_quote(q, sizeof q, (const char *)h, 4));
    }
    /* The version comes before the header CRC: a future version may lay the header out differently. */
    uint32_t version = rd32(h + 4);
    if (version > VOX_TMOD_VERSION)
        return vox_set_error(VOX_ERR_FORMAT,
                             "%s: format version %u was written by a newer vox; this one reads version %u", p,
                             version, VOX_TMOD_VERSION);
    if (version < VOX_TMOD_VERSION)
        return vox_set_error(VOX_ERR_FORMAT, "%s: format version %u is no longer supported; this vox reads version %u",
                             p, version, VOX_TMOD_VERSION);
    uint32_t want = rd32(h + 52), got = vox_crc32(0, h, 52);
    if (got != want)
        return vox_set_error(VOX_ERR_FORMAT, "%s: corrupt header: CRC-32 %08x, the header says %08x", p, got, want);
    for (int i = 56; i < 64; i++)
        if (h[i]) return vox_set_error(VOX_ERR_FORMAT, "%s: corrupt header: reserved bytes 56..63 are not zero", p);

    uint64_t manifest_off = rd64(h + 8), manifest_len = rd64(h + 16);
    uint64_t data_off = rd64(h + 24), data_len = rd64(h + 32), file_len = rd64(h + 40);
    if (manifest_off != VOX_TMOD_HEADER_SIZE)
        return vox_set_error(VOX_ERR_FORMAT, "%s: corrupt header: manifest offset %llu, expected 64", p,
                             ULL(manifest_off));
    if (manifest_len == 0 || manifest_len > VOX_TMOD_MAX_MANIFEST)
        return vox_set_error(VOX_ERR_FORMAT, "%s: corrupt header: manifest length %llu (must be 1 to %u bytes)", p,
                             ULL(manifest_len), VOX_TMOD_MAX_MANIFEST);
    uint64_t want_data_off = (VOX_TMOD_HEADER_SIZE + manifest_len + VOX_TMOD_ALIGN - 1) / VOX_TMOD_ALIGN * VOX_TMOD_ALIGN;
    if (data_off != want_data_off)
        return vox_set_error(VOX_ERR_FORMAT,
                             "%s: corrupt header: data offset %llu, expected %llu (the first multiple of 4096 "
                             "after the manifest)", p, ULL(data_off), ULL(want_data_off));
    if (data_len % VOX_TMOD_ALIGN)
        return vox_set_error(VOX_ERR_FORMAT, "%s: corrupt header: data length %llu is not a multiple of 4096", p,
                             ULL(data_len));
    if (data_len > UINT64_MAX - data_off || file_len != data_off + data_len)
        return vox_set_error(VOX_ERR_FORMAT,
                             "%s: corrupt header: file length %llu is not data offset %llu + data length %llu", p,
                             ULL(file_len), ULL(data_off), ULL(data_len));
    if (file_len > m->map_len)
        return vox_set_error(VOX_ERR_FORMAT, "%s: truncated: the header says %llu bytes, the file has %llu", p,
                             ULL(file_len), ULL(m->map_len));
    if (file_len < m->map_len)
        return vox_set_error(VOX_ERR_FORMAT, "%s: %llu trailing bytes: the header says %llu bytes, the file has %llu",
                             p, ULL(m->map_len - file_len), ULL(file_len), ULL(m->map_len));
    /* From here on every offset below file_len is inside the mapping. */
    const unsigned char *man = h + VOX_TMOD_HEADER_SIZE;
    want = rd32(h + 48);
    got = vox_crc32(0, man, (size_t)manifest_len);
    if (got != want)
        return vox_set_error(VOX_ERR_FORMAT, "%s: corrupt manifest: CRC-32 %08x, the header says %08x", p, got, want);
    for (uint64_t i = VOX_TMOD_HEADER_SIZE + manifest_len; i < data_off; i++)
        if (h[i]) return vox_set_error(VOX_ERR_FORMAT, "%s: corrupt file: nonzero bytes between the manifest and the data", p);

    m->manifest = malloc((size_t)manifest_len + 1);
    if (!m->manifest) return vox_set_error(VOX_ERR_OUT_OF_MEMORY, "%s: out of memory reading the manifest", p);
    memcpy(m->manifest, man, (size_t)manifest_len);
    m->manifest[manifest_len] = '\0';
    m->data_off = data_off;
    m->data_len = data_len;
    vox_json_error err;
    vox_status st = vox_json_parse_limit(m->manifest, (size_t)manifest_len, VOX_TMOD_MAX_MANIFEST_VALUES, &m->doc, &err);
    if (st == VOX_ERR_OUT_OF_MEMORY) return vox_set_error(st, "%s: out of memory parsing the manifest", p);
    if (st != VOX_OK)
        return vox_set_error(VOX_ERR_FORMAT, "%s: corrupt manifest: %s at byte %zu of the manifest", p, err.message,
                             err.offset);
    return VOX_OK;
}

/* ---------------------------------------------------------------------------------- manifest */
static const char *type_word(vox_json_type t) {
    switch (t) {
    case VOX_JSON_OBJECT: return "an object";
    case VOX_JSON_ARRAY: return "an array";
    case VOX_JSON_STRING: return "a string";
    case VOX_JSON_NUMBER: return "a number";
    default: return "a literal";
    }
}

/* The member `key` of a manifest object, of JSON type `type`; NULL with the error set otherwise. */
const vox_json *vx_manifest_member(const vox_model *m, const vox_json *obj, const char *where, const char *key,
                                   vox_json_type type, vox_status *st) {
    const vox_json *v = vox_json_get(obj, key);
    if (!v) {
        *st = vox_set_error(VOX_ERR_FORMAT, "%s: manifest: %smissing key \"%s\"", m->path, where, key);
        return NULL;
    }
    if (v->type != type) {
        *st = vox_set_error(VOX_ERR_FORMAT, "%s: manifest: %s\"%s\" must be %s, not %s", m->path, where, key,
                            type_word(type), type_word(v->type));
        return NULL;
    }
    return v;
}

static int by_name_cmp(const void *a, const void *b) {
    return strcmp((*(tensor *const *)a)->name, (*(tensor *const *)b)->name);
}

static int by_offset_cmp(const void *a, const void *b) {
    const tensor *x = *(tensor *const *)a, *y = *(tensor *const *)b;
    return (x->offset > y->offset) - (x->offset < y->offset);
}

static const tensor *find(const vox_model *m, const char *name) {
    size_t lo = 0, hi = m->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int c = strcmp(m->by_name[mid]->name, name);
        if (c == 0) return m->by_name[mid];
        if (c < 0) lo = mid + 1;
        else hi = mid;
    }
    return NULL;
}

#define TNAME(t, q) vox_json_quote(q, sizeof q, (t)->name, (t)->name_len)

static vox_status parse_tensor(vox_model *m, size_t i, const vox_json *e, tensor *t) {
    const char *p = m->path;
    char q[96];
    if (e->type != VOX_JSON_OBJECT)
        return vox_set_error(VOX_ERR_FORMAT, "%s: manifest: tensor #%zu is %s, not an object", p, i, type_word(e->type));
    const vox_json *v = vox_json_get(e, "name");
    if (!v || v->type != VOX_JSON_STRING || v->str_len == 0 || memchr(v->str, '\0', v->str_len))
        return vox_set_error(VOX_ERR_FORMAT, "%s: manifest: tensor #%zu: \"name\" must be a non-empty string without NUL",
                             p, i);
    t->name = v->str;
    t->name_len = v->str_len;
    v = vox_json_get(e, "dtype");
    size_t d = N_DTYPES;
    if (v && v->type == VOX_JSON_STRING)
        for (d = 0; d < N_DTYPES && !vox_json_is_string(v, dtype_names[d]); d++) {}
    if (d == N_DTYPES) {
        char qd[48] = "(missing)";
        if (v && v->type == VOX_JSON_STRING) vox_json_quote(qd, sizeof qd, v->str, v->str_len);
        return vox_set_error(VOX_ERR_FORMAT, "%s: manifest: tensor %s: unknown dtype %s (f32 f16 bf16 q8 q4 i32 i64 u8)",
                             p, TNAME(t, q), qd);
    }
    t->dtype = (vox_dtype)d;
    v = vox_json_get(e, "shape");
    bool shape_ok = v && v->type == VOX_JSON_ARRAY && v->count >= 1 && v->count <= VOX_MAX_DIMS;
    uint64_t n = 1, k = 0;
    bool zero = false, huge = false;
    if (shape_ok) {
        int j = 0;
        for (const vox_json *s = v->child; s; s = s->next, j++) {
            uint64_t dim;
            if (!vox_json_get_uint(s, MAX_INT53, &dim)) {
                shape_ok = false;
                break;
            }
            t->shape[j] = (int64_t)dim;
            k = dim;
            if (dim == 0) zero = true;
            else if (n > MAX_ELEMENTS / dim) huge = true;
            else n *= dim;
        }
        t->ndim = j;
    }
    if (!shape_ok)
        return vox_set_error(VOX_ERR_FORMAT, "%s: manifest: tensor %s: \"shape\" must be 1 to 4 integers in [0, 2^53]",
                             p, TNAME(t, q));
    if (zero) n = 0;
    else if (huge) return vox_set_error(VOX_ERR_FORMAT, "%s: manifest: tensor %s: shape too large", p, TNAME(t, q));
    if (!vox_json_get_uint(vox_json_get(e, "offset"), MAX_INT53, &t->offset))
        return vox_set_error(VOX_ERR_FORMAT, "%s: manifest: tensor %s: \"offset\" must be an integer in [0, 2^53]", p,
                             TNAME(t, q));
    if (!vox_json_get_uint(vox_json_get(e, "nbytes"), MAX_INT53, &t->nbytes))
        return vox_set_error(VOX_ERR_FORMAT, "%s: manifest: tensor %s: \"nbytes\" must be an integer in [0, 2^53]", p,
                             TNAME(t, q));
    uint64_t crc;
    if (!vox_json_get_uint(vox_json_get(e, "crc32"), 0xFFFFFFFFu, &crc))
        return vox_set_error(VOX_ERR_FORMAT, "%s: manifest: tensor %s: \"crc32\" must be an integer in [0, 2^32)", p,
                             TNAME(t, q));
    t->crc32 = (uint32_t)crc;
    if (t->offset % VOX_TMOD_ALIGN)
        return vox_set_error(VOX_ERR_FORMAT, "%s: manifest: tensor %s: offset %llu is not a multiple of 4096", p,
                             TNAME(t, q), ULL(t->offset));
    uint64_t need = vox_dtype_nbytes(t->dtype, n, k);
    if (need == UINT64_MAX && (t->dtype == VOX_DTYPE_Q8 || t->dtype == VOX_DTYPE_Q4) && k % 32)
        return vox_set_error(VOX_ERR_FORMAT,
                             "%s: manifest: tensor %s: %s needs the last axis to be a multiple of 32, it is %llu", p,
                             TNAME(t, q), dtype_names[d], ULL(k));
    if (need == UINT64_MAX) return vox_set_error(VOX_ERR_FORMAT, "%s: manifest: tensor %s: shape too large", p, TNAME(t, q));
    if (t->nbytes != need)
        return vox_set_error(VOX_ERR_FORMAT, "%s: manifest: tensor %s: nbytes %llu, but its dtype and shape need %llu",
                             p, TNAME(t, q), ULL(t->nbytes), ULL(need));
    if (t->offset > m->data_len || t->nbytes > m->data_len - t->offset)
        return vox_set_error(VOX_ERR_FORMAT,
                             "%s: manifest: tensor %s: bytes [%llu, %llu) lie outside the data section (%llu bytes)",
                             p, TNAME(t, q), ULL(t->offset), ULL(t->offset + t->nbytes), ULL(m->data_len));
    return VOX_OK;
}

static vox_status check_tensors(vox_model *m, const vox_json *list) {
    vox_status st = VOX_OK;
    m->n = list->count;
    if (m->n == 0) return VOX_OK;
    m->tensors = calloc(m->n, sizeof *m->tensors);
    m->by_name = calloc(m->n, sizeof *m->by_name);
    tensor **by_off = calloc(m->n, sizeof *by_off);
    if (!m->tensors || !m->by_name || !by_off) {
        free(by_off);
        return vox_set_error(VOX_ERR_OUT_OF_MEMORY, "%s: out of memory for %zu tensors", m->path, m->n);
    }
    size_t i = 0, n_off = 0;
    for (const vox_json *e = list->child; e; e = e->next, i++) {
        if ((st = parse_tensor(m, i, e, &m->tensors[i])) != VOX_OK) goto done;
        m->by_name[i] = &m->tensors[i];
        if (m->tensors[i].nbytes) by_off[n_off++] = &m->tensors[i];
    }
    qsort(m->by_name, m->n, sizeof *m->by_name, by_name_cmp);
    char q[96];
    for (i = 1; i < m->n; i++)
        if (strcmp(m->by_name[i - 1]->name, m->by_name[i]->name) == 0) {
            st = vox_set_error(VOX_ERR_FORMAT, "%s: manifest: duplicate tensor name %s", m->path, TNAME(m->by_name[i], q));
            goto done;
        }
    /* Empty tensors occupy no bytes and cannot overlap anything; the others must be disjoint. */
    qsort(by_off, n_off, sizeof *by_off, by_offset_cmp);
    const tensor *reach = NULL; /* the tensor that ends furthest so far */
    for (i = 0; i < n_off; i++) {
        const tensor *t = by_off[i];
        if (reach && reach->offset + reach->nbytes > t->offset) {
            char q2[96];
            st = vox_set_error(VOX_ERR_FORMAT, "%s: manifest: tensors %s and %s overlap", m->path, TNAME(reach, q),
                               TNAME(t, q2));
            goto done;
        }
        if (!reach || t->offset + t->nbytes > reach->offset + reach->nbytes) reach = t;
    }
done:
    free(by_off);
    return st;
}

/* Keys every family has, then the keys of the family. */
static vox_status check_manifest(vox_model *m) {
    const char *p = m->path;
    const vox_json *root = vox_json_root(m->doc);
    vox_status st = VOX_OK;
    if (root->type != VOX_JSON_OBJECT)
        return vox_set_error(VOX_ERR_FORMAT, "%s: manifest: %s, not an object", p, type_word(root->type));
    const vox_json *v;
    if (!(v = vx_manifest_member(m, root, "", "format", VOX_JSON_STRING, &st))) return st;
    if (!vox_json_is_string(v, "vox.tmod")) {
        char q[48];
        return vox_set_error(VOX_ERR_FORMAT, "%s: manifest: \"format\" is %s, expected \"vox.tmod\"", p,
                             vox_json_quote(q, sizeof q, v->str, v->str_len));
    }
    if (!(v = vx_manifest_member(m, root, "", "format_version", VOX_JSON_NUMBER, &st))) return st;
    if (!v->is_integer || v->integer != (int64_t)VOX_TMOD_VERSION)
        return vox_set_error(VOX_ERR_FORMAT, "%s: manifest: format_version %g does not match the header's version %u", p,
                             v->number, VOX_TMOD_VERSION);
    const vox_json *family = vx_manifest_member(m, root, "", "family", VOX_JSON_STRING, &st);
    if (!family) return st;
    const vx_family *fam = memchr(family->str, '\0', family->str_len) ? NULL : vx_family_find(family->str);
    if (!fam) {
        char q[64];
        return vox_set_error(VOX_ERR_FORMAT, "%s: manifest: unknown model family %s (this vox knows: %s)", p,
                             vox_json_quote(q, sizeof q, family->str, family->str_len), vx_family_names());
    }
    if (!vx_manifest_member(m, root, "", "variant", VOX_JSON_STRING, &st)) return st;
    if (!(v = vx_manifest_member(m, root, "", "model_id", VOX_JSON_STRING, &st))) return st;
    bool hex = v->str_len == 64;
    for (size_t i = 0; hex && i < 64; i++)
        hex = (v->str[i] >= '0' && v->str[i] <= '9') || (v->str[i] >= 'a' && v->str[i] <= 'f');
    if (!hex) return vox_set_error(VOX_ERR_FORMAT, "%s: manifest: \"model_id\" must be 64 lowercase hex digits", p);
    const vox_json *prec = vx_manifest_member(m, root, "", "precision", VOX_JSON_OBJECT, &st);
    if (!prec) return st;
    if (!vx_manifest_member(m, prec, "precision: ", "dtype", VOX_JSON_STRING, &st)) return st;
    if (!vx_manifest_member(m, prec, "precision: ", "quant", VOX_JSON_STRING, &st)) return st;
    if (!vx_manifest_member(m, root, "", "config", VOX_JSON_OBJECT, &st)) return st;
    const vox_json *tensors = vx_manifest_member(m, root, "", "tensors", VOX_JSON_ARRAY, &st);
    if (!tensors) return st;
    if ((st = check_tensors(m, tensors)) != VOX_OK) return st;

    /* the family's own keys */
    return fam->check_manifest ? fam->check_manifest(m, root) : VOX_OK;
}

/* ---------------------------------------------------------------------------------------- API */
void vox_model_close(vox_model *m) {
    if (!m) return;
    if (m->map) munmap((void *)m->map, m->map_len);
    vox_json_free(m->doc);
    free(m->tensors);
    free(m->by_name);
    free(m->manifest);
    free(m->path);
    free(m);
}

vox_status vox_model_open(const char *path, vox_model **out) {
    if (!out) return vox_set_error(VOX_ERR_INVALID_ARGUMENT, "vox_model_open: out is NULL");
    *out = NULL;
    if (!path) return vox_set_error(VOX_ERR_INVALID_ARGUMENT, "vox_model_open: path is NULL");
    vox_model *m = calloc(1, sizeof *m);
    size_t plen = strlen(path);
    if (!m || !(m->path = malloc(plen + 1))) {
        free(m);
        return vox_set_error(VOX_ERR_OUT_OF_MEMORY, "%s: out of memory", path);
    }
    memcpy(m->path, path, plen + 1);
    vox_status st = VOX_OK;
    /* O_NONBLOCK: opening a FIFO would otherwise wait for a writer; it is refused just below. */
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0) {
        st = vox_set_error(VOX_ERR_IO, "%s: cannot open: %s", path, strerror(errno));
        goto fail;
    }
    struct stat sb;
    if (fstat(fd, &sb) != 0) {
        st = vox_set_error(VOX_ERR_IO, "%s: cannot stat: %s", path, strerror(errno));
        close(fd);
        goto fail;
    }
    if (!S_ISREG(sb.st_mode)) {
        st = vox_set_error(VOX_ERR_IO, "%s: not a regular file", path);
        close(fd);
        goto fail;
    }
    if (sb.st_size < (off_t)VOX_TMOD_HEADER_SIZE) {
        st = vox_set_error(VOX_ERR_FORMAT, "%s: truncated: %lld bytes, shorter than the 64-byte .tmod header", path,
                           (long long)sb.st_size);
        close(fd);
        goto fail;
    }
    if ((uint64_t)sb.st_size > (uint64_t)SIZE_MAX) {
        st = vox_set_error(VOX_ERR_UNSUPPORTED, "%s: %lld bytes do not fit this process's address space", path,
                           (long long)sb.st_size);
        close(fd);
        goto fail;
    }
    m->map_len = (size_t)sb.st_size;
    void *map = mmap(NULL, m->map_len, PROT_READ, MAP_PRIVATE, fd, 0);
    int map_errno = errno;
    close(fd); /* the mapping keeps the file */
    if (map == MAP_FAILED) {
        st = vox_set_error(VOX_ERR_IO, "%s: cannot map %zu bytes: %s", path, m->map_len, strerror(map_errno));
        goto fail;
    }
    m->map = map;
    if ((st = check_header(m)) != VOX_OK || (st = check_manifest(m)) != VOX_OK) goto fail;
    *out = m;
    return VOX_OK;
fail:
    vox_model_close(m);
    return st;
}

void vox_model_drop_pages(const vox_model *m, const void *p, size_t n) {
    if (!m || !m->map || !p) return;
    const uintptr_t lo = (uintptr_t)m->map, hi = lo + m->map_len, a = (uintptr_t)p;
    if (a < lo || a > hi || n > hi - a) return; /* not inside the mapping (an owned copy) */
    const long ps = sysconf(_SC_PAGESIZE);
    if (ps <= 0) return;
    const uintptr_t pg = (uintptr_t)ps, first = (a + pg - 1) / pg * pg, last = (a + n) / pg * pg;
    /* whole pages inside the range only; a failure just keeps the pages (nothing depends on it) */
    if (last > first) (void)madvise((void *)first, last - first, MADV_DONTNEED);
}

const char *vox_model_manifest(const vox_model *m) { return m && m->manifest ? m->manifest : ""; }

size_t vox_model_tensor_count(const vox_model *m) { return m ? m->n : 0; }

static void fill_info(const vox_model *m, const tensor *t, vox_tensor_info *out) {
    memset(out, 0, sizeof *out);
    out->name = t->name;
    out->dtype = t->dtype;
    out->ndim = t->ndim;
    for (int j = 0; j < t->ndim; j++) out->shape[j] = t->shape[j];
    out->data = m->map + m->data_off + t->offset;
    out->nbytes = t->nbytes;
    out->crc32 = t->crc32;
}

vox_status vox_model_tensor(const vox_model *m, size_t index, vox_tensor_info *out) {
    if (!m || !out) return vox_set_error(VOX_ERR_INVALID_ARGUMENT, "vox_model_tensor: NULL argument");
    if (index >= m->n)
        return vox_set_error(VOX_ERR_INVALID_ARGUMENT, "%s: tensor index %zu out of range (the model has %zu)", m->path,
                             index, m->n);
    fill_info(m, &m->tensors[index], out);
    return VOX_OK;
}

vox_status vox_model_find_tensor(const vox_model *m, const char *name, vox_tensor_info *out) {
    if (!m || !name || !out) return vox_set_error(VOX_ERR_INVALID_ARGUMENT, "vox_model_find_tensor: NULL argument");
    const tensor *t = find(m, name);
    if (!t) {
        char q[96];
        return vox_set_error(VOX_ERR_NOT_FOUND, "%s: no tensor named %s", m->path,
                             vox_json_quote(q, sizeof q, name, strlen(name)));
    }
    fill_info(m, t, out);
    return VOX_OK;
}

vox_status vox_model_verify(const vox_model *m) {
    if (!m) return vox_set_error(VOX_ERR_INVALID_ARGUMENT, "vox_model_verify: model is NULL");
    for (size_t i = 0; i < m->n; i++) {
        const tensor *t = &m->tensors[i];
        uint32_t got = vox_crc32(0, m->map + m->data_off + t->offset, (size_t)t->nbytes);
        if (got != t->crc32) {
            char q[96];
            return vox_set_error(VOX_ERR_FORMAT, "%s: tensor %s is corrupt: CRC-32 %08x, the manifest says %08x",
                                 m->path, TNAME(t, q), got, t->crc32);
        }
    }
    return VOX_OK;
}

const vox_json *vox_model_json(const vox_model *m) { return m ? vox_json_root(m->doc) : NULL; }

const char *vox_model_path(const vox_model *m) { return m ? m->path : ""; }
