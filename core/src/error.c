/* Per-thread last-error message and status names. */
#include "error.h"

#include <stdarg.h>
#include <stdio.h>

static _Thread_local char last_error[1024];

vox_status vox_set_error(vox_status status, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(last_error, sizeof last_error, fmt, ap);
    va_end(ap);
    return status;
}

void vox_clear_error(void) { last_error[0] = '\0'; }

vox_status vox_oom(void) { return vox_set_error(VOX_ERR_OUT_OF_MEMORY, "out of memory"); }

const char *vox_last_error(void) { return last_error; }

const char *vox_status_name(vox_status status) {
    switch (status) {
    case VOX_OK: return "VOX_OK";
    case VOX_ERR_INVALID_ARGUMENT: return "VOX_ERR_INVALID_ARGUMENT";
    case VOX_ERR_IO: return "VOX_ERR_IO";
    case VOX_ERR_FORMAT: return "VOX_ERR_FORMAT";
    case VOX_ERR_UNSUPPORTED: return "VOX_ERR_UNSUPPORTED";
    case VOX_ERR_OUT_OF_MEMORY: return "VOX_ERR_OUT_OF_MEMORY";
    case VOX_ERR_NOT_FOUND: return "VOX_ERR_NOT_FOUND";
    case VOX_ERR_INTERNAL: return "VOX_ERR_INTERNAL";
    case VOX_ERR_CANCELLED: return "VOX_ERR_CANCELLED";
    case VOX_ERR_LIMIT: return "VOX_ERR_LIMIT";
    case VOX_ERR_DEVICE: return "VOX_ERR_DEVICE";
    case VOX_ERR_SESSION_LIMIT: return "VOX_ERR_SESSION_LIMIT";
    }
    return "VOX_ERR_UNKNOWN";
}
