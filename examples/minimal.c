/* minimal.c: synthesize one sentence with the vox C ABI and write it as a 16-bit WAV file.
 *
 *   cc minimal.c -I core/include -L build -lvox -o minimal
 *   ./minimal model.tmod "Hello from C." out.wav [speaker]
 *
 * Works with a CustomVoice model (a built-in speaker; the first one if none is given), a VoiceDesign
 * model (a default description), or a Base model given a .tvoice as the speaker argument. Audio is
 * pulled chunk by chunk, as a streaming player would. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vox.h"

static int fail(const char *what) {
    fprintf(stderr, "minimal: %s: %s\n", what, vox_last_error());
    return 1;
}

static void put_u32(FILE *f, uint32_t v) {
    unsigned char b[4] = {(unsigned char)v, (unsigned char)(v >> 8), (unsigned char)(v >> 16), (unsigned char)(v >> 24)};
    fwrite(b, 1, 4, f);
}

static void put_u16(FILE *f, uint16_t v) {
    unsigned char b[2] = {(unsigned char)v, (unsigned char)(v >> 8)};
    fwrite(b, 1, 2, f);
}

int main(int argc, char **argv) {
    if (argc < 4) {
        fprintf(stderr, "usage: %s MODEL.tmod TEXT OUT.wav [SPEAKER|VOICE.tvoice]\n", argv[0]);
        return 2;
    }
    if (vox_abi_version() != VOX_ABI_VERSION) {
        fprintf(stderr, "minimal: libvox ABI %d, header %d\n", vox_abi_version(), VOX_ABI_VERSION);
        return 1;
    }
    vox_engine_params ep = vox_engine_default_params();
    ep.n_threads = 2;
    vox_engine *engine = NULL;
    if (vox_engine_create(argv[1], &ep, &engine) != VOX_OK) return fail("loading the model");

    vox_voice *voice = NULL;
    const char *info = vox_engine_info(engine);
    vox_status st;
    if (argc > 4 && strstr(argv[4], ".tvoice"))
        st = vox_voice_load(engine, argv[4], &voice);
    else if (strstr(info, "\"variant\":\"voice_design\""))
        st = vox_voice_design(engine, "A clear, friendly voice.", &voice);
    else {
        char speaker[64] = "";
        if (argc > 4) {
            snprintf(speaker, sizeof speaker, "%s", argv[4]);
        } else {  /* the first entry of "speakers":[...] */
            const char *s = strstr(info, "\"speakers\":[\"");
            if (s) sscanf(s + 13, "%63[^\"]", speaker);
        }
        st = vox_voice_speaker(engine, speaker, NULL, &voice);
    }
    if (st != VOX_OK) return fail("making the voice");

    vox_synth_params sp = vox_synth_default_params(engine, voice);
    sp.seed = 42;
    vox_session *session = NULL;
    if (vox_session_create(engine, voice, &sp, &session) != VOX_OK) return fail("starting the session");
    if (vox_session_feed(session, argv[2]) != VOX_OK || vox_session_end(session) != VOX_OK) return fail("feeding text");

    float *audio = NULL;
    size_t n = 0;
    int32_t rate = 24000;
    for (;;) {
        vox_chunk c;
        if (vox_session_pull(session, &c) != VOX_OK) return fail("synthesizing");
        if (c.kind != VOX_CHUNK_AUDIO) break;
        float *grown = realloc(audio, (n + c.n_samples) * sizeof *audio);
        if (!grown) return 1;
        audio = grown;
        memcpy(audio + n, c.samples, c.n_samples * sizeof *audio);
        n += c.n_samples;
        rate = c.sample_rate;
        if (c.is_last) break;
    }

    FILE *f = fopen(argv[3], "wb");
    if (!f) return 1;
    fwrite("RIFF", 1, 4, f), put_u32(f, (uint32_t)(36 + 2 * n)), fwrite("WAVEfmt ", 1, 8, f);
    put_u32(f, 16), put_u16(f, 1), put_u16(f, 1), put_u32(f, (uint32_t)rate), put_u32(f, (uint32_t)rate * 2);
    put_u16(f, 2), put_u16(f, 16), fwrite("data", 1, 4, f), put_u32(f, (uint32_t)(2 * n));
    for (size_t i = 0; i < n; i++) {
        float x = audio[i] < -1 ? -1 : audio[i] > 1 ? 1 : audio[i];
        put_u16(f, (uint16_t)(int16_t)(x * 32767.0f));
    }
    fclose(f);
    printf("minimal: %zu samples (%.2f s) at %d Hz -> %s\n", n, (double)n / rate, rate, argv[3]);

    free(audio);
    vox_session_free(session);
    vox_voice_free(voice);
    vox_engine_free(engine);
    return 0;
}
