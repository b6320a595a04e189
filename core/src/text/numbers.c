/* Numbers as English words (reference/text/numbers.py): no "and" inside numbers, tens
 * and units as separate words ("twenty", "one"), years as spoken. */
#include <stdlib.h>
#include <string.h>

#include "text/text.h"

const char *const vt_ones[20] = {"zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine",
                                 "ten", "eleven", "twelve", "thirteen", "fourteen", "fifteen", "sixteen",
                                 "seventeen", "eighteen", "nineteen"};
static const char *const TENS[10] = {"", "", "twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety"};
static const char *const SCALES[5] = {"", "thousand", "million", "billion", "trillion"};
#define MAX_CARDINAL_DIGITS 15

static void word(vt_items *it, const char *w) { vt_items_push(it, 'w', w, strlen(w)); }

static void below_1000(vt_items *it, unsigned n) {
    if (n >= 100) {
        word(it, vt_ones[n / 100]);
        word(it, "hundred");
        n %= 100;
    }
    if (n >= 20) {
        word(it, TENS[n / 10]);
        if (n % 10) word(it, vt_ones[n % 10]);
    } else if (n > 0) {
        word(it, vt_ones[n]);
    }
}

void vt_num_digits(vt_items *it, const char *d, size_t n) {
    for (size_t i = 0; i < n; i++) word(it, vt_ones[d[i] - '0']);
}

void vt_num_cardinal(vt_items *it, const char *d, size_t n) {
    size_t z = 0;
    while (z < n && d[z] == '0') z++;
    if (z == n) {
        word(it, "zero");
        return;
    }
    if (n - z > MAX_CARDINAL_DIGITS) {
        vt_num_digits(it, d, n);
        return;
    }
    uint64_t v = 0;
    for (size_t i = z; i < n; i++) v = v * 10 + (uint64_t)(d[i] - '0');
    unsigned groups[5];
    int ng = 0;
    while (v) {
        groups[ng++] = (unsigned)(v % 1000);
        v /= 1000;
    }
    for (int i = ng - 1; i >= 0; i--) {
        if (groups[i]) {
            below_1000(it, groups[i]);
            if (i) word(it, SCALES[i]);
        }
    }
}

static void ordinal_last(vt_items *it) {
    if (it->failed || it->n == 0) return;
    const char *w = vt_item_text(it, it->n - 1);
    size_t n = it->v[it->n - 1].len;
    static const char *const irr[][2] = {{"one", "first"}, {"two", "second"}, {"three", "third"}, {"five", "fifth"},
                                         {"eight", "eighth"}, {"nine", "ninth"}, {"twelve", "twelfth"}};
    for (size_t i = 0; i < sizeof irr / sizeof irr[0]; i++)
        if (vt_eq(w, n, irr[i][0])) {
            vt_items_set_last(it, irr[i][1], strlen(irr[i][1]));
            return;
        }
    char buf[32];
    if (n + 5 > sizeof buf) return;
    memcpy(buf, w, n);
    if (n && w[n - 1] == 'y') {
        memcpy(buf + n - 1, "ieth", 4);
        vt_items_set_last(it, buf, n + 3);
    } else {
        memcpy(buf + n, "th", 2);
        vt_items_set_last(it, buf, n + 2);
    }
}

void vt_num_ordinal(vt_items *it, const char *d, size_t n) {
    vt_num_cardinal(it, d, n);
    ordinal_last(it);
}

void vt_num_year(vt_items *it, const char *d, size_t n) {
    unsigned v = 0;
    for (size_t i = 0; i < n; i++) v = v * 10 + (unsigned)(d[i] - '0');
    unsigned hi = v / 100, lo = v % 100;
    if (lo == 0) {
        if (hi % 10 == 0) {
            vt_num_cardinal(it, d, n);
        } else {
            below_1000(it, hi);
            word(it, "hundred");
        }
    } else if (hi % 10 == 0 && lo < 10) {
        vt_num_cardinal(it, d, n);
    } else if (lo < 10) {
        below_1000(it, hi);
        word(it, "oh");
        word(it, vt_ones[lo]);
    } else {
        below_1000(it, hi);
        below_1000(it, lo);
    }
}

void vt_num_decimal(vt_items *it, const char *ip, size_t ni, const char *fp, size_t nf) {
    if (ni) vt_num_cardinal(it, ip, ni);
    word(it, "point");
    vt_num_digits(it, fp, nf);
}

/* Copies s[0..n) without commas into dst (capacity >= n); returns the new length. */
static size_t strip_commas(char *dst, const char *s, size_t n) {
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        if (s[i] != ',') dst[k++] = s[i];
    return k;
}

static void read_into(vt_items *it, const char *s, size_t n, char *tmp);

void vt_num_read(vt_items *it, const char *s, size_t n) {
    char small[256];
    char *tmp = n <= sizeof small ? small : malloc(n);
    if (!tmp) {
        it->failed = true;
        return;
    }
    read_into(it, s, n, tmp);
    if (tmp != small) free(tmp);
}

static void read_into(vt_items *it, const char *s, size_t n, char *tmp) {
    const char *dot = memchr(s, '.', n);
    if (dot) {
        size_t ni = strip_commas(tmp, s, (size_t)(dot - s));
        vt_num_decimal(it, tmp, ni, dot + 1, n - (size_t)(dot - s) - 1);
        return;
    }
    if (memchr(s, ',', n)) {
        size_t k = strip_commas(tmp, s, n);
        vt_num_cardinal(it, tmp, k);
        return;
    }
    if (n > 1 && s[0] == '0')
        vt_num_digits(it, s, n);
    else if (n == 4)
        vt_num_year(it, s, n);
    else if (n > 6 && !vt_ends(s, n, "000"))
        vt_num_digits(it, s, n);
    else
        vt_num_cardinal(it, s, n);
}
