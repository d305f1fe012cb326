/* SPDX-License-Identifier: Apache-2.0 */
/* SHA-1 as specified in FIPS 180-4, sections 4.1.1 (functions), 4.2.1
 * (constants), 5.3.1 (initial value) and 6.1.2 (the compression
 * function); padding is SHA-256's (md_block.c). Checked against the
 * standard's vectors and git's blob ids in tests/unit/test_git_format.c. */
#include "config.h"
#include "sha1.h"
#include "bytes.h"

#include <stdio.h>
#include <string.h>

static inline uint32_t
rotl (uint32_t x, unsigned n)
{
  return (x << n) | (x >> (32 - n));
}

/* 4.1.1: Ch for rounds 0-19, Parity for 20-39 and 60-79, Maj for 40-59. */
static inline uint32_t
round_function (int t, uint32_t x, uint32_t y, uint32_t z)
{
  if (t < 20)
    return (x & y) ^ (~x & z);
  if (t >= 40 && t < 60)
    return (x & y) ^ (x & z) ^ (y & z);
  return x ^ y ^ z;
}

static void
compress (uint32_t *state, const uint8_t block[64])
{
  static const uint32_t constants[4]
      = { 0x5a827999, 0x6ed9eba1, 0x8f1bbcdc, 0xca62c1d6 };
  uint32_t schedule[80];
  for (int t = 0; t < 16; t++)
    schedule[t] = ar_load_be32 (block + 4 * t);
  for (int t = 16; t < 80; t++)
    schedule[t] = rotl (schedule[t - 3] ^ schedule[t - 8] ^ schedule[t - 14]
                            ^ schedule[t - 16],
                        1);

  uint32_t a = state[0], b = state[1], c = state[2], d = state[3], e = state[4];
  for (int t = 0; t < 80; t++)
    {
      uint32_t temp = rotl (a, 5) + round_function (t, b, c, d) + e
                      + constants[t / 20] + schedule[t];
      e = d;
      d = c;
      c = rotl (b, 30);
      b = a;
      a = temp;
    }
  state[0] += a;
  state[1] += b;
  state[2] += c;
  state[3] += d;
  state[4] += e;
}

void
ar_sha1_init (ar_sha1_ctx *ctx)
{
  static const uint32_t initial[5]
      = { 0x67452301, 0xefcdab89, 0x98badcfe, 0x10325476, 0xc3d2e1f0 };
  memcpy (ctx->state, initial, sizeof initial);
  ctx->buf = (ar_md_buffer){ 0 };
}

void
ar_sha1_update (ar_sha1_ctx *ctx, const void *data, size_t len)
{
  ar_md_update (&ctx->buf, ctx->state, compress, data, len);
}

void
ar_sha1_final (ar_sha1_ctx *ctx, uint8_t digest[AR_SHA1_DIGEST_SIZE])
{
  ar_md_finish (&ctx->buf, ctx->state, compress);
  for (int i = 0; i < 5; i++)
    ar_store_be32 (digest + 4 * i, ctx->state[i]);
  memset (ctx, 0, sizeof *ctx);
}

void
ar_sha1_to_hex (const uint8_t digest[AR_SHA1_DIGEST_SIZE],
                char hex[AR_SHA1_HEX_SIZE])
{
  ar_md_to_hex (digest, AR_SHA1_DIGEST_SIZE, hex);
}

void
ar_sha1_git_blob_hex (const void *data, size_t len, char hex[AR_SHA1_HEX_SIZE])
{
  char header[32];
  int n = snprintf (header, sizeof header, "blob %zu", len);
  ar_sha1_ctx ctx;
  uint8_t digest[AR_SHA1_DIGEST_SIZE];
  ar_sha1_init (&ctx);
  ar_sha1_update (&ctx, header, (size_t) n + 1); /* the NUL too */
  ar_sha1_update (&ctx, data, len);
  ar_sha1_final (&ctx, digest);
  ar_sha1_to_hex (digest, hex);
}
