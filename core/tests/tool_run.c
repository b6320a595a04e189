/* A verification entry (vox_engine_run) as a program, for the conformance suite where Python cannot run
 * the library: on aarch64 under user-mode emulation (conformance/test_cpu_aarch64.py cross-builds this
 * tool, runs it with qemu-aarch64 and compares its outputs with the reference on the x86 side, with the
 * tolerance rows of the x86 checks). Only the C ABI (vox.h) is used: what Engine.run does in Python.
 *
 * Usage: tool_run MODEL ENTRY OUTDIR [options] [NAME=FILE.npy ...]
 * ENTRY "@session": no entry, a whole session of the voice instead (what Session iteration does): the
 * "text" input fed and ended, every chunk pulled; the outputs are "audio" (the chunks' samples, one after
 * the other) and the session outputs named by -t (vox_session_output, e.g. "codes").
 *   -v VOICE.tvoice   run the entry in a session of this voice (vox_voice_load)
 *   -s SEED           the synthesis seed (with a voice)
 *   -l LANGUAGE       the synthesis language (with a voice)
 *   -o OPTIONS.json   a file holding the JSON object of the family's options (with a voice)
 *   -t TAPS           the outputs to keep, comma-separated (default: every one)
 *   -j THREADS        compute threads (default 1)
 * Inputs are .npy files of float32, int32 or uint8 (C order, little endian; "text" is its UTF-8 bytes).
 * Every output is written as OUTDIR/NNN.npy (NNN: its index in the trace), OUTDIR/index.txt lists
 * "NNN name" per line and OUTDIR/info.json is the engine's info (vox_engine_info: its kernel path). Exit status 0; 2 with the library's message on stderr when a call fails; 1 for
 * bad usage or unreadable files. */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vox.h"

#define MAX_INPUTS 32

static char *slurp(const char *path, size_t *n) {
    FILE *fp = fopen(path, "rb");
    if (!fp) return NULL;
    char *b = NULL;
    size_t len = 0, cap = 0;
    for (;;) {
        if (len + 65536 > cap) {
            cap = (len + 65536) * 2;
            char *nb = realloc(b, cap + 1);
            if (!nb) {
                free(b), fclose(fp);
                return NULL;
            }
            b = nb;
        }
        size_t got = fread(b + len, 1, cap - len, fp);
        len += got;
        if (got == 0) break;
    }
    fclose(fp);
    b[len] = 0;
    *n = len;
    return b;
}

/* An .npy file (format 1.0 to 3.0) of '<f4', '<i4' or '|u1' in C order into a vox_array. */
static int read_npy(const char *path, const char *name, vox_array *a, void **owned) {
    size_t n;
    unsigned char *b = (unsigned char *)slurp(path, &n);
    if (!b) return fprintf(stderr, "tool_run: cannot read %s: %s\n", path, strerror(errno)), -1;
    if (n < 10 || memcmp(b, "\x93NUMPY", 6) != 0) return fprintf(stderr, "tool_run: %s is not an .npy file\n", path), -1;
    size_t hl, off;
    if (b[6] == 1) hl = b[8] | (size_t)b[9] << 8, off = 10;
    else if (n >= 12) hl = b[8] | (size_t)b[9] << 8 | (size_t)b[10] << 16 | (size_t)b[11] << 24, off = 12;
    else return fprintf(stderr, "tool_run: %s: truncated header\n", path), -1;
    if (off + hl > n) return fprintf(stderr, "tool_run: %s: truncated header\n", path), -1;
    char hdr[1024];
    snprintf(hdr, sizeof hdr, "%.*s", (int)(hl < sizeof hdr - 1 ? hl : sizeof hdr - 1), (const char *)b + off);
    size_t esz;
    if (strstr(hdr, "'<f4'")) a->dtype = VOX_DTYPE_F32, esz = 4;
    else if (strstr(hdr, "'<i4'")) a->dtype = VOX_DTYPE_I32, esz = 4;
    else if (strstr(hdr, "'|u1'")) a->dtype = VOX_DTYPE_U8, esz = 1;
    else return fprintf(stderr, "tool_run: %s: dtype not float32, int32 or uint8: %s\n", path, hdr), -1;
    if (!strstr(hdr, "'fortran_order': False")) return fprintf(stderr, "tool_run: %s: not in C order\n", path), -1;
    const char *sh = strstr(hdr, "'shape': (");
    if (!sh) return fprintf(stderr, "tool_run: %s: no shape\n", path), -1;
    sh += strlen("'shape': (");
    a->ndim = 0;
    size_t count = 1;
    while (*sh && *sh != ')') {
        char *end;
        long long d = strtoll(sh, &end, 10);
        if (end == sh) break;
        if (a->ndim >= VOX_MAX_DIMS || d < 0) return fprintf(stderr, "tool_run: %s: bad shape\n", path), -1;
        a->shape[a->ndim++] = d;
        count *= (size_t)d;
        sh = end;
        while (*sh == ',' || *sh == ' ') sh++;
    }
    if (off + hl + count * esz > n) return fprintf(stderr, "tool_run: %s: %zu values announced, file shorter\n", path, count), -1;
    a->name = name;
    a->data = count ? b + off + hl : NULL;
    *owned = b;
    return 0;
}

static int write_npy(const char *path, const vox_array *a) {
    const char *descr;
    size_t esz;
    switch (a->dtype) {
    case VOX_DTYPE_F32: descr = "<f4", esz = 4; break;
    case VOX_DTYPE_I32: descr = "<i4", esz = 4; break;
    case VOX_DTYPE_I64: descr = "<i8", esz = 8; break;
    case VOX_DTYPE_U8: descr = "|u1", esz = 1; break;
    default: return fprintf(stderr, "tool_run: output %s: dtype %d not written\n", a->name, (int)a->dtype), -1;
    }
    char shape[256] = "", hdr[512];
    size_t count = 1, used = 0;
    for (int i = 0; i < a->ndim; i++) {
        used += (size_t)snprintf(shape + used, sizeof shape - used, "%lld,%s", (long long)a->shape[i],
                                 i + 1 < a->ndim ? " " : "");
        count *= (size_t)a->shape[i];
    }
    int len = snprintf(hdr, sizeof hdr, "{'descr': '%s', 'fortran_order': False, 'shape': (%s), }", descr, shape);
    int total = (10 + len + 1 + 63) / 64 * 64; /* magic, version, length, header, '\n': a multiple of 64 */
    while (10 + len + 1 < total) hdr[len++] = ' ';
    hdr[len++] = '\n';
    FILE *fp = fopen(path, "wb");
    if (!fp) return fprintf(stderr, "tool_run: cannot write %s: %s\n", path, strerror(errno)), -1;
    const unsigned char pre[10] = {0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0, (unsigned char)(len & 0xff), (unsigned char)(len >> 8)};
    int ok = fwrite(pre, 1, 10, fp) == 10 && fwrite(hdr, 1, (size_t)len, fp) == (size_t)len &&
             (count == 0 || fwrite(a->data, esz, count, fp) == count);
    ok = fclose(fp) == 0 && ok;
    if (!ok) fprintf(stderr, "tool_run: writing %s failed\n", path);
    return ok ? 0 : -1;
}

static int write_info(vox_engine *eng, const char *outdir) {
    char path[4096];
    snprintf(path, sizeof path, "%s/info.json", outdir); /* what ran: the kernel path ("cpu"), precision */
    FILE *inf = fopen(path, "w");
    int ok = inf && fputs(vox_engine_info(eng), inf) >= 0;
    if (inf && fclose(inf) != 0) ok = 0;
    if (!ok) fprintf(stderr, "tool_run: cannot write %s\n", path);
    return ok ? 0 : 1;
}

/* A whole session: text fed and ended, every chunk pulled; "audio" and the taps' session outputs. */
static int session(vox_engine *eng, vox_voice *voice, const vox_synth_params *sp, const vox_array *in, int n_in,
                   const char *taps, const char *outdir) {
    const vox_array *text = NULL;
    for (int i = 0; i < n_in; i++)
        if (!strcmp(in[i].name, "text") && in[i].dtype == VOX_DTYPE_U8 && in[i].ndim == 1) text = &in[i];
    if (!voice || !text) return fprintf(stderr, "tool_run: @session needs -v VOICE and a uint8 text input\n"), 1;
    char *t = malloc((size_t)text->shape[0] + 1);
    if (!t) return 1;
    if (text->shape[0]) memcpy(t, text->data, (size_t)text->shape[0]);
    t[text->shape[0]] = 0;
    vox_session *s = NULL;
    float *pcm = NULL;
    size_t n = 0;
    int rc = 0;
    if (vox_session_create(eng, voice, sp, &s) != VOX_OK || (t[0] && vox_session_feed(s, t) != VOX_OK) ||
        vox_session_end(s) != VOX_OK) {
        fprintf(stderr, "tool_run: %s\n", vox_last_error());
        rc = 2;
    }
    for (vox_chunk c; rc == 0;) {
        if (vox_session_pull(s, &c) != VOX_OK) {
            fprintf(stderr, "tool_run: %s\n", vox_last_error());
            rc = 2;
            break;
        }
        if (c.kind != VOX_CHUNK_AUDIO) break;
        float *np = realloc(pcm, (n + c.n_samples + 1) * sizeof *pcm);
        if (!np) {
            rc = 1;
            break;
        }
        pcm = np;
        if (c.n_samples) memcpy(pcm + n, c.samples, c.n_samples * sizeof *pcm);
        n += c.n_samples;
        if (c.is_last) break;
    }
    char path[4096];
    snprintf(path, sizeof path, "%s/index.txt", outdir);
    FILE *idx = rc == 0 ? fopen(path, "w") : NULL;
    if (rc == 0 && !idx) rc = 1;
    if (rc == 0) {
        vox_array a = {.name = "audio", .dtype = VOX_DTYPE_F32, .ndim = 1, .shape = {(int64_t)n}, .data = pcm};
        snprintf(path, sizeof path, "%s/000.npy", outdir);
        rc = write_npy(path, &a) != 0;
        fprintf(idx, "000 audio\n");
    }
    char names[512];
    snprintf(names, sizeof names, "%s", taps ? taps : "");
    int k = 1;
    for (char *save = NULL, *nm = strtok_r(names, ",", &save); rc == 0 && nm; nm = strtok_r(NULL, ",", &save)) {
        if (!strcmp(nm, "audio")) continue;
        vox_array a;
        if (vox_session_output(s, nm, &a) != VOX_OK) {
            fprintf(stderr, "tool_run: %s\n", vox_last_error());
            rc = 2;
            break;
        }
        snprintf(path, sizeof path, "%s/%03d.npy", outdir, k);
        if (write_npy(path, &a) != 0) rc = 1;
        fprintf(idx, "%03d %s\n", k++, nm);
    }
    if (idx && fclose(idx) != 0) rc = 1;
    vox_session_free(s);
    free(pcm);
    free(t);
    return rc;
}

static int usage(void) {
    fprintf(stderr, "usage: tool_run MODEL ENTRY OUTDIR [-v VOICE] [-s SEED] [-l LANGUAGE] [-o OPTIONS.json] "
                    "[-t TAPS] [-j THREADS] [NAME=FILE.npy ...]\n");
    return 1;
}

int main(int argc, char **argv) {
    if (argc < 4) return usage();
    const char *model = argv[1], *entry = argv[2], *outdir = argv[3];
    const char *voice_path = NULL, *language = NULL, *options_path = NULL, *taps = NULL;
    unsigned long long seed = 0;
    int have_seed = 0, threads = 1, n_in = 0;
    vox_array inputs[MAX_INPUTS];
    void *owned[MAX_INPUTS];
    for (int i = 4; i < argc; i++) {
        const char *a = argv[i];
        if (a[0] == '-' && a[1] && !a[2] && i + 1 < argc) {
            const char *v = argv[++i];
            switch (a[1]) {
            case 'v': voice_path = v; break;
            case 's': seed = strtoull(v, NULL, 10), have_seed = 1; break;
            case 'l': language = v; break;
            case 'o': options_path = v; break;
            case 't': taps = v; break;
            case 'j': threads = atoi(v); break;
            default: return usage();
            }
            continue;
        }
        char *eq = strchr(a, '=');
        if (!eq || n_in >= MAX_INPUTS) return usage();
        *eq = '\0';
        memset(&inputs[n_in], 0, sizeof inputs[n_in]);
        if (read_npy(eq + 1, a, &inputs[n_in], &owned[n_in]) != 0) return 1;
        n_in++;
    }
    char *options = NULL;
    if (options_path) {
        size_t n;
        if (!(options = slurp(options_path, &n))) return fprintf(stderr, "tool_run: cannot read %s\n", options_path), 1;
    }
    vox_engine_params ep = vox_engine_default_params();
    ep.n_threads = threads;
    vox_engine *eng = NULL;
    vox_voice *voice = NULL;
    vox_trace *trace = NULL;
    int rc = 0;
    if (vox_engine_create(model, &ep, &eng) != VOX_OK) {
        fprintf(stderr, "tool_run: %s\n", vox_last_error());
        return 2;
    }
    vox_synth_params sp;
    const vox_synth_params *spp = NULL;
    if (voice_path) {
        if (vox_voice_load(eng, voice_path, &voice) != VOX_OK) {
            fprintf(stderr, "tool_run: %s\n", vox_last_error());
            vox_engine_free(eng);
            return 2;
        }
        sp = vox_synth_default_params(eng, voice);
        if (have_seed) sp.seed = seed;
        sp.language = language;
        sp.options = options;
        spp = &sp;
    }
    if (!strcmp(entry, "@session")) {
        rc = session(eng, voice, spp, inputs, n_in, taps, outdir);
    } else if (vox_engine_run(eng, entry, voice, spp, inputs, (size_t)n_in, taps, &trace) != VOX_OK) {
        fprintf(stderr, "tool_run: %s\n", vox_last_error());
        rc = 2;
    } else {
        char path[4096];
        snprintf(path, sizeof path, "%s/index.txt", outdir);
        FILE *idx = fopen(path, "w");
        if (!idx) rc = 1, fprintf(stderr, "tool_run: cannot write %s\n", path);
        for (size_t i = 0; idx && rc == 0 && i < vox_trace_count(trace); i++) {
            vox_array a;
            if (vox_trace_get(trace, i, &a) != VOX_OK) {
                fprintf(stderr, "tool_run: %s\n", vox_last_error());
                rc = 2;
                break;
            }
            snprintf(path, sizeof path, "%s/%03zu.npy", outdir, i);
            if (write_npy(path, &a) != 0) rc = 1;
            fprintf(idx, "%03zu %s\n", i, a.name);
        }
        if (idx && fclose(idx) != 0) rc = 1;
        vox_trace_free(trace);
    }
    if (rc == 0) rc = write_info(eng, outdir);
    vox_voice_free(voice);
    vox_engine_free(eng);
    for (int i = 0; i < n_in; i++) free(owned[i]);
    free(options);
    return rc;
}
