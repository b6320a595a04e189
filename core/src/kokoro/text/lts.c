/* Letter-to-sound rules for words nothing else covers (reference/kokoro/frontend/lts.py holds the
 * same table and says how it is applied). Never spells a word letter by letter. */
#include <string.h>

#include "kokoro/text/text_internal.h"

enum { ANY, START, END, SOFT, END_AFTER_CONS };

typedef struct rule {
    const char *g, *p;
    int ctx;
} rule;

static const rule RULES[] = {
    {"tion", "ʃən", ANY}, {"sion", "ʒən", ANY}, {"ture", "ʧəɹ", ANY}, {"ough", "O", END}, {"ought", "ɔt", ANY},
    {"augh", "ɔ", ANY}, {"eigh", "A", ANY}, {"igh", "I", ANY}, {"tch", "ʧ", ANY}, {"sch", "sk", ANY},
    {"air", "ɛɹ", ANY}, {"ear", "ɪɹ", ANY}, {"eer", "ɪɹ", ANY}, {"are", "ɛɹ", END}, {"ire", "Iəɹ", END},
    {"ore", "ɔɹ", END}, {"ure", "jʊɹ", END}, {"ous", "əs", END},
    {"ch", "ʧ", ANY}, {"sh", "ʃ", ANY}, {"th", "θ", ANY}, {"ph", "f", ANY}, {"wh", "w", ANY}, {"ck", "k", ANY},
    {"ng", "ŋ", ANY}, {"nk", "ŋk", ANY}, {"gh", "", ANY}, {"qu", "kw", ANY}, {"kn", "n", START},
    {"wr", "ɹ", START}, {"gn", "n", START}, {"ps", "s", START}, {"dg", "ʤ", ANY}, {"mb", "m", END},
    {"bb", "b", ANY}, {"dd", "d", ANY}, {"ff", "f", ANY}, {"gg", "ɡ", ANY}, {"ll", "l", ANY}, {"mm", "m", ANY},
    {"nn", "n", ANY}, {"pp", "p", ANY}, {"rr", "ɹ", ANY}, {"ss", "s", ANY}, {"tt", "t", ANY}, {"zz", "z", ANY},
    {"le", "əl", END_AFTER_CONS},
    {"ee", "i", ANY}, {"ea", "i", ANY}, {"oo", "u", ANY}, {"ou", "W", ANY}, {"ow", "O", END}, {"ow", "W", ANY},
    {"oi", "Y", ANY}, {"oy", "Y", ANY}, {"ai", "A", ANY}, {"ay", "A", ANY}, {"au", "ɔ", ANY}, {"aw", "ɔ", ANY},
    {"ie", "i", ANY}, {"ei", "A", ANY}, {"ey", "i", END}, {"ey", "A", ANY}, {"eu", "u", ANY},
    {"ew", "u", ANY}, {"ue", "u", ANY}, {"oa", "O", ANY}, {"oe", "O", END},
    {"ar", "ɑɹ", ANY}, {"or", "ɔɹ", ANY}, {"er", "ɜɹ", ANY}, {"ir", "ɜɹ", ANY}, {"ur", "ɜɹ", ANY},
    {"c", "s", SOFT}, {"c", "k", ANY}, {"g", "ʤ", SOFT}, {"g", "ɡ", ANY}, {"x", "z", START}, {"x", "ks", ANY},
    {"j", "ʤ", ANY}, {"y", "j", START}, {"y", "i", END}, {"y", "ɪ", ANY}, {"r", "ɹ", ANY}, {"q", "k", ANY},
    {"w", "w", ANY}, {"b", "b", ANY}, {"d", "d", ANY}, {"f", "f", ANY}, {"h", "h", ANY}, {"k", "k", ANY},
    {"l", "l", ANY}, {"m", "m", ANY}, {"n", "n", ANY}, {"p", "p", ANY}, {"s", "s", ANY}, {"t", "t", ANY},
    {"v", "v", ANY}, {"z", "z", ANY},
    {"a", "æ", ANY}, {"e", "ɛ", ANY}, {"i", "ɪ", ANY}, {"o", "ɑ", ANY}, {"u", "ʌ", ANY},
};

static bool is_vowel_letter(char c) { return c && strchr("aeiouy", c) != NULL; }

static bool context_ok(const char *w, size_t n, size_t i, size_t gl, int ctx) {
    size_t j = i + gl;
    switch (ctx) {
    case START: return i == 0;
    case END: return j == n;
    case SOFT: return j < n && (w[j] == 'e' || w[j] == 'i' || w[j] == 'y');
    case END_AFTER_CONS: return j == n && i > 0 && !is_vowel_letter(w[i - 1]);
    default: return true;
    }
}

static const char *long_vowel(char c) {
    switch (c) {
    case 'a': return "A";
    case 'e': return "i";
    case 'i': return "I";
    case 'o': return "O";
    case 'u': return "u";
    default: return "I"; /* y */
    }
}

#define LTS_VOWELS "AIOWYiuæɑɔəɛɜɪʊʌ"

void kt_lts(const char *word, size_t wn, vx_buf *out) {
    /* ASCII letters only, lower-cased */
    char wbuf[128];
    size_t n = 0;
    for (size_t i = 0; i < wn && n < sizeof wbuf; i++) {
        char c = word[i];
        if (c >= 'A' && c <= 'Z') c = (char)(c + 32);
        if (c >= 'a' && c <= 'z') wbuf[n++] = c;
    }
    const char *w = wbuf;
    size_t vowels = 0;
    for (size_t i = 0; i < n; i++) vowels += is_vowel_letter(w[i]);
    bool has_other_vowel = vowels > 1;
    vx_buf ps = {0};
    for (size_t i = 0; i < n;) {
        char c = w[i];
        if (is_vowel_letter(c) && i + 3 == n && w[i + 2] == 'e' && !is_vowel_letter(w[i + 1]) && w[i + 1] != 'w' &&
            w[i + 1] != 'x' && w[i + 1] != 'r' && (c != 'y' || i > 0)) {
            const char *lv = long_vowel(c);
            vx_buf_append(&ps, lv, strlen(lv));
            i++;
            continue;
        }
        if (c == 'e' && i == n - 1 && has_other_vowel) {
            i++;
            continue;
        }
        const rule *best = NULL;
        size_t best_len = 0;
        for (size_t r = 0; r < sizeof RULES / sizeof RULES[0]; r++) {
            size_t gl = strlen(RULES[r].g);
            if (gl <= best_len || i + gl > n) continue;
            if (memcmp(w + i, RULES[r].g, gl) == 0 && context_ok(w, n, i, gl, RULES[r].ctx)) {
                best = &RULES[r];
                best_len = gl;
            }
        }
        if (!best) {
            i++;
            continue;
        }
        vx_buf_append(&ps, best->p, strlen(best->p));
        i += best_len;
    }
    /* primary stress before the first vowel; later æ ʌ ɑ ɜ reduce to ə */
    const char *s = ps.s ? ps.s : "";
    size_t sn = ps.len, i = 0;
    bool stressed = false;
    while (i < sn) {
        uint32_t cp;
        size_t k = vt_next(s, sn, i, &cp);
        if (!stressed && vt_in(cp, LTS_VOWELS)) {
            vx_buf_append(out, "ˈ", strlen("ˈ"));
            vx_buf_append(out, s + i, k);
            stressed = true;
        } else if (stressed && (cp == 0xE6 || cp == 0x28C || cp == 0x251 || cp == 0x25C)) {
            vx_buf_append(out, "ə", strlen("ə"));
        } else {
            vx_buf_append(out, s + i, k);
        }
        i += k;
    }
    vx_buf_free(&ps);
}
