/* Strict UTF-8 decoding (RFC 3629). */
#include "unicode.h"

#include <stdio.h>

size_t vx_utf8_decode(const char *str, size_t len, size_t i, uint32_t *cp, bool *incomplete) {
    const unsigned char *s = (const unsigned char *)str + i;
    size_t avail = len - i;
    if (incomplete) *incomplete = false;
    if (avail == 0) return 0;
    unsigned b0 = s[0];
    if (b0 < 0x80) {
        *cp = b0;
        return 1;
    }
    size_t n;
    uint32_t c, lo = 0x80, hi = 0xBF; /* allowed range of the second byte */
    if (b0 >= 0xC2 && b0 <= 0xDF) {
        n = 2, c = b0 & 0x1F;
    } else if (b0 >= 0xE0 && b0 <= 0xEF) {
        n = 3, c = b0 & 0x0F;
        if (b0 == 0xE0) lo = 0xA0;        /* overlong */
        else if (b0 == 0xED) hi = 0x9F;   /* surrogates */
    } else if (b0 >= 0xF0 && b0 <= 0xF4) {
        n = 4, c = b0 & 0x07;
        if (b0 == 0xF0) lo = 0x90;        /* overlong */
        else if (b0 == 0xF4) hi = 0x8F;   /* above U+10FFFF */
    } else {
        return 0;
    }
    for (size_t k = 1; k < n; k++) {
        if (k >= avail) {
            if (incomplete) *incomplete = true;
            return 0;
        }
        unsigned b = s[k];
        if (b < (k == 1 ? lo : 0x80) || b > (k == 1 ? hi : 0xBF)) return 0;
        c = (c << 6) | (b & 0x3F);
    }
    *cp = c;
    return n;
}

size_t vx_utf8_valid_prefix(const char *s, size_t len) {
    size_t i = 0;
    uint32_t cp;
    while (i < len) {
        if ((unsigned char)s[i] < 0x80) {
            i++;
            continue;
        }
        size_t k = vx_utf8_decode(s, len, i, &cp, NULL);
        if (!k) break;
        i += k;
    }
    return i;
}

const char *vx_utf8_shown(char *out, size_t size, uint32_t cp) {
    char sym[5] = {0};
    bool visible = cp > 0x20 && !(cp >= 0x7F && cp <= 0x9F) && cp <= 0x10FFFF && !(cp >= 0xD800 && cp <= 0xDFFF) &&
                   vx_uc_class(cp) != VX_UC_WS;
    if (visible) {
        if (cp < 0x80) {
            sym[0] = (char)cp;
        } else if (cp < 0x800) {
            sym[0] = (char)(0xC0 | (cp >> 6)), sym[1] = (char)(0x80 | (cp & 0x3F));
        } else if (cp < 0x10000) {
            sym[0] = (char)(0xE0 | (cp >> 12)), sym[1] = (char)(0x80 | ((cp >> 6) & 0x3F)), sym[2] = (char)(0x80 | (cp & 0x3F));
        } else {
            sym[0] = (char)(0xF0 | (cp >> 18)), sym[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
            sym[2] = (char)(0x80 | ((cp >> 6) & 0x3F)), sym[3] = (char)(0x80 | (cp & 0x3F));
        }
        snprintf(out, size, "\"%s\" (U+%04X)", sym, (unsigned)cp);
    } else {
        snprintf(out, size, "U+%04X", (unsigned)cp);
    }
    return out;
}
