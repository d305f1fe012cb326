/* SPDX-License-Identifier: Apache-2.0 */
/* SHA-256 (FIPS 180-4), for the audit log's hash chain and the manifest of
 * exported artifacts. Streaming: init, update any number of times, final. */
#ifndef AR_UTIL_SHA256_H
#define AR_UTIL_SHA256_H

#include <stddef.h>
#include <stdint.h>
#include "md_block.h"

#define AR_SHA256_DIGEST_SIZE 32
#define AR_SHA256_HEX_SIZE 65 /* 64 hex digits and a NUL */

typedef struct
{
  uint32_t state[8];
  ar_md_buffer buf;
} ar_sha256_ctx;

void ar_sha256_init (ar_sha256_ctx *ctx);
void ar_sha256_update (ar_sha256_ctx *ctx, const void *data, size_t len);
void
ar_sha256_final (ar_sha256_ctx *ctx, uint8_t digest[AR_SHA256_DIGEST_SIZE]);

/* Lower-case hex of a digest. */
void ar_sha256_to_hex (const uint8_t digest[AR_SHA256_DIGEST_SIZE],
                       char hex[AR_SHA256_HEX_SIZE]);

/* One-shot: the hex digest of `len` bytes. */
void ar_sha256_hex (const void *data, size_t len, char hex[AR_SHA256_HEX_SIZE]);

#endif
