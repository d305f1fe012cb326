/* SPDX-License-Identifier: Apache-2.0 */
#include "config.h"
#include "md_block.h"
#include "bytes.h"

#include <string.h>

void
ar_md_update (ar_md_buffer *b, uint32_t *state, ar_md_compress_fn compress,
              const void *data, size_t len)
{
  if (len == 0)
    return; /* data may be NULL (an empty file's map) */
  const uint8_t *p = data;
  b->total_bytes += len;
  if (b->block_used > 0)
    {
      size_t take = 64 - b->block_used;
      if (take > len)
        take = len;
      memcpy (b->block + b->block_used, p, take);
      b->block_used += take;
      p += take;
      len -= take;
      if (b->block_used < 64)
        return;
      compress (state, b->block);
      b->block_used = 0;
    }
  for (; len >= 64; p += 64, len -= 64)
    compress (state, p);
  memcpy (b->block, p, len);
  b->block_used = len;
}

void
ar_md_finish (ar_md_buffer *b, uint32_t *state, ar_md_compress_fn compress)
{
  /* 5.1.1: a 1 bit, zeros up to 448 mod 512, then the length in bits. */
  uint64_t total_bits = b->total_bytes * 8;
  b->block[b->block_used++] = 0x80;
  if (b->block_used > 56)
    {
      memset (b->block + b->block_used, 0, 64 - b->block_used);
      compress (state, b->block);
      b->block_used = 0;
    }
  memset (b->block + b->block_used, 0, 56 - b->block_used);
  ar_store_be32 (b->block + 56, (uint32_t) (total_bits >> 32));
  ar_store_be32 (b->block + 60, (uint32_t) total_bits);
  compress (state, b->block);
}

void
ar_md_to_hex (const uint8_t *digest, size_t n, char *hex)
{
  static const char digits[] = "0123456789abcdef";
  for (size_t i = 0; i < n; i++)
    {
      hex[2 * i] = digits[digest[i] >> 4];
      hex[2 * i + 1] = digits[digest[i] & 0xf];
    }
  hex[2 * n] = '\0';
}
