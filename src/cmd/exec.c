/* SPDX-License-Identifier: Apache-2.0 */
#include "config.h"
#include "cmd.h"
#include "process_flags.h"
#include "../../oci/oci.h"
#include "../core/exec.h"
#include "../util/cleanup.h"
#include "../util/fs.h"

#include <fcntl.h>
#include <stdlib.h>
#include <string.h>

static const ar_option options[] = {
  { "process", 'p', true, "process.json to run instead of ARGS" },
  { "console-socket", 0, true, "unix socket that receives the pty master" },
  { "pid-file", 0, true, "write the new process's pid to this file" },
  { "detach", 'd', false, "return once the process runs" },
  { "tty", 't', false, "give the process a terminal" },
  { "cwd", 0, true, "working directory inside the container" },
  { "env", 'e', true, "set an environment variable (KEY=VALUE)", true },
  { "user", 'u', true, "UID[:GID] to run as" },
  { "additional-gids", 'g', true, "an extra group id", true },
  { "cap", 'c', true, "add a capability (CAP_...)", true },
  { "no-new-privs", 0, false, "set no_new_privileges" },
  { "preserve-fds", 0, true, "pass N extra fds (3, 4, ...)" },
  { "apparmor", 0, true, "AppArmor profile" },
  { "process-label", 0, true, "SELinux label" },
  { "cgroup", 0, true,
    "run in this existing sub-cgroup of the container's: [<controller>:]<path>",
    true },
  { "ignore-paused", 0, false, "exec even if the container is paused" },
  { 0 }
};
enum
{
  OPT_PROCESS,
  OPT_CONSOLE_SOCKET,
  OPT_PID_FILE,
  OPT_DETACH,
  OPT_TTY,
  OPT_CWD,
  OPT_ENV,
  OPT_USER,
  OPT_GIDS,
  OPT_CAP,
  OPT_NO_NEW_PRIVS,
  OPT_PRESERVE_FDS,
  OPT_APPARMOR,
  OPT_LABEL,
  OPT_CGROUP,
  OPT_IGNORE_PAUSED
};
AR_OPTIONS_MATCH (options, OPT_IGNORE_PAUSED);

static const ar_command_doc doc
    = { "exec", "[OPTIONS] CONTAINER_ID [COMMAND [ARGS...]]",
        "Run a new process inside a running container.", true };

static int
apply_flags (const ar_parsed *p, oci_process *proc, ar_error_t **err)
{
  if (p->n_args > 1)
    oci_strv_set (&proc->args, p->args + 1, (size_t) p->n_args - 1);
  for (size_t i = 0; i < p->n_multi[OPT_ENV]; i++)
    oci_env_set (&proc->env, p->multi[OPT_ENV][i]);
  if (p->value[OPT_CWD])
    {
      free (proc->cwd);
      proc->cwd = xstrdup (p->value[OPT_CWD]);
    }
  if (p->value[OPT_USER]
      && ar_user_flag_apply ("exec", p->value[OPT_USER], &proc->user, err) < 0)
    return -1;
  if (p->n_multi[OPT_GIDS])
    {
      free (proc->user.additional_gids);
      proc->user.n_additional_gids = p->n_multi[OPT_GIDS];
      proc->user.additional_gids
          = xcalloc (p->n_multi[OPT_GIDS], sizeof (uint32_t));
      for (size_t i = 0; i < p->n_multi[OPT_GIDS]; i++)
        if (ar_parse_id_flag ("exec", "--additional-gids",
                              p->multi[OPT_GIDS][i],
                              &proc->user.additional_gids[i], err)
            < 0)
          return -1;
    }
  if (p->n_multi[OPT_CAP])
    {
      if (proc->capabilities == NULL)
        proc->capabilities = xcalloc (1, sizeof *proc->capabilities);
      for (size_t i = 0; i < p->n_multi[OPT_CAP]; i++)
        {
          oci_strv_push (&proc->capabilities->bounding, p->multi[OPT_CAP][i]);
          oci_strv_push (&proc->capabilities->effective, p->multi[OPT_CAP][i]);
          oci_strv_push (&proc->capabilities->permitted, p->multi[OPT_CAP][i]);
        }
    }
  if (ar_flag (p, OPT_NO_NEW_PRIVS))
    proc->no_new_privileges = true;
  proc->terminal = ar_flag (p, OPT_TTY);
  if (p->value[OPT_APPARMOR])
    {
      free (proc->apparmor_profile);
      proc->apparmor_profile = xstrdup (p->value[OPT_APPARMOR]);
    }
  if (p->value[OPT_LABEL])
    {
      free (proc->selinux_label);
      proc->selinux_label = xstrdup (p->value[OPT_LABEL]);
    }
  return 0;
}

static int
load_process_file (const char *path, oci_process **out, ar_error_t **err)
{
  cleanup_free char *data = NULL;
  size_t len = 0;
  if (ar_read_file_at (AT_FDCWD, path, 16u << 20, &data, &len, err) < 0)
    return ar_error_prefix (err, "exec --process");
  const char *slash = strrchr (path, '/');
  return oci_process_parse (data, len, slash ? slash + 1 : path, out, err);
}

int
ar_cmd_exec (const ar_globals *g, int argc, char **argv, ar_error_t **err)
{
  cleanup_parsed ar_parsed p = { 0 };
  int r = ar_cmd_parse (&doc, options, argc, argv, &p, err);
  if (r != 0)
    return r < 0 ? -1 : 0;
  if (p.n_args < 1)
    return ar_error_set (err, 0,
                         "exec: expected CONTAINER_ID [COMMAND [ARGS...]]");
  if (p.value[OPT_PROCESS] == NULL && p.n_args < 2)
    return ar_error_set (err, 0, "exec: give a COMMAND or --process FILE");

  ar_exec_options opts = {
    .root = g->root,
    .id = p.args[0],
    .console_socket = p.value[OPT_CONSOLE_SOCKET],
    .pid_file = p.value[OPT_PID_FILE],
    .detach = ar_flag (&p, OPT_DETACH),
    .ignore_paused = ar_flag (&p, OPT_IGNORE_PAUSED),
    .cgroups = p.multi[OPT_CGROUP],
    .n_cgroups = p.n_multi[OPT_CGROUP],
  };
  if (p.value[OPT_PRESERVE_FDS])
    {
      char *end;
      long n = strtol (p.value[OPT_PRESERVE_FDS], &end, 10);
      if (*end || n < 0 || n > 4096)
        return ar_error_set (err, 0, "--preserve-fds: invalid count `%s`",
                             p.value[OPT_PRESERVE_FDS]);
      opts.preserve_fds = (int) n;
    }

  oci_process *proc = NULL;
  if (p.value[OPT_PROCESS])
    r = load_process_file (p.value[OPT_PROCESS], &proc, err);
  else
    r = ar_exec_base_process (g->root, opts.id, &proc, err) < 0
            ? -1
            : apply_flags (&p, proc, err);
  if (r == 0)
    r = ar_container_exec (&opts, proc, err);
  oci_process_free (proc);
  return r;
}
