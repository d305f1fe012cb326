/* SPDX-License-Identifier: Apache-2.0 */
/* A range of ids moved to another: what an idmapped mount shows and what
 * a copied layer is given for a container whose ids are elsewhere. */
#ifndef AR_UTIL_IDSHIFT_H
#define AR_UTIL_IDSHIFT_H

#include <stdint.h>

/* Ids from..from+count-1 become to..to+count-1; any other stays as it is
 * (a copy) or is unmapped (an idmapped mount). */
typedef struct
{
  uint32_t uid_from, uid_to;
  uint32_t gid_from, gid_to;
  uint32_t count;
} ar_id_shift;

static inline uint32_t
ar_id_shift_one (uint32_t id, uint32_t from, uint32_t to, uint32_t count)
{
  return id >= from && id - from < count ? to + (id - from) : id;
}

#endif
