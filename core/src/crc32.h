/* Internal: CRC-32 (IEEE 802.3, reflected, polynomial 0xEDB88320), the checksum of .tmod files. */
#ifndef VOX_CRC32_H
#define VOX_CRC32_H

#include <stddef.h>
#include <stdint.h>

/* Continues `crc` over `len` bytes, exactly as zlib's crc32(crc, data, len): start with 0, and
 * vox_crc32(vox_crc32(0, a, n), b, m) == vox_crc32(0, a||b, n + m). Thread-safe. */
uint32_t vox_crc32(uint32_t crc, const void *data, size_t len);

#endif
