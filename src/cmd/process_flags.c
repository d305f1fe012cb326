/* SPDX-License-Identifier: Apache-2.0 */
#include "config.h"
#include "process_flags.h"
#include "../../oci/oci.h"
#include "../util/cleanup.h"

#include <stdlib.h>
#include <string.h>

int
ar_parse_id_flag (const char *verb, const char *flag, const char *value,
                  uint32_t *out, ar_error_t **err)
{
  char *end;
  unsigned long v = strtoul (value, &end, 10);
  if (*value < '0' || *value > '9' || *end || v > UINT32_MAX)
    return ar_error_set (err, 0, "%s: invalid %s `%s`", verb, flag, value);
  *out = (uint32_t) v;
  return 0;
}

int
ar_user_flag_apply (const char *verb, const char *value, oci_user *user,
                    ar_error_t **err)
{
  cleanup_free char *copy = xstrdup (value);
  char *colon = strchr (copy, ':');
  if (colon)
    *colon = '\0';
  if (ar_parse_id_flag (verb, "--user uid", copy, &user->uid, err) < 0)
    return -1;
  return colon
             ? ar_parse_id_flag (verb, "--user gid", colon + 1, &user->gid, err)
             : 0;
}
