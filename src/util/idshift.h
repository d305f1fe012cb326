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

static inline uint32_t
ar_id_shift_uid (const ar_id_shift *s, uint32_t uid)
{
  return ar_id_shift_one (uid, s->uid_from, s->uid_to, s->count);
}

static inline uint32_t
ar_id_shift_gid (const ar_id_shift *s, uint32_t gid)
{
  return ar_id_shift_one (gid, s->gid_from, s->gid_to, s->count);
}

#endif
