/* Internal to the F5-TTS text frontend (text.c, jieba.c, pinyin.c): the data of the tokenizer blobs
 * (docs/formats.md, "F5-TTS models") and the lists of strings the stages pass on. */
#ifndef VOX_F5_TEXT_H
#define VOX_F5_TEXT_H

#include <stddef.h>
#include <stdint.h>

#include "../strbuf.h"
#include "vox.h"

/* A list of strings in one buffer: item i is buf.s[off[i], off[i + 1]). */
typedef struct f5_strs {
    vx_buf buf;
    size_t *off;   /* n + 1 entries once anything was added */
    size_t n, cap;
    int failed;
} f5_strs;
void f5_strs_push(f5_strs *l, const char *s, size_t len);
static inline const char *f5_strs_at(const f5_strs *l, size_t i, size_t *len) {
    *len = l->off[i + 1] - l->off[i];
    return l->buf.s + l->off[i];
}
void f5_strs_free(f5_strs *l);

/* Sorted "key<sep>value" lines of a blob, found by binary search on the key's bytes (UTF-8 byte order is
 * code point order, which is how the converter sorted them). */
typedef struct f5_lines {
    const char *data;
    size_t len;
    uint32_t *start;   /* [n + 1]: line starts, and the end */
    int64_t n;
    char sep;
} f5_lines;
vox_status f5_lines_index(f5_lines *l, const char *data, size_t len, char sep, const char *what);
void f5_lines_free(f5_lines *l);
/* The key of line i (bytes before sep) and its value (after sep, without the line break). */
void f5_lines_key(const f5_lines *l, int64_t i, const char **key, size_t *klen);
void f5_lines_value(const f5_lines *l, int64_t i, const char **val, size_t *vlen);
/* The first line whose key is >= s (n when none). */
int64_t f5_lines_lower(const f5_lines *l, const char *s, size_t n);
/* The line whose key is exactly s, or -1. */
int64_t f5_lines_find(const f5_lines *l, const char *s, size_t n);

/* The segmenter (jieba.c): jieba-rs Jieba::cut(text, hmm=true). */
typedef struct f5_jieba {
    f5_lines dict;
    double *log_freq;   /* [n]: ln freq, -inf for a frequency of 0 */
    double logtotal;
    int64_t max_len;    /* code points of the longest word */
    double start[4], trans[4][4];
    uint32_t *emit_cp[4];
    double *emit_lp[4];
    int64_t emit_n[4];
} f5_jieba;
vox_status f5_jieba_load(f5_jieba *j, const char *dict, size_t dict_len, const char *hmm, size_t hmm_len);
void f5_jieba_free(f5_jieba *j);
/* Appends the segments of text (UTF-8, valid) to out. */
void f5_jieba_cut(const f5_jieba *j, const char *text, size_t len, f5_strs *out);

/* pypinyin's data and lazy_pinyin(style=TONE3, tone_sandhi=True) (pinyin.c). */
typedef struct f5_pinyin {
    f5_lines chars, phrases;
} f5_pinyin;
vox_status f5_pinyin_load(f5_pinyin *p, const char *chars, size_t chars_len, const char *phrases, size_t phrases_len);
void f5_pinyin_free(f5_pinyin *p);
/* Appends the items of lazy_pinyin(text) to out. */
void f5_lazy_pinyin(const f5_pinyin *p, const char *text, size_t len, f5_strs *out);

/* UTF-8 helpers: code points of s[0, len) into cps / their byte offsets into offs ([n + 1]); returns n. */
size_t f5_utf8_split(const char *s, size_t len, uint32_t *cps, size_t *offs);
/* Python's str.isspace (the characters re's \s matches in a str pattern). */
int f5_is_space(uint32_t cp);

#endif
