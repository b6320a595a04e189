/* The packed pronunciation lexicon (docs/formats.md "Kokoro frontend data"), read in place from the
 * mapped .tmod: "VXL1", u32 count, u32 offsets[count], then "key\0phonemes\0" records sorted by key
 * bytes, so a lookup is a binary search with memcmp. */
#include <string.h>

#include "error.h"
#include "kokoro/text/text_internal.h"
#include "unicode/unicode.h"

static uint32_t rd32(const unsigned char *p) {
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

vox_status kt_lexicon_init(kt_lexicon *lx, const void *blob, size_t nbytes) {
    const unsigned char *b = blob;
    if (nbytes < 8 || memcmp(b, "VXL1", 4) != 0)
        return vox_set_error(VOX_ERR_FORMAT, "frontend lexicon: bad magic (expected VXL1)");
    uint32_t count = rd32(b + 4);
    if ((uint64_t)8 + 4 * (uint64_t)count > nbytes)
        return vox_set_error(VOX_ERR_FORMAT, "frontend lexicon: offset table runs past the end");
    /* Each record must hold two NUL-terminated strings inside the blob, in ascending offset order:
     * checked once here so that lookups can use strlen/strcmp on the mapping safely. */
    size_t prev_end = 8 + 4 * (size_t)count;
    for (uint32_t i = 0; i < count; i++) {
        size_t o = rd32(b + 8 + 4 * (size_t)i);
        if (o < prev_end || o >= nbytes)
            return vox_set_error(VOX_ERR_FORMAT, "frontend lexicon: entry %u has a bad offset", i);
        const unsigned char *z1 = memchr(b + o, 0, nbytes - o);
        if (!z1 || z1 == b + o)
            return vox_set_error(VOX_ERR_FORMAT, "frontend lexicon: entry %u is not terminated", i);
        size_t o2 = (size_t)(z1 - b) + 1;
        const unsigned char *z2 = o2 < nbytes ? memchr(b + o2, 0, nbytes - o2) : NULL;
        if (!z2)
            return vox_set_error(VOX_ERR_FORMAT, "frontend lexicon: entry %u is not terminated", i);
        /* the key and the phonemes are UTF-8: the phonemes go into the output as they are */
        size_t end = (size_t)(z2 - b);
        if (vx_utf8_valid_prefix((const char *)b + o, end - o) != end - o)
            return vox_set_error(VOX_ERR_FORMAT, "frontend lexicon: entry %u is not UTF-8", i);
        prev_end = end + 1;
    }
    lx->blob = b;
    lx->nbytes = nbytes;
    lx->count = count;
    return VOX_OK;
}

const char *kt_lexicon_get(const kt_lexicon *lx, const char *s, size_t n) {
    size_t lo = 0, hi = lx->count;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        const char *k = (const char *)lx->blob + rd32(lx->blob + 8 + 4 * mid);
        size_t kn = strlen(k);
        int c = memcmp(k, s, kn < n ? kn : n);
        if (c == 0) c = kn < n ? -1 : (kn > n ? 1 : 0);
        if (c < 0)
            lo = mid + 1;
        else if (c > 0)
            hi = mid;
        else
            return k + kn + 1;
    }
    return NULL;
}
