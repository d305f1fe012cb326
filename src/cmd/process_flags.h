/* SPDX-License-Identifier: Apache-2.0 */
/* Flags that set a process's environment and user, shared by the verbs
 * that have them (exec, sandbox). */
#ifndef AR_CMD_PROCESS_FLAGS_H
#define AR_CMD_PROCESS_FLAGS_H

#include "../../oci/spec.h"
#include "../util/error.h"
#include <stdint.h>

/* A numeric id given to `flag` ("--user uid"); the error reads
 * "VERB: invalid FLAG `VALUE`". */
int ar_parse_id_flag (const char *verb, const char *flag, const char *value,
                      uint32_t *out, ar_error_t **err);

/* --user UID[:GID]: the gid stays as it was when none is given. */
int ar_user_flag_apply (const char *verb, const char *value, oci_user *user,
                        ar_error_t **err);

#endif
