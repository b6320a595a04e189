/* Internal: setting the per-thread error message that vox_last_error() returns. */
#ifndef VOX_ERROR_H
#define VOX_ERROR_H

#include "vox.h"

#if defined(__GNUC__)
#  define VOX_PRINTF(a, b) __attribute__((format(printf, a, b)))
#else
#  define VOX_PRINTF(a, b)
#endif

/* Formats the message, stores it for this thread and returns `status` (for `return vox_set_error(...)`). */
vox_status vox_set_error(vox_status status, const char *fmt, ...) VOX_PRINTF(2, 3);
void vox_clear_error(void);
/* VOX_ERR_OUT_OF_MEMORY, "out of memory": for a failed allocation. */
vox_status vox_oom(void);

#endif
