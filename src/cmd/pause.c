/* SPDX-License-Identifier: Apache-2.0 */
#include "config.h"
#include "cmd.h"
#include "../core/container.h"

static const ar_option options[] = { { 0 } };
AR_OPTIONS_FIT (options);

static const ar_command_doc doc
    = { "pause", "CONTAINER_ID",
        "Freeze every process of a running container." };

int
ar_cmd_pause (const ar_globals *g, int argc, char **argv, ar_error_t **err)
{
  cleanup_parsed ar_parsed p = { 0 };
  int r = ar_cmd_parse (&doc, options, argc, argv, &p, err);
  if (r != 0)
    return r < 0 ? -1 : 0;
  if (ar_require_args ("pause", &p, 1, "CONTAINER_ID", err) < 0)
    return -1;
  return ar_container_pause (g->root, p.args[0], true, err) < 0 ? -1 : 0;
}
