/* Text normalization: a span -> items (words, punctuation, override phonemes), so that G2P never
 * sees a digit. reference/text/normalize.py is the spec (and documents each reading);
 * this file follows it step by step. Lengths are bytes; the Python twin counts characters, and
 * every check below is written so that both agree (multi-byte characters are never digits,
 * letters of the ASCII patterns, or parts of a scanned number). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "text/text.h"

#define LEAD "([{\"“'"
#define TRAIL ".,;:!?…)]}\"”'"

typedef struct { const char *k, *v; } pair;

static const pair ABBREVIATIONS[] = {
    {"Dr.", "Doctor"}, {"Mr.", "Mister"}, {"Mrs.", "Missus"}, {"Ms.", "Mizz"}, {"Jr.", "Junior"}, {"Sr.", "Senior"},
    {"Prof.", "Professor"}, {"Mt.", "Mount"}, {"Ave.", "Avenue"}, {"Rd.", "Road"}, {"Blvd.", "Boulevard"},
    {"Inc.", "Incorporated"}, {"Ltd.", "Limited"}, {"Co.", "Company"}, {"Corp.", "Corporation"},
    {"Dept.", "Department"}, {"Gov.", "Governor"}, {"Gen.", "General"}, {"Sen.", "Senator"},
    {"Rep.", "Representative"}, {"Capt.", "Captain"}, {"Lt.", "Lieutenant"}, {"Sgt.", "Sergeant"},
    {"Jan.", "January"}, {"Feb.", "February"}, {"Mar.", "March"}, {"Apr.", "April"}, {"Jun.", "June"},
    {"Jul.", "July"}, {"Aug.", "August"}, {"Sep.", "September"}, {"Sept.", "September"}, {"Oct.", "October"},
    {"Nov.", "November"}, {"Dec.", "December"}, {"Fig.", "Figure"},
};
static const pair ABBREVIATIONS_CI[] = {
    {"etc.", "etc"}, {"e.g.", "for example"}, {"i.e.", "that is"}, {"vs.", "versus"}, {"vs", "versus"},
    {"approx.", "approximately"}, {"cf.", "compare"},
};
static const char *const MONTHS[12] = {"January", "February", "March", "April", "May", "June", "July",
                                       "August", "September", "October", "November", "December"};
static const char *const SCALE_WORDS[] = {"thousand", "million", "billion", "trillion"};
static const pair SCALE_SUFFIXES[] = {{"K", "thousand"}, {"k", "thousand"}, {"M", "million"}, {"m", "million"},
                                      {"B", "billion"}, {"bn", "billion"}, {"T", "trillion"}, {"tn", "trillion"}};
static const char *const UNITS[][3] = {
    {"km", "kilometer", "kilometers"}, {"cm", "centimeter", "centimeters"}, {"mm", "millimeter", "millimeters"},
    {"kg", "kilogram", "kilograms"}, {"mg", "milligram", "milligrams"}, {"lb", "pound", "pounds"},
    {"lbs", "pound", "pounds"}, {"oz", "ounce", "ounces"}, {"ft", "foot", "feet"}, {"mi", "mile", "miles"},
    {"mph", "mile per hour", "miles per hour"}, {"kph", "kilometer per hour", "kilometers per hour"},
    {"km/h", "kilometer per hour", "kilometers per hour"}, {"GB", "gigabyte", "gigabytes"},
    {"MB", "megabyte", "megabytes"}, {"KB", "kilobyte", "kilobytes"}, {"TB", "terabyte", "terabytes"},
    {"Hz", "hertz", "hertz"}, {"kHz", "kilohertz", "kilohertz"}, {"MHz", "megahertz", "megahertz"},
    {"GHz", "gigahertz", "gigahertz"}, {"ms", "millisecond", "milliseconds"}, {"ml", "milliliter", "milliliters"},
    {"mL", "milliliter", "milliliters"}, {"min", "minute", "minutes"}, {"hrs", "hour", "hours"},
    {"sec", "second", "seconds"}, {"hr", "hour", "hours"}, {"°C", "degree Celsius", "degrees Celsius"},
    {"°F", "degree Fahrenheit", "degrees Fahrenheit"}, {"°", "degree", "degrees"},
};
/* Words after which a Roman numeral is a number ("World War II"); after other names, an ordinal
 * ("Henry VIII" the eighth). normalize.py ROMAN_COUNTED. */
static const char *const ROMAN_COUNTED[] = {
    "War", "Chapter", "Part", "Volume", "Book", "Act", "Scene", "Episode", "Phase", "Level", "Type", "Class",
    "Section", "Article", "Title", "Stage", "Round", "Season", "Grade", "Step", "Apollo", "Gemini", "Vatican",
    "Mark", "Series", "Division", "Category", "Appendix", "Figure", "Table", "Unit", "Lesson", "Psalm", "Rocky",
    "Fantasy", "Bowl", "Model",
};
static const pair AMPM[] = {{"am", "a.m."}, {"pm", "p.m."}, {"a.m.", "a.m."}, {"p.m.", "p.m."}};
/* currency symbol -> singular, plural, sub-unit singular, plural */
static const char *const CURRENCY[][5] = {
    {"$", "dollar", "dollars", "cent", "cents"},
    {"£", "pound", "pounds", "penny", "pence"},
    {"€", "euro", "euros", "cent", "cents"},
};
static const pair SYMBOL_WORDS[] = {{"&", "and"}, {"+", "plus"}, {"@", "at"}, {"=", "equals"}, {"%", "percent"},
                                    {"°", "degrees"}};
static const pair INNER_PUNCT[] = {{",", ","}, {";", ";"}, {":", ":"}, {"!", "!"}, {"?", "?"}, {"—", "—"}, {"…", "…"}};

#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

typedef struct norm {
    const vt_overrides *ov;
    vt_items *out;
} norm;

/* a slice that may be absent */
typedef struct slice {
    const char *s;
    size_t n;
    bool has;
} slice;

static const char *pair_get(const pair *t, size_t nt, const char *s, size_t n) {
    for (size_t i = 0; i < nt; i++)
        if (vt_eq(s, n, t[i].k)) return t[i].v;
    return NULL;
}

/* ASCII-lowercased lookup (s is short; longer strings cannot match any key) */
static const char *pair_get_ci(const pair *t, size_t nt, const char *s, size_t n) {
    char buf[16];
    if (n > sizeof buf) return NULL;
    vt_lower(buf, s, n);
    return pair_get(t, nt, buf, n);
}

static int unit_index(const char *s, size_t n) {
    for (size_t i = 0; i < COUNT(UNITS); i++)
        if (vt_eq(s, n, UNITS[i][0])) return (int)i;
    return -1;
}

static bool is_scale_word(const char *s, size_t n) {
    for (size_t i = 0; i < COUNT(SCALE_WORDS); i++)
        if (vt_eq(s, n, SCALE_WORDS[i])) return true;
    return false;
}

static bool is_month(const char *s, size_t n) {
    for (int i = 0; i < 12; i++)
        if (vt_eq(s, n, MONTHS[i])) return true;
    return false;
}

static bool all_digits(const char *s, size_t n) {
    if (!n) return false;
    for (size_t i = 0; i < n; i++)
        if (!vt_is_digit((unsigned char)s[i])) return false;
    return true;
}

/* the value of a digit string, saturating (anything past 9 digits is "big") */
static long small_int(const char *s, size_t n) {
    if (n > 9) return 1000000000L;
    long v = 0;
    for (size_t i = 0; i < n; i++) v = v * 10 + (s[i] - '0');
    return v;
}

static bool is_one(const char *s, size_t n) { return vt_eq(s, n, "1"); }

static void push(norm *z, char kind, const char *s, size_t n) { vt_items_push(z->out, kind, s, n); }
static void pushz(norm *z, char kind, const char *s) { vt_items_push(z->out, kind, s, strlen(s)); }

/* ---- number scanners (normalize.py scan_int / scan_num): the end index, or -1 ---- */
static long scan_int(const char *s, size_t n, size_t i) {
    size_t j = i;
    while (j < n && vt_is_digit((unsigned char)s[j])) j++;
    if (j == i) return -1;
    if (j - i <= 3) {
        while (j + 3 < n && s[j] == ',' && all_digits(s + j + 1, 3) && (j + 4 == n || !vt_is_digit((unsigned char)s[j + 4])))
            j += 4;
    }
    return (long)j;
}

static long scan_num(const char *s, size_t n, size_t i) {
    long r = scan_int(s, n, i);
    size_t j;
    if (r < 0) {
        if (i < n && s[i] == '.' && i + 1 < n && vt_is_digit((unsigned char)s[i + 1])) {
            j = i + 1;
            while (j < n && vt_is_digit((unsigned char)s[j])) j++;
            return (long)j;
        }
        return -1;
    }
    j = (size_t)r;
    if (j + 1 < n && s[j] == '.' && vt_is_digit((unsigned char)s[j + 1])) {
        j++;
        while (j < n && vt_is_digit((unsigned char)s[j])) j++;
    }
    return (long)j;
}

/* ---- phone-like digit strings (normalize.py phone_groups): group boundaries, count, or 0 ---- */
#define MAX_GROUPS 16
static int phone_groups(const char *s, size_t n, size_t gs[MAX_GROUPS], size_t ge[MAX_GROUPS]) {
    size_t i = 0;
    int ng = 0;
    bool plus = n > 0 && s[0] == '+';
    if (plus) i = 1;
    size_t cur_start = i, cur_len = 0;
    char sep = 0;
    for (; i < n; i++) {
        char c = s[i];
        if (vt_is_digit((unsigned char)c)) {
            if (!cur_len) cur_start = i;
            cur_len++;
        } else if ((c == '-' || c == '.') && cur_len && (!sep || sep == c)) {
            sep = c;
            if (ng == MAX_GROUPS) return 0;
            gs[ng] = cur_start;
            ge[ng++] = cur_start + cur_len;
            cur_len = 0;
        } else {
            return 0;
        }
    }
    if (!cur_len || ng == MAX_GROUPS) return 0;
    gs[ng] = cur_start;
    ge[ng++] = cur_start + cur_len;
    size_t total = 0;
    for (int g = 0; g < ng; g++) total += ge[g] - gs[g];
    if (ng < 2 || total < 7) return 0;
    for (int g = plus ? 1 : 0; g < ng; g++)
        if (ge[g] - gs[g] < 3) return 0;
    if (ng == 2 && !(ge[0] - gs[0] == 3 && ge[1] - gs[1] == 4)) return 0;
    return ng;
}

static void read_number(norm *z, const char *s, size_t n) { vt_num_read(z->out, s, n); }

static void word_core(norm *z, const char *c, size_t n);

/* ---- money, time, date, mixed ---- */
static void money(norm *z, const char *amount, size_t n, const char *const unit[5]) {
    const char *dot = memchr(amount, '.', n);
    size_t ipn = dot ? (size_t)(dot - amount) : n;
    const char *fp = dot ? dot + 1 : "";
    size_t fpn = dot ? n - ipn - 1 : 0;
    char *ip = malloc(ipn + 1);
    if (!ip) {
        z->out->failed = true;
        return;
    }
    size_t k = 0;
    for (size_t i = 0; i < ipn; i++)
        if (amount[i] != ',') ip[k++] = amount[i];
    if (fpn > 2) {
        vt_num_decimal(z->out, ip, k, fp, fpn);
        pushz(z, 'w', unit[2]);
        free(ip);
        return;
    }
    char cents[3] = {0};
    size_t cn = fpn;
    memcpy(cents, fp, fpn);
    if (fpn == 1) {
        cents[1] = '0';
        cn = 2;
    }
    size_t nz = 0;
    while (nz < k && ip[nz] == '0') nz++;
    bool cents_zero = cn == 2 && cents[0] == '0' && cents[1] == '0';
    bool has_main = nz < k || cn == 0 || cents_zero;
    if (has_main) {
        vt_num_cardinal(z->out, ip, k);
        pushz(z, 'w', (k - nz == 1 && ip[nz] == '1') ? unit[1] : unit[2]);
    }
    if (cn && !cents_zero) {
        if (has_main) pushz(z, 'w', "and");
        vt_num_cardinal(z->out, cents, cn);
        pushz(z, 'w', vt_eq(cents, cn, "01") ? unit[3] : unit[4]);
    }
    free(ip);
}

/* 1: matched (and *used set); 0: not a time */
static int time_of_day(norm *z, const char *c, size_t n, slice nxt, bool *used) {
    size_t j = 0;
    while (j < n && j < 2 && vt_is_digit((unsigned char)c[j])) j++;
    if (j == 0 || j + 3 > n || c[j] != ':' || !all_digits(c + j + 1, 2)) return 0;
    long h = small_int(c, j), m = small_int(c + j + 1, 2), sec = -1;
    size_t k = j + 3;
    if (k + 3 <= n && c[k] == ':' && all_digits(c + k + 1, 2)) { /* H:MM:SS */
        sec = small_int(c + k + 1, 2);
        k += 3;
    }
    const char *rest = c + k;
    size_t rn = n - k;
    const char *ampm = rn ? pair_get_ci(AMPM, COUNT(AMPM), rest, rn) : NULL;
    if (h > 23 || m > 59 || sec > 59 || (rn && !ampm)) return 0;
    *used = false;
    if (!rn && nxt.has && (ampm = pair_get_ci(AMPM, COUNT(AMPM), nxt.s, nxt.n))) *used = true;
    char hb[4];
    int hn = snprintf(hb, sizeof hb, "%ld", h);
    vt_num_cardinal(z->out, hb, (size_t)hn);
    if (m == 0) {
        if (!ampm) pushz(z, 'w', "o'clock");
    } else if (m < 10) {
        pushz(z, 'w', "oh");
        pushz(z, 'w', vt_ones[m]);
    } else {
        vt_num_cardinal(z->out, c + j + 1, 2);
    }
    if (sec > 0) { /* "ten forty five and thirty seconds"; :00 seconds are not read */
        char sb[4];
        int sn = snprintf(sb, sizeof sb, "%ld", sec);
        pushz(z, 'w', "and");
        vt_num_cardinal(z->out, sb, (size_t)sn);
        pushz(z, 'w', sec == 1 ? "second" : "seconds");
    }
    if (ampm) vt_items_words(z->out, ampm);
    return 1;
}

/* N:M that is not a time ("3:1", "16:9"): "three to one" (normalize.py Normalizer.ratio) */
static int ratio(norm *z, const char *c, size_t n) {
    const char *colon = memchr(c, ':', n);
    if (!colon) return 0;
    size_t a = (size_t)(colon - c), b = n - a - 1;
    if (!all_digits(c, a) || !all_digits(colon + 1, b)) return 0;
    read_number(z, c, a);
    pushz(z, 'w', "to");
    read_number(z, colon + 1, b);
    return 1;
}

static int date(norm *z, const char *c, size_t n) {
    const char *y = NULL;
    long mo = 0, d = 0;
    if (n == 10 && c[4] == '-' && c[7] == '-' && all_digits(c, 4) && all_digits(c + 5, 2) && all_digits(c + 8, 2)) {
        y = c;
        mo = small_int(c + 5, 2);
        d = small_int(c + 8, 2);
    } else {
        const char *s1 = memchr(c, '/', n);
        const char *s2 = s1 ? memchr(s1 + 1, '/', n - (size_t)(s1 + 1 - c)) : NULL;
        if (s2 && !memchr(s2 + 1, '/', n - (size_t)(s2 + 1 - c))) {
            size_t n0 = (size_t)(s1 - c), n1 = (size_t)(s2 - s1 - 1), n2 = n - (size_t)(s2 + 1 - c);
            if (all_digits(c, n0) && all_digits(s1 + 1, n1) && all_digits(s2 + 1, n2) && n0 <= 2 && n1 <= 2 && n2 == 4) {
                mo = small_int(c, n0);
                d = small_int(s1 + 1, n1);
                y = s2 + 1;
            }
        }
    }
    if (!y || !(mo >= 1 && mo <= 12 && d >= 1 && d <= 31) || y[0] == '0') return 0;
    pushz(z, 'w', MONTHS[mo - 1]);
    char db[4];
    int dn = snprintf(db, sizeof db, "%ld", d);
    vt_num_ordinal(z->out, db, (size_t)dn);
    pushz(z, 'p', ",");
    vt_num_year(z->out, y, 4);
    return 1;
}

/* N/D, 1 to 3 digits each, D from 2 to 100: "one half", "three quarters", "five eighths" */
static int fraction(norm *z, const char *c, size_t n) {
    const char *sl = memchr(c, '/', n);
    if (!sl) return 0;
    size_t nn = (size_t)(sl - c), dn = n - nn - 1;
    if (!all_digits(c, nn) || !all_digits(sl + 1, dn) || nn > 3 || dn > 3) return 0;
    long num = small_int(c, nn), den = small_int(sl + 1, dn);
    if (den < 2 || den > 100) return 0;
    vt_num_cardinal(z->out, c, nn);
    if (den == 2) {
        pushz(z, 'w', num == 1 ? "half" : "halves");
    } else if (den == 4) {
        pushz(z, 'w', num == 1 ? "quarter" : "quarters");
    } else {
        char db[4];
        int k = snprintf(db, sizeof db, "%ld", den);
        vt_num_ordinal(z->out, db, (size_t)k);
        if (num != 1 && z->out->n && !z->out->failed) {
            const char *w = vt_item_text(z->out, z->out->n - 1);
            size_t wn = z->out->v[z->out->n - 1].len;
            char buf[40];
            if (wn + 2 < sizeof buf) {
                memcpy(buf, w, wn);
                buf[wn] = 's';
                vt_items_set_last(z->out, buf, wn + 1);
            }
        }
    }
    return 1;
}

static void mixed(norm *z, const char *c, size_t n) {
    size_t i = 0, start = 0;
    while (i < n) {
        bool num_start = vt_is_digit((unsigned char)c[i]);
        if (!num_start && c[i] == '.' && i + 1 < n && vt_is_digit((unsigned char)c[i + 1])) {
            if (i == 0) {
                num_start = true;
            } else {
                uint32_t pc;
                vt_next(c, n, vt_prev(c, i), &pc);
                num_start = !vt_is_alpha(pc);
            }
        }
        if (num_start) {
            if (start < i) word_core(z, c + start, i - start);
            long j = scan_num(c, n, i);
            read_number(z, c + i, (size_t)j - i);
            i = start = (size_t)j;
        } else {
            uint32_t cp;
            i += vt_next(c, n, i, &cp);
        }
    }
    if (start < n) word_core(z, c + start, n - start);
}

static void number_words_then(norm *z, bool neg_word, const char *signword) {
    if (neg_word) pushz(z, 'w', signword);
}

/* number_core: returns whether the next chunk's core was used */
static bool number_core(norm *z, const char *c, size_t n, slice nxt, bool prev_month) {
    size_t neg = c[0] == '-' ? 1 : 0;
    /* currency: [-]$N [scale] */
    if (n > neg + 1) {
        for (size_t u = 0; u < COUNT(CURRENCY); u++) {
            size_t sl = strlen(CURRENCY[u][0]);
            if (n > neg + sl && memcmp(c + neg, CURRENCY[u][0], sl) == 0 && scan_num(c, n, neg + sl) == (long)n &&
                c[neg + sl] != '.') {
                const char *amount = c + neg + sl;
                size_t an = n - neg - sl;
                number_words_then(z, neg, "minus");
                if (nxt.has && is_scale_word(nxt.s, nxt.n)) {
                    read_number(z, amount, an);
                    push(z, 'w', nxt.s, nxt.n);
                    pushz(z, 'w', CURRENCY[u][2]);
                    return true;
                }
                money(z, amount, an, CURRENCY[u]);
                return false;
            }
        }
        /* currency with a scale letter: $5M, £3bn, €20K */
        for (size_t u = 0; u < COUNT(CURRENCY); u++) {
            size_t sl = strlen(CURRENCY[u][0]);
            if (n > neg + sl && memcmp(c + neg, CURRENCY[u][0], sl) == 0 && c[neg + sl] != '.') {
                long j = scan_num(c, n, neg + sl);
                const char *scale = j > (long)(neg + sl) ? pair_get(SCALE_SUFFIXES, COUNT(SCALE_SUFFIXES), c + j, n - (size_t)j)
                                                         : NULL;
                if (scale) {
                    number_words_then(z, neg, "minus");
                    read_number(z, c + neg + sl, (size_t)j - neg - sl);
                    pushz(z, 'w', scale);
                    pushz(z, 'w', CURRENCY[u][2]);
                    return false;
                }
            }
        }
    }
    /* cents: N¢ */
    if (vt_ends(c, n, "¢") && scan_int(c, n, 0) == (long)(n - strlen("¢"))) {
        size_t vn = n - strlen("¢");
        read_number(z, c, vn);
        pushz(z, 'w', is_one(c, vn) ? "cent" : "cents");
        return false;
    }
    /* percent */
    if (vt_ends(c, n, "%") && n > neg + 1 && scan_num(c, n, neg) == (long)(n - 1)) {
        number_words_then(z, neg, "minus");
        read_number(z, c + neg, n - 1 - neg);
        pushz(z, 'w', "percent");
        return false;
    }
    bool used = false;
    if (time_of_day(z, c, n, nxt, &used)) return used;
    if (ratio(z, c, n)) return false;
    if (date(z, c, n)) return false;
    if (fraction(z, c, n)) return false;
    /* ordinal */
    long j = scan_int(c, n, 0);
    if (j > 0 && (size_t)j + 2 == n) {
        char suf[2];
        vt_lower(suf, c + j, 2);
        if (!memcmp(suf, "st", 2) || !memcmp(suf, "nd", 2) || !memcmp(suf, "rd", 2) || !memcmp(suf, "th", 2)) {
            char *tmp = malloc((size_t)j + 1);
            if (!tmp) {
                z->out->failed = true;
                return false;
            }
            size_t k = 0;
            for (long i = 0; i < j; i++)
                if (c[i] != ',') tmp[k++] = c[i];
            vt_num_ordinal(z->out, tmp, k);
            free(tmp);
            return false;
        }
    }
    /* decades */
    const char *dec = c[0] == '\'' ? c + 1 : c;
    size_t dn = c[0] == '\'' ? n - 1 : n;
    if ((dn == 3 || dn == 5) && dec[dn - 1] == 's' && all_digits(dec, dn - 1) && dec[dn - 2] == '0') {
        size_t before = z->out->n;
        if (dn == 5)
            vt_num_year(z->out, dec, 4);
        else
            vt_num_cardinal(z->out, dec, 2);
        if (z->out->n > before && !z->out->failed) {
            const char *w = vt_item_text(z->out, z->out->n - 1);
            size_t wn = z->out->v[z->out->n - 1].len;
            char buf[40];
            if (wn + 3 < sizeof buf) {
                memcpy(buf, w, wn);
                size_t bn;
                if (wn && w[wn - 1] == 'y') {
                    memcpy(buf + wn - 1, "ies", 3);
                    bn = wn + 2;
                } else if (wn && w[wn - 1] == 'x') {
                    memcpy(buf + wn, "es", 2);
                    bn = wn + 2;
                } else {
                    buf[wn] = 's';
                    bn = wn + 1;
                }
                vt_items_set_last(z->out, buf, bn);
            }
        }
        return false;
    }
    /* phone-like */
    size_t gs[MAX_GROUPS], ge[MAX_GROUPS];
    int ng = phone_groups(c, n, gs, ge);
    if (ng) {
        if (c[0] == '+') pushz(z, 'w', "plus");
        for (int g = 0; g < ng; g++) {
            if (g) pushz(z, 'p', ",");
            vt_num_digits(z->out, c + gs[g], ge[g] - gs[g]);
        }
        return false;
    }
    /* '#' N */
    if (c[0] == '#' && scan_num(c, n, 1) == (long)n) {
        pushz(z, 'w', "number");
        read_number(z, c + 1, n - 1);
        return false;
    }
    /* range N-N */
    j = scan_num(c, n, 0);
    if (j > 0 && (size_t)j < n - 1 && c[j] == '-' && scan_num(c, n, (size_t)j + 1) == (long)n) {
        read_number(z, c, (size_t)j);
        pushz(z, 'w', "to");
        read_number(z, c + j + 1, n - (size_t)j - 1);
        return false;
    }
    /* [-|+]N [unit] */
    size_t sign = (c[0] == '-' || c[0] == '+') ? 1 : 0;
    j = scan_num(c, n, sign);
    if (j > (long)sign) {
        const char *value = c + sign;
        size_t vn = (size_t)j - sign;
        const char *signword = c[0] == '-' ? "minus" : "plus";
        if ((size_t)j == n) {
            if (prev_month && all_digits(value, vn) && vn <= 2 && small_int(value, vn) >= 1 && small_int(value, vn) <= 31) {
                number_words_then(z, sign, signword);
                vt_num_ordinal(z->out, value, vn);
                return false;
            }
            number_words_then(z, sign, signword);
            read_number(z, value, vn);
            int u = nxt.has ? unit_index(nxt.s, nxt.n) : -1;
            if (u >= 0) {
                vt_items_words(z->out, UNITS[u][is_one(value, vn) ? 1 : 2]);
                return true;
            }
            const char *ampm = nxt.has ? pair_get_ci(AMPM, COUNT(AMPM), nxt.s, nxt.n) : NULL;
            if (ampm && all_digits(value, vn) && small_int(value, vn) <= 12) {
                vt_items_words(z->out, ampm);
                return true;
            }
            return false;
        }
        const char *rest = c + j;
        size_t rn = n - (size_t)j;
        int u = unit_index(rest, rn);
        if (u >= 0) {
            number_words_then(z, sign, signword);
            read_number(z, value, vn);
            vt_items_words(z->out, UNITS[u][is_one(value, vn) ? 1 : 2]);
            return false;
        }
        const char *ampm = pair_get_ci(AMPM, COUNT(AMPM), rest, rn);
        if (ampm && all_digits(value, vn) && small_int(value, vn) <= 12) {
            number_words_then(z, sign, signword);
            read_number(z, value, vn);
            vt_items_words(z->out, ampm);
            return false;
        }
    }
    mixed(z, c, n);
    return false;
}

/* ---- words ---- */
static void flush_word(norm *z, const char *w, size_t n) {
    size_t a = 0, b = n;
    while (a < b && (w[a] == '-' || w[a] == '\'')) a++;
    while (b > a && (w[b - 1] == '-' || w[b - 1] == '\'')) b--;
    if (a == b) return;
    const char *o = vt_override_get(z->ov, w + a, b - a);
    if (o)
        pushz(z, 'o', o);
    else
        push(z, 'w', w + a, b - a);
}

static void word_core(norm *z, const char *c, size_t n) {
    if (vt_is_initialism(c, n)) {
        push(z, 'w', c, n);
        return;
    }
    const char *o = vt_override_get(z->ov, c, n);
    if (o) {
        pushz(z, 'o', o);
        return;
    }
    /* the current word is c[ws..we) only while it is contiguous: letters, ' and - */
    size_t ws = 0, we = 0;
    bool inword = false;
    for (size_t i = 0; i < n;) {
        uint32_t cp;
        size_t k = vt_next(c, n, i, &cp);
        if (vt_is_alpha(cp) || cp == '\'' || cp == '-') {
            if (!inword) {
                ws = i;
                inword = true;
            }
            we = i + k;
        } else {
            bool dot_word = false;
            if (cp == '.' && inword && i + 1 < n) {
                uint32_t nc;
                vt_next(c, n, i + 1, &nc);
                dot_word = vt_is_alpha(nc);
            }
            if (inword) flush_word(z, c + ws, we - ws);
            inword = false;
            if (dot_word) {
                pushz(z, 'w', "dot");
            } else {
                const char *sw = pair_get(SYMBOL_WORDS, COUNT(SYMBOL_WORDS), c + i, k);
                const char *ip = pair_get(INNER_PUNCT, COUNT(INNER_PUNCT), c + i, k);
                if (sw)
                    pushz(z, 'w', sw);
                else if (ip)
                    pushz(z, 'p', ip);
            }
        }
        i += k;
    }
    if (inword) flush_word(z, c + ws, we - ws);
}

/* ---- one core; returns whether the next core was used; *month: c is a month name ---- */
static bool core(norm *z, const char *c, size_t n, slice nxt, bool prev_month, bool *month) {
    *month = false;
    if (!n) return false;
    const char *o = vt_override_get(z->ov, c, n);
    if (o) {
        pushz(z, 'o', o);
        return false;
    }
    const char *ab = pair_get(ABBREVIATIONS, COUNT(ABBREVIATIONS), c, n);
    if (ab) {
        vt_items_words(z->out, ab);
        *month = is_month(ab, strlen(ab));
        return false;
    }
    if (vt_eq(c, n, "St.")) {
        vt_items_words(z->out, (nxt.has && nxt.n && vt_is_upper((unsigned char)nxt.s[0])) ? "Saint" : "Street");
        return false;
    }
    if (vt_eq(c, n, "No.")) {
        if (nxt.has && nxt.n && vt_is_digit((unsigned char)nxt.s[0])) {
            pushz(z, 'w', "number");
        } else {
            pushz(z, 'w', "No");
            pushz(z, 'p', ".");
        }
        return false;
    }
    const char *ci = pair_get_ci(ABBREVIATIONS_CI, COUNT(ABBREVIATIONS_CI), c, n);
    if (ci) {
        vt_items_words(z->out, ci);
        return false;
    }
    if (is_month(c, n)) {
        push(z, 'w', c, n);
        *month = true;
        return false;
    }
    for (size_t i = 0; i < n; i++)
        if (vt_is_digit((unsigned char)c[i])) return number_core(z, c, n, nxt, prev_month);
    if (vt_eq(c, n, "-") || vt_eq(c, n, "--") || vt_eq(c, n, "—")) {
        pushz(z, 'p', "—");
        return false;
    }
    word_core(z, c, n);
    return false;
}

/* ---- Roman numerals after a name ---- */
static int roman_digit(char c) { return c == 'I' ? 1 : c == 'V' ? 5 : c == 'X' ? 10 : 0; }

/* The value of a canonical Roman numeral of 2+ letters from I V X, in 2..39; else 0. */
static int roman_value(const char *s, size_t n) {
    if (n < 2 || n > 8) return 0; /* XXXVIII, the longest in range, has 7 letters */
    int v = 0;
    for (size_t k = 0; k < n; k++) {
        int d = roman_digit(s[k]);
        if (!d) return 0;
        v += (k + 1 < n && d < roman_digit(s[k + 1])) ? -d : d;
    }
    if (v < 2 || v > 39) return 0;
    char canon[16];
    size_t cn = 0;
    static const struct { int val; const char *sym; } T[] = {{10, "X"}, {9, "IX"}, {5, "V"}, {4, "IV"}, {1, "I"}};
    int r = v;
    for (size_t t = 0; t < sizeof T / sizeof T[0]; t++)
        while (r >= T[t].val) {
            size_t l = strlen(T[t].sym);
            memcpy(canon + cn, T[t].sym, l);
            cn += l;
            r -= T[t].val;
        }
    return (cn == n && !memcmp(canon, s, n)) ? v : 0;
}

static bool is_name(const char *s, size_t n) {
    if (n < 2 || !vt_is_upper((unsigned char)s[0])) return false;
    for (size_t i = 1; i < n; i++)
        if (!vt_is_lower((unsigned char)s[i])) return false;
    return true;
}

static void roman_words(norm *z, int v, const char *prev, size_t pn) {
    char b[4];
    int k = snprintf(b, sizeof b, "%d", v);
    for (size_t i = 0; i < COUNT(ROMAN_COUNTED); i++)
        if (vt_eq(prev, pn, ROMAN_COUNTED[i])) {
            vt_num_cardinal(z->out, b, (size_t)k);
            return;
        }
    pushz(z, 'w', "the");
    vt_num_ordinal(z->out, b, (size_t)k);
}

/* ---- chunks ---- */
typedef struct chunk {
    size_t lead, lead_n, core, core_n, trail, trail_n;
    bool took_dot; /* the core took the first "." of the trail (an abbreviation) */
} chunk;

static bool cand_keeps_dot(const char *c, size_t n) {
    /* c includes the dot */
    return pair_get(ABBREVIATIONS, COUNT(ABBREVIATIONS), c, n) || vt_eq(c, n, "St.") || vt_eq(c, n, "No.") ||
           pair_get_ci(ABBREVIATIONS_CI, COUNT(ABBREVIATIONS_CI), c, n) || pair_get_ci(AMPM, COUNT(AMPM), c, n) ||
           vt_is_initialism(c, n);
}

/* Accented Latin letters -> base letter (normalize.py ACCENTS), by code point from U+00C0. */
static const char ACCENT_BASE[64] = {
    'A', 'A', 'A', 'A', 'A', 'A', 0, 'C', 'E', 'E', 'E', 'E', 'I', 'I', 'I', 'I',
    0, 'N', 'O', 'O', 'O', 'O', 'O', 0, 0, 'U', 'U', 'U', 'U', 'Y', 0, 0,
    'a', 'a', 'a', 'a', 'a', 'a', 0, 'c', 'e', 'e', 'e', 'e', 'i', 'i', 'i', 'i',
    0, 'n', 'o', 'o', 'o', 'o', 'o', 0, 0, 'u', 'u', 'u', 'u', 'y', 0, 'y',
};

/* Maps ‘ ’ to ', – and − to -, accented letters to their base (normalize.py CHAR_MAP). */
static char *premap(const char *s, size_t n, size_t *out_n) {
    char *d = malloc(n + 1);
    if (!d) return NULL;
    size_t k = 0;
    for (size_t i = 0; i < n;) {
        uint32_t cp;
        size_t l = vt_next(s, n, i, &cp);
        if (cp == 0x2018 || cp == 0x2019)
            d[k++] = '\'';
        else if (cp == 0x2013 || cp == 0x2212)
            d[k++] = '-';
        else if (cp >= 0xC0 && cp < 0x100 && ACCENT_BASE[cp - 0xC0])
            d[k++] = ACCENT_BASE[cp - 0xC0];
        else {
            memcpy(d + k, s + i, l);
            k += l;
        }
        i += l;
    }
    d[k] = 0;
    *out_n = k;
    return d;
}

void vt_normalize(const vt_overrides *ov, const char *text0, size_t n0, vt_items *out) {
    size_t n;
    char *t = premap(text0, n0, &n);
    if (!t) {
        out->failed = true;
        return;
    }
    /* chunks */
    size_t cap = 16, nc = 0;
    chunk *ch = malloc(cap * sizeof *ch);
    if (!ch) {
        free(t);
        out->failed = true;
        return;
    }
    size_t i = 0;
    while (i < n) {
        uint32_t cp;
        size_t k;
        while (i < n && (k = vt_next(t, n, i, &cp), vt_is_ws(cp))) i += k;
        if (i >= n) break;
        size_t j = i;
        while (j < n && (k = vt_next(t, n, j, &cp), !vt_is_ws(cp))) j += k;
        size_t a = i, b = j;
        while (a < b) {
            k = vt_next(t, j, a, &cp);
            if (!vt_in(cp, LEAD)) break;
            if (cp == '\'' && a + 1 < b && vt_is_digit((unsigned char)t[a + 1])) break;
            a += k;
        }
        while (b > a) {
            size_t p = vt_prev(t, b);
            vt_next(t, j, p, &cp);
            if (!vt_in(cp, TRAIL)) break;
            b = p;
        }
        chunk c = {i, a - i, a, b - a, b, j - b, false};
        if (c.core_n && c.trail_n && t[c.trail] == '.' && cand_keeps_dot(t + c.core, c.core_n + 1)) {
            c.core_n++;
            c.trail++;
            c.trail_n--;
            c.took_dot = true;
        }
        if (nc == cap) {
            chunk *nch = realloc(ch, 2 * cap * sizeof *ch);
            if (!nch) {
                out->failed = true;
                break;
            }
            ch = nch;
            cap *= 2;
        }
        ch[nc++] = c;
        i = j;
    }
    norm z = {ov, out};
    bool prev_month = false;
    for (size_t ci = 0; ci < nc && !out->failed; ci++) {
        chunk *c = &ch[ci];
        for (size_t p = c->lead; p < c->lead + c->lead_n;) {
            uint32_t cp;
            p += vt_next(t, n, p, &cp);
            if (cp == '(' || cp == '[' || cp == '{')
                pushz(&z, 'p', "(");
            else if (cp == '"' || cp == 0x201C)
                pushz(&z, 'p', "“");
        }
        slice nxt = {0};
        if (ci + 1 < nc && !c->trail_n && !ch[ci + 1].lead_n) nxt = (slice){t + ch[ci + 1].core, ch[ci + 1].core_n, true};
        bool used = false, month = false;
        size_t gs[MAX_GROUPS], ge[MAX_GROUPS];
        const chunk *prev = (ci > 0 && !ch[ci - 1].trail_n && !c->lead_n) ? &ch[ci - 1] : NULL;
        int roman = prev && is_name(t + prev->core, prev->core_n) ? roman_value(t + c->core, c->core_n) : 0;
        if (c->lead_n == 1 && t[c->lead] == '(' && c->trail_n == 1 && t[c->trail] == ')' && c->core_n == 3 &&
            all_digits(t + c->core, 3) && ci + 1 < nc && phone_groups(t + ch[ci + 1].core, ch[ci + 1].core_n, gs, ge)) {
            vt_num_digits(out, t + c->core, 3); /* "(555) 123-4567": the area code */
        } else if (roman && !vt_override_get(ov, t + c->core, c->core_n)) {
            roman_words(&z, roman, t + prev->core, prev->core_n); /* "World War II" two, "Henry VIII" the eighth */
        } else {
            used = core(&z, t + c->core, c->core_n, nxt, prev_month, &month);
        }
        prev_month = month && !c->trail_n;
        if (used) c = &ch[++ci];
        if (c->took_dot && ci == nc - 1 &&
            !(out->n && out->v[out->n - 1].kind == 'p' && vt_eq(vt_item_text(out, out->n - 1), out->v[out->n - 1].len, ".")))
            pushz(&z, 'p', "."); /* an abbreviation ending the text also ends the sentence */
        const char *tr = t + c->trail;
        size_t tn = c->trail_n;
        for (size_t p = 0; p < tn;) {
            if (p + 3 <= tn && !memcmp(tr + p, "...", 3)) {
                pushz(&z, 'p', "..."); /* as misaki writes it (the vocab has both . and …) */
                p += 3;
                continue;
            }
            uint32_t cp;
            size_t k = vt_next(tr, tn, p, &cp);
            switch (cp) {
            case '.': case ',': case ';': case ':': case '!': case '?': push(&z, 'p', tr + p, 1); break;
            case 0x2026: pushz(&z, 'p', "…"); break;
            case ')': case ']': case '}': pushz(&z, 'p', ")"); break;
            case '"': case 0x201D: pushz(&z, 'p', "”"); break;
            default: break;
            }
            p += k;
        }
    }
    free(ch);
    free(t);
}
