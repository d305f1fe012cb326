/* SPDX-License-Identifier: Apache-2.0 */
/* SHA-1 (FIPS 180-4), for git's object names only: a blob's id is the
 * SHA-1 of "blob <size>\0" and its content, and `git apply` checks a
 * binary patch against those ids. Not for anything that needs a secure
 * hash (that is sha256.h). Streaming: init, update, final. */
#ifndef AR_UTIL_SHA1_H
#define AR_UTIL_SHA1_H

#include <stddef.h>
#include <stdint.h>
#include "md_block.h"

#define AR_SHA1_DIGEST_SIZE 20
#define AR_SHA1_HEX_SIZE 41 /* 40 hex digits and a NUL */

typedef struct
{
  uint32_t state[5];
  ar_md_buffer buf;
} ar_sha1_ctx;

void ar_sha1_init (ar_sha1_ctx *ctx);
void ar_sha1_update (ar_sha1_ctx *ctx, const void *data, size_t len);
void ar_sha1_final (ar_sha1_ctx *ctx, uint8_t digest[AR_SHA1_DIGEST_SIZE]);

/* Lower-case hex of a digest. */
void ar_sha1_to_hex (const uint8_t digest[AR_SHA1_DIGEST_SIZE],
                     char hex[AR_SHA1_HEX_SIZE]);

/* git's name for a blob of `len` bytes (git hash-object). */
void
ar_sha1_git_blob_hex (const void *data, size_t len, char hex[AR_SHA1_HEX_SIZE]);

#endif
