/* SPDX-License-Identifier: Apache-2.0 */
/* secrets.ask: every open of a file on the container's secrets tmpfs
 * waits for the approver. The kernel holds the open itself (fanotify's
 * FAN_OPEN_PERM on that mount), so what is decided is the open of that
 * file by that process: there is no path to swap after the check. An
 * allow for the container lets later opens of the same secret through
 * without a question; directories are never asked about. */
#include "config.h"
#include "gate_internal.h"
#include "../util/cleanup.h"
#include "../util/path.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>

bool
gate_secret_wanted (const ar_agent_plan *plan)
{
  /* Without a secret no tmpfs is mounted: nothing to ask about. */
  return plan->secrets_ask && plan->secrets_path != NULL && plan->n_secrets > 0;
}

void
gate_secret_on_open (gate *g, const struct fanotify_event_metadata *ev)
{
  struct stat st;
  cleanup_free char *target = ar_fd_real_path (ev->fd);
  if (fstat (ev->fd, &st) < 0 || target == NULL)
    {
      gate_respond (g, ev->fd, false);
      return;
    }
  const char *slash = strrchr (target, '/');
  const char *name = slash ? slash + 1 : target;
  if (S_ISDIR (st.st_mode) || egress_approved_has (&g->secrets, name))
    {
      gate_respond (g, ev->fd, true);
      return;
    }
  cleanup_free char *opener = gate_cmdline (ev->pid);
  gate_ask (g, ev->fd, "secret", name, opener, &g->secrets, name);
}

/* The secrets mount as the init sees it: through its root, so the mark
 * lands on the container's mount, not on anything of the host's. A mount
 * mark on anything but the secrets tmpfs itself would hold every open on
 * a wider mount: checked first. */
int
gate_secret_mark (gate *g, ar_error_t **err)
{
  const char *secrets_path = g->plan->secrets_path;
  cleanup_free char *path
      = xasprintf ("/proc/%d/root%s", (int) g->init_pid, secrets_path);
  cleanup_free char *parent = xasprintf ("%s/..", path);
  struct statfs fs;
  struct stat st, up;
  if (statfs (path, &fs) < 0 || stat (path, &st) < 0 || stat (parent, &up) < 0)
    return ar_error_set (err, errno, "secrets.ask: `%s`", secrets_path);
  if (fs.f_type != TMPFS_MAGIC || st.st_dev == up.st_dev)
    return ar_error_set (err, 0, "secrets.ask: `%s` is not the secrets tmpfs",
                         secrets_path);
  if (fanotify_mark (g->fan_fd, FAN_MARK_ADD | FAN_MARK_MOUNT, FAN_OPEN_PERM,
                     AT_FDCWD, path)
      < 0)
    return ar_error_set (err, errno, "secrets.ask: fanotify mark `%s`",
                         secrets_path);
  return 0;
}
