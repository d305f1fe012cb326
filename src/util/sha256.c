/* SPDX-License-Identifier: Apache-2.0 */
/* SHA-256 as specified in FIPS 180-4, sections 4.1.2 (functions), 4.2.2
 * (constants), 5.1.1 (padding), 5.3.3 (initial value) and 6.2.2 (the
 * compression function). Written from the standard; checked against its
 * example vectors in tests/unit/test_agent_host.c. */
#include "config.h"
#include "sha256.h"
#include "md_block.h"
#include "bytes.h"

#include <string.h>

/* The first 32 bits of the fractional parts of the cube roots of the
 * first 64 primes (4.2.2). */
static const uint32_t round_constants[64] = {
  0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1,
  0x923f82a4, 0xab1c5ed5, 0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3,
  0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174, 0xe49b69c1, 0xefbe4786,
  0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
  0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147,
  0x06ca6351, 0x14292967, 0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13,
  0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85, 0xa2bfe8a1, 0xa81a664b,
  0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
  0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a,
  0x5b9cca4f, 0x682e6ff3, 0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208,
  0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
};

static inline uint32_t
rotr (uint32_t x, unsigned n)
{
  return (x >> n) | (x << (32 - n));
}

static inline uint32_t
choose (uint32_t x, uint32_t y, uint32_t z)
{
  return (x & y) ^ (~x & z);
}

static inline uint32_t
majority (uint32_t x, uint32_t y, uint32_t z)
{
  return (x & y) ^ (x & z) ^ (y & z);
}

static inline uint32_t
big_sigma0 (uint32_t x)
{
  return rotr (x, 2) ^ rotr (x, 13) ^ rotr (x, 22);
}

static inline uint32_t
big_sigma1 (uint32_t x)
{
  return rotr (x, 6) ^ rotr (x, 11) ^ rotr (x, 25);
}

static inline uint32_t
small_sigma0 (uint32_t x)
{
  return rotr (x, 7) ^ rotr (x, 18) ^ (x >> 3);
}

static inline uint32_t
small_sigma1 (uint32_t x)
{
  return rotr (x, 17) ^ rotr (x, 19) ^ (x >> 10);
}

/* 6.2.2: one 512-bit block into the running hash value. */
static void
compress (uint32_t *state, const uint8_t block[64])
{
  uint32_t schedule[64];
  for (int t = 0; t < 16; t++)
    schedule[t] = ar_load_be32 (block + 4 * t);
  for (int t = 16; t < 64; t++)
    schedule[t] = small_sigma1 (schedule[t - 2]) + schedule[t - 7]
                  + small_sigma0 (schedule[t - 15]) + schedule[t - 16];

  uint32_t a = state[0], b = state[1], c = state[2], d = state[3];
  uint32_t e = state[4], f = state[5], g = state[6], h = state[7];
  for (int t = 0; t < 64; t++)
    {
      uint32_t t1 = h + big_sigma1 (e) + choose (e, f, g) + round_constants[t]
                    + schedule[t];
      uint32_t t2 = big_sigma0 (a) + majority (a, b, c);
      h = g;
      g = f;
      f = e;
      e = d + t1;
      d = c;
      c = b;
      b = a;
      a = t1 + t2;
    }
  state[0] += a;
  state[1] += b;
  state[2] += c;
  state[3] += d;
  state[4] += e;
  state[5] += f;
  state[6] += g;
  state[7] += h;
}

void
ar_sha256_init (ar_sha256_ctx *ctx)
{
  /* 5.3.3: fractional parts of the square roots of the first 8 primes. */
  static const uint32_t initial[8] = {
    0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
    0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19,
  };
  memcpy (ctx->state, initial, sizeof initial);
  ctx->buf = (ar_md_buffer){ 0 };
}

void
ar_sha256_update (ar_sha256_ctx *ctx, const void *data, size_t len)
{
  ar_md_update (&ctx->buf, ctx->state, compress, data, len);
}

void
ar_sha256_final (ar_sha256_ctx *ctx, uint8_t digest[AR_SHA256_DIGEST_SIZE])
{
  ar_md_finish (&ctx->buf, ctx->state, compress);
  for (int i = 0; i < 8; i++)
    ar_store_be32 (digest + 4 * i, ctx->state[i]);
  memset (ctx, 0, sizeof *ctx);
}

void
ar_sha256_to_hex (const uint8_t digest[AR_SHA256_DIGEST_SIZE],
                  char hex[AR_SHA256_HEX_SIZE])
{
  ar_md_to_hex (digest, AR_SHA256_DIGEST_SIZE, hex);
}

void
ar_sha256_hex (const void *data, size_t len, char hex[AR_SHA256_HEX_SIZE])
{
  ar_sha256_ctx ctx;
  uint8_t digest[AR_SHA256_DIGEST_SIZE];
  ar_sha256_init (&ctx);
  ar_sha256_update (&ctx, data, len);
  ar_sha256_final (&ctx, digest);
  ar_sha256_to_hex (digest, hex);
}
