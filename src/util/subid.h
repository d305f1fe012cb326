/* SPDX-License-Identifier: Apache-2.0 */
/* Subordinate id ranges: /etc/subuid and /etc/subgid ("NAME:START:COUNT"). */
#ifndef AR_UTIL_SUBID_H
#define AR_UTIL_SUBID_H

#include "error.h"
#include <stdint.h>

typedef struct
{
  uint32_t start;
  uint32_t count;
} ar_subid_range;

/* The first range of `user` in `file` (a line naming the user or its
 * numeric uid). The error names the file and the user, and what to add. */
int ar_subid_find (const char *file, const char *user, ar_subid_range *out,
                   ar_error_t **err);

#endif
