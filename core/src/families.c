/* The registry: the model families this build has. The one place in the generic core that names them;
 * a new family adds its vx_family here (and its folder to CMakeLists.txt). */
#include <pthread.h>
#include <string.h>

#include "family.h"

extern const vx_family vx_family_qwen3;
extern const vx_family vx_family_kokoro;
extern const vx_family vx_family_f5;

static const vx_family *const families[] = {&vx_family_qwen3, &vx_family_kokoro, &vx_family_f5};

const vx_family *const *vx_families(size_t *n) {
    *n = sizeof families / sizeof families[0];
    return families;
}

const vx_family *vx_family_find(const char *name) {
    for (size_t i = 0; name && i < sizeof families / sizeof families[0]; i++)
        if (!strcmp(families[i]->name, name)) return families[i];
    return NULL;
}

static char names[256];
static pthread_once_t names_once = PTHREAD_ONCE_INIT;

static void list_names(void) {
    size_t len = 0;
    for (size_t i = 0; i < sizeof families / sizeof families[0]; i++) {
        size_t n = strlen(families[i]->name);
        if (len + n + 3 >= sizeof names) break;
        if (i) memcpy(names + len, ", ", 2), len += 2;
        memcpy(names + len, families[i]->name, n), len += n;
    }
    names[len] = '\0';
}

const char *vx_family_names(void) {
    pthread_once(&names_once, list_names);
    return names;
}
