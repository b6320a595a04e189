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

static void same(const vox_voice *a, const vox_voice *b) {
    FZ_ASSERT(!strcmp(vox_voice_info(a), vox_voice_info(b)), "info differs after a save: %s / %s", vox_voice_info(a),
              vox_voice_info(b));
    const float *ea, *eb;
    size_t na, nb;
    FZ_ASSERT(vox_voice_embedding(a, &ea, &na) == VOX_OK && vox_voice_embedding(b, &eb, &nb) == VOX_OK, "embedding");
    FZ_ASSERT(na == nb && (!na || !memcmp(ea, eb, na * sizeof *ea)), "embedding differs after a save");
    const int32_t *ca, *cb;
    size_t fa, fb, ga, gb;
    FZ_ASSERT(vox_voice_ref_codes(a, &ca, &fa, &ga) == VOX_OK && vox_voice_ref_codes(b, &cb, &fb, &gb) == VOX_OK, "codes");
    FZ_ASSERT(fa == fb && ga == gb && (!fa || !memcmp(ca, cb, fa * ga * sizeof *ca)), "codes differ after a save");
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
    const float *e;
    size_t n;
    FZ_ASSERT(vox_voice_embedding(v, &e, &n) == VOX_OK && (n == 0 || e != NULL), "embedding");
    for (size_t i = 0; i < n; i++) FZ_ASSERT(e[i] == e[i], "NaN in the embedding");
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
