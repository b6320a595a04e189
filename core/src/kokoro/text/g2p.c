/* Words -> phonemes (reference/kokoro/frontend/g2p.py is the spec and says why each step is there):
 * overrides, misaki's special words, the lexicon with misaki's case and stress rules, then suffix
 * stripping, compound splitting and letter-to-sound rules. Strings here are malloc'd UTF-8 (NULL:
 * "no reading"); phoneme strings are short, so the copies cost nothing next to synthesis. */
#include <stdlib.h>
#include <string.h>

#include "kokoro/text/text_internal.h"

#define PRIMARY "ˈ"
#define SECONDARY "ˌ"
#define VOWELS "AIOQWYaiuæɑɒɔəɛɜɪʊʌᵻ"
#define CONSONANTS "bdfhjklmnpstvwzðŋɡɹɾʃʒʤʧθ"
#define NON_QUOTE_PUNCTS ";:,.!?—…"
#define US_TAUS "AIOWYiuæɑəɛɪɹʊʌ"
#define OPENING "(“"
#define DOUBLE "bcdgklmnprstvxz"

typedef struct g2p {
    const kt_lexicon *lx;
    const kt_lexicon *fin; /* phrase-final readings ("there" ðˈɛɹ), or NULL */
    const vt_overrides *ov;
} g2p;

enum { ST_NONE, ST_M1, ST_0, ST_05, ST_2 };

/* ---- small string helpers ---- */
static char *dupn(const char *s, size_t n) {
    char *d = malloc(n + 1);
    if (!d) return NULL;
    memcpy(d, s, n);
    d[n] = 0;
    return d;
}
static char *dups(const char *s) { return s ? dupn(s, strlen(s)) : NULL; }
static char *cat3(const char *a, size_t an, const char *b, const char *c) {
    size_t bn = strlen(b), cn = strlen(c);
    char *d = malloc(an + bn + cn + 1);
    if (!d) return NULL;
    memcpy(d, a, an);
    memcpy(d + an, b, bn);
    memcpy(d + an + bn, c, cn);
    d[an + bn + cn] = 0;
    return d;
}
/* s with every `from` replaced by `to` (both non-empty). */
static char *replace(const char *s, const char *from, const char *to) {
    vx_buf b = {0};
    size_t fn = strlen(from);
    const char *p = s;
    for (const char *q; (q = strstr(p, from)); p = q + fn) {
        vx_buf_append(&b, p, (size_t)(q - p));
        vx_buf_append(&b, to, strlen(to));
    }
    vx_buf_append(&b, p, strlen(p));
    if (!b.s && !b.failed) return dups("");
    return vx_buf_take(&b);
}
static uint32_t last_cp(const char *s, size_t n, size_t *start) {
    size_t k = vt_prev(s, n);
    uint32_t cp;
    vt_next(s, n, k, &cp);
    if (start) *start = k;
    return cp;
}
static bool has_cp_in(const char *s, const char *set) {
    size_t n = strlen(s);
    for (size_t i = 0; i < n;) {
        uint32_t c;
        i += vt_next(s, n, i, &c);
        if (vt_in(c, set)) return true;
    }
    return false;
}
static char *stress_first_vowel(const char *ps, const char *mark) {
    size_t n = strlen(ps);
    for (size_t i = 0; i < n;) {
        uint32_t c;
        size_t k = vt_next(ps, n, i, &c);
        if (vt_in(c, VOWELS)) return cat3(ps, i, mark, ps + i);
        i += k;
    }
    return dups(ps);
}

/* misaki's apply_stress for the values used here; takes ownership of ps. */
static char *apply_stress(char *ps, int st) {
    if (!ps || st == ST_NONE) return ps;
    bool pri = strstr(ps, PRIMARY) != NULL, sec = strstr(ps, SECONDARY) != NULL;
    char *r;
    if (st == ST_M1 || (st == ST_0 && pri)) {
        char *t = replace(ps, SECONDARY, "");
        r = t ? replace(t, PRIMARY, SECONDARY) : NULL;
        free(t);
    } else if ((st == ST_0 || st == ST_05) && !pri && !sec) {
        r = has_cp_in(ps, VOWELS) ? stress_first_vowel(ps, SECONDARY) : dups(ps);
    } else if (st == ST_2 && !pri && sec) {
        r = replace(ps, SECONDARY, PRIMARY);
    } else if (st == ST_2 && !pri && !sec) {
        r = has_cp_in(ps, VOWELS) ? stress_first_vowel(ps, PRIMARY) : dups(ps);
    } else {
        return ps;
    }
    free(ps);
    return r;
}

/* ---- suffix phonology (misaki's _s, _ed, _ing, US); take ownership of stem ---- */
static char *suf_s(char *stem) {
    if (!stem) return NULL;
    size_t n = strlen(stem);
    uint32_t c = last_cp(stem, n, NULL);
    const char *add = vt_in(c, "ptkfθ") ? "s" : vt_in(c, "szʃʒʧʤ") ? "ᵻz" : "z";
    char *r = cat3(stem, n, add, "");
    free(stem);
    return r;
}
static char *suf_ed(char *stem) {
    if (!stem) return NULL;
    size_t n = strlen(stem), k;
    uint32_t c = last_cp(stem, n, &k);
    char *r;
    if (vt_in(c, "pkfθʃsʧ"))
        r = cat3(stem, n, "t", "");
    else if (c == 'd')
        r = cat3(stem, n, "ᵻd", "");
    else if (c != 't')
        r = cat3(stem, n, "d", "");
    else if (vt_count(stem, n) < 2)
        r = cat3(stem, n, "ɪd", "");
    else {
        uint32_t c2 = last_cp(stem, k, NULL);
        r = vt_in(c2, US_TAUS) ? cat3(stem, k, "ɾᵻd", "") : cat3(stem, n, "ᵻd", "");
    }
    free(stem);
    return r;
}
static char *suf_ing(char *stem) {
    if (!stem) return NULL;
    size_t n = strlen(stem), k;
    char *r;
    uint32_t c = last_cp(stem, n, &k);
    if (vt_count(stem, n) > 1 && c == 't' && vt_in(last_cp(stem, k, NULL), US_TAUS))
        r = cat3(stem, k, "ɾɪŋ", "");
    else
        r = cat3(stem, n, "ɪŋ", "");
    free(stem);
    return r;
}

/* ---- lexicon steps ---- */
static char *lex_get(const g2p *g, const char *w, size_t n) { return dups(kt_lexicon_get(g->lx, w, n)); }
/* the lexicon reading, the phrase-final one when final and w has one */
static char *lex_final(const g2p *g, const char *w, size_t n, bool final) {
    const char *p = final && g->fin ? kt_lexicon_get(g->fin, w, n) : NULL;
    return p ? dups(p) : lex_get(g, w, n);
}
static char *lex_word(const g2p *g, const char *w, size_t n) {
    return vt_count(w, n) >= 2 ? lex_get(g, w, n) : NULL;
}

static char *spell(const g2p *g, const char *w, size_t n) {
    vx_buf b = {0};
    for (size_t i = 0; i < n; i++) {
        char c = w[i];
        if (c == '.') continue;
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'))) {
            vx_buf_free(&b);
            return NULL;
        }
        char u = (c >= 'a' && c <= 'z') ? (char)(c - 32) : c;
        const char *p = kt_lexicon_get(g->lx, &u, 1);
        if (!p) {
            vx_buf_free(&b);
            return NULL;
        }
        vx_buf_append(&b, p, strlen(p));
    }
    char *ps = b.s ? vx_buf_take(&b) : dups("");
    ps = apply_stress(ps, ST_0);
    if (!ps) return NULL;
    char *last = NULL;
    for (char *q = strstr(ps, SECONDARY); q; q = strstr(q + 1, SECONDARY)) last = q;
    if (last) memcpy(last, PRIMARY, strlen(PRIMARY)); /* same byte length (U+02CC -> U+02C8) */
    return ps;
}

typedef char *(*resolver)(const g2p *g, const char *w, size_t n);

static bool in_double(char c) { return c && strchr(DOUBLE, c) != NULL; }
static bool usable(char **ps) {
    if (*ps && !**ps) {
        free(*ps);
        *ps = NULL;
    }
    return *ps != NULL;
}
/* p, or NULL (freed) when it is empty: an empty reading counts as none */
static char *nz(char *p) {
    if (p && !*p) {
        free(p);
        return NULL;
    }
    return p;
}
/* resolve(word[0..n) + extra) */
static char *resolve_with(const g2p *g, resolver rs, const char *w, size_t n, const char *extra) {
    char *s = cat3(w, n, extra, "");
    if (!s) return NULL;
    char *r = rs(g, s, strlen(s));
    free(s);
    return r;
}

static const struct { const char *suf, *add; size_t minlen; } EXTRA[] = {
    {"er", "əɹ", 5}, {"est", "əst", 6}, {"ly", "li", 5}, {"ness", "nəs", 6}, {"ment", "mənt", 7},
    {"ful", "fəl", 6}, {"less", "ləs", 7},
};

static char *stems_ex(const g2p *g, const char *w, size_t bn, resolver rs, bool extra) {
    size_t n = vt_count(w, bn);
    char *ps;
    if (n >= 3 && vt_ends(w, bn, "s")) {
        if (!vt_ends(w, bn, "ss") && (ps = nz(resolve_with(g, rs, w, bn - 1, "")))) return suf_s(ps);
        if ((vt_ends(w, bn, "'s") || (n > 4 && vt_ends(w, bn, "es") && !vt_ends(w, bn, "ies"))) &&
            (ps = nz(resolve_with(g, rs, w, bn - 2, ""))))
            return suf_s(ps);
        if (n > 4 && vt_ends(w, bn, "ies") && (ps = nz(resolve_with(g, rs, w, bn - 3, "y")))) return suf_s(ps);
    }
    if (n >= 4 && vt_ends(w, bn, "d")) {
        if (!vt_ends(w, bn, "dd") && (ps = nz(resolve_with(g, rs, w, bn - 1, "")))) return suf_ed(ps);
        if (n > 4 && vt_ends(w, bn, "ed") && !vt_ends(w, bn, "eed") && (ps = nz(resolve_with(g, rs, w, bn - 2, ""))))
            return suf_ed(ps);
        if (n > 4 && vt_ends(w, bn, "ied") && (ps = nz(resolve_with(g, rs, w, bn - 3, "y")))) return suf_ed(ps);
        if (n > 5 && vt_ends(w, bn, "ed") && w[bn - 3] == w[bn - 4] && in_double(w[bn - 3]) &&
            (ps = nz(resolve_with(g, rs, w, bn - 3, ""))))
            return suf_ed(ps);
    }
    if (n >= 5 && vt_ends(w, bn, "ing")) {
        /* misaki looks -ing stems up at stress 0.5 */
        if (n > 5 && (ps = nz(resolve_with(g, rs, w, bn - 3, "")))) return suf_ing(apply_stress(ps, ST_05));
        if ((ps = nz(resolve_with(g, rs, w, bn - 3, "e")))) return suf_ing(apply_stress(ps, ST_05));
        if (n > 5 && ((w[bn - 4] == w[bn - 5] && in_double(w[bn - 4])) || vt_ends(w, bn, "cking")) &&
            (ps = nz(resolve_with(g, rs, w, bn - 4, ""))))
            return suf_ing(apply_stress(ps, ST_05));
    }
    for (size_t e = 0; extra && e < sizeof EXTRA / sizeof EXTRA[0]; e++) {
        size_t sl = strlen(EXTRA[e].suf);
        if (n < EXTRA[e].minlen || !vt_ends(w, bn, EXTRA[e].suf)) continue;
        size_t base = bn - sl;
        const char *add = EXTRA[e].add;
        bool er = e < 2;
        for (int cand = 0; cand < 4; cand++) {
            bool y_stem = false;
            if (cand == 0) {
                ps = resolve_with(g, rs, w, base, "");
            } else if (cand == 1) {
                if (!er) continue;
                ps = resolve_with(g, rs, w, base, "e");
            } else if (cand == 2) {
                if (!(base > 0 && w[base - 1] == 'i')) continue;
                ps = resolve_with(g, rs, w, base - 1, "y");
                y_stem = true;
            } else {
                if (!(vt_count(w, base) >= 4 && w[base - 1] == w[base - 2] && in_double(w[base - 1]))) continue;
                ps = resolve_with(g, rs, w, base - 1, "");
            }
            if (!usable(&ps)) continue;
            size_t pn = strlen(ps);
            char *r;
            if (y_stem && pn && ps[pn - 1] == 'i' && (!strcmp(EXTRA[e].suf, "ly") || !strcmp(EXTRA[e].suf, "ful")))
                r = cat3(ps, pn - 1, "ə", add); /* happily hˈæpəli, but happiness hˈæpinəs */
            else
                r = cat3(ps, pn, add, "");
            free(ps);
            return r;
        }
    }
    return NULL;
}

static char *stems(const g2p *g, const char *w, size_t bn, resolver rs) { return stems_ex(g, w, bn, rs, true); }

static char *compound(const g2p *g, const char *w, size_t bn) {
    size_t bounds[130];
    size_t n = 0;
    for (size_t i = 0; i < bn && n < 129;) {
        bounds[n++] = i;
        uint32_t c;
        i += vt_next(w, bn, i, &c);
    }
    if (n >= 129) return NULL; /* beyond any lexicon word; the Python twin has the same cap */
    bounds[n] = bn;
    char *best = NULL;
    size_t best_score = 0;
    for (size_t i = n - 3; i > 2 && n >= 6; i--) {
        char *lp = lex_word(g, w, bounds[i]);
        if (!lp) continue;
        char *rp = lex_word(g, w + bounds[i], bn - bounds[i]);
        if (!rp) rp = stems(g, w + bounds[i], bn - bounds[i], lex_word);
        if (!rp) {
            free(lp);
            continue;
        }
        size_t a = bounds[i] - bounds[i - 1], lpn = strlen(lp), rpn = strlen(rp), ls;
        if (a == bounds[i + 1] - bounds[i] && !memcmp(w + bounds[i - 1], w + bounds[i], a) && lpn && rpn) {
            /* a doubled letter at the joint is one sound: con|nor, book|keeper */
            uint32_t lc = last_cp(lp, lpn, &ls), rc;
            size_t k = vt_next(rp, rpn, 0, &rc);
            if (lc == rc) memmove(rp, rp + k, rpn - k + 1);
        }
        size_t score = i < n - i ? i : n - i;
        if (score > best_score) {
            rp = apply_stress(rp, ST_M1);
            free(best);
            best = rp ? cat3(lp, strlen(lp), rp, "") : NULL;
            best_score = score;
        }
        free(lp);
        free(rp);
    }
    return best;
}

static char *compound_resolver(const g2p *g, const char *w, size_t n) {
    return vt_count(w, n) >= 6 ? compound(g, w, n) : NULL;
}

static char *lts(const char *w, size_t n) {
    vx_buf b = {0};
    kt_lts(w, n, &b);
    return b.s ? vx_buf_take(&b) : (b.failed ? NULL : dups(""));
}

/* the chain for a lower-case word no lexicon entry covers ('s is stripped once: possessive) */
static char *oov(const g2p *g, const char *lw, size_t bn, bool possessive) {
    size_t n = vt_count(lw, bn);
    char *ps = stems(g, lw, bn, lex_word);
    if (!ps && n >= 6) {
        ps = compound(g, lw, bn);
        if (!ps) ps = stems(g, lw, bn, compound_resolver);
    }
    if (!ps && memchr(lw, '\'', bn)) {
        char *bare = malloc(bn + 1);
        if (!bare) return NULL;
        size_t k = 0;
        for (size_t i = 0; i < bn; i++)
            if (lw[i] != '\'') bare[k++] = lw[i];
        bare[k] = 0;
        ps = lex_word(g, bare, k);
        if (!ps) ps = stems(g, bare, k, lex_word);
        free(bare);
    }
    if (!ps && possessive && n > 2 && vt_ends(lw, bn, "'s")) {
        ps = oov(g, lw, bn - 2, false);
        ps = usable(&ps) ? suf_s(ps) : NULL;
    }
    if (!ps && n >= 5 && vt_ends(lw, bn, "s") && !strchr("sui'", lw[bn - 2])) {
        ps = lts(lw, bn - 1);
        ps = usable(&ps) ? suf_s(ps) : NULL;
    }
    if (!ps) ps = lts(lw, bn);
    return ps;
}

static char *word(const g2p *g, const char *w0, size_t n0, bool final);

typedef struct part_key {
    int primary, weight;
    size_t i;
} part_key;

static int part_cmp(const void *a, const void *b) {
    const part_key *x = a, *y = b;
    if (x->primary != y->primary) return x->primary - y->primary;
    if (x->weight != y->weight) return x->weight < y->weight ? -1 : 1;
    return x->i < y->i ? -1 : (x->i > y->i);
}

/* misaki's resolve_tokens for a hyphenated word (g2p.py G2P.hyphenated): the parts read one by one,
 * joined without spaces, stress balanced across them. */
static char *hyphenated(const g2p *g, const char *w, size_t n) {
    size_t np = 0;
    for (size_t i = 0; i < n; i++) np += w[i] == '-';
    np++;
    char **parts = calloc(np, sizeof *parts);
    size_t *plen = calloc(np, sizeof *plen);
    part_key *keys = calloc(np, sizeof *keys);
    char *r = NULL;
    if (!parts || !plen || !keys) goto out;
    size_t k = 0;
    for (size_t i = 0; i <= n;) {
        size_t j = i;
        while (j < n && w[j] != '-') j++;
        if (j > i) {
            plen[k] = vt_count(w + i, j - i);
            if (!(parts[k++] = word(g, w + i, j - i, false))) goto out;
        }
        i = j + 1;
    }
    size_t nk = 0;
    for (size_t i = 0; i < k; i++) {
        if (!*parts[i]) continue;
        size_t pn = strlen(parts[i]);
        int wgt = 0;
        for (size_t q = 0; q < pn;) {
            uint32_t c;
            q += vt_next(parts[i], pn, q, &c);
            wgt += vt_in(c, "AIOQWYʤʧ") ? 2 : 1;
        }
        keys[nk++] = (part_key){strstr(parts[i], PRIMARY) != NULL, wgt, i};
    }
    int primaries = 0;
    for (size_t i = 0; i < nk; i++) primaries += keys[i].primary;
    if (nk == 2 && plen[keys[0].i] == 1) {
        size_t i = keys[1].i;
        if (strstr(parts[i], PRIMARY) && !(parts[i] = apply_stress(parts[i], ST_M1))) goto out;
    } else if (nk >= 2 && primaries > (int)(nk + 1) / 2) {
        qsort(keys, nk, sizeof *keys, part_cmp);
        for (size_t q = 0; q < nk / 2; q++) {
            size_t i = keys[q].i;
            /* misaki's stress -0.5: demote only a part that has a primary stress */
            if (strstr(parts[i], PRIMARY) && !(parts[i] = apply_stress(parts[i], ST_M1))) goto out;
        }
    }
    vx_buf b = {0};
    for (size_t i = 0; i < k; i++) vx_buf_append(&b, parts[i], strlen(parts[i]));
    r = b.s ? vx_buf_take(&b) : (b.failed ? NULL : dups(""));
out:
    for (size_t i = 0; parts && i < np; i++) free(parts[i]);
    free(parts);
    free(plen);
    free(keys);
    return r;
}

/* g2p.py G2P.mixed_case: a word with a capital inside that no lexicon entry holds (O'Neill, McKenzie,
 * PhD(s), CamelCase read part by part like a hyphenated word); NULL when no rule reads it. */
static char *mixed_case(const g2p *g, const char *w, size_t n) {
    size_t nc = vt_count(w, n);
    if (nc >= 4 && w[0] == 'O' && w[1] == '\'' && vt_is_upper((unsigned char)w[2])) {
        char *rest = word(g, w + 2, n - 2, false);
        char *r = rest && *rest ? cat3("ˌO", strlen("ˌO"), rest, "") : NULL;
        free(rest);
        return r;
    }
    if (nc >= 4 && w[0] == 'M' && w[1] == 'c' && vt_is_upper((unsigned char)w[2])) {
        char *rest = word(g, w + 2, n - 2, false);   /* McGregor, McKenzie: no second k */
        char *r = NULL;
        if (rest && *rest) {
            const char *pre = (rest[0] == 'k' || strncmp(rest, "ɡ", strlen("ɡ")) == 0) ? "mə" : "mək";
            r = cat3(pre, strlen(pre), rest, "");
        }
        free(rest);
        return r;
    }
    size_t cn = (nc >= 3 && w[n - 1] == 's' && vt_is_upper((unsigned char)w[n - 2])) ? n - 1 : n;
    if (cn >= 2 && cn <= 4) {
        int upper = 0;
        bool letters = true;
        for (size_t i = 0; i < cn; i++) {
            upper += vt_is_upper((unsigned char)w[i]);
            letters &= vt_is_upper((unsigned char)w[i]) || vt_is_lower((unsigned char)w[i]);
        }
        if (upper >= 2 && letters) {
            char *ps = spell(g, w, cn);
            if (ps) return cn != n ? suf_s(ps) : ps;
        }
    }
    if (memchr(w, '\'', n)) return NULL;
    size_t cuts = 0;
    for (size_t i = 1; i < n; i++) cuts += vt_is_upper((unsigned char)w[i]) && vt_is_lower((unsigned char)w[i - 1]);
    if (!cuts) return NULL;
    char *h = malloc(n + cuts + 1);
    if (!h) return NULL;
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        if (i && vt_is_upper((unsigned char)w[i]) && vt_is_lower((unsigned char)w[i - 1])) h[k++] = '-';
        h[k++] = w[i];
    }
    h[k] = 0;
    char *r = hyphenated(g, h, k);
    free(h);
    return r;
}

static char *word(const g2p *g, const char *w0, size_t n0, bool final) {
    const char *o = vt_override_get(g->ov, w0, n0);
    if (o) return dups(o);
    char *w = dupn(w0, n0);
    if (!w) return NULL;
    size_t n = n0;
    if (memchr(w, '.', n)) {
        char *ps = spell(g, w, n);
        if (ps) {
            free(w);
            return ps;
        }
        size_t k = 0;
        for (size_t i = 0; i < n; i++)
            if (w[i] != '.') w[k++] = w[i];
        n = k;
        w[n] = 0;
        if (!n) {
            free(w);
            return dups("");
        }
    }
    char *lw = malloc(n + 1), *uw = malloc(n + 1);
    char *ps = NULL;
    if (!lw || !uw) goto done;
    vt_lower(lw, w, n);
    vt_upper(uw, w, n);
    lw[n] = uw[n] = 0;
    int st = memcmp(w, lw, n) == 0 ? ST_NONE : (memcmp(w, uw, n) == 0 ? ST_2 : ST_05);
    if ((ps = lex_final(g, w, n, final))) {
        ps = apply_stress(ps, st);
        goto done;
    }
    uint32_t c0;
    size_t k0 = vt_next(w, n, 0, &c0);
    if (memcmp(w, lw, n) != 0 && (memcmp(w, uw, n) == 0 || memcmp(w + k0, lw + k0, n - k0) == 0)) {
        /* misaki lower-cases a capitalized or all-caps word when the lexicon or its -s/-ed/-ing rules
         * read it; an all-caps word it cannot read that way is spelled */
        ps = vt_count(lw, n) >= 2 ? lex_final(g, lw, n, final) : NULL;
        if (!ps) ps = stems_ex(g, lw, n, lex_word, false);
        if (ps) {
            ps = apply_stress(ps, st);
            goto done;
        }
        bool any_upper = false, all_ok = true;
        for (size_t i = 0; i < n; i++) {
            any_upper |= vt_is_upper((unsigned char)w[i]);
            all_ok &= vt_is_upper((unsigned char)w[i]) || w[i] == '\'';
        }
        if (memcmp(w, uw, n) == 0 && any_upper && all_ok) {
            size_t k = 0;
            char *tmp = malloc(n + 1);
            if (!tmp) goto done;
            for (size_t i = 0; i < n; i++)
                if (w[i] != '\'') tmp[k++] = w[i];
            ps = spell(g, tmp, k);
            free(tmp);
            if (ps) goto done;
        }
    }
    if (n >= 3 && w[n - 1] == 's') {
        /* plural of an acronym ("APIs", "CEOs"): misaki strips the -s off the all-caps stem */
        bool caps = true;
        for (size_t i = 0; i + 1 < n; i++) caps &= vt_is_upper((unsigned char)w[i]);
        if (caps) {
            ps = word(g, w, n - 1, false);
            if (ps && *ps) {
                ps = suf_s(ps);
                goto done;
            }
            free(ps);
            ps = NULL;
        }
    }
    if (n == 1 && w[0] >= 'a' && w[0] <= 'z' && (ps = spell(g, w, n))) goto done;
    if (memcmp(w, lw, n) != 0 && (ps = stems_ex(g, w, n, lex_word, false))) {
        /* misaki's -s/-ed/-ing rules on the word as written ("PhDs" -> PhD + z) */
        ps = apply_stress(ps, st);
        goto done;
    }
    bool inner_upper = false;
    for (size_t i = 1; i < n; i++) inner_upper |= vt_is_upper((unsigned char)w[i]);
    if (!memchr(w, '-', n) && memcmp(w, uw, n) != 0 && inner_upper && (ps = mixed_case(g, w, n))) goto done;
    if (memchr(w, '-', n)) {
        ps = hyphenated(g, w, n);
        goto done;
    }
    ps = apply_stress(oov(g, lw, n, true), st);
done:
    free(w);
    free(lw);
    free(uw);
    return ps;
}

/* misaki's special cases that need no tagger; fv: 0 next is a consonant, 1 a vowel, -1 nothing. */
static char *special(const g2p *g, const char *w, size_t n, int fv) {
    if (vt_eq(w, n, "a") || vt_eq(w, n, "A")) return dups("ɐ");
    if (vt_eq(w, n, "an") || vt_eq(w, n, "An") || vt_eq(w, n, "AN")) return dups("ɐn");
    if (vt_eq(w, n, "I")) return dups("ˌI");
    if (vt_eq(w, n, "am") || vt_eq(w, n, "Am") || vt_eq(w, n, "AM"))
        return (vt_eq(w, n, "am") && fv >= 0) ? dups("ɐm") : lex_get(g, "am", 2);
    if (vt_eq(w, n, "to") || vt_eq(w, n, "To") || vt_eq(w, n, "TO"))
        return fv < 0 ? lex_get(g, "to", 2) : dups(fv ? "tʊ" : "tə");
    if (vt_eq(w, n, "in") || vt_eq(w, n, "In") || vt_eq(w, n, "IN"))
        return dups(fv < 0 ? "ˈɪn" : "ɪn"); /* misaki with spaCy's usual tag for "in" (IN) */
    if (vt_eq(w, n, "the") || vt_eq(w, n, "The") || vt_eq(w, n, "THE")) return dups(fv == 1 ? "ði" : "ðə");
    return NULL;
}

static size_t count_cps(const char *s, size_t from, size_t to) {
    size_t n = 0;
    for (size_t i = from; i < to; i++) n += ((unsigned char)s[i] & 0xC0) != 0x80;
    return n;
}

static void push_word(kt_word_spans *w, size_t item, size_t c0, size_t c1) {
    if (w->n == w->cap) {
        size_t cap = w->cap ? 2 * w->cap : 16;
        kt_word_span *v = realloc(w->v, cap * sizeof *v);
        if (!v) {
            w->failed = true;
            return;
        }
        w->v = v, w->cap = cap;
    }
    w->v[w->n++] = (kt_word_span){item, c0, c1};
}

void kt_g2p(const kt_lexicon *lx, const kt_lexicon *fin, const vt_overrides *ov, const vt_items *items, vx_buf *out,
            kt_word_spans *words) {
    g2p g = {lx, fin, ov};
    size_t n = items->n;
    char **pss = calloc(n ? n : 1, sizeof *pss);
    if (!pss) {
        out->failed = true;
        return;
    }
    int fv = -1;
    for (size_t k = n; k-- > 0;) {
        const vt_item *it = &items->v[k];
        const char *text = vt_item_text(items, k);
        char *ps;
        if (it->kind == 'p' || it->kind == 'o') {
            ps = dupn(text, it->len);
        } else {
            const char *o = vt_override_get(ov, text, it->len);
            ps = o ? dups(o) : special(&g, text, it->len, fv);
            if (!ps && !o) ps = word(&g, text, it->len, fv < 0);
        }
        if (!ps) {
            out->failed = true;
            break;
        }
        pss[k] = ps;
        size_t pn = strlen(ps);
        for (size_t i = 0; i < pn;) {
            uint32_t c;
            i += vt_next(ps, pn, i, &c);
            if (vt_in(c, NON_QUOTE_PUNCTS)) {
                fv = -1;
                break;
            }
            if (vt_in(c, VOWELS) || vt_in(c, CONSONANTS)) {
                fv = vt_in(c, VOWELS) ? 1 : 0;
                break;
            }
        }
    }
    size_t start = out->len;
    for (size_t k = 0; k < n && !out->failed; k++) {
        const char *ps = pss[k];
        if (!ps || !*ps) continue;
        bool opening = vt_eq(ps, strlen(ps), "(") || vt_eq(ps, strlen(ps), "“");
        if (items->v[k].kind == 'p' && !opening && strcmp(ps, "—") != 0) {
            vx_buf_append(out, ps, strlen(ps));
            continue;
        }
        if (out->len > start && out->s[out->len - 1] != ' ') {
            uint32_t c = last_cp(out->s, out->len, NULL);
            if (!vt_in(c, OPENING)) vx_buf_append(out, " ", 1);
        }
        size_t at = out->len;
        vx_buf_append(out, ps, strlen(ps));
        if (words && items->v[k].kind == 'w' && !out->failed)   /* in characters from `start` */
            push_word(words, k, count_cps(out->s, start, at), count_cps(out->s, start, out->len));
    }
    for (size_t k = 0; k < n; k++) free(pss[k]);
    free(pss);
    /* strip spaces at both ends of what was appended; misaki's G2P for Kokoro v1.0 writes the flap ɾ
     * as T and the glottal stop ʔ as t (the symbols the model was trained on): both shrink to one byte */
    if (out->failed || !out->s) return;
    size_t a = start;
    while (a < out->len && out->s[a] == ' ') a++;
    /* the leading spaces go (one byte, one character each); the shrinking below keeps characters */
    for (size_t i = 0; words && i < words->n; i++) {
        words->v[i].c0 -= words->v[i].c0 < a - start ? words->v[i].c0 : a - start;
        words->v[i].c1 -= words->v[i].c1 < a - start ? words->v[i].c1 : a - start;
    }
    size_t e = out->len;
    while (e > a && out->s[e - 1] == ' ') e--;
    size_t d = start;
    for (size_t i = a; i < e;) {
        uint32_t c;
        size_t k = vt_next(out->s, e, i, &c);
        if (c == 0x27E || c == 0x294) {
            out->s[d++] = c == 0x27E ? 'T' : 't';
        } else {
            memmove(out->s + d, out->s + i, k);
            d += k;
        }
        i += k;
    }
    out->len = d;
    out->s[out->len] = 0;
}
