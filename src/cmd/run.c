/* SPDX-License-Identifier: Apache-2.0 */
#include "config.h"
#include "cmd.h"
#include "../core/container.h"
#include "../core/foreground.h"
#include "../util/cleanup.h"
#include "../util/timings.h"

static const ar_option options[]
    = { AR_CREATE_OPTIONS,
        { "detach", 'd', false, "start the container and return at once" },
        { "keep", 0, false, "do not delete the container after it exits" },
        { 0 } };
enum
{
  OPT_DETACH = AR_CREATE_OPTIONS_COUNT,
  OPT_KEEP
};
AR_OPTIONS_MATCH (options, OPT_KEEP);

static const ar_command_doc doc = {
  "run", "[OPTIONS] CONTAINER_ID",
  "Create and start a container, wait for it, delete it, and exit with its status."
};

int
ar_cmd_run (const ar_globals *g, int argc, char **argv, ar_error_t **err)
{
  cleanup_parsed ar_parsed p = { 0 };
  int r = ar_cmd_parse (&doc, options, argc, argv, &p, err);
  if (r != 0)
    return r < 0 ? -1 : 0;
  if (ar_require_args ("run", &p, 1, "CONTAINER_ID", err) < 0)
    return -1;
  ar_create_options opts;
  if (ar_create_options_fill (g, &p, &opts, err) < 0)
    return -1;
  bool detach = ar_flag (&p, OPT_DETACH);
  opts.started_by_parent = true;
  opts.caller_waits = !detach;
  opts.delete_when_done = !detach && !ar_flag (&p, OPT_KEEP);

  cleanup_created ar_created created;
  if (ar_container_create (&opts, &created, err) < 0)
    return -1;
  if (!detach)
    ar_foreground_forward_signals (created.pid);
  if (ar_container_release (g->root, opts.id, &created, err) < 0)
    {
      cleanup_error ar_error_t *ignored = NULL;
      ar_container_delete (g->root, opts.id, true, &ignored);
      return -1;
    }
  ar_timings_mark ("start");
  if (detach)
    return 0;

  int status = ar_container_wait (g->root, opts.id, "run", &created, NULL, err);
  if (status < 0)
    return -1;
  ar_timings_mark ("wait");
  if (!ar_flag (&p, OPT_KEEP)
      && ar_container_delete (g->root, opts.id, true, err) < 0)
    return -1;
  ar_timings_mark ("delete");
  return status;
}
