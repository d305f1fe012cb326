/* SPDX-License-Identifier: Apache-2.0 */
/* Big-endian (network order) integers in byte buffers: what wire formats
 * (DNS, TCP/IP headers) and the hashes' blocks are made of. */
#ifndef AR_UTIL_BYTES_H
#define AR_UTIL_BYTES_H

#include <stdint.h>

static inline uint16_t
ar_load_be16 (const uint8_t *p)
{
  return (uint16_t) (p[0] << 8 | p[1]);
}

static inline uint32_t
ar_load_be32 (const uint8_t *p)
{
  return (uint32_t) ar_load_be16 (p) << 16 | ar_load_be16 (p + 2);
}

static inline void
ar_store_be16 (uint8_t *p, uint16_t v)
{
  p[0] = (uint8_t) (v >> 8);
  p[1] = (uint8_t) v;
}

static inline void
ar_store_be32 (uint8_t *p, uint32_t v)
{
  ar_store_be16 (p, (uint16_t) (v >> 16));
  ar_store_be16 (p + 2, (uint16_t) v);
}

#endif
