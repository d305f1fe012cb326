/* SPDX-License-Identifier: Apache-2.0 */
#include "config.h"
#include "failure_status.h"

#include <stdbool.h>
#include <string.h>

int
ar_cmd_failure_status (const char *verb, const ar_error_t *err)
{
  bool runs_command
      = verb && (strcmp (verb, "run") == 0 || strcmp (verb, "sandbox") == 0);
  if (runs_command && err && err->code == AR_ERR_COMMAND_NOT_FOUND)
    return 127;
  if (runs_command && err && err->code == AR_ERR_COMMAND_NOT_RUNNABLE)
    return 126;
  if (runs_command)
    return AR_EXIT_OWN_FAILURE;
  return verb && strcmp (verb, "exec") == 0 ? 255 : 1;
}
