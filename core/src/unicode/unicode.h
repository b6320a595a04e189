/* Internal: the Unicode character classes the tokenizer's pre-tokenizer regexes use, and UTF-8.
 *
 * Classes are those of a pinned Unicode version (vx_unicode_version, 16.0.0: what the reference
 * tokenizer's regex engine, Oniguruma in the HF `tokenizers` library, uses). The tables behind
 * vx_uc_class are generated at build time from core/data/unicode_classes.txt by
 * core/data/gen_unicode_tables.c (see core/data/README.md). Every code point has exactly one class:
 *
 *   VX_UC_LU LL LT LM LO   \p{Lu} \p{Ll} \p{Lt} \p{Lm} \p{Lo} (together \p{L})
 *   VX_UC_M                \p{M}  (Mn, Mc, Me)
 *   VX_UC_N                \p{N}  (Nd, Nl, No)
 *   VX_UC_WS               \s     (U+0009..U+000D, U+0085, Zs, Zl, Zp = White_Space)
 *   VX_UC_OTHER            everything else (incl. unassigned code points and surrogates)
 */
#ifndef VOX_UNICODE_H
#define VOX_UNICODE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum {
    VX_UC_OTHER = 0,
    VX_UC_LU = 1,
    VX_UC_LL = 2,
    VX_UC_LT = 3,
    VX_UC_LM = 4,
    VX_UC_LO = 5,
    VX_UC_M = 6,
    VX_UC_N = 7,
    VX_UC_WS = 8,
    VX_UC_COUNT = 9
};

/* Generated (vox_unicode_tables.c in the build folder). */
extern const char vx_unicode_version[];
/* The class of code point cp (VX_UC_OTHER above U+10FFFF). */
int vx_uc_class(uint32_t cp);

/* Sets of classes as bit masks: VX_UC_IN(class, VX_UCS_L) etc. */
#define VX_UCS(c) (1u << (c))
#define VX_UCS_L (VX_UCS(VX_UC_LU) | VX_UCS(VX_UC_LL) | VX_UCS(VX_UC_LT) | VX_UCS(VX_UC_LM) | VX_UCS(VX_UC_LO))
#define VX_UC_IN(c, set) (((set) >> (c)) & 1u)

/* ------------------------------------------------------------------------------------------------
 * UTF-8 (RFC 3629: no overlongs, no surrogates, nothing above U+10FFFF). */

/* Decodes the sequence at s[i..len): returns its length (1-4) and sets *cp, or returns 0 when the
 * bytes there are not a valid sequence; *incomplete (may be NULL) is then set to true when they are a
 * valid but unfinished start of one cut off by len. */
size_t vx_utf8_decode(const char *s, size_t len, size_t i, uint32_t *cp, bool *incomplete);
/* The length of the longest prefix of s[0..len) that is valid UTF-8 (== len when all of it is). */
size_t vx_utf8_valid_prefix(const char *s, size_t len);
/* Code point cp as an error message names it: `"x" (U+XXXX)`, or `U+XXXX` alone when the character
 * would not print (a C0 or C1 control, DEL, white space): a message stays one printable line whatever
 * the input held. Writes at most size bytes to out (24 are always enough) and returns out. */
const char *vx_utf8_shown(char *out, size_t size, uint32_t cp);

#endif
