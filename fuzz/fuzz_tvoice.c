/* The .tvoice reader (core/src/tvoice.c, core/src/json.c) through the public API: vox_voice_load on
 * a file of the input bytes, with an engine over the Qwen3-TTS Base model VOX_FUZZ_QWEN3_MODEL names
 * (scripts/fuzz.sh converts the tiny official fixture), so the family's checks of a voice against the
 * model run too.
 *
 * Invariants: a load ends in OK or FORMAT/IO with one line of error text; a voice that loads has
 * info that is a JSON object and tensors of the sizes it reports, and saving it and loading the file
 * again gives the same voice. */
#include <stdbool.h>

#include "fuzz_common.h"

#include "json.h"
#include "vox.h"

static vox_engine *engine;
static char saved[4096];

int LLVMFuzzerInitialize(int *argc, char ***argv) {
    const char *model = getenv("VOX_FUZZ_QWEN3_MODEL");
    if (!model || !*model) {
        fprintf(stderr, "fuzz_tvoice: set VOX_FUZZ_QWEN3_MODEL to a Qwen3-TTS Base .tmod (scripts/fuzz.sh makes one)\n");
        abort();
    }
    vox_engine_params p = vox_engine_default_params();
    p.n_threads = 1;
    if (vox_engine_create(model, &p, &engine) != VOX_OK) {
        fprintf(stderr, "fuzz_tvoice: %s\n", vox_last_error());
        abort();
    }
    const char *tmp = getenv("TMPDIR");
    snprintf(saved, sizeof saved, "%s/vox-fuzz-tvoice-%d.tvoice", tmp && *tmp ? tmp : "/tmp", (int)getpid());
    return 0;
}

static size_t elem_size(vox_dtype t) { return t == VOX_DTYPE_U8 ? 1 : t == VOX_DTYPE_I64 ? 8 : 4; }

static size_t count(const vox_array *x) {
    size_t n = 1;
    for (int32_t i = 0; i < x->ndim; i++) n *= (size_t)x->shape[i];
    return n;
}

/* The arrays any family's voice may hold: present in both or in neither, with the same bytes. */
static const char *const ARRAYS[] = {"speaker_embedding", "ref_codes", "ref_text_tokens", "source_wav", "style_pack"};

static void same(const vox_voice *a, const vox_voice *b) {
    FZ_ASSERT(!strcmp(vox_voice_info(a), vox_voice_info(b)), "info differs after a save: %s / %s", vox_voice_info(a),
              vox_voice_info(b));
    for (size_t i = 0; i < sizeof ARRAYS / sizeof ARRAYS[0]; i++) {
        vox_array x, y;
        vox_status sa = vox_voice_array(a, ARRAYS[i], &x), sb = vox_voice_array(b, ARRAYS[i], &y);
        FZ_ASSERT(sa == sb && (sa == VOX_OK || sa == VOX_ERR_NOT_FOUND), "%s: %d / %d", ARRAYS[i], sa, sb);
        if (sa != VOX_OK) continue;
        FZ_ASSERT(x.dtype == y.dtype && x.ndim == y.ndim && !memcmp(x.shape, y.shape, sizeof x.shape),
                  "%s: shape differs after a save", ARRAYS[i]);
        size_t n = count(&x) * elem_size(x.dtype);
        FZ_ASSERT(!n || !memcmp(x.data, y.data, n), "%s differs after a save", ARRAYS[i]);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    vox_voice *v = NULL;
    vox_status st = vox_voice_load(engine, fz_file(data, size), &v);
    if (st != VOX_OK) {
        FZ_ASSERT(v == NULL, "out set on failure");
        /* UNSUPPORTED / NOT_FOUND: a valid voice for another variant, or a speaker this model lacks */
        FZ_ASSERT(st == VOX_ERR_FORMAT || st == VOX_ERR_IO || st == VOX_ERR_OUT_OF_MEMORY || st == VOX_ERR_UNSUPPORTED ||
                  st == VOX_ERR_NOT_FOUND, "status %d: %s", st, vox_last_error());
        fz_check_message(vox_last_error());
        return 0;
    }
    const char *info = vox_voice_info(v);
    vox_json_doc *d = NULL;
    FZ_ASSERT(vox_json_parse(info, strlen(info), &d, NULL) == VOX_OK && vox_json_root(d)->type == VOX_JSON_OBJECT,
              "info is not a JSON object: %s", info);
    vox_json_free(d);
    vox_array emb;
    if (vox_voice_array(v, "speaker_embedding", &emb) == VOX_OK) {
        const float *e = emb.data;
        for (size_t i = 0, n = count(&emb); i < n; i++) FZ_ASSERT(e[i] == e[i], "NaN in the embedding");
    }
    st = vox_voice_save(v, saved);
    FZ_ASSERT(st == VOX_OK, "a voice that loaded does not save: %s", vox_last_error());
    vox_voice *w = NULL;
    st = vox_voice_load(engine, saved, &w);
    FZ_ASSERT(st == VOX_OK, "a saved voice does not load: %s", vox_last_error());
    same(v, w);
    vox_voice_free(w);
    vox_voice_free(v);
    unlink(saved);
    return 0;
}
