/* SPDX-License-Identifier: Apache-2.0 */
/* The runtime's side of egress control; the hook (hooks/agentrun-egress)
 * does the rest.
 *
 * resolv.conf: the hook's resolver listens on 127.0.0.53 inside the
 * container's own netns, the same address for every container, so the
 * file's content is known before the hook runs. It has to be: the bind
 * mount is made by the init before createRuntime hooks run. So prepare
 * writes it into the container's state dir and adds the mount; it goes
 * with the state dir at delete. */
#include "config.h"
#include "egress.h"
#include "../../hooks/egress.h"
#include "../../oci/oci.h"
#include "../util/cleanup.h"
#include "../util/fs.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <string.h>
#include <unistd.h>

#define RESOLV_CONF_FILE "resolv.conf"
#define RESOLV_CONF_TEXT "nameserver 127.0.0.53\noptions edns0\n"
/* Mode ask: a lookup may wait for a person; a client gives up after 30 s
 * at most (glibc's cap), once. */
#define RESOLV_CONF_ASK_TEXT                                                   \
  "nameserver 127.0.0.53\noptions edns0 timeout:30 attempts:1\n"

static char *
beside (const char *binary_path)
{
  char resolved[PATH_MAX];
  if (realpath (binary_path, resolved) == NULL)
    return NULL;
  char *slash = strrchr (resolved, '/');
  if (slash == NULL)
    return NULL;
  *slash = '\0';
  char *candidate = xasprintf ("%s/" AR_EGRESS_HOOK_NAME, resolved);
  if (access (candidate, X_OK) == 0)
    return candidate;
  free (candidate);
  return NULL;
}

/* argv[0] without a slash was found on PATH: find it the same way. */
static char *
beside_path_lookup (const char *name)
{
  const char *path = getenv ("PATH");
  cleanup_free char *copy
      = xstrdup (path ? path : "/usr/local/sbin:/usr/sbin:/usr/bin");
  char *save = NULL;
  for (char *dir = strtok_r (copy, ":", &save); dir;
       dir = strtok_r (NULL, ":", &save))
    {
      cleanup_free char *exe = xasprintf ("%s/%s", dir, name);
      if (access (exe, X_OK) == 0)
        return beside (exe);
    }
  return NULL;
}

/* The runtime may run from a sealed memfd copy (/proc/self/exe leads
 * nowhere useful then), so the name it was started by is the guide. */
char *
ar_egress_hook_find (void)
{
  const char *env = secure_getenv ("AGENTRUN_EGRESS_HOOK");
  if (env && *env)
    return xstrdup (env);
  const char *argv0 = program_invocation_name;
  char *found = NULL;
  if (argv0 && strchr (argv0, '/'))
    found = beside (argv0);
  else if (argv0 && *argv0)
    found = beside_path_lookup (argv0);
  if (found == NULL)
    found = beside ("/proc/self/exe");
  return found ? found : xstrdup (AR_EGRESS_HOOK_DEFAULT);
}

bool
ar_egress_hook_is_own (const oci_hook *hook, const char *own_path)
{
  return hook->path && own_path && strcmp (hook->path, own_path) == 0
         && hook->args.len >= 2
         && strcmp (hook->args.items[0], AR_EGRESS_HOOK_NAME) == 0;
}

int
ar_egress_hook_run_here (const oci_hook *hook, const char *state_json,
                         bool caller_stays, ar_error_t **err)
{
  return egress_hook_run ((int) hook->args.len, hook->args.items, state_json,
                          caller_stays, err);
}

static bool
spec_has_own_netns (const oci_spec *spec)
{
  return oci_spec_find_namespace (spec, OCI_NS_NETWORK) != NULL;
}

int
ar_egress_prepare (const ar_agent_plan *plan, const char *state_dir,
                   oci_spec *spec, ar_error_t **err)
{
  if (plan->egress == AR_EGRESS_NONE || !spec_has_own_netns (spec))
    return 0;
  cleanup_free char *path = xasprintf ("%s/" RESOLV_CONF_FILE, state_dir);
  const char *text
      = plan->egress == AR_EGRESS_ASK ? RESOLV_CONF_ASK_TEXT : RESOLV_CONF_TEXT;
  if (ar_write_file_atomic_at (AT_FDCWD, path, text, strlen (text), 0644, err)
      < 0)
    return ar_error_prefix (err, "egress");
  const char *const options[]
      = { "rbind", "ro", "nosuid", "nodev", "noexec", NULL };
  oci_spec_append_mount (spec, "bind", path, "/etc/resolv.conf", options);
  return 0;
}

void
ar_egress_teardown (const char *state_dir)
{
  cleanup_free char *path = xasprintf ("%s/" RESOLV_CONF_FILE, state_dir);
  if (unlink (path) < 0 && errno != ENOENT)
    fprintf (stderr, "agentrun: warning: egress: unlink `%s`: %s\n", path,
             strerror (errno));
}
