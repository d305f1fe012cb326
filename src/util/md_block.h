/* SPDX-License-Identifier: Apache-2.0 */
/* What SHA-1 and SHA-256 share (FIPS 180-4 5.1.1, 6.1.2, 6.2.2): input cut
 * into 64-byte blocks for a compression function, and the final padding
 * (a 1 bit, zeros, the length in bits, big-endian). */
#ifndef AR_UTIL_MD_BLOCK_H
#define AR_UTIL_MD_BLOCK_H

#include <stddef.h>
#include <stdint.h>

typedef void (*ar_md_compress_fn) (uint32_t *state, const uint8_t block[64]);

typedef struct
{
  uint64_t total_bytes;
  uint8_t block[64];
  size_t block_used;
} ar_md_buffer;

/* Feed `len` bytes: every whole block goes through `compress`. */
void ar_md_update (ar_md_buffer *b, uint32_t *state, ar_md_compress_fn compress,
                   const void *data, size_t len);

/* Pad and compress the last block(s). */
void
ar_md_finish (ar_md_buffer *b, uint32_t *state, ar_md_compress_fn compress);

/* Lower-case hex of `n` bytes into hex[2n+1]. */
void ar_md_to_hex (const uint8_t *digest, size_t n, char *hex);

#endif
