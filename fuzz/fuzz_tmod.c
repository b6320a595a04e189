/* The .tmod reader (core/src/tmod.c, core/src/json.c) through the public API: vox_model_open on a
 * file of the input bytes, then every accessor over every tensor.
 *
 * Each input is opened twice: as it is, and with the header's manifest length, data length, file
 * length and both CRC-32s recomputed to fit the bytes (when they are long enough for a header), so
 * that mutations inside the manifest reach the JSON parser and the manifest checks instead of
 * stopping at a checksum. Invariants: an open either fails with one line of error text or yields
 * tensors that lie inside the file, are found by name, and have the size their dtype and shape say. */
#include <stdbool.h>

#include "fuzz_common.h"
#include "vox.h"

#include "crc32.h"
#include "tmod.h"

static void walk(const uint8_t *file, size_t size) {
    vox_model *m = NULL;
    vox_status st = vox_model_open(fz_file(file, size), &m);
    if (st != VOX_OK) {
        FZ_ASSERT(m == NULL, "out set on failure");
        FZ_ASSERT(st == VOX_ERR_FORMAT || st == VOX_ERR_IO || st == VOX_ERR_OUT_OF_MEMORY, "status %d", st);
        fz_check_message(vox_last_error());
        return;
    }
    const char *man = vox_model_manifest(m);
    FZ_ASSERT(man && strlen(man) <= size, "manifest");
    size_t n = vox_model_tensor_count(m);
    for (size_t i = 0; i < n; i++) {
        vox_tensor_info t, u;
        FZ_ASSERT(vox_model_tensor(m, i, &t) == VOX_OK, "tensor %zu", i);
        FZ_ASSERT(t.ndim >= 1 && t.ndim <= VOX_MAX_DIMS, "ndim %d", t.ndim);
        uint64_t elems = 1, k = (uint64_t)t.shape[t.ndim - 1];
        for (int j = 0; j < t.ndim; j++) elems *= (uint64_t)t.shape[j];
        FZ_ASSERT(vox_dtype_nbytes(t.dtype, elems, k) == t.nbytes, "nbytes %llu", (unsigned long long)t.nbytes);
        FZ_ASSERT(t.nbytes <= size, "tensor larger than the file");
        if (t.nbytes) {  /* the first and last bytes are readable (ASan / the mapping would say otherwise) */
            volatile uint8_t x = ((const uint8_t *)t.data)[0];
            x ^= ((const uint8_t *)t.data)[t.nbytes - 1];
            (void)x;
        }
        FZ_ASSERT(vox_model_find_tensor(m, t.name, &u) == VOX_OK && u.data == t.data && u.nbytes == t.nbytes,
                  "find %s", t.name);
    }
    vox_tensor_info none;
    FZ_ASSERT(vox_model_tensor(m, n, &none) == VOX_ERR_INVALID_ARGUMENT, "index past the end");
    st = vox_model_verify(m);
    FZ_ASSERT(st == VOX_OK || st == VOX_ERR_FORMAT, "verify %d", st);
    if (st != VOX_OK) fz_check_message(vox_last_error());
    vox_model_close(m);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    walk(data, size);
    if (size < VOX_TMOD_HEADER_SIZE) return 0;
    /* The same bytes with a header that fits them: lengths and checksums recomputed. */
    uint8_t *f = malloc(size);
    memcpy(f, data, size);
    uint64_t man_len = fz_rd64(f + 16);
    uint64_t data_off = fz_rd64(f + 24);
    if (man_len == 0 || man_len > size - VOX_TMOD_HEADER_SIZE) man_len = size - VOX_TMOD_HEADER_SIZE;
    if (man_len > VOX_TMOD_MAX_MANIFEST) man_len = VOX_TMOD_MAX_MANIFEST;
    uint64_t want_off = (VOX_TMOD_HEADER_SIZE + man_len + VOX_TMOD_ALIGN - 1) / VOX_TMOD_ALIGN * VOX_TMOD_ALIGN;
    if (data_off != want_off) data_off = want_off;
    uint64_t data_len = size > data_off ? (size - data_off) / VOX_TMOD_ALIGN * VOX_TMOD_ALIGN : 0;
    uint64_t file_len = data_off + data_len;
    for (int i = 0; i < 8; i++) {
        f[8 + i] = (uint8_t)((uint64_t)VOX_TMOD_HEADER_SIZE >> (8 * i));
        f[16 + i] = (uint8_t)(man_len >> (8 * i));
        f[24 + i] = (uint8_t)(data_off >> (8 * i));
        f[32 + i] = (uint8_t)(data_len >> (8 * i));
        f[40 + i] = (uint8_t)(file_len >> (8 * i));
    }
    fz_wr32(f + 48, vox_crc32(0, f + VOX_TMOD_HEADER_SIZE, (size_t)man_len));
    fz_wr32(f + 52, vox_crc32(0, f, 52));
    walk(f, file_len <= size ? (size_t)file_len : size);
    free(f);
    return 0;
}
