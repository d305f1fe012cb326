/* SPDX-License-Identifier: Apache-2.0 */
#include "config.h"
#include "cmd.h"
#include "../core/container.h"

static const ar_option options[]
    = { { "force", 'f', false,
          "kill the container first if it is still running" },
        { 0 } };
AR_OPTIONS_FIT (options);

static const ar_command_doc doc
    = { "delete", "[OPTIONS] CONTAINER_ID",
        "Delete a container and everything it holds." };

int
ar_cmd_delete (const ar_globals *g, int argc, char **argv, ar_error_t **err)
{
  cleanup_parsed ar_parsed p = { 0 };
  int r = ar_cmd_parse (&doc, options, argc, argv, &p, err);
  if (r != 0)
    return r < 0 ? -1 : 0;
  if (ar_require_args ("delete", &p, 1, "CONTAINER_ID", err) < 0)
    return -1;
  return ar_container_delete (g->root, p.args[0], ar_flag (&p, 0), err) < 0 ? -1
                                                                            : 0;
}
