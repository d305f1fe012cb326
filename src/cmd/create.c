/* SPDX-License-Identifier: Apache-2.0 */
#include "config.h"
#include "cmd.h"
#include "../core/container.h"
#include "../util/cleanup.h"

#include <stdlib.h>
#include <unistd.h>

static const ar_option options[] = { AR_CREATE_OPTIONS, { 0 } };
AR_OPTIONS_FIT (options);

static const ar_command_doc doc
    = { "create", "[OPTIONS] CONTAINER_ID",
        "Create a container from a bundle; it waits, set up, until `start`." };

/* systemd's socket activation: LISTEN_FDS counts the fds from 3 that are
 * meant for this process, when LISTEN_PID names it (runc reads it so). */
static int
listen_fds (void)
{
  const char *fds = getenv ("LISTEN_FDS"), *pid = getenv ("LISTEN_PID");
  if (fds == NULL || pid == NULL)
    return 0;
  char *end;
  long n = strtol (fds, &end, 10);
  if (end == fds || *end || n <= 0 || n > 4096)
    return 0;
  long owner = strtol (pid, &end, 10);
  if (end == pid || *end || owner != (long) getpid ())
    return 0;
  return (int) n;
}

int
ar_create_options_fill (const ar_globals *g, const ar_parsed *p,
                        ar_create_options *opts, ar_error_t **err)
{
  *opts = (ar_create_options){
    .root = g->root,
    .id = p->args[0],
    .profile = g->profile,
    .systemd_cgroup = g->systemd_cgroup,
    .rootless = g->rootless,
    .ignore_unenforced_limits = g->ignore_unenforced_limits,
    .bundle = p->value[AR_OPT_BUNDLE],
    .pid_file = p->value[AR_OPT_PID_FILE],
    .console_socket = p->value[AR_OPT_CONSOLE_SOCKET],
    .no_pivot = ar_flag (p, AR_OPT_NO_PIVOT),
    .no_new_keyring = ar_flag (p, AR_OPT_NO_NEW_KEYRING),
  };
  if (p->present[AR_OPT_PRESERVE_FDS])
    {
      char *end;
      long n = strtol (p->value[AR_OPT_PRESERVE_FDS], &end, 10);
      if (*end || n < 0 || n > 4096)
        return ar_error_set (err, 0, "--preserve-fds: invalid count `%s`",
                             p->value[AR_OPT_PRESERVE_FDS]);
      opts->preserve_fds = (int) n;
    }
  opts->listen_fds = listen_fds ();
  return 0;
}

int
ar_cmd_create (const ar_globals *g, int argc, char **argv, ar_error_t **err)
{
  cleanup_parsed ar_parsed p = { 0 };
  int r = ar_cmd_parse (&doc, options, argc, argv, &p, err);
  if (r != 0)
    return r < 0 ? -1 : 0;
  if (ar_require_args ("create", &p, 1, "CONTAINER_ID", err) < 0)
    return -1;
  ar_create_options opts;
  if (ar_create_options_fill (g, &p, &opts, err) < 0)
    return -1;
  cleanup_created ar_created created;
  return ar_container_create (&opts, &created, err);
}
