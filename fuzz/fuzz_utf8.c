/* UTF-8 decoding: core/src/unicode/utf8.c (vx_utf8_decode, vx_utf8_valid_prefix) and the tokenizer's
 * decoder (q3_decode_utf8), against the definition written out here (RFC 3629, Unicode table 3-7),
 * and the Kokoro frontend's and the JSON parser's verdict on the same bytes.
 *
 * Invariants: every decoder agrees with the definition on where the first invalid byte is and on
 * every code point before it; "incomplete" is reported exactly for a valid start cut off by the end;
 * code points re-encode to the same bytes; classes are in range. */
#include <stdbool.h>

#include "fuzz_common.h"

#include "json.h"
#include "qwen3/pretok.h"
#include "unicode/unicode.h"

/* The definition: length of the sequence at s[0..n) and its code point; 0 if invalid, with
 * *cut = true when the bytes there are a proper prefix of some valid sequence. */
static size_t ref_decode(const uint8_t *s, size_t n, uint32_t *cp, bool *cut) {
    *cut = false;
    if (s[0] < 0x80) {
        *cp = s[0];
        return 1;
    }
    size_t len = s[0] >= 0xF0 ? 4 : s[0] >= 0xE0 ? 3 : s[0] >= 0xC0 ? 2 : 0;
    if (!len || s[0] > 0xF4) return 0;
    uint32_t c = s[0] & (0x7F >> len);
    size_t i = 1;
    for (; i < len && i < n; i++) {
        if ((s[i] & 0xC0) != 0x80) return 0;
        c = c << 6 | (s[i] & 0x3F);
    }
    /* overlongs, surrogates and > U+10FFFF: decided by the bytes seen so far, as the lead byte and
     * second byte ranges of table 3-7 do (a prefix is "cut" only if some completion is valid) */
    uint32_t lo = len == 2 ? 0x80 : len == 3 ? 0x800 : 0x10000;
    if (i < len) {
        uint32_t shift = 6 * (uint32_t)(len - i);
        uint32_t min = c << shift, max = (c << shift) | ((1u << shift) - 1);
        bool some_valid = max >= lo && min <= 0x10FFFF && !(min >= 0xD800 && max <= 0xDFFF);
        *cut = some_valid;
        return 0;
    }
    if (c < lo || c > 0x10FFFF || (c >= 0xD800 && c <= 0xDFFF)) return 0;
    *cp = c;
    return len;
}

static size_t encode(uint32_t c, uint8_t *o) {
    if (c < 0x80) return o[0] = (uint8_t)c, 1;
    if (c < 0x800) return o[0] = (uint8_t)(0xC0 | c >> 6), o[1] = (uint8_t)(0x80 | (c & 0x3F)), 2;
    if (c < 0x10000)
        return o[0] = (uint8_t)(0xE0 | c >> 12), o[1] = (uint8_t)(0x80 | (c >> 6 & 0x3F)), o[2] = (uint8_t)(0x80 | (c & 0x3F)), 3;
    o[0] = (uint8_t)(0xF0 | c >> 18), o[1] = (uint8_t)(0x80 | (c >> 12 & 0x3F));
    o[2] = (uint8_t)(0x80 | (c >> 6 & 0x3F)), o[3] = (uint8_t)(0x80 | (c & 0x3F));
    return 4;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    const char *s = (const char *)data;
    uint32_t *cps = malloc((size + 1) * sizeof *cps);
    uint8_t *cls = malloc(size + 1);
    size_t *off = malloc((size + 1) * sizeof *off);
    size_t i = 0, nchars = 0, bad = size;
    while (i < size) {
        uint32_t want, got = 0;
        bool cut, incomplete;
        size_t k = ref_decode(data + i, size - i, &want, &cut);
        size_t g = vx_utf8_decode(s, size, i, &got, &incomplete);
        FZ_ASSERT(g == k, "vx_utf8_decode at %zu: length %zu, the definition says %zu", i, g, k);
        if (!k) {
            FZ_ASSERT(incomplete == cut, "incomplete at %zu: %d, the definition says %d", i, incomplete, cut);
            bad = i;
            break;
        }
        FZ_ASSERT(got == want, "code point at %zu: U+%04X, the definition says U+%04X", i, got, want);
        uint8_t re[4];
        FZ_ASSERT(encode(got, re) == k && !memcmp(re, data + i, k), "U+%04X does not re-encode", got);
        FZ_ASSERT(vx_uc_class(got) >= 0 && vx_uc_class(got) < VX_UC_COUNT, "class");
        cps[nchars++] = got;
        i += k;
    }
    FZ_ASSERT(vx_utf8_valid_prefix(s, size) == bad, "valid prefix %zu, the definition says %zu",
              vx_utf8_valid_prefix(s, size), bad);

    size_t where = (size_t)-1;
    size_t n = q3_decode_utf8(s, size, cps + 0, cls, off, &where);
    if (bad == size) {
        FZ_ASSERT(n == nchars, "q3_decode_utf8: %zu chars, %zu expected", n, nchars);
        for (size_t c = 0; c < n; c++) FZ_ASSERT(cls[c] < VX_UC_COUNT && off[c] < size, "class/offset %zu", c);
        FZ_ASSERT(off[n] == size, "end offset");
    } else {
        FZ_ASSERT(n == (size_t)-1 && where == bad, "q3_decode_utf8: bad at %zu, the definition says %zu", where, bad);
    }

    /* The JSON parser takes the same bytes inside a string exactly when they are valid UTF-8 (with
     * the bytes JSON forbids there replaced: '"', '\\' and controls). */
    uint8_t *js = malloc(size + 2);
    js[0] = '"';
    for (size_t j = 0; j < size; j++) js[j + 1] = (data[j] == '"' || data[j] == '\\' || data[j] < 0x20) ? 'x' : data[j];
    js[size + 1] = '"';
    vox_json_doc *doc = NULL;
    vox_json_error err;
    vox_status st = vox_json_parse((const char *)js, size + 2, &doc, &err);
    FZ_ASSERT((st == VOX_OK) == (bad == size), "JSON string of %s UTF-8: %s", bad == size ? "valid" : "invalid", err.message);
    vox_json_free(doc);
    free(js);
    free(cps);
    free(cls);
    free(off);
    return 0;
}
