/* The Kokoro text frontend as a filter, for the conformance suite (conformance/test_kokoro_frontend.py
 * compares it with the Python twin byte for byte).
 * Usage: tool_kfront LEXICON.bin FINAL.bin CONFIG.json < requests
 * (the "frontend.lexicon" and "frontend.lexicon_final" tensors' bytes, FINAL "-" for none; CONFIG.json:
 * a Kokoro config with "vocab")
 * One JSON object per input line, one JSON line out:
 *   {"op": "phonemize", "text": "...", "overrides": "{...}" (optional)} -> {"ok": true, "phonemes": "..."}
 *                                                                          or {"ok": false, "error": "..."}
 *   {"op": "spans", "pieces": ["...", ...]} -> {"ok": true, "spans": [...]}: the text fed piece by piece
 *   to vx_kfront_next_span (final once all pieces are in), spans in order. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "json.h"
#include "kokoro/text/frontend.h"
#include "strbuf.h"

static char *slurp(const char *path, size_t *n) {
    FILE *fp = fopen(path, "rb");
    if (!fp) return NULL;
    fseek(fp, 0, SEEK_END);
    long sz = ftell(fp);
    fseek(fp, 0, SEEK_SET);
    char *b = sz >= 0 ? malloc((size_t)sz + 1) : NULL;
    if (b && fread(b, 1, (size_t)sz, fp) != (size_t)sz) {
        free(b);
        b = NULL;
    }
    fclose(fp);
    if (b) b[sz] = 0;
    *n = (size_t)sz;
    return b;
}

static void spans(const vox_json *pieces, vx_buf *o) {
    vx_buf text = {0};
    size_t start = 0; /* text[start..) is pending */
    bool first = true;
    vx_buf_append(o, "{\"ok\": true, \"spans\": [", strlen("{\"ok\": true, \"spans\": ["));
    const vox_json *p = pieces ? pieces->child : NULL;
    for (;;) {
        int final = p == NULL;
        if (p) {
            vx_buf_append(&text, p->str, p->str_len);
            p = p->next;
        }
        for (;;) {
            size_t consumed = 0;
            const char *t = text.s ? text.s + start : "";
            size_t r = vx_kfront_next_span(t, text.len - start, final, &consumed);
            if (r) {
                if (!first) vx_buf_append(o, ", ", 2);
                vx_buf_json_string(o, t, r);
                first = false;
            }
            start += consumed;
            if (!r && !consumed) break;
            if (start == text.len) break;
        }
        if (final) break;
    }
    vx_buf_append(o, "]}", 2);
    vx_buf_free(&text);
}

int main(int argc, char **argv) {
    if (argc != 4) {
        fprintf(stderr, "usage: tool_kfront LEXICON.bin FINAL.bin|- CONFIG.json < requests.jsonl\n");
        return 2;
    }
    size_t lex_n, fin_n = 0, cfg_n;
    char *lex = slurp(argv[1], &lex_n), *cfg = slurp(argv[3], &cfg_n);
    char *fin = strcmp(argv[2], "-") ? slurp(argv[2], &fin_n) : NULL;
    vox_json_doc *cfg_doc;
    vox_json_error cerr;
    if (!lex || !cfg || (strcmp(argv[2], "-") && !fin) || vox_json_parse(cfg, cfg_n, &cfg_doc, &cerr) != VOX_OK) {
        fprintf(stderr, "tool_kfront: cannot read %s / %s / %s\n", argv[1], argv[2], argv[3]);
        return 1;
    }
    vx_kfront *f;
    if (vx_kfront_create_raw(lex, lex_n, fin, fin_n, vox_json_get(vox_json_root(cfg_doc), "vocab"), &f) != VOX_OK) {
        fprintf(stderr, "tool_kfront: %s\n", vox_last_error());
        return 1;
    }
    char *line = NULL;
    size_t cap = 0;
    ssize_t n;
    while ((n = getline(&line, &cap, stdin)) > 0) {
        vox_json_doc *doc;
        vox_json_error err;
        if (vox_json_parse(line, (size_t)n, &doc, &err) != VOX_OK) {
            fprintf(stderr, "tool_kfront: bad request: %s\n", err.message);
            return 1;
        }
        const vox_json *req = vox_json_root(doc);
        vx_buf o = {0};
        if (vox_json_is_string(vox_json_get(req, "op"), "spans")) {
            spans(vox_json_get(req, "pieces"), &o);
        } else {
            const vox_json *text = vox_json_get(req, "text"), *ovj = vox_json_get(req, "overrides");
            vx_buf ps = {0};
            vox_status st = vx_kfront_phonemize(f, text ? text->str : "", text ? text->str_len : 0,
                                                ovj && ovj->type == VOX_JSON_STRING ? ovj->str : NULL, &ps);
            if (st == VOX_OK) {
                vx_buf_append(&o, "{\"ok\": true, \"phonemes\": ", strlen("{\"ok\": true, \"phonemes\": "));
                vx_buf_json_string(&o, ps.s ? ps.s : "", ps.len);
            } else {
                vx_buf_append(&o, "{\"ok\": false, \"error\": ", strlen("{\"ok\": false, \"error\": "));
                vx_buf_json_string(&o, vox_last_error(), (size_t)-1);
            }
            vx_buf_append(&o, "}", 1);
            vx_buf_free(&ps);
        }
        fputs(o.s ? o.s : "{}", stdout);
        fputc('\n', stdout);
        fflush(stdout);
        vx_buf_free(&o);
        vox_json_free(doc);
    }
    free(line);
    vx_kfront_destroy(f);
    vox_json_free(cfg_doc);
    free(lex);
    free(fin);
    free(cfg);
    return 0;
}
