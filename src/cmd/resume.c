/* SPDX-License-Identifier: Apache-2.0 */
#include "config.h"
#include "cmd.h"
#include "../core/container.h"

static const ar_option options[] = { { 0 } };
AR_OPTIONS_FIT (options);

static const ar_command_doc doc
    = { "resume", "CONTAINER_ID", "Thaw a paused container." };

int
ar_cmd_resume (const ar_globals *g, int argc, char **argv, ar_error_t **err)
{
  cleanup_parsed ar_parsed p = { 0 };
  int r = ar_cmd_parse (&doc, options, argc, argv, &p, err);
  if (r != 0)
    return r < 0 ? -1 : 0;
  if (ar_require_args ("resume", &p, 1, "CONTAINER_ID", err) < 0)
    return -1;
  return ar_container_pause (g->root, p.args[0], false, err) < 0 ? -1 : 0;
}
