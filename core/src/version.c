#include "vox.h"

#ifndef VOX_VERSION_STRING
#  define VOX_VERSION_STRING "0.0.0"
#endif

const char *vox_version(void) { return VOX_VERSION_STRING; }
int vox_abi_version(void) { return VOX_ABI_VERSION; }
