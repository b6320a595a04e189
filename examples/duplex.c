/* duplex.c: duplex streaming with the vox C ABI: one thread feeds text word by word (as an LLM would),
 * the main thread pulls audio as it is made, and the audio goes to stdout as raw f32le mono PCM.
 *
 *   cc duplex.c -I core/include -L build -lvox -lpthread -o duplex
 *   ./duplex model.tmod "Hello there. How are you?" [VOICE.tvoice] > out.f32
 *
 * With the default stream options (commit auto), a model whose capabilities.stream.exact is true gives
 * the same audio as the whole text fed at once (the same seed). */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "vox.h"

typedef struct feeder {
    vox_session *session;
    const char *text;
    vox_status status;
} feeder;

/* Feeds the text a word at a time, 5 ms apart, then ends it. */
static void *feed(void *arg) {
    feeder *f = arg;
    const char *p = f->text;
    char piece[256];
    while (*p && f->status == VOX_OK) {
        size_t n = strcspn(p, " ");
        while (p[n] == ' ') n++;
        if (n >= sizeof piece) n = sizeof piece - 1;
        memcpy(piece, p, n);
        piece[n] = '\0';
        f->status = vox_session_feed(f->session, piece);
        p += n;
        struct timespec ts = {0, 5 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
    if (f->status == VOX_OK) f->status = vox_session_end(f->session);
    return NULL;
}

static int fail(const char *what) {
    fprintf(stderr, "duplex: %s: %s\n", what, vox_last_error());
    return 1;
}

int main(int argc, char **argv) {
    if (argc < 3) {
        fprintf(stderr, "usage: %s MODEL.tmod TEXT [VOICE.tvoice] > out.f32\n", argv[0]);
        return 2;
    }
    vox_engine_params ep = vox_engine_default_params();
    ep.n_threads = 2;
    vox_engine *engine = NULL;
    if (vox_engine_create(argv[1], &ep, &engine) != VOX_OK) return fail("loading the model");
    vox_voice *voice = NULL;
    vox_status st;
    if (argc > 3) {
        st = vox_voice_load(engine, argv[3], &voice);
    } else {  /* the model's default speaker ("default_speaker" of the engine info) */
        char speaker[64] = "";
        const char *s = strstr(vox_engine_info(engine), "\"default_speaker\":\"");
        if (s) sscanf(s + 19, "%63[^\"]", speaker);
        st = vox_voice_speaker(engine, speaker, NULL, &voice);
    }
    if (st != VOX_OK) return fail("making the voice");

    vox_synth_params sp = vox_synth_default_params(engine, voice);
    sp.seed = 7;
    sp.options = "{\"commit\": \"auto\"}";
    vox_session *session = NULL;
    if (vox_session_create(engine, voice, &sp, &session) != VOX_OK) return fail("starting the session");

    feeder f = {session, argv[2], VOX_OK};
    pthread_t writer;
    if (pthread_create(&writer, NULL, feed, &f) != 0) return 1;
    size_t total = 0;
    for (;;) {
        vox_chunk c;
        if (vox_session_pull(session, &c) != VOX_OK) {
            pthread_join(writer, NULL);
            return fail("synthesizing");
        }
        if (c.kind == VOX_CHUNK_AUDIO) {
            fwrite(c.samples, sizeof *c.samples, c.n_samples, stdout);
            total += c.n_samples;
        }
        if (c.kind == VOX_CHUNK_END || c.is_last) break;
        if (c.kind == VOX_CHUNK_NEED_TEXT) {  /* the writer has not caught up: wait a little */
            struct timespec ts = {0, 2 * 1000 * 1000};
            nanosleep(&ts, NULL);
        }
    }
    pthread_join(writer, NULL);
    if (f.status != VOX_OK) return fail("feeding text");
    fprintf(stderr, "duplex: %zu samples\n", total);
    vox_session_free(session);
    vox_voice_free(voice);
    vox_engine_free(engine);
    return 0;
}
